/**
 * Approvals through the doors people use, against a real dev server and a worker process: the
 * `approvals`, `approve` and `reject` commands and `GET/POST /api/approvals`. `approvals` shows the
 * deadline in the terminal's time zone and each run page's address. Refused decisions show
 * the run's own reason (not "Workflow Update failed"); finished runs say they are finished.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { AgentInput } from '../../shared/agent';
import { startAgentRun } from '../../client/start-run';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'approvals' });
const { taskQueue } = dev;
let api: RunningApiServer;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => api.close());
});

async function call(method: string, p: string, body?: unknown) {
  const res = await fetch(`${api.url}${p}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('list, refuse with the validator’s reason, reject, and say finished runs are finished', async () => {
  const user = uid('ana');
  const input: AgentInput = {
    task: 'mail the report',
    tools: ['send_email'],
    notify: { user },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['send_email', { to: ['boss@example.com'], subject: 'Report', text: 'Attached.' }, 's1']),
        answerTurn('{{last_tool_results}}'),
      ],
    },
  };
  const id = uid('run');
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });

  const listed = await until('the approval over HTTP', async () => {
    const r = await call('GET', `/api/approvals?run=${encodeURIComponent(id)}`);
    return (r.body.approvals as unknown[]).length ? r : undefined;
  });
  expect(listed.status).toBe(200);
  expect(listed.body.approvals).toEqual([
    expect.objectContaining({
      workflowId: id,
      toolCallId: 's1',
      tool: 'send_email',
      args: { to: ['boss@example.com'], subject: 'Report', text: 'Attached.' },
    }),
  ]);
  // Across runs (visibility) and by the user the run notifies.
  const all = await until('the run in visibility', async () => {
    const r = await call('GET', `/api/approvals?user=${encodeURIComponent(user)}`);
    return (r.body.approvals as { workflowId: string }[]).some((a) => a.workflowId === id) ? r : undefined;
  });
  expect((all.body.approvals as unknown[]).length).toBe(1);
  // The deadline in the terminal's time zone (TZ), and the run page at the web UI's address.
  const deadline = (listed.body.approvals as { deadline: string }[])[0]!.deadline;
  const inKolkata = `${new Date(Date.parse(deadline) + 330 * 60_000).toISOString().slice(0, 19).replace('T', ' ')} +05:30`;
  const cliList = await runCli(['approvals', '--user', user], {
    ...dev.env,
    TZ: 'Asia/Kolkata',
    DURABLE_AGENT_API_URL: 'http://ui.example:8787/',
  });
  expect(cliList.code).toBe(0);
  expect(cliList.stdout).toContain(`${id} s1: send_email until ${inKolkata} (`);
  expect(cliList.stdout).not.toContain(deadline);
  expect(cliList.stdout).toContain('to: boss@example.com; subject: "Report"');
  expect(cliList.stdout).toContain(`run page: http://ui.example:8787/runs/${encodeURIComponent(id)}\n`);
  // `status` shows the same local deadline.
  const status = await runCli(['status', id], { ...dev.env, TZ: 'Asia/Kolkata' });
  expect(status.stdout).toContain(`waits for approval: s1 send_email until ${inKolkata} (`);
  const inUtc = await runCli(['approvals', id, '--json'], { ...dev.env, TZ: 'UTC' });
  expect(JSON.parse(inUtc.stdout)).toEqual([
    expect.objectContaining({
      workflowId: id,
      deadline,
      runPage: `http://127.0.0.1:8787/runs/${encodeURIComponent(id)}`,
    }),
  ]);
  // Without DURABLE_AGENT_API_URL: where `durable-agent api` serves by default, a link that opens.
  const plain = await runCli(['approvals', id], { ...dev.env, TZ: 'UTC' });
  expect(plain.stdout).toContain(`until ${deadline.slice(0, 19).replace('T', ' ')} +00:00 (`);
  expect(plain.stdout).toContain(`run page: http://127.0.0.1:8787/runs/${encodeURIComponent(id)}\n`);

  const ghost = await runCli(['approve', id, 'ghost'], dev.env);
  expect(ghost.code).toBe(1);
  expect(ghost.stderr).toBe(`error: No tool call ghost is waiting for approval; waiting: s1\n`);

  const argsFile = path.join(tempDir('args'), 'edited.json');
  fs.writeFileSync(argsFile, JSON.stringify({ to: [], subject: 'Report' }));
  const badEdit = await runCli(['approve', id, 's1', '--args', argsFile], dev.env);
  expect(badEdit.code).toBe(1);
  expect(badEdit.stderr).toMatch(
    /^error: The edited arguments for send_email are invalid: to: .*text: give text and\/or html\n$/,
  );
  const badHttp = await call('POST', `/api/approvals/${encodeURIComponent(id)}/s1`, { approve: false });
  expect(badHttp).toEqual({
    status: 400,
    body: { error: 'reason: a rejection needs a reason (shown to the model)' },
  });

  const rejected = await runCli(['reject', id, 's1', '--reason', 'wrong recipient'], dev.env);
  expect(rejected).toMatchObject({ code: 0, stdout: 's1: rejected\n' });
  const result = (await handle.result()) as { answer: string };
  expect(result.answer).toContain('The user rejected this call: wrong recipient');

  const late = await runCli(['approve', id, 's1'], dev.env);
  expect(late.code).toBe(1);
  expect(late.stderr).toBe(
    `error: Run "${id}" has already ended (COMPLETED); no tool call of it waits for approval any more. See its outcome with: durable-agent status ${id}\n`,
  );
  expect(await call('POST', `/api/approvals/${encodeURIComponent(id)}/s1`, { approve: true })).toEqual({
    status: 409,
    body: {
      error: `Run "${id}" has already ended (COMPLETED); no tool call of it waits for approval any more. See its outcome with: durable-agent status ${id}`,
      code: 'finished',
    },
  });
  expect((await call('POST', '/api/approvals/no-such-run/s1', { approve: true })).status).toBe(404);
}, 180_000);

test('run --approve with a misspelt or wrongly cased tool is refused before anything starts', async () => {
  // A model that reads the task, so the run's tools need not match a script's.
  for (const name of ['send_emial', 'Send_Email']) {
    const out = await runCli(
      ['run', '--model', 'local', '--tools', 'send_email', '--approve', name, 'x'],
      dev.env,
    );
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      new RegExp(`policy\\.requireApproval: unknown tool "${name}".*valid tools: get_time, calculator`),
    );
  }
  const notEnabled = await runCli(
    ['run', '--model', 'local', '--tools', 'calculator', '--approve', 'send_email', 'x'],
    dev.env,
  );
  expect(notEnabled.stderr).toMatch(
    /tool "send_email" is not enabled for this run; enabled tools: calculator/,
  );
}, 60_000);
