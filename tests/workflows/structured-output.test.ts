/**
 * Structured output on the time-skipping test server: a run with an `output` schema gets its answer
 * parsed and validated in the workflow, repairs an invalid one with the errors fed back, and fails
 * with a typed OutputValidationError when its repairs are used up. The HTTP API's run routes are
 * read in process.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { temporal as proto } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import { Hono } from 'hono';
import { registerRunRoutes } from '../../server/api/runs';
import { createScriptedProvider } from '../../activities/model/scripted';
import type { ModelProvider } from '../../activities/model/provider';
import type { AgentInput, AgentResult } from '../../shared/agent';
import type { ScriptedTurn } from '../../shared/model';
import { stateQuery, transcriptQuery } from '../../shared/agent';
import { STRUCTURED_OUTPUT_PATCH } from '../../workflows/agent/structured-output';
import { createAgentWorker } from '../../workers/worker';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { scheduledActivityTypes, workflowTaskFailures } from '../../testkit/history';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    celsius: { type: 'number' },
    sky: { enum: ['clear', 'cloudy', 'rain'] },
  },
  required: ['city', 'celsius'],
  additionalProperties: false,
};

/** Runs `fn` with a worker whose scripted model records the output schema each call was given. */
async function withWorker<T>(fn: (taskQueue: string, outputs: unknown[]) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const config = testConfig();
  const scripted = createScriptedProvider(config.scriptsDir) as ModelProvider;
  const outputs: unknown[] = [];
  const worker: Worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config,
    taskQueue,
    workflowBundle: await workflowBundle(),
    providers: {
      scripted: (req) => {
        outputs.push(req.output);
        return scripted(req);
      },
    },
  });
  return worker.runUntil(fn(taskQueue, outputs));
}

/** A run of `turns` with the output schema `output` (null: none). */
/** The ids of the patches a run's history marks. */
function patchIds(history: proto.api.history.v1.IHistory): string[] {
  return (history.events ?? []).flatMap((e) => {
    const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
    return payload?.data
      ? [(JSON.parse(Buffer.from(payload.data).toString('utf8')) as { id: string }).id]
      : [];
  });
}

function input(turns: ScriptedTurn[], output: AgentInput['output'] | null = WEATHER): AgentInput {
  return {
    task: 'Weather in Paris as JSON',
    tools: ['calculator'],
    model: { provider: 'scripted', turns },
    ...(output ? { output } : {}),
  };
}

test('a valid JSON answer sets output beside the text; the provider is given the schema', async () => {
  await withWorker(async (taskQueue, outputs) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('output-valid'),
      args: [
        input([
          callTurn(['calculator', { expression: '20+1' }, 'c']),
          answerTurn('```json\n{"city":"Paris","celsius":21,"sky":"clear"}\n```'),
        ]),
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(result.output).toEqual({ city: 'Paris', celsius: 21, sky: 'clear' });
    expect(result.outputRepairs).toBe(0);
    expect(result.answer).toContain('"city":"Paris"');
    expect(outputs).toEqual([WEATHER, WEATHER]);
    expect((await handle.query(stateQuery)).output).toEqual(result.output);
    // The HTTP API's run view and answer (read in process, no server): the run page shows the latter.
    const api = new Hono();
    registerRunRoutes(api, temporal.env.client);
    const view = (await (await api.request(`/api/runs/${handle.workflowId}`)).json()) as {
      state: { output?: unknown };
    };
    expect(view.state.output).toEqual(result.output);
    const answer = (await (await api.request(`/api/runs/${handle.workflowId}/answer`)).json()) as {
      output?: unknown;
    };
    expect(answer.output).toEqual(result.output);
    expect(patchIds(await handle.fetchHistory())).toContain(STRUCTURED_OUTPUT_PATCH);
  });
});

test('an invalid answer gets a repair turn with the errors; the repaired answer is the output', async () => {
  await withWorker(async (taskQueue) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('output-repair'),
      args: [
        input([answerTurn('{"city":"Paris","celsius":"21"}'), answerTurn('{"city":"Paris","celsius":21}')]),
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(result.outputRepairs).toBe(1);
    expect(result.steps).toBe(2);
    expect(result.usage.modelCalls).toBe(2);
    const page = await handle.query(transcriptQuery, {});
    const repair = page.entries.find((e) => e.role === 'user' && e.text.includes('does not match'));
    expect(repair?.text).toContain('celsius: expected number, got string');
  });
});

test('answers that never match fail the run with OutputValidationError after outputRepairs+1 answers', async () => {
  await withWorker(async (taskQueue) => {
    const bad = answerTurn('{"celsius":21,"wind":3}');
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('output-fail'),
      args: [{ ...input([bad, bad, bad, bad]), policy: { outputRepairs: 2 } }],
    });
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('OutputValidationError');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toMatch(/after 2 repair turns/);
    expect(cause.message).toMatch(/city: is required/);
    expect(cause.message).toMatch(/wind: is not a field of the schema/);
    const history = await handle.fetchHistory();
    expect(scheduledActivityTypes(history)).toEqual(['callModel', 'callModel', 'callModel']);
    expect(workflowTaskFailures([history])).toEqual({});
    expect((await handle.query(stateQuery)).status).toBe('failed');
  });
});

test('repairs taken are carried across continue-as-new', async () => {
  await withWorker(async (taskQueue) => {
    const bad = answerTurn('{"city":"Paris"}');
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('output-carried'),
      args: [
        {
          ...input([bad, callTurn(['calculator', { expression: '1+1' }, 'c']), bad, bad]),
          policy: { outputRepairs: 1, continueAsNewAfterSteps: 1 },
        },
      ],
    });
    const err = await handle.result().catch((e: unknown) => e);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('OutputValidationError');
    expect(cause.message).toMatch(/after 1 repair turn: celsius: is required/);
    // Without the carried count, the next execution would grant a second repair (a 4th model call).
    const state = await handle.query(stateQuery);
    expect(state.continuations).toBe(1);
    expect(state.usage.modelCalls).toBe(3);
  });
});

test('an output schema the validator cannot enforce is refused at run start, naming the keyword', async () => {
  await withWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('output-bad-schema'),
        args: [input([answerTurn('{}')], { type: 'object', properties: { a: { not: { type: 'string' } } } })],
      })
      .catch((e: unknown) => e);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidAgentInput');
    expect(cause.message).toMatch(/output: properties\.a\.not: the keyword "not" is not supported/);
  });
});

test('a run without output checks no patch and answers as before', async () => {
  await withWorker(async (taskQueue, outputs) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('output-none'),
      args: [input([answerTurn('plain text')], null)],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('plain text');
    expect(result).not.toHaveProperty('output');
    expect(result).not.toHaveProperty('outputRepairs');
    expect(outputs).toEqual([undefined]);
    const patches = patchIds(await handle.fetchHistory());
    expect(patches.length).toBeGreaterThan(0);
    expect(patches).not.toContain(STRUCTURED_OUTPUT_PATCH);
  });
});
