#!/usr/bin/env node
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { AgentInput, AgentStateView } from '../shared/agent';
import {
  AgentInputSchema,
  DEFAULT_TOOLS,
  agentInputBudgetProblem,
  stateQuery,
  userMessageSignal,
} from '../shared/agent';
import { BUDGETS, overBudgetMessage, utf8Bytes } from '../shared/budgets';
import type { BudgetName } from '../shared/run-budgets';
import { describeBudget } from '../shared/run-budgets';
import { notificationsQuery } from '../shared/notifications/messages';
import { RUN_ID_CHARSET, printable, runIdProblem } from '../shared/identifiers';
import { formatZodIssues } from '../shared/tools/define';
import { TOOL_NAMES } from '../shared/tools/registry';
import { loadScriptFile, scriptTools } from '../activities/model/scripted';
import { loadWorkerConfig } from '../workers/config';
import { connectClient, temporalTarget } from '../workers/connect';
import { startTracing } from '../workers/start-tracing';
import { withCommandClient } from './traced-client';
import { devServerStatus, startDevServer, stopDevServer } from './dev-server';
import { startCodecServer } from './codec-server';
import { codecKeysFromEnv } from '../workers/payload-codec';
import { registerDebugCommands } from './debug/commands';
import { exitAfterParsingWhenAsked, registerKbCommands } from './kb';
import { parseModelSpec } from './model-spec';
import { registerNotificationCommands } from './notifications';
import { registerApprovalCommands } from './approvals';
import { resolveRunAnswer } from './answer';
import { formatAnswer } from '../shared/render-citations';
import { startAgentRun } from './start-run';
import { EXIT, watchRun } from './watch';
import { noWorkerMessage, workflowPollers } from './pollers';
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
  reuse?: boolean;
  json?: boolean;
  wait: boolean;
  taskQueue?: string;
  cancelOnExit?: boolean;
}

/** Reads `--input`: a JSON object (the whole workflow input), or an error that names the file and the fix. */
function readInputFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `--input ${file}: no such file`
        : `--input ${file}: cannot read it (${(err as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`--input ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    const found = json === null ? 'null' : Array.isArray(json) ? 'an array' : `a ${typeof json}`;
    throw new Error(
      `--input ${file} must hold a JSON object (the workflow input, e.g. {"task": "…"}); it holds ${found}`,
    );
  }
  return json as Record<string, unknown>;
}

/**
 * For a scripted model: the script's turns replay whatever the task, so its tools are enabled by
 * default, a run that lacks one is refused before it starts, and a note says when the task is not
 * the one the script was written for. Best effort: a script this command cannot read is left to the worker.
 */
async function checkScriptedRun(input: Record<string, unknown>, toolsGiven: boolean, scriptsDir: string) {
  const model = input.model as { provider?: string; script?: string } | undefined;
  if (model?.provider !== 'scripted' || typeof model.script !== 'string') return;
  const script = await loadScriptFile(scriptsDir, model.script).catch(() => undefined);
  if (!script) return;
  const needed = scriptTools(script.turns);
  const tools = Array.isArray(input.tools) ? (input.tools as string[]) : undefined;
  if (!toolsGiven && !tools) {
    input.tools = [...new Set([...DEFAULT_TOOLS, ...needed])];
  } else if ((tools ?? []).every((t) => TOOL_NAMES.includes(t))) {
    // (Unknown tool names are the input validation's to report.)
    const missing = needed.filter((t) => !(tools ?? DEFAULT_TOOLS).includes(t));
    if (missing.length) {
      throw new Error(
        `The scripted model "${model.script}" calls ${needed.join(', ')}, but this run does not enable ` +
          `${missing.join(', ')}: add ${missing.length > 1 ? 'them' : 'it'} to --tools, or use a model that reads the task ` +
          '(--model local, openai:<model> or anthropic:<model>)',
      );
    }
  }
  if (script.task !== undefined && typeof input.task === 'string' && input.task.trim() !== script.task) {
    console.error(
      `note: the scripted model "${model.script}" replays a fixed script written for "${script.task}"; it does ` +
        'not read your task. For an answer to it use --model local (offline) or openai:<model> / anthropic:<model>.',
    );
  }
}

/** Builds and validates the workflow input locally, so mistakes are reported before anything starts. */
async function buildInput(
  task: string | undefined,
  o: RunOpts,
  modelGiven: boolean,
  scriptsDir: string,
): Promise<AgentInput> {
  const input: Record<string, unknown> = o.input ? readInputFile(o.input) : {};
  if (task !== undefined) input.task = task;
  // --model's default applies when the input file names no model; a given --model always wins.
  if (modelGiven || input.model === undefined) input.model = parseModelSpec(o.model);
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
  await checkScriptedRun(input, o.tools !== undefined, scriptsDir);
  const parsed = AgentInputSchema.safeParse(input);
  if (!parsed.success) throw new Error(`Invalid run: ${formatZodIssues(parsed.error)}`);
  const tooLarge = agentInputBudgetProblem(input);
  if (tooLarge) throw new Error(`Invalid run: ${tooLarge}`);
  return input as AgentInput;
}

function workflowIdOption(value: string): string {
  if (!value.trim()) throw new InvalidArgumentError('must not be empty (leave --id out for agent-<uuid>)');
  return value;
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
  .option('--id <workflowId>', `workflow id (default agent-<uuid>); ${RUN_ID_CHARSET}`, workflowIdOption)
  .option(
    '--reuse',
    'allow an --id used before: a closed run is followed by a new one, a running one is followed',
  )
  .option('--task-queue <name>', 'task queue (default DURABLE_AGENT_TASK_QUEUE or durable-agent)')
  .option('--json', 'print one JSON object with the outcome instead of progress')
  .option('--no-wait', 'start the run and print its id without waiting')
  .option('--cancel-on-exit', 'Ctrl-C cancels the run (default: the run goes on without this command)')
  .action(async (task: string | undefined, o: RunOpts, cmd: Command) => {
    if (task === undefined && !o.input)
      throw new Error('Give a task: durable-agent run "<task>" (or --input file.json)');
    const idProblem = o.id === undefined ? null : runIdProblem(o.id);
    if (idProblem) throw new Error(`Invalid --id: ${idProblem}`);
    const config = loadWorkerConfig();
    const modelGiven = cmd.getOptionValueSource('model') !== 'default';
    const input = await buildInput(task, o, modelGiven, config.scriptsDir);
    // With tracing on, this command is one trace: its span, the run's start, then the worker's spans.
    const tracing = startTracing(config, 'run');
    const client = await connectClient(target(), tracing?.clientInterceptors);
    const t = target();
    const noWorker = (taskQueue: string) =>
      noWorkerMessage(taskQueue, t.connectionOptions.address, t.namespace);
    let watchingWorkers: { progressed(): void; stop(): void } | undefined;
    try {
      const workflowId = o.id ?? `agent-${randomUUID()}`;
      const taskQueue = o.taskQueue ?? config.taskQueue;
      const handle = await startAgentRun(client, input, { taskQueue, workflowId, reuse: o.reuse ?? false });
      if (!o.wait) {
        console.log(o.json ? JSON.stringify({ workflowId, runId: handle.firstExecutionRunId }) : workflowId);
        if ((await workflowPollers(client, taskQueue)) === 0)
          console.error(`note: ${noWorker(taskQueue)}; the run waits until one does`);
        return;
      }
      process.once('SIGINT', () => {
        if (o.cancelOnExit) {
          console.error(`\nCancelling ${workflowId}…`);
          // The watch goes on and ends with the cancellation (exit 130).
          handle.cancel().catch((err: unknown) => {
            console.error(`error: the cancellation failed: ${(err as Error).message}`);
            process.exit(EXIT.failed);
          });
          return;
        }
        console.error(
          `\nStopped watching; the run goes on; cancel it with: durable-agent cancel ${workflowId}` +
            `\n(follow it with: durable-agent status ${workflowId})`,
        );
        process.exit(EXIT.detached);
      });
      if (!o.json) console.log(`Started ${workflowId}`);
      watchingWorkers = watchForWorker(client, taskQueue, (l) => console.error(l), noWorker(taskQueue));
      const worker = watchingWorkers;
      const outcome = await watchRun(client, handle, (l) => {
        worker.progressed();
        if (!o.json) console.log(printable(l, true));
      });
      watchingWorkers.stop();
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
          `\n${resolved ? printable(formatAnswer(resolved.rendered), true) : `(no answer: stopped by ${r.stopReason})`}\n\n` +
            `${r.steps} steps, ${r.usage.toolCalls} tool calls, ${r.usage.inputTokens}+${r.usage.outputTokens} tokens`,
        );
      } else {
        console.error(`Run ${outcome.outcome}: ${printable(outcome.error ?? '', true)}`);
      }
      process.exitCode = outcome.exitCode;
    } finally {
      watchingWorkers?.stop();
      await client.connection.close();
      await tracing?.shutdown();
    }
  });

/**
 * Tells the user (once) when no worker polls the run's task queue, and again when one starts: the
 * run waits for a worker instead of hanging silently.
 */
function watchForWorker(
  client: Client,
  taskQueue: string,
  print: (line: string) => void,
  message: string,
): { progressed(): void; stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let warned = false;
  let announced = false;
  const announce = () => {
    if (!warned || announced) return;
    announced = true;
    print(`A worker polls task queue "${taskQueue}" now; the run goes on.`);
  };
  const check = async () => {
    const pollers = await workflowPollers(client, taskQueue);
    if (stopped) return;
    if (pollers === 0 && !warned) {
      warned = true;
      print(`waiting: ${message}; the run starts when one does (Ctrl-C leaves it waiting)`);
    } else if (pollers !== undefined && pollers > 0 && warned) {
      announce();
      return;
    } else if (pollers === undefined || pollers > 0) return;
    timer = setTimeout(() => void check(), 2000);
    timer.unref();
  };
  void check();
  return {
    /** The run made progress: a worker took it, even if it came and went between two checks. */
    progressed() {
      if (!stopped) announce();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------- status / cancel / message
/**
 * Runs `fn` with a handle on run `id`. A `command` that changes the run (cancel, message) is one
 * trace when tracing is on; reading commands open none.
 */
async function withHandle<T>(
  id: string,
  fn: (h: WorkflowHandle, client: Client) => Promise<T>,
  command?: string,
) {
  const act = async (client: Client) => {
    try {
      return await fn(client.workflow.getHandle(id), client);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new Error(`No run with id "${id}" in this namespace`);
      throw err;
    }
  };
  if (command) return withCommandClient(target(), command, act);
  const client = await connectClient(target());
  try {
    return await act(client);
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
      const desc = await h.describe();
      const state = await queryStateOrExplain(h, client, desc, o.json === true);
      if (!state) return;
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

/**
 * The run's state, or null after printing why there is none: no worker polls its task queue, or
 * the run closed before it could answer (e.g. its input failed validation).
 */
async function queryStateOrExplain(
  h: WorkflowHandle,
  client: Client,
  desc: WorkflowExecutionDescription,
  json: boolean,
): Promise<AgentStateView | null> {
  const t = target();
  const running = desc.status.name === 'RUNNING';
  const pollers = running ? await workflowPollers(client, desc.taskQueue) : undefined;
  let problem: string;
  if (pollers === 0) {
    problem = `${noWorkerMessage(desc.taskQueue, t.connectionOptions.address, t.namespace)}; the run waits until one does`;
  } else {
    try {
      return await h.query(stateQuery);
    } catch (err) {
      if (running) throw err;
      problem = `it ended before it could answer (${await closedReason(h, desc)})`;
    }
  }
  if (json) console.log(JSON.stringify({ workflowStatus: desc.status.name, problem }, null, 2));
  else console.log(`${h.workflowId}: workflow ${desc.status.name}; ${problem}`);
  process.exitCode = 1;
  return null;
}

/** Why a closed run ended, from its result. */
async function closedReason(h: WorkflowHandle, desc: WorkflowExecutionDescription): Promise<string> {
  try {
    await h.result();
    return desc.status.name.toLowerCase();
  } catch (err) {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    return `${desc.status.name.toLowerCase()}: ${cause?.message ?? (err as Error).message}`;
  }
}

/** Refuses (with what happened) to act on a run that has already ended. */
async function requireOpen(h: WorkflowHandle, consequence: string): Promise<void> {
  const desc = await h.describe();
  if (desc.status.name !== 'RUNNING') {
    throw new Error(
      `Run "${h.workflowId}" has already ended (${desc.status.name}); ${consequence}. ` +
        `See its outcome with: durable-agent status ${h.workflowId}`,
    );
  }
}

program
  .command('cancel')
  .description('Cancel a run gracefully (running tools are cancelled; state stays queryable)')
  .argument('<id>', 'workflow id')
  .action(async (id: string) => {
    await withHandle(
      id,
      async (h) => {
        await requireOpen(h, 'there is nothing to cancel');
        await h.cancel();
        console.log(`Cancellation requested for ${id}`);
      },
      'cancel',
    );
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
    await withHandle(
      id,
      async (h) => {
        await requireOpen(h, 'it takes no more messages');
        await h.signal(userMessageSignal, { text });
        console.log(`Message sent to ${id}`);
      },
      'message',
    );
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

// ---------------------------------------------------------------- codec-server
program
  .command('codec-server')
  .description('Serve /encode and /decode for the Web UI with the keys of DURABLE_AGENT_CODEC_KEYS')
  .option(
    '--host <address>',
    'address to bind; anything but loopback needs DURABLE_AGENT_CODEC_TOKEN',
    '127.0.0.1',
  )
  .option('--port <port>', 'port (0 = any free port)', (v) => Number(v), 8081)
  .option(
    '--ui-origin <origins>',
    'comma-separated Web UI origins allowed by CORS',
    'http://127.0.0.1:8233,http://localhost:8233',
  )
  .action(async (o: { host: string; port: number; uiOrigin: string }) => {
    const keys = codecKeysFromEnv();
    if (!keys) throw new Error('Set DURABLE_AGENT_CODEC_KEYS (id:base64-key,…) to run the codec server');
    const token = process.env.DURABLE_AGENT_CODEC_TOKEN?.trim() || undefined;
    const server = await startCodecServer({
      keys,
      host: o.host,
      port: o.port,
      uiOrigins: o.uiOrigin
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      ...(token ? { token } : {}),
    });
    console.log(
      `Codec server on ${server.url} (start the dev server with DURABLE_AGENT_CODEC_ENDPOINT=${server.url})`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
  });

registerNotificationCommands(program, target);
registerApprovalCommands(program, target);
exitAfterParsingWhenAsked(program);

registerDebugCommands(program, target);
registerKbCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Messages can quote what the user typed (ids, targets): never let it drive the terminal.
  console.error(`error: ${printable(err instanceof Error ? err.message : String(err), true)}`);
  process.exit(1);
});
