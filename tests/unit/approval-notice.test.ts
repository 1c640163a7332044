/**
 * The approval notice's text (shared/approval-notice.ts): its marks name the run, the call and the
 * deadline; its arguments are a bounded preview with secrets masked; every value is escaped; and
 * the worst case stays inside the notification's detail budget.
 */
import {
  APPROVAL_NOTICE_BOUNDS,
  approvalArgsPreview,
  approvalNoticeDetail,
  runPagePath,
} from '../../shared/approval-notice';
import { summarizeArgs } from '../../shared/approvals';
import { NOTIFICATION_FIELD_BUDGETS, NOTIFICATION_LIMITS } from '../../shared/notifications/schema';
import { SECRET_MASK, redactedPreview } from '../../shared/redact-secrets';
import { utf8Bytes } from '../../shared/temporal-limits';

const facts = {
  run: 'nightly:report@2026',
  toolCallId: 'calc-1',
  tool: 'calculator',
  args: { expression: '6*7' },
  deadline: '2026-12-02T04:57:30.264Z',
  waiting: true,
};

test('the detail marks the run, the call and the deadline, links the run page and says how to answer', () => {
  const detail = approvalNoticeDetail(facts);
  expect(detail).toContain(
    '<p class="approval-notice" data-run="nightly:report@2026" data-tool-call="calc-1" data-state="waiting">',
  );
  expect(detail).toContain(`<a href="${runPagePath(facts.run)}">nightly:report@2026</a>`);
  expect(runPagePath(facts.run)).toBe('/runs/nightly%3Areport%402026');
  expect(detail).toContain('<time datetime="2026-12-02T04:57:30.264Z">');
  expect(detail).toContain('durable-agent approve nightly:report@2026 calc-1');
  expect(detail).toContain('<pre>{\n  &#34;expression&#34;: &#34;6*7&#34;\n}</pre>');
  // Once decided, the notice keeps what was asked but no longer offers to answer.
  const ended = approvalNoticeDetail({ ...facts, waiting: false });
  expect(ended).toContain('data-state="ended"');
  expect(ended).not.toContain('durable-agent approve');
});

test('values are escaped: arguments cannot add markup to the detail', () => {
  const detail = approvalNoticeDetail({
    ...facts,
    tool: 'mcp:x/<b>',
    args: { html: '<img src=x onerror=alert(1)>"\'&' },
  });
  expect(detail).not.toMatch(/<img|<b>/);
  expect(detail).toContain('mcp:x/&#60;b&#62;');
});

test('secrets in arguments are masked in the preview and the summary', () => {
  const args = {
    to: ['ann@example.com'],
    apiKey: 'abcd-1234-efgh',
    headers: { Authorization: 'Bearer abcdefghijklmnop' },
    url: 'https://user:hunter22@db.example/x?token=s3cr3t',
    text: 'use sk-ant-0123456789abcdefXYZ now',
  };
  for (const shown of [approvalArgsPreview(args), summarizeArgs(args)]) {
    expect(shown).not.toMatch(/abcd-1234-efgh|abcdefghijklmnop|hunter22|s3cr3t|0123456789abcdefXYZ/);
    expect(shown).toContain(SECRET_MASK);
    expect(shown).toContain('ann@example.com');
  }
});

test('huge arguments become a bounded preview', () => {
  const huge = {
    text: 'x'.repeat(1_000_000),
    rows: Array.from({ length: 10_000 }, (_, i) => ({ i })),
    deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
  };
  const preview = approvalArgsPreview(huge);
  expect(preview.length).toBeLessThanOrEqual(APPROVAL_NOTICE_BOUNDS.argsChars);
  expect(preview).toContain('"text": "xxx');
  const copy = redactedPreview(huge, { chars: 10, items: 3, depth: 3 }) as Record<string, unknown>;
  expect(copy.text).toBe(`${'x'.repeat(10)}…`);
  expect(copy.rows).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, '… 9997 more']);
  expect(copy.deep).toEqual({ a: { b: '{…}' } });
});

test('the worst case fits the notification detail budget', () => {
  // Characters that escaping multiplies by five, and ids and names at their longest.
  const detail = approvalNoticeDetail({
    run: `r${'=:@+'.repeat(249)}`,
    toolCallId: '"'.repeat(5_000),
    tool: '<'.repeat(5_000),
    args: { a: '"'.repeat(100_000), b: '€'.repeat(100_000), c: Array(1000).fill("'") },
    deadline: facts.deadline,
    waiting: true,
  });
  expect(detail.length).toBeLessThanOrEqual(NOTIFICATION_LIMITS.detail / 2);
  expect(utf8Bytes(detail)).toBeLessThanOrEqual(NOTIFICATION_FIELD_BUDGETS.detail / 2);
});
