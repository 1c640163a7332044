/**
 * OpenTelemetry tracing: a span per model call and per tool call (tool, step, tokens, outcome)
 * nested in Temporal's own workflow and activity spans; off unless configured; OTLP export from a
 * worker process to a collector endpoint on 127.0.0.1.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { replayHistory } from '../../client/debug/replay';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentResult } from '../../shared/agent';
import { stateQuery } from '../../shared/agent';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { ConfigError, loadWorkerConfig } from '../../workers/config';
import { createTracing, JsonLinesSpanExporter, SPAN_ATTR } from '../../workers/observability/tracing';
import { createAgentWorker, WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS } from '../../workers/worker';
import { startOtlpReceiver } from '../../testkit/otlp-receiver';
import { freePort, runCli, startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv, useDevServer } from '../support/environments';

describe('configuration', () => {
  test('tracing is off by default and nothing is installed', () => {
    const config = loadWorkerConfig({});
    expect(config.tracing.exporter).toBe('off');
    expect(createTracing(config)).toBeUndefined();
  });

  test('a bad exporter or endpoint is named', () => {
    expect(() => loadWorkerConfig({ DURABLE_AGENT_TRACING: 'jaeger' })).toThrow(
      /DURABLE_AGENT_TRACING: must be off, otlp or console/,
    );
    expect(() =>
      loadWorkerConfig({ DURABLE_AGENT_TRACING: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }),
    ).toThrow(ConfigError);
  });

  test('the traces endpoint comes from the OTLP variables', () => {
    expect(
      loadWorkerConfig({
        DURABLE_AGENT_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
      }).tracing,
    ).toEqual({
      exporter: 'otlp',
      endpoint: 'http://127.0.0.1:4318/v1/traces',
      serviceName: 'durable-agent-worker',
    });
    expect(
      loadWorkerConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9999/traces',
        OTEL_SERVICE_NAME: 'agents-eu',
      }).tracing,
    ).toEqual({ exporter: 'off', endpoint: 'http://127.0.0.1:9999/traces', serviceName: 'agents-eu' });
  });
});

describe('spans of a run (time-skipping server, in-memory exporter)', () => {
  const temporal = useTimeSkippingEnv({ bundle: false });
  const exporter = new InMemorySpanExporter();
  const tracing = createTracing(testConfig(), new SimpleSpanProcessor(exporter));
  let bundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;

  beforeAll(async () => {
    // Its own bundle: the workflow side of tracing is an interceptor module bundled in.
    bundle = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: tracing?.workflowModules,
      logger: new DefaultLogger('WARN'),
      ...WORKFLOW_BUNDLER_OPTIONS,
    });
  }, 180_000);

  afterAll(async () => {
    await tracing?.shutdown();
  });

  const attr = (s: ReadableSpan, key: string) => s.attributes[key];

  test('one span per model call and per tool call, with step, tokens and outcome, under Temporal spans', async () => {
    exporter.reset();
    const taskQueue = uid('tq');
    const privateText = 'user-data-not-for-spans';
    let calculatorAttempts = 0;
    // calculator fails its first attempt (retried by Temporal), then answers.
    const calculator = async (input: ToolActivityInput<{ expression: string }>): Promise<ToolResult> => {
      calculatorAttempts += 1;
      if (Context.current().info.attempt === 1) {
        throw ApplicationFailure.retryable('calculator backend flaked', 'Flaky');
      }
      return { content: `value of ${input.args.expression.length} chars` };
    };
    const worker = await createAgentWorker({
      connection: temporal.env.nativeConnection,
      namespace: temporal.env.namespace ?? 'default',
      config: testConfig(),
      taskQueue,
      workflowBundle: bundle,
      activityOverrides: { calculator },
      tracing,
    });
    const workflowId = uid('traced');
    const result = (await worker.runUntil(
      temporal.env.client.workflow.execute('agentWorkflow', {
        taskQueue,
        workflowId,
        args: [
          {
            task: 'trace me',
            tools: ['calculator', 'get_time'],
            model: {
              provider: 'scripted',
              turns: [
                callTurn(
                  ['get_time', { timezone: 'UTC' }, 'a'],
                  ['get_time', { timezone: 'Mars/Olympus' }, 'b'],
                ),
                callTurn(['calculator', { expression: privateText }, 'c']),
                answerTurn('done'),
              ],
            },
          },
        ],
      }),
    )) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(calculatorAttempts).toBe(2);

    const spans = exporter.getFinishedSpans();
    const ofRun = spans.filter((s) => attr(s, SPAN_ATTR.workflowId) === workflowId);
    const chat = ofRun.filter((s) => attr(s, SPAN_ATTR.operation) === 'chat');
    const tools = ofRun.filter((s) => attr(s, SPAN_ATTR.operation) === 'execute_tool');

    // Model calls: one span each, in step order, with usage that adds up to the run's.
    expect(chat.map((s) => [s.name, attr(s, SPAN_ATTR.step), attr(s, SPAN_ATTR.outcome)])).toEqual([
      ['chat inline', 1, 'ok'],
      ['chat inline', 2, 'ok'],
      ['chat inline', 3, 'ok'],
    ]);
    expect(chat.every((s) => attr(s, SPAN_ATTR.provider) === 'scripted')).toBe(true);
    const sum = (key: string) => chat.reduce((n, s) => n + Number(attr(s, key)), 0);
    expect(sum(SPAN_ATTR.inputTokens)).toBe(result.usage.inputTokens);
    expect(sum(SPAN_ATTR.outputTokens)).toBe(result.usage.outputTokens);
    expect(chat.map((s) => attr(s, SPAN_ATTR.finishReasons))).toEqual([
      ['tool_calls'],
      ['tool_calls'],
      ['stop'],
    ]);

    // Tool calls: one span per attempt, with tool name, call id, step and outcome.
    const toolRows = tools
      .map((s) => [
        attr(s, SPAN_ATTR.toolName),
        attr(s, SPAN_ATTR.toolCallId),
        attr(s, SPAN_ATTR.step),
        attr(s, SPAN_ATTR.attempt),
        attr(s, SPAN_ATTR.outcome),
      ])
      .sort((x, y) => String(x[1]).localeCompare(String(y[1])) || Number(x[3]) - Number(y[3]));
    expect(toolRows).toEqual([
      ['get_time', 'a', 1, 1, 'ok'],
      ['get_time', 'b', 1, 1, 'tool_error'],
      ['calculator', 'c', 2, 1, 'failed'],
      ['calculator', 'c', 2, 2, 'ok'],
    ]);
    const failed = tools.find((s) => attr(s, SPAN_ATTR.outcome) === 'failed') as ReadableSpan;
    expect(failed.status.code).toBe(2); // ERROR
    expect(attr(failed, SPAN_ATTR.errorType)).toBe('Flaky');
    expect(failed.status.message).toBe('Flaky: calculator backend flaked');

    // Nesting: each agent span's parent is Temporal's RunActivity span, all in the workflow's trace.
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const traceIds = new Set<string>();
    for (const s of [...chat, ...tools]) {
      const parent = byId.get(s.parentSpanId ?? '');
      expect(parent?.name).toBe(
        `RunActivity:${s.name === `chat inline` ? 'callModel' : attr(s, SPAN_ATTR.toolName)}`,
      );
      traceIds.add(s.spanContext().traceId);
    }
    expect(traceIds.size).toBe(1);
    const workflowSpan = spans.find((s) => s.name === 'RunWorkflow:agentWorkflow');
    expect(workflowSpan?.spanContext().traceId).toBe([...traceIds][0]);
    // …and each RunActivity continues the workflow's StartActivity span for it.
    for (const s of [...chat, ...tools]) {
      const started = byId.get(byId.get(s.parentSpanId ?? '')?.parentSpanId ?? '');
      expect(started?.name).toMatch(/^StartActivity:/);
      expect(started?.parentSpanId).toBe(workflowSpan?.spanContext().spanId);
    }

    // Arguments, prompts and results never reach a span.
    const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]));
    expect(everything).not.toContain(privateText);
    expect(everything).not.toContain('trace me');

    // The console exporter writes the same spans as one JSON line each.
    const lines: string[] = [];
    new JsonLinesSpanExporter((l) => lines.push(l)).export(chat, (r) => expect(r.code).toBe(0));
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    expect(parsed.map((p) => [p.span, (p.attributes as Record<string, unknown>)[SPAN_ATTR.step]])).toEqual([
      ['chat inline', 1],
      ['chat inline', 2],
      ['chat inline', 3],
    ]);
    expect(parsed[0]).toMatchObject({
      traceId: chat[0]?.spanContext().traceId,
      parentSpanId: chat[0]?.parentSpanId,
      status: 'ok',
      durationMs: expect.any(Number),
    });

    // A traced run replays with the untraced code, and the other way round: tracing adds no command.
    const history = await temporal.env.client.workflow.getHandle(workflowId).fetchHistory();
    expect(await replayHistory(await workflowBundle(), history, workflowId)).toEqual({
      workflowId,
      ok: true,
    });
    expect(await replayHistory(bundle, history, workflowId)).toEqual({ workflowId, ok: true });
  });
});

describe('a worker process: OTLP export and structured logs', () => {
  const dev = useDevServer();

  /** Runs the demo job on a worker process with `env`, then stops the worker (flushing spans). */
  async function demoRun(env: Record<string, string>) {
    const all = { TEMPORAL_ADDRESS: dev.fx.address, DURABLE_AGENT_TASK_QUEUE: uid('tq'), ...env };
    const worker = await startWorkerProcess(all);
    try {
      const run = await runCli(
        ['run', '--json', '--model', 'scripted:demo', '--tools', 'get_time,calculator,notify_user', 'budget'],
        all,
      );
      expect(run.code).toBe(0);
      const outcome = JSON.parse(run.stdout) as { result: AgentResult };
      expect(outcome).toMatchObject({ outcome: 'completed', result: { stopReason: 'final_answer' } });
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      return { stdoutLines: worker.lines, stderr: worker.stderr.join(''), usage: outcome.result.usage };
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  }

  test('DURABLE_AGENT_TRACING=otlp sends the demo run’s model and tool spans to the endpoint', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { stdoutLines, stderr } = await demoRun({
        DURABLE_AGENT_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'agents-under-test',
      });
      expect(stderr).toContain(
        `Tracing on: spans of service "agents-under-test" go to ${receiver.url}/v1/traces`,
      );
      const names = receiver.spans.map((s) => s.name);
      expect(names.filter((n) => n === 'chat demo')).toHaveLength(3);
      expect(names).toEqual(expect.arrayContaining(['execute_tool calculator', 'execute_tool get_time']));
      expect(names).toEqual(expect.arrayContaining(['RunWorkflow:agentWorkflow', 'RunActivity:callModel']));
      expect(receiver.spans.every((s) => s.service === 'agents-under-test')).toBe(true);
      // The CLI that started the run opened its trace: the workflow's span is a child of its start.
      const start = receiver.spans.find((s) => s.name === 'StartWorkflow:agentWorkflow');
      const runSpan = receiver.spans.find((s) => s.name === 'RunWorkflow:agentWorkflow');
      expect(start?.spanId).toEqual(expect.any(String));
      expect(runSpan?.parentSpanId).toBe(start?.spanId);
      // One trace per command: `durable-agent run` is its root, the start its child, and the
      // run's progress polls (a query every 250 ms) add no span.
      const command = receiver.spans.find((s) => s.name === 'durable-agent run');
      expect(command).toMatchObject({ [SPAN_ATTR.command]: 'run', parentSpanId: undefined });
      expect(start?.parentSpanId).toBe(command?.spanId);
      expect(new Set(receiver.spans.map((s) => s.traceId))).toEqual(new Set([command?.traceId]));
      expect(names.filter((n) => n.startsWith('QueryWorkflow'))).toEqual([]);
      const chat = receiver.spans.filter((s) => s.name === 'chat demo');
      expect(chat.map((s) => Number(s[SPAN_ATTR.step])).sort()).toEqual([1, 2, 3]);
      expect(chat.every((s) => Number(s[SPAN_ATTR.inputTokens]) > 0)).toBe(true);

      // The JSON log lines (the test helper asks for json) carry the same facts per call.
      const done = stdoutLines.filter((l) => l.msg === 'activity completed');
      expect(done.find((l) => l.activityType === 'callModel' && l.step === 1)).toMatchObject({
        model: 'demo',
        provider: 'scripted',
        outcome: 'ok',
        inputTokens: expect.any(Number),
        outputTokens: expect.any(Number),
        finishReason: 'tool_calls',
      });
      expect(done.find((l) => l.activityType === 'calculator')).toMatchObject({
        tool: 'calculator',
        toolCallId: expect.any(String),
        step: expect.any(Number),
        outcome: 'ok',
      });
    } finally {
      await receiver.close();
    }
  }, 180_000);

  test('approve, message and cancel are each one trace: the command span, its client call, the worker’s handling', async () => {
    const receiver = await startOtlpReceiver();
    const dir = tempDir('traced-commands');
    fs.writeFileSync(
      path.join(dir, 'ask.json'),
      JSON.stringify({
        turns: [callTurn(['calculator', { expression: '6 * 7' }, 'calc']), answerTurn('42')],
      }),
    );
    fs.writeFileSync(
      path.join(dir, 'pause.json'),
      JSON.stringify({ turns: [callTurn(['wait', { seconds: 120 }, 'pause']), answerTurn('late')] }),
    );
    const env = {
      TEMPORAL_ADDRESS: dev.fx.address,
      DURABLE_AGENT_TASK_QUEUE: uid('traced-commands'),
      DURABLE_AGENT_SCRIPTS_DIR: dir,
      DURABLE_AGENT_TRACING: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    };
    const worker = await startWorkerProcess(env);
    try {
      const start = (script: string, tools: string[], extra: object = {}) =>
        dev.fx.client.workflow.start('agentWorkflow', {
          taskQueue: env.DURABLE_AGENT_TASK_QUEUE,
          workflowId: uid(script),
          args: [{ task: 'traced', tools, model: { provider: 'scripted', script }, ...extra }],
        });
      const asking = await start('ask', ['calculator'], {
        policy: { approvals: { tools: { calculator: 'always' } } },
      });
      for (let i = 0; i < 300; i++) {
        if ((await asking.query(stateQuery)).status === 'waiting_for_approval') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await runCli(['message', asking.workflowId, 'hello'], env)).code).toBe(0);
      expect((await runCli(['approve', asking.workflowId, 'calc'], env)).stdout.trim()).toBe(
        'calc: approved',
      );
      expect(((await asking.result()) as AgentResult).answer).toBe('42');

      const pausing = await start('pause', ['wait']);
      for (let i = 0; i < 300; i++) {
        if ((await pausing.query(stateQuery)).pendingToolCalls.length > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await runCli(['cancel', pausing.workflowId], env)).code).toBe(0);
      await pausing.result().catch(() => undefined);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);

      for (const [command, client, handled] of [
        ['message', 'SignalWorkflow:userMessage', 'HandleSignal:userMessage'],
        ['approve', 'StartWorkflowUpdate:approveToolCall', 'HandleUpdate:approveToolCall'],
        ['cancel', 'CancelWorkflow', undefined],
      ] as const) {
        const root = receiver.spans.find((s) => s.name === `durable-agent ${command}`);
        expect(root).toMatchObject({ [SPAN_ATTR.command]: command, parentSpanId: undefined });
        const call = receiver.spans.find((s) => s.name === client && s.traceId === root?.traceId);
        expect(call?.parentSpanId).toBe(root?.spanId);
        if (handled) {
          const handling = receiver.spans.find((s) => s.name === handled);
          expect(handling?.traceId).toBe(root?.traceId);
        }
        // Nothing else of the command's: its reads (describe, query) open no span.
        expect(
          receiver.spans.filter((s) => s.traceId === root?.traceId && s.name.startsWith('Query')),
        ).toEqual([]);
      }
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await receiver.close();
    }
  }, 240_000);

  test('with the collector down, runs still finish and the worker says spans could not be exported (text logs)', async () => {
    const { stdoutLines, stderr, usage } = await demoRun({
      DURABLE_AGENT_TRACING: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${await freePort()}/v1/traces`,
      // Structured (JSON) logs are off unless configured: Temporal's text lines on stderr.
      DURABLE_AGENT_LOG_FORMAT: 'text',
    });
    expect(stderr).toMatch(/tracing: .*(ECONNREFUSED|export)/i);
    expect(stdoutLines).toEqual([]);
    // Text logs: one line per event, no task tokens, no colours off a terminal.
    expect(stderr).toMatch(
      /^\S+Z INFO {2}activity completed .* tool=calculator .*outcome=ok durationMs=\d+$/m,
    );
    const lines = stderr.split('\n');
    // One line per model and tool call, besides the run's read of the worker's run defaults.
    const completed = lines.filter((l) => / activity completed /.test(l));
    expect(completed.filter((l) => !/ activityType=runDefaults /.test(l))).toHaveLength(
      usage.modelCalls + usage.toolCalls,
    );
    expect(lines.filter((l) => /^\s/.test(l))).toEqual([]);
    expect(stderr).not.toContain('taskToken');
    expect(stderr).not.toContain('\x1b');
  }, 180_000);
});
