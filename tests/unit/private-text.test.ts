/**
 * The sanitizer spans and log lines share, and what a span keeps on its way out.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ApplicationFailure } from '@temporalio/common';
import {
  describeError,
  errorTypeOf,
  MAX_SANITISED_CHARS,
  privateWords,
  REDACTED,
  sanitizeMessage,
} from '../../shared/private-text';
import { SPAN_ATTR } from '../../workers/observability/agent-spans';
import { redactSpan } from '../../workers/observability/span-privacy';

describe('sanitizeMessage', () => {
  test('quoted parts, URL paths and email addresses go; the fixed wording stays', () => {
    expect(sanitizeMessage('Cannot evaluate "2 +* Zephyr": unexpected "*" at position 3.')).toBe(
      'Cannot evaluate "…": unexpected "…" at position 3.',
    );
    expect(sanitizeMessage("Folder 'Clients/Zephyr' not found; can't open it")).toBe(
      'Folder "…" not found; can\'t open it',
    );
    expect(
      sanitizeMessage('GET https://bob:pw@search.example/q?query=zephyr failed, and http://h:80 too'),
    ).toBe('GET https://search.example/… failed, and http://h:80 too');
    expect(sanitizeMessage('Recipient zephyr.ann@example.com refused')).toBe('Recipient [email] refused');
  });

  test('every word that occurs in the call’s input is redacted, whatever its case or surroundings', () => {
    const words = privateWords([{ args: { query: 'Zephyr budget 2027', n: 12345 }, toolCallId: 'c1' }]);
    expect(words.has('zephyr')).toBe(true);
    expect(words.has('12345')).toBe(true);
    expect(words.has('c1')).toBe(false); // shorter than 3 characters: not treated as private
    expect(sanitizeMessage('searxng answered 400: no results for ZEPHYR/budget (id 12345)', words)).toBe(
      `searxng answered 400: no results for ${REDACTED} (id ${REDACTED}`,
    );
  });

  test('one line, bounded', () => {
    const out = sanitizeMessage(`first\nsecond ${'x'.repeat(1000)}`);
    expect(out.startsWith('first second ')).toBe(true);
    expect(out.includes('\n')).toBe(false);
    expect(out.length).toBe(MAX_SANITISED_CHARS);
  });
});

describe('errors', () => {
  test('the type is an ApplicationFailure’s type, else the error’s name', () => {
    const failure = ApplicationFailure.create({ type: 'InvalidExpression', message: 'Cannot evaluate "x+"' });
    expect(errorTypeOf(failure)).toBe('InvalidExpression');
    expect(errorTypeOf(new TypeError('boom'))).toBe('TypeError');
    expect(errorTypeOf('a string')).toBe('Error');
    expect(describeError(failure)).toBe('InvalidExpression: Cannot evaluate "…"');
    expect(describeError(new Error('token Zephyr rejected'), privateWords('zephyr'))).toBe(
      `Error: token ${REDACTED} rejected`,
    );
  });
});

function span(over: Partial<ReadableSpan>): ReadableSpan {
  const context = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
  return {
    name: 'RunWorkflow:agentWorkflow',
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    startTime: [1, 0],
    endTime: [2, 0],
    status: { code: SpanStatusCode.OK },
    attributes: {},
    links: [],
    events: [],
    duration: [1, 0],
    ended: true,
    resource: undefined as never,
    instrumentationLibrary: { name: 't' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...over,
  };
}

describe('redactSpan', () => {
  test('keeps allowed attributes only: the workflow info’s memo and search attributes go', () => {
    const out = redactSpan(
      span({
        attributes: {
          workflowId: 'agent-1',
          runId: 'r1',
          workflowType: 'agentWorkflow',
          memo: '{"task":"Zephyr"}',
          'searchAttributes.AgentModel': 'x',
          [SPAN_ATTR.step]: 2,
        },
      }),
      new Set(),
    );
    expect(out.attributes).toEqual({
      workflowId: 'agent-1',
      runId: 'r1',
      workflowType: 'agentWorkflow',
      [SPAN_ATTR.step]: 2,
    });
    expect(out.spanContext().spanId).toBe('b'.repeat(16));
  });

  test('status and exception: type plus sanitized message, stack frames without the message line', () => {
    const out = redactSpan(
      span({
        status: { code: SpanStatusCode.ERROR, message: 'Unknown zone Zephyr/Moon' },
        events: [
          {
            name: 'exception',
            time: [1, 5],
            attributes: {
              'exception.type': 'ApplicationFailure',
              'exception.message': 'Unknown zone Zephyr/Moon',
              'exception.stacktrace':
                'ApplicationFailure: Unknown zone Zephyr/Moon\n    at getTime (tool.ts:3:9)',
              'exception.escaped': true,
            },
          },
          { name: 'args', time: [1, 6], attributes: { text: 'Zephyr' } },
        ],
        links: [
          {
            context: { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 },
            attributes: { a: 'x' },
          },
        ],
      }),
      privateWords({ timezone: 'Zephyr/Moon' }),
    );
    expect(out.status.message).toBe(`ApplicationFailure: Unknown zone ${REDACTED}`);
    expect(out.events).toEqual([
      {
        name: 'exception',
        time: [1, 5],
        attributes: {
          'exception.type': 'ApplicationFailure',
          'exception.message': `Unknown zone ${REDACTED}`,
          'exception.stacktrace': '    at getTime (tool.ts:3:9)',
        },
      },
    ]);
    expect(out.links[0]?.attributes).toBeUndefined();
  });
});
