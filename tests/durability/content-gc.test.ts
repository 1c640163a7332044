/**
 * Content store garbage collection against a real dev server, a worker process (file store) and an
 * in-process worker on PostgreSQL: nothing an open run, a retained history or a fork needs is
 * removed, garbage is, a dry run names the same set, and the worker's own schedule collects.
 * "Old" is made by stamping stored values days back (the server's shortest retention is an hour):
 * the collector then judges by claims and by the runs' state alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ContentEntry } from '../../activities/content/collectable';
import { contentStoreFor } from '../../activities/content/config';
import { collectContentNow } from '../../client/content';
import { startAgentRun } from '../../client/start-run';
import type { AgentInput } from '../../shared/agent';
import { stateQuery } from '../../shared/agent/messages';
import type { AgentResult } from '../../shared/agent/views';
import type { ContentGcReport } from '../../shared/content-gc';
import { claimantOf, contentGcScheduleId } from '../../shared/content-gc';
import { temporalServiceId } from '../../activities/content/liveness';
import { backdateContent, fileStoreRefs, pgSchemaStore } from '../../testkit/content-store';
import { withDevWorker } from '../../testkit/dev-server';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const DAY = 86_400_000;
const BIG = 'C'.repeat(6000);
const scriptsDir = tempDir('gc-scripts');
const contentDir = tempDir('gc-content');
const fileStore = { kind: 'file' as const, dir: contentDir };

/** A result over the inline budget (kept by reference), a quick step, then an answer quoting it. */
const LARGE = {
  turns: [
    callTurn(['sql_query', { sql: 'SELECT repeat(chr(67), 6000) AS big' }, 'q']),
    callTurn(['calculator', { expression: '1+1' }, 'c']),
    answerTurn('{{result:q}}'),
  ],
};
fs.writeFileSync(path.join(scriptsDir, 'large.json'), JSON.stringify(LARGE));

const dev = useDevServer({
  worker: { DURABLE_AGENT_SCRIPTS_DIR: scriptsDir, DURABLE_AGENT_CONTENT_STORE: contentDir },
  queue: 'gc',
  // A deleted run's history goes once the server has acknowledged its close task, which it records
  // every 30 s by default: waited out, that was 20–33 s of this file. Same deletion, sooner.
  dynamicConfig: { 'history.transferProcessorUpdateAckInterval': '1s' },
});

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** This file's dev server as claims name it. */
const service = () => temporalServiceId(dev.fx.client.workflowService);

/**
 * Values nobody needs: one never claimed, one claimed by a workflow that never ran. Beside them, one
 * claimed by a run of another Temporal service, which this one may not judge: it stays.
 */
async function plantGarbage(tag: string): Promise<Set<string>> {
  const store = contentStoreFor(fileStore);
  await store.put(
    { kept: tag, claimedBy: 'another service' },
    claimantOf('other-cluster', 'default', uid('x')),
  );
  return new Set([
    await store.put({ garbage: tag, claimedBy: 'nobody' }),
    await store.put(
      { garbage: tag, claimedBy: 'a run that never was' },
      claimantOf(await service(), 'default', uid('never')),
    ),
  ]);
}

/** `content gc` from the CLI: the values it lists and its report. */
async function gcCli(...flags: string[]): Promise<{ listed: Set<string>; report: ContentGcReport }> {
  const out = await runCli(['content', 'gc', '--list', '--json', ...flags], dev.env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const lines = out.stdout.trim().split('\n');
  return {
    listed: new Set(lines.filter((l) => l.startsWith('sha256:')).map((l) => l.split(' ')[0] as string)),
    report: JSON.parse(lines.at(-1) as string) as ContentGcReport,
  };
}

/** A finished run with a large result, and the values it stored. */
async function largeRun(): Promise<{ id: string; values: Set<string> }> {
  const before = fileStoreRefs(contentDir);
  const id = uid('large');
  const out = await runCli(
    ['run', '--id', id, '--model', 'scripted:large', '--tools', 'sql_query,calculator', 'big'],
    dev.env,
  );
  expect(out.code).toBe(0);
  expect(out.stdout.includes(BIG)).toBe(true);
  return { id, values: new Set([...fileStoreRefs(contentDir)].filter((r) => !before.has(r))) };
}

test('a run waiting for approval longer than the grace keeps its content; garbage goes, and a dry run names it first', async () => {
  const input: AgentInput = {
    task: 'read the big value, then add (approved by a person)',
    tools: ['sql_query', 'calculator'],
    policy: { requireApproval: ['calculator'], approvalTimeout: '30 days' },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['sql_query', { sql: 'SELECT repeat(chr(67), 6000) AS big' }, 'q']),
        callTurn(['calculator', { expression: '2+2' }, 'add']),
        answerTurn('{{result:q}} {{result:add}}'),
      ],
    },
  };
  const id = uid('waiting');
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue: dev.taskQueue });
  await until('the approval', async () =>
    (await handle.query(stateQuery)).pendingToolCalls.some((c) => c.state === 'awaiting_approval'),
  );

  const garbage = await plantGarbage(id);
  const before = new Set([...fileStoreRefs(contentDir)].filter((r) => !garbage.has(r)));
  // Days pass: every value is older than the grace (the dev server's retention, a day).
  await backdateContent(fileStore, 3 * DAY);

  const dry = await gcCli('--dry-run');
  expect(dry.listed).toEqual(garbage);
  expect(fileStoreRefs(contentDir)).toEqual(new Set([...before, ...garbage]));
  const real = await gcCli();
  expect(real.listed).toEqual(garbage);
  expect(fileStoreRefs(contentDir)).toEqual(before);
  expect(dry.report).toMatchObject({ dryRun: true, removed: 2, retentionMs: DAY, graceMs: DAY });
  expect(real.report).toMatchObject({ dryRun: false, removed: 2, removedBytes: dry.report.removedBytes });
  // The value another Temporal service's run claims is not judged here.
  expect(real.report.unjudged).toBe(1);

  // The run goes on from its stored conversation once approved.
  const approved = await runCli(['approve', id, 'add'], dev.env);
  expect(approved.code).toBe(0);
  const answer = ((await handle.result()) as AgentResult).answer ?? '';
  expect(answer.includes(BIG) && answer.endsWith(' 4')).toBe(true);
}, 180_000);

test('a fork of a closed run works after a collection, and keeps what it needs when the original is gone', async () => {
  const { id, values } = await largeRun();
  expect(values.size).toBeGreaterThan(2);
  await backdateContent(fileStore, 3 * DAY);
  // Closed within retention: its history can be forked, so nothing of it goes.
  const kept = await gcCli();
  expect([...values].filter((r) => kept.listed.has(r))).toEqual([]);

  // Another prompt: the fork's conversation parts from the original's after step 1.
  const prompt = path.join(scriptsDir, 'other-prompt.txt');
  fs.writeFileSync(prompt, 'You are a careful assistant.');
  const forkId = uid('fork');
  const fork = await runCli(
    ['fork', id, '--from-step', '1', '--id', forkId, '--prompt-file', prompt],
    dev.env,
  );
  expect(fork.code).toBe(0);
  expect(fork.stdout.includes(BIG)).toBe(true);

  // The original's history deleted: what only it referenced goes; the fork's claim keeps the rest.
  await dev.fx.client.workflowService.deleteWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId: id },
  });
  await until('the original to be gone', () =>
    dev.fx.client.workflow
      .getHandle(id)
      .describe()
      .then(
        () => false,
        () => true,
      ),
  );
  await backdateContent(fileStore, 3 * DAY);
  const after = await gcCli();
  expect([...after.listed].filter((r) => values.has(r)).length).toBeGreaterThan(0);
  // The fork's transcript reads the result it carried from the store, whole.
  const transcript = await runCli(['transcript', forkId, '--format', 'json'], dev.env);
  expect(transcript.code).toBe(0);
  const entries = JSON.parse(transcript.stdout) as { kind: string; step?: number; newMessages?: unknown[] }[];
  const carried = entries.find((e) => e.kind === 'model' && e.step === 2)?.newMessages ?? [];
  expect(carried).toContainEqual(expect.objectContaining({ role: 'tool', toolCallId: 'q' }));
  expect(
    carried.some(
      (m) =>
        typeof (m as { content?: unknown }).content === 'string' &&
        (m as { content: string }).content.includes(BIG),
    ),
  ).toBe(true);
}, 240_000);

test('PostgreSQL: garbage older than the grace goes, a closed run and young values stay, a dry run names the same set', async () => {
  const pg = await pgSchemaStore('gcrun');
  const store = contentStoreFor(pg.config);
  try {
    const id = uid('pg-run');
    await withDevWorker(
      dev.fx,
      async (taskQueue) => {
        const h = await startAgentRun(
          dev.fx.client,
          {
            task: 'big',
            tools: ['sql_query', 'calculator'],
            model: { provider: 'scripted', turns: LARGE.turns },
          },
          { workflowId: id, taskQueue },
        );
        expect(((await h.result()) as AgentResult).answer?.includes(BIG)).toBe(true);
      },
      { contentStore: pg.config },
    );
    const run = await store.stats();
    expect(run.claimants).toBe(1);
    const garbage = new Set([
      await store.put({ garbage: 'nobody' }),
      await store.put({ garbage: 'never ran' }, claimantOf(await service(), 'default', uid('never'))),
    ]);
    await backdateContent(pg.config, 3 * DAY);
    const young = await store.put({ young: 'unclaimed, written now' });

    const collect = async (dryRun: boolean) => {
      const removed: ContentEntry[] = [];
      const report = await collectContentNow(dev.fx.client, pg.config, { dryRun }, (e) => removed.push(e));
      return { report, refs: new Set(removed.map((e) => e.ref)) };
    };
    const dry = await collect(true);
    expect(dry.refs).toEqual(garbage);
    expect((await store.stats()).values).toBe(run.values + 3);
    const real = await collect(false);
    expect(real.refs).toEqual(dry.refs);
    // The same report but for what a removal changes (the order of the sample is the store's).
    expect({ ...real.report, dryRun: true, storeValues: 0, storeBytes: 0, sample: [] }).toEqual({
      ...dry.report,
      storeValues: 0,
      storeBytes: 0,
      sample: [],
      cutoff: real.report.cutoff,
    });
    expect(new Set(real.report.sample)).toEqual(garbage);
    expect(real.report.removed).toBe(2);
    expect(real.report.storeValues).toBe(run.values + 1);
    await expect(store.get([...garbage][0] as never)).rejects.toThrow(/not in the content store/);
    await expect(store.get(young)).resolves.toEqual({ young: 'unclaimed, written now' });
    expect((await collect(false)).refs.size).toBe(0);
    // A grace shorter than retention is raised to it, and says so.
    const short = await collectContentNow(dev.fx.client, pg.config, { dryRun: true, graceMs: 60_000 });
    expect(short.graceMs).toBe(DAY);
    expect(short.graceNote).toMatch(/shorter than the retention/);
  } finally {
    await store.close();
    await pg.drop();
  }
}, 240_000);

test('the worker sets up the GC schedule; a triggered firing removes garbage', async () => {
  const handle = dev.fx.client.schedule.getHandle(contentGcScheduleId(dev.taskQueue));
  const described = await until('the schedule', () => handle.describe().catch(() => undefined));
  expect(described.spec.intervals?.[0]?.every).toBe(60 * 60 * 1000);
  expect(described.action).toMatchObject({ workflowType: 'contentGcWorkflow', taskQueue: dev.taskQueue });

  const garbage = await plantGarbage('scheduled');
  const before = new Set([...fileStoreRefs(contentDir)].filter((r) => !garbage.has(r)));
  await backdateContent(fileStore, 3 * DAY);
  const seen = new Set(described.info.recentActions.map((a) => a.action.workflow.workflowId));
  await handle.trigger();
  const firing = await until('the firing', async () =>
    (await handle.describe()).info.recentActions.find((a) => !seen.has(a.action.workflow.workflowId)),
  );
  const report = (await dev.fx.client.workflow
    .getHandle(firing.action.workflow.workflowId)
    .result()) as ContentGcReport;
  expect(report).toMatchObject({ dryRun: false, removed: 2 });
  expect(new Set(report.sample)).toEqual(garbage);
  expect(fileStoreRefs(contentDir)).toEqual(before);

  const stats = await runCli(['content', 'stats', '--json'], dev.env);
  expect(JSON.parse(stats.stdout)).toMatchObject({ values: before.size });
}, 120_000);
