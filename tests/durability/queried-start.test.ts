/**
 * Runs queried while their first workflow task waits for a local activity (the run's defaults), as
 * `durable-agent run` and any UI do from the moment they start a run: the dev server may complete
 * that task with the activity's marker before the code after it ran, so the code's commands go in
 * the next task. Every such history must replay on a new worker (see PATCHES_AT_START_PATCH): a
 * patch first asked after the activity made the replay fail with "patch marker encountered … but
 * there is no corresponding change command".
 */
import { Worker } from '@temporalio/worker';
import type { History } from '@temporalio/common/lib/proto-utils';
import { stateQuery } from '../../shared/agent';
import { withDevWorker } from '../../testkit/dev-server';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid, workflowBundle } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer();
const RUNS = 12;

/** Whether the first workflow task completed with the local activity's marker and nothing after it. */
function splitAfterLocalActivity(history: History): boolean {
  const events = history.events ?? [];
  const marker = events.findIndex(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  return marker >= 0 && events[marker + 1]?.workflowTaskScheduledEventAttributes != null;
}

test('runs queried from their start replay on a new worker, whatever task the local activity ended', async () => {
  const histories = await withDevWorker(dev.fx, async (taskQueue) => {
    const ids = Array.from({ length: RUNS }, () => uid('queried'));
    await Promise.all(
      ids.map(async (workflowId) => {
        // A plain client's start, as someone else's code does: the run describes itself (memo,
        // search attributes) after its defaults, the code a split task moves to the next task.
        const handle = await dev.fx.client.workflow.start('agentWorkflow', {
          taskQueue,
          workflowId,
          args: [
            {
              task: 'queried from the start',
              tools: ['calculator'],
              model: {
                provider: 'scripted',
                turns: [callTurn(['calculator', { expression: '6 * 7' }, 'c']), answerTurn('{{result:c}}')],
              },
            },
          ],
        });
        let done = false;
        const result = handle.result().finally(() => (done = true));
        while (!done) {
          await handle.query(stateQuery).catch(() => undefined);
          await new Promise((r) => setTimeout(r, 2));
        }
        expect(await result).toMatchObject({ answer: '42' });
      }),
    );
    return Promise.all(ids.map((id) => dev.fx.client.workflow.getHandle(id).fetchHistory()));
  });
  console.log(
    `${histories.filter(splitAfterLocalActivity).length} of ${RUNS} queried runs had their first task split after the local activity`,
  );
  const bundle = await workflowBundle();
  for (const [i, history] of histories.entries()) {
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle }, history, `queried-${i}`),
    ).resolves.toBeUndefined();
  }
}, 180_000);
