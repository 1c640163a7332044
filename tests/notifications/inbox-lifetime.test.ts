/**
 * A user's inbox over a long life on the real dev server: 4,000 notifications (INBOX_LIFETIME_TOTAL,
 * a multiple of 100, for more) through about eight continue-as-new runs, with the state exact at the
 * end and unchanged across a run boundary.
 */
import {
  inboxWorkflowId,
  markReadSignal,
  notificationsQuery,
  notifySignal,
  notifyUpdate,
} from '../../shared/notifications/messages';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { DEFAULT_MAX_NOTIFICATIONS } from '../../shared/notifications/schema';
import type { NotificationInput } from '../../shared/notifications/schema';
import { withDevWorker } from '../../testkit/dev-server';
import { runChain } from '../../testkit/history';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer();

const TOTAL = Number(process.env.INBOX_LIFETIME_TOTAL ?? 4_000);
/** One batch fills the inbox exactly, so the survivors at the end are exactly the last batch. */
const BATCH = DEFAULT_MAX_NOTIFICATIONS;
const CONTINUE_AS_NEW_AFTER = 500;

const idOf = (i: number) => `n-${i}`;
const notificationOf = (i: number): NotificationInput => ({
  id: idOf(i),
  message: `notification ${i}`,
  title: `batch ${Math.floor(i / BATCH)}`,
  type: i % 2 === 0 ? 'info' : 'progress',
  priority: i % 3 === 0 ? 20 : 10,
  group: 'lifetime',
});

test(`${TOTAL.toLocaleString('en')} notifications over continue-as-new: nothing lost, nothing re-numbered unexpectedly`, async () => {
  const workflowId = inboxWorkflowId(uid('lifetime'));
  await withDevWorker(dev.fx, async (taskQueue) => {
    const inbox = await dev.fx.client.workflow.start('inboxWorkflow', {
      workflowId,
      taskQueue,
      args: [{ continueAsNewAfter: CONTINUE_AS_NEW_AFTER }],
    });
    // Batches run one after another; within a batch, signals race, so only the set is known. Each
    // batch waits until the inbox has applied it: a producer that never pauses keeps every
    // continue-as-new attempt from completing (new signals keep arriving), and the run grows instead.
    let expectedUpdate = 0;
    const sendBatch = async (b: number) => {
      await Promise.all(
        Array.from({ length: BATCH }, (_, k) => inbox.signal(notifySignal, notificationOf(b * BATCH + k))),
      );
      expectedUpdate += BATCH;
      while ((await inbox.query(notificationsQuery)).update < expectedUpdate) {
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const beforeBoundary = 400;
    for (let b = 0; b < beforeBoundary / BATCH; b++) await sendBatch(b);
    const firstRun = (await inbox.describe()).runId;
    expect(firstRun).toBe(inbox.firstExecutionRunId);
    const s1 = await inbox.query(notificationsQuery);
    expect(s1).toMatchObject({ count: BATCH, evicted: beforeBoundary - BATCH, update: beforeBoundary });

    // 100 markRead signals (one real change, 99 no-ops) take the run to 500 handled signals and across
    // its continue-as-new without adding anything: the carried state must be exactly the same.
    const first = s1.notifications[0]!;
    await inbox.signal(markReadSignal, { ids: [first.id] });
    await Promise.all(
      Array.from({ length: CONTINUE_AS_NEW_AFTER - beforeBoundary - 1 }, () =>
        inbox.signal(markReadSignal, { ids: ['no-such-id'] }),
      ),
    );
    const deadline = Date.now() + 20_000;
    while ((await inbox.describe()).runId === firstRun && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await inbox.describe()).runId).not.toBe(firstRun);
    const s2 = await inbox.query(notificationsQuery);
    expect(s2.notifications).toEqual([{ ...first, read: true }, ...s1.notifications.slice(1)]);
    expect(s2).toMatchObject({ guid: s1.guid, count: BATCH, evicted: s1.evicted, update: s1.update + 1 });

    expectedUpdate += 1;
    for (let b = beforeBoundary / BATCH; b < TOTAL / BATCH; b++) await sendBatch(b);
    const end = await inbox.query(notificationsQuery);
    const lastBatch = Array.from({ length: BATCH }, (_, k) => TOTAL - BATCH + k);
    expect(end.guid).toBe(s1.guid);
    expect(end.count).toBe(DEFAULT_MAX_NOTIFICATIONS);
    expect(end.evicted).toBe(TOTAL - DEFAULT_MAX_NOTIFICATIONS);
    // Every notify added one change and the single real markRead one more.
    expect(end.update).toBe(TOTAL + 1);
    expect(end.notifications.map((n) => n.no)).toEqual(Array.from({ length: BATCH }, (_, i) => i));
    expect(new Set(end.notifications.map((n) => n.id))).toEqual(new Set(lastBatch.map(idOf)));
    for (const n of end.notifications) {
      expect(n).toMatchObject({
        ...notificationOf(Number(n.id.slice(2))),
        read: false,
        display_time: 3,
        detail: '',
      });
    }

    const runs = await dev.fx.client.workflow.count(`WorkflowId = "${workflowId}"`);
    // A run per 500 signals; a run may take a few more signals in its last workflow task.
    expect(runs.count).toBeGreaterThanOrEqual(Math.floor((TOTAL / CONTINUE_AS_NEW_AFTER) * 0.75));
    const history = await inbox.fetchHistory();
    expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  });
}, 240_000);

test('with its defaults, an inbox continues as new on its history budget: every run stays bounded', async () => {
  const workflowId = inboxWorkflowId(uid('budget'));
  // Fewer than the count limit (2,000 changes a run), yet more events than one run may hold: each
  // update is an accepted and a completed event, plus its share of workflow tasks.
  const total = 1_800;
  await withDevWorker(dev.fx, async (taskQueue) => {
    const inbox = await dev.fx.client.workflow.start('inboxWorkflow', { workflowId, taskQueue, args: [{}] });
    let next = 0;
    // 8 senders: the server takes at most 10 updates in flight per workflow.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) {
          const i = next++;
          await inbox.executeUpdate(notifyUpdate, { args: [notificationOf(i)] });
        }
      }),
    );
    const end = await inbox.query(notificationsQuery);
    expect(end).toMatchObject({ update: total, count: BATCH, evicted: total - BATCH });

    const histories = await runChain(dev.fx.client, workflowId, inbox.firstExecutionRunId);
    const lengths = histories.map((h) => h.events?.length ?? 0);
    console.log(`inbox runs' history lengths (events): ${lengths.join(', ')}`);
    expect(lengths.reduce((a, b) => a + b, 0)).toBeGreaterThan(SIZE_BUDGETS.continueAsNewHistoryEvents);
    // So the budget, not the count, ended the earlier runs.
    expect(histories.length).toBeGreaterThan(1);
    // A run ends once the budget is passed, after the updates in flight at most.
    for (const n of lengths) expect(n).toBeLessThan(SIZE_BUDGETS.continueAsNewHistoryEvents + 4 * BATCH);
  });
}, 240_000);
