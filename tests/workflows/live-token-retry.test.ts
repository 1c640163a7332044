/**
 * Live tokens of a retried model call, through the real model activity on the time-skipping test
 * server: the first attempt streams part of an answer and fails, the retry streams the whole one;
 * the frames carry each attempt, so a watcher ends with the retry's text alone, and the run's
 * answer is the retry's.
 */
import type { Worker } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { FileStreamChannel } from '../../activities/streaming/file-channel';
import { partialAnswer } from '../../activities/streaming';
import type { AgentResult } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

test('a retried call’s frames carry its attempt: the retry’s text replaces the failed attempt’s', async () => {
  const dir = tempDir('live-retry');
  const taskQueue = uid('tq');
  let attempts = 0;
  const worker: Worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: { ...testConfig(), stream: { kind: 'file', dir } },
    taskQueue,
    workflowBundle: await workflowBundle(),
    providers: {
      scripted: async ({ onDelta }) => {
        attempts += 1;
        if (attempts === 1) {
          onDelta?.({ kind: 'text', text: 'The answer is ' });
          onDelta?.({ kind: 'text', text: '4' });
          throw ApplicationFailure.retryable('the connection dropped mid-answer', 'ModelUnreachable');
        }
        onDelta?.({ kind: 'text', text: 'The answer is ' });
        onDelta?.({ kind: 'text', text: '2.' });
        return {
          content: 'The answer is 2.',
          toolCalls: [],
          usage: { inputTokens: 1, outputTokens: 1 },
          finishReason: 'stop',
        };
      },
    },
  });
  const id = uid('live-retry');
  const result = await worker.runUntil(
    temporal.env.client.workflow.execute('agentWorkflow', {
      taskQueue,
      workflowId: id,
      args: [
        { task: 'one plus one', tools: [], model: { provider: 'scripted', turns: [{ content: 'unused' }] } },
      ],
    }),
  );
  expect((result as AgentResult).answer).toBe('The answer is 2.');
  expect(attempts).toBe(2);
  // The end frame follows the answer without holding it up: give it a moment.
  const channel = new FileStreamChannel(dir);
  let frames = (await channel.read(id)).frames;
  for (let i = 0; i < 50 && !frames.some((f) => f.kind === 'end'); i++) {
    await new Promise((r) => setTimeout(r, 20));
    frames = (await channel.read(id)).frames;
  }
  // Each attempt's frames in order; a failed attempt's last send may land after the retry's start
  // (the retry does not wait for it), which is why watchers go by the attempt, not by arrival.
  expect(frames.filter((f) => f.attempt === 1).map((f) => f.kind)).toEqual(['start', 'text']);
  expect(frames.filter((f) => f.attempt === 2).map((f) => f.kind)).toEqual(['start', 'text', 'end']);
  expect(frames.filter((f) => f.attempt === 1).map((f) => f.text ?? '')).toEqual(['', 'The answer is 4']);
  expect(new Set(frames.map((f) => `${f.run} ${f.step} ${f.call}`))).toEqual(
    new Set([`${id} 1 ${frames[0]?.call}`]),
  );
  expect(partialAnswer(frames)).toMatchObject({ attempt: 2, text: 'The answer is 2.', ended: true });
});
