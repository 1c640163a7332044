#!/usr/bin/env node
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { AgentInput } from '../shared/agent';
import { AgentInputSchema, agentInputBudgetProblem, stateQuery, userMessageSignal } from '../shared/agent';
import { BUDGETS, overBudgetMessage, utf8Bytes } from '../shared/budgets';
import type { BudgetName } from '../shared/run-budgets';
import { describeBudget } from '../shared/run-budgets';
import { notificationsQuery } from '../shared/notifications/messages';
import { formatZodIssues } from '../shared/tools/define';
import { TOOL_NAMES } from '../shared/tools/registry';
import { loadWorkerConfig } from '../workers/config';
import { connectClient, temporalTarget } from '../workers/connect';
import { startTracing } from '../workers/start-tracing';
import { devServerStatus, startDevServer, stopDevServer } from './dev-server';
import { registerDebugCommands } from './debug/commands';
import { registerKbCommands } from './kb';
import { parseModelSpec } from './model-spec';
import { registerNotificationCommands } from './notifications';
import { registerApprovalCommands } from './approvals';
import { resolveRunAnswer } from './answer';
import { formatAnswer } from '../shared/render-citations';
import { startAgentRun } from './start-run';
import { watchRun } from './watch';
import type * as WorkerRun from '../workers/run';

const program = new Command();
program
  .name('durable-agent')
  .description('Run AI agents as durable Temporal workflows')
  .option(
    '--address <host:port>',
    'Temporal frontend (default: TEMPORAL_ADDRESS, a profile, or 127.0.0.1:7233)',
  )
  .option('--namespace <name>', 'Temporal namespace (default: TEMPORAL_NAMESPACE or "default")');

function target() {
  const o = program.opts<{ address?: string; namespace?: string }>();
  return temporalTarget({ address: o.address, namespace: o.namespace });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

// ---------------------------------------------------------------- server
const server = program
  .command('server')
  .description('The local Temporal dev server (persistent SQLite file)');
const serverOpts = (cmd: Command) =>
  cmd
    .option('--data-dir <dir>', 'folder for the database, pid and log (default .data/temporal)')
    .option('--port <port>', 'gRPC port', positiveInt, 7233)
    .option('--ui-port <port>', 'Web UI port (default: port + 1000)', positiveInt)
    .option('--headless', 'no Web UI');
type ServerOpts = { dataDir?: string; port: number; uiPort?: number; headless?: boolean };

serverOpts(server.command('start').description('Start it (idempotent); returns once it answers')).action(
  async (o: ServerOpts) => {
    const s = await startDevServer(o);
    console.log(`Temporal dev server running at ${s.address} (pid ${s.pid})`);
    if (s.uiUrl) console.log(`Web UI: ${s.uiUrl}`);
    console.log(`Database: ${s.dbFile}`);
  },
);
serverOpts(server.command('stop').description('Stop it')).action(async (o: ServerOpts) => {
  console.log(
    (await stopDevServer(o)) ? 'Temporal dev server stopped' : 'Temporal dev server was not running',
  );
});
serverOpts(server.command('status').description('Is it running?')).action(async (o: ServerOpts) => {
  const s = await devServerStatus(o);
  console.log(s.running ? `running at ${s.address} (pid ${s.pid}); database ${s.dbFile}` : 'not running');
  process.exitCode = s.running ? 0 : 3;
});

// ---------------------------------------------------------------- worker
program
  .command('worker')
  .description('Run a worker: agent workflows, the model activity and every tool activity')
  .action(async () => {
    // The worker (activities, bundler) is loaded only by the commands that run one.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { runWorker } = require('../workers/run') as typeof WorkerRun;
    await runWorker({ config: loadWorkerConfig(), target: target() }).done;
  });

// ---------------------------------------------------------------- run
interface RunOpts {
  model: string;
  tools?: string;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxWallClock?: string;
  approve?: string;
  system?: string;
  notifyUser?: string;
  input?: string;
  id?: string;
  json?: boolean;
  wait: boolean;
  taskQueue?: string;
}

/** Builds and validates the workflow input locally, so mistakes are reported before anything starts. */
function buildInput(task: string | undefined, o: RunOpts): AgentInput {
  let input: Record<string, unknown> = {};
  if (o.input) input = JSON.parse(fs.readFileSync(o.input, 'utf8')) as Record<string, unknown>;
  if (task !== undefined) input.task = task;
  if (!o.input || o.model !== 'scripted:demo') input.model = parseModelSpec(o.model);
  if (o.tools !== undefined)
    input.tools = o.tools
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  if (o.system !== undefined) input.system = o.system;
  const policy = { ...((input.policy as object | undefined) ?? {}) } as Record<string, unknown>;
  if (o.maxSteps !== undefined) policy.maxSteps = o.maxSteps;
  if (o.maxTokens !== undefined) policy.maxTokens = o.maxTokens;
  if (o.maxCost !== undefined) policy.maxCostUsd = o.maxCost;
  if (o.maxWallClock !== undefined) policy.maxWallClock = o.maxWallClock;
  if (o.approve !== undefined) policy.requireApproval = o.approve.split(',').map((t) => t.trim());
  input.policy = policy;
  if (o.notifyUser) input.notify = { user: o.notifyUser };
  const parsed = AgentInputSchema.safeParse(input);
  if (!parsed.success) throw new Error(`Invalid run: ${formatZodIssues(parsed.error)}`);
  const tooLarge = agentInputBudgetProblem(input);
  if (tooLarge) throw new Error(`Invalid run: ${tooLarge}`);
  return input as AgentInput;
}

program
  .command('run')
  .description('Start an agent run, show its progress live, and print the final answer')
  .argument('[task]', 'what the agent should do')
  .addOption(
    new Option(
      '--model <provider:name>',
      'scripted:<script> | local[:<file>] | openai:<model> | anthropic:<model>',
    ).default('scripted:demo'),
  )
  .option('--tools <names>', `comma-separated tools (known: ${TOOL_NAMES.join(', ')})`)
  .option('--max-steps <n>', 'model turns before the run stops', positiveInt)
  .option('--max-tokens <n>', 'token budget', positiveInt)
  .option(
    '--max-cost <usd>',
    'cost budget in US dollars (needs prices: policy.prices or the worker’s)',
    positiveNumber,
  )
  .option('--max-wall-clock <duration>', 'time budget from the start, e.g. "2h"')
  .option('--approve <tools>', 'tools whose calls wait for approval')
  .option('--system <prompt>', 'system prompt')
  .option('--notify-user <user>', 'also deliver notifications to inbox:<user>')
  .option('--input <file.json>', 'full workflow input as JSON (flags override it)')
  .option('--id <workflowId>', 'workflow id (default agent-<uuid>)')
  .option('--task-queue <name>', 'task queue (default DURABLE_AGENT_TASK_QUEUE or durable-agent)')
  .option('--json', 'print one JSON object with the outcome instead of progress')
  .option('--no-wait', 'start the run and print its id without waiting')
  .action(async (task: string | undefined, o: RunOpts) => {
    if (task === undefined && !o.input)
      throw new Error('Give a task: durable-agent run "<task>" (or --input file.json)');
    const input = buildInput(task, o);
    const config = loadWorkerConfig();
    // With tracing on, this command is one trace: its span, the run's start, then the worker's spans.
    const tracing = startTracing(config, 'run');
    const client = await connectClient(target(), tracing?.clientInterceptors);
    try {
      const workflowId = o.id ?? `agent-${randomUUID()}`;
      const handle = await startAgentRun(client, input, {
        taskQueue: o.taskQueue ?? config.taskQueue,
        workflowId,
      });
      if (!o.wait) {
        console.log(o.json ? JSON.stringify({ workflowId, runId: handle.firstExecutionRunId }) : workflowId);
        return;
      }
      if (!o.json) console.log(`Started ${workflowId}`);
      const outcome = await watchRun(client, handle, o.json ? () => undefined : (l) => console.log(l));
      const answer = outcome.result?.answer;
      const resolved = answer ? await resolveRunAnswer(client, workflowId, answer) : undefined;
      if (o.json) {
        const { citations, unknown } = resolved?.rendered ?? { citations: [], unknown: [] };
        console.log(
          JSON.stringify({
            workflowId,
            ...outcome,
            citations,
            ...(unknown.length ? { unknownCitations: unknown } : {}),
          }),
        );
      } else if (outcome.result) {
        const r = outcome.result;
        if (resolved && !resolved.ok) console.error(`note: ${resolved.error}`);
        if (r.stopReason !== 'final_answer')
          console.log(`\nStopped by the ${r.stopReason} budget${r.budget ? `: ${r.budget}` : ''}.`);
        console.log(
          `\n${resolved ? formatAnswer(resolved.rendered) : `(no answer: stopped by ${r.stopReason})`}\n\n` +
            `${r.steps} steps, ${r.usage.toolCalls} tool calls, ${r.usage.inputTokens}+${r.usage.outputTokens} tokens`,
        );
      } else {
        console.error(`Run ${outcome.outcome}: ${outcome.error ?? ''}`);
      }
      process.exitCode = outcome.exitCode;
    } finally {
      await client.connection.close();
      await tracing?.shutdown();
    }
  });

// ---------------------------------------------------------------- status / cancel / message
async function withHandle<T>(id: string, fn: (h: WorkflowHandle, client: Client) => Promise<T>) {
  const client = await connectClient(target());
  try {
    return await fn(client.workflow.getHandle(id), client);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new Error(`No run with id "${id}" in this namespace`);
    throw err;
  } finally {
    await client.connection.close();
  }
}

program
  .command('status')
  .description('Show a run’s state: status, step, usage, pending tool calls, last error')
  .argument('<id>', 'workflow id')
  .option('--json', 'JSON output')
  .action(async (id: string, o: { json?: boolean }) => {
    await withHandle(id, async (h, client) => {
      const [desc, state] = await Promise.all([h.describe(), h.query(stateQuery)]);
      const resolved = state.answer === null ? undefined : await resolveRunAnswer(client, id, state.answer);
      if (o.json) {
        const citations = resolved?.rendered.citations ?? [];
        console.log(JSON.stringify({ workflowStatus: desc.status.name, ...state, citations }, null, 2));
        return;
      }
      console.log(
        `${id}: ${state.status} (workflow ${desc.status.name}), step ${state.step}/${state.maxSteps}`,
      );
      console.log(
        `usage: ${state.usage.modelCalls} model calls, ${state.usage.toolCalls} tool calls, ` +
          `${state.usage.inputTokens}+${state.usage.outputTokens} tokens; continued as new ${state.continuations}×`,
      );
      for (const p of state.pendingToolCalls) console.log(`pending: ${p.name} ${p.toolCallId} (${p.state})`);
      for (const a of state.approvals ?? [])
        console.log(
          `waits for approval: ${a.toolCallId} ${a.tool} until ${a.deadline} (${a.reason}): ${a.summary}`,
        );
      for (const [name, b] of Object.entries(state.budgets ?? {}))
        console.log(`budget: ${describeBudget(name as BudgetName, b)}`);
      if (state.untrusted) console.log(`untrusted content: ${state.untrusted}`);
      if (state.lastError) console.log(`last error: ${state.lastError}`);
      if (resolved && !resolved.ok) console.error(`note: ${resolved.error}`);
      if (resolved) console.log(`answer: ${formatAnswer(resolved.rendered)}`);
    });
  });

program
  .command('cancel')
  .description('Cancel a run gracefully (running tools are cancelled; state stays queryable)')
  .argument('<id>', 'workflow id')
  .action(async (id: string) => {
    await withHandle(id, async (h) => {
      await h.cancel();
      console.log(`Cancellation requested for ${id}`);
    });
  });

program
  .command('message')
  .description('Send a user message into a running agent')
  .argument('<id>', 'workflow id')
  .argument('<text>', 'the message')
  .action(async (id: string, text: string) => {
    if (!text.trim()) throw new Error('The message must not be empty');
    const bytes = utf8Bytes(text);
    if (bytes > BUDGETS.userMessageBytes)
      throw new Error(overBudgetMessage('The message', bytes, BUDGETS.userMessageBytes));
    await withHandle(id, async (h) => {
      await h.signal(userMessageSignal, { text });
      console.log(`Message sent to ${id}`);
    });
  });

// ---------------------------------------------------------------- demo
/** The demo job of the local model: one a small model does in two steps (a tool, then the answer). */
const LOCAL_DEMO: Pick<AgentInput, 'task' | 'tools'> = {
  task: 'How many customers are in the database?',
  tools: ['get_time', 'calculator', 'knowledge_base_search', 'sql_schema', 'sql_query', 'notify_user'],
};

program
  .command('demo')
  .description('Start the dev server and a worker, run the demo agent job with the offline model')
  .addOption(
    new Option(
      '--model <provider:name>',
      'scripted:demo (a replayed script) | local (a small model run here)',
    ).default('scripted:demo'),
  )
  .action(async (o: { model: string }) => {
    const model = parseModelSpec(o.model);
    const s = await startDevServer({});
    console.log(`Temporal dev server at ${s.address}${s.uiUrl ? `, Web UI ${s.uiUrl}` : ''}`);
    const config = loadWorkerConfig();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { installLogging, runWorker } = require('../workers/run') as typeof WorkerRun;
    installLogging('WARN', config.logFormat);
    const worker = runWorker({ config, target: target(), installSignalHandlers: false });
    const client = await connectClient(target());
    try {
      const workflowId = `demo-${randomUUID()}`;
      const input: AgentInput =
        model.provider === 'scripted'
          ? {
              task: 'Plan my Tokyo trip budget: 4 hotel nights at 182.50 EUR, a 912 EUR flight, plus a 10% reserve. What time is it there now?',
              model,
              tools: ['get_time', 'calculator', 'notify_user'],
              notify: { user: 'demo' },
            }
          : { ...LOCAL_DEMO, model, notify: { user: 'demo' } };
      const handle = await startAgentRun(client, input, { taskQueue: config.taskQueue, workflowId });
      console.log(`Started ${workflowId}\nTask: ${input.task}`);
      const outcome = await watchRun(client, handle, (l) => console.log(l));
      console.log(`\n${outcome.result?.answer ?? `Run ${outcome.outcome}: ${outcome.error ?? ''}`}\n`);
      const { notifications } = await handle.query(notificationsQuery);
      for (const n of notifications)
        console.log(`notification #${n.no} [${n.type}, priority ${n.priority}] ${n.title}: ${n.message}`);
      console.log(`(also in inbox:demo — durable-agent notifications inbox:demo)\n`);
      console.log(`Inspect it: .temporal/venv/bin/temporal workflow show --workflow-id ${workflowId}`);
      if (s.uiUrl) console.log(`or in the Web UI: ${s.uiUrl}/namespaces/default/workflows/${workflowId}`);
      console.log('Stop the server with: npx durable-agent server stop');
      process.exitCode = outcome.exitCode;
    } finally {
      await client.connection.close();
      await worker.stop();
    }
  });

registerNotificationCommands(program, target);
registerApprovalCommands(program, target);

registerDebugCommands(program, target);
registerKbCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
