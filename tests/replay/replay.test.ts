/**
 * Every committed history (tests/replay/histories, recorded from real runs of each scenario by
 * scripts/record-histories.ts) replays against today's workflow code; a deliberately changed
 * workflow is caught as a determinism violation, named by step.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { readHistoryFile } from '../../client/debug/history';
import {
  promiseStackHookOff,
  replayBundle,
  replayHistory,
  replayMany,
  sharesModules,
} from '../../client/debug/replay';
import { SCENARIOS } from '../../testkit/replay-scenarios';
import { quietRuntime } from '../../testkit/temporal';

const DIR = path.join(__dirname, 'histories');
/**
 * Today's recordings, plus runs recorded by earlier versions of the code, each folder named for the
 * version: v1/ before large content went by reference, v2/ before search attributes were upserted
 * on change (every step before), v3/ before a policy could name a whole MCP server whose tools the
 * run enables one by one (such a run failed at start), v4/ before MCP tool arguments were checked by
 * the workflow's own JSON Schema check (zod's `z.fromJSONSchema` before).
 */
const OLDER = ['v1', 'v2', 'v3', 'v4'];
const FILES = [
  ...fs.readdirSync(DIR).filter((f) => f.endsWith('.json')),
  ...OLDER.flatMap((v) =>
    fs
      .readdirSync(path.join(DIR, v))
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(v, f)),
  ),
];
let current: WorkflowBundleWithSourceMap;
let changed: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  quietRuntime();
  current = await replayBundle();
  changed = await replayBundle(path.join(__dirname, 'fixtures', 'changed-workflows.ts'));
}, 120_000);

test('a recorded history exists for every scenario', () => {
  for (const s of SCENARIOS)
    expect(FILES.some((f) => f === `${s.name}.json` || f.startsWith(`${s.name}-`))).toBe(true);
});

test.each(FILES)('%s replays with the current workflow code', async (file) => {
  const outcome = await replayHistory(current, readHistoryFile(path.join(DIR, file)));
  expect(outcome).toEqual({ workflowId: expect.any(String), ok: true });
});

test('replays evaluate the workflow modules once per replay worker, or per history when asked', async () => {
  // An SDK whose bundles declare their module cache differently would make every history pay for it.
  expect(sharesModules(current)).toBe(true);
  const batch = FILES.map((f) => ({ history: readHistoryFile(path.join(DIR, f)), workflowId: f }));
  const seen: string[] = [];
  for await (const o of replayMany(current, batch, 1, { isolateModules: true })) {
    expect(o).toEqual({ workflowId: o.workflowId, ok: true });
    seen.push(o.workflowId);
  }
  expect(seen.sort()).toEqual([...FILES].sort());
});

test('replays run without the per-promise stack-trace hook of the SDK (the bulk of a replay’s cost)', () => {
  // Replays ran above in this process; an SDK whose internals moved would leave the hook on.
  expect(promiseStackHookOff()).toBe(true);
});

test('a changed workflow raises a determinism violation that names the diverging step', async () => {
  const outcome = await replayHistory(changed, readHistoryFile(path.join(DIR, 'utility-tools.json')));
  expect(outcome.ok).toBe(false);
  expect(outcome.divergence).toMatchObject({
    step: 1,
    expected: 'activity callModel',
    got: 'activity get_time',
  });
  expect(outcome.divergence?.detail).toMatch(/does not match/);
});

test('replaying many histories in parallel lanes reports each exactly once, divergences located', async () => {
  const batch = FILES.map((f) => ({ history: readHistoryFile(path.join(DIR, f)), workflowId: f }));
  const seen: string[] = [];
  for await (const o of replayMany(current, batch, 2)) {
    expect(o).toEqual({ workflowId: o.workflowId, ok: true });
    seen.push(o.workflowId);
  }
  expect(seen.sort()).toEqual([...FILES].sort());

  const mixed: Record<string, boolean> = {};
  for await (const o of replayMany(changed, batch.slice(0, 4), 3)) {
    mixed[o.workflowId] = o.ok;
    if (!o.ok) expect(o.divergence?.step).toBeGreaterThanOrEqual(1);
  }
  expect(Object.keys(mixed).sort()).toEqual(FILES.slice(0, 4).sort());
  expect(Object.values(mixed)).toContain(false);
}, 120_000);
