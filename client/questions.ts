/**
 * Questions and client-side tools as programs see them: what waits for input (of one run with its
 * sub-agents, or of every running agent run of a user), answers and client-tool results sent as
 * the validated `answerQuestion` update, and a wait for the next pending call. Plain functions over
 * a Temporal `Client` that return data and throw {@link QuestionRequestError}; the CLI, the HTTP
 * API, the MCP server and the SDK share them, so every door says the same thing.
 */
import { runningHandle as runningWorkflow } from './temporal-errors';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentStateView, PendingQuestion, QuestionAnswered } from '../shared/agent';
import { ANSWER_REFUSALS, checkAnswer } from '../shared/agent/questions';
import { AGENT_WORKFLOW_TYPE, answerQuestionUpdate, stateQuery } from '../shared/agent/messages';

/** Most runs {@link listQuestions} looks at across the namespace. */
export const MAX_RUNS_SCANNED = 200;

/** A call waiting for input, with its run (and, for a sub-agent's, the run that started it). */
export interface RunQuestion extends PendingQuestion {
  workflowId: string;
  /** Set when the call is a sub-agent's: the run that started the sub-agent, and its name there. */
  parent?: { workflowId: string; agent: string };
}

/** Why a request about a question failed; `code` is a closed set a caller can switch on. */
export type QuestionErrorCode =
  'not_found' | 'finished' | 'not_waiting' | 'already_answered' | 'invalid_answer' | 'timed_out';

/** A request about a question that could not be done, with the run's own reason. */
export class QuestionRequestError extends Error {
  override readonly name = 'QuestionRequestError';
  constructor(
    readonly code: QuestionErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const CODE_OF_REFUSAL: Record<string, QuestionErrorCode> = {
  [ANSWER_REFUSALS.notWaiting]: 'not_waiting',
  [ANSWER_REFUSALS.alreadyAnswered]: 'already_answered',
  [ANSWER_REFUSALS.invalid]: 'invalid_answer',
};

/** The handle of a running run, or an error saying it does not exist or has ended. */
function runningHandle(client: Client, workflowId: string): Promise<WorkflowHandle> {
  return runningWorkflow(
    client,
    workflowId,
    (code, message) => new QuestionRequestError(code, message),
    'nothing of it waits for an answer',
  );
}

/** The state of a running run, or an error saying it does not exist or has ended. */
async function runningState(client: Client, workflowId: string): Promise<AgentStateView> {
  return (await runningHandle(client, workflowId)).query(stateQuery);
}

/** The state of a run, or null when it ended (or vanished) since it was listed. */
async function stateIfRunning(client: Client, workflowId: string): Promise<AgentStateView | null> {
  try {
    return await runningState(client, workflowId);
  } catch (err) {
    if (err instanceof QuestionRequestError) return null;
    throw err;
  }
}

/**
 * The calls of a run waiting for input, then those of its sub-agents that wait (as deep as they
 * nest): a child's question is answered on the child, once, whoever lists it.
 */
async function questionsOfTree(
  client: Client,
  workflowId: string,
  state: AgentStateView,
  seen: Set<string>,
): Promise<RunQuestion[]> {
  seen.add(workflowId);
  const parent = state.parent
    ? { workflowId: state.parent.workflowId, agent: state.parent.agent }
    : undefined;
  const out: RunQuestion[] = (state.questions ?? []).map((q) => ({
    workflowId,
    ...q,
    ...(parent ? { parent } : {}),
  }));
  for (const child of state.agents ?? []) {
    if (seen.has(child.workflowId)) continue;
    if (!['running', 'waiting_for_input', 'waiting_for_approval'].includes(child.status)) continue;
    const childState = await stateIfRunning(client, child.workflowId);
    if (childState) out.push(...(await questionsOfTree(client, child.workflowId, childState, seen)));
  }
  return out;
}

/** Options of {@link listQuestions}. */
export interface ListQuestionsOptions {
  /** One run (and its sub-agents); an error when it is unknown or has ended. */
  workflowId?: string;
  /** Only runs that notify `inbox:<user>` (sub-agents inherit their parent's user). */
  user?: string;
  /** Only questions, or only client-tool calls. */
  kind?: PendingQuestion['kind'];
}

/**
 * Calls waiting for input: of one run with its sub-agents, or of every running agent run (at most
 * {@link MAX_RUNS_SCANNED}), optionally only runs that notify `user`; soonest deadline first.
 */
export async function listQuestions(client: Client, opts: ListQuestionsOptions = {}): Promise<RunQuestion[]> {
  let out: RunQuestion[] = [];
  const seen = new Set<string>();
  if (opts.workflowId) {
    out = await questionsOfTree(client, opts.workflowId, await runningState(client, opts.workflowId), seen);
  } else {
    let scanned = 0;
    for await (const wf of client.workflow.list({
      query: `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
    })) {
      if (++scanned > MAX_RUNS_SCANNED) break;
      if (opts.user !== undefined && wf.memo?.notifyUser !== opts.user) continue;
      if (seen.has(wf.workflowId)) continue;
      const state = await stateIfRunning(client, wf.workflowId);
      if (state) out.push(...(await questionsOfTree(client, wf.workflowId, state, seen)));
    }
  }
  const byKey = new Map(out.map((q) => [`${q.workflowId}\n${q.toolCallId}`, q]));
  return [...byKey.values()]
    .filter((q) => opts.kind === undefined || q.kind === opts.kind)
    .sort((a, b) => a.deadline.localeCompare(b.deadline));
}

/** Options of {@link answerQuestion}. */
export interface AnswerOptions {
  /** Which door answers (`web`, `cli`, `api`, `mcp`, `sdk`, …), shown to the user; default `sdk`. */
  by?: string;
}

/**
 * Answers a question (or submits a client tool's result) of run `workflowId`. The answer is checked
 * here first (size, nesting) and then by the run's validator against the call's schema; a refusal
 * comes back as a {@link QuestionRequestError} with the run's own reason, and the call keeps
 * waiting. Of two answers sent at once one wins; the other gets `already_answered`.
 */
export async function answerQuestion(
  client: Client,
  workflowId: string,
  toolCallId: string,
  answer: unknown,
  opts: AnswerOptions = {},
): Promise<QuestionAnswered> {
  const early = checkAnswer(undefined, answer);
  if (!early.ok)
    throw new QuestionRequestError(
      'invalid_answer',
      `The answer to ${toolCallId} was refused: ${early.error}`,
    );
  // Only its status: the run's validator says the rest (a query first would cost a second round trip).
  const handle = await runningHandle(client, workflowId);
  try {
    return await handle.executeUpdate(answerQuestionUpdate, {
      args: [{ toolCallId, answer, by: opts.by ?? 'sdk' }],
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause;
      const code = cause instanceof ApplicationFailure ? CODE_OF_REFUSAL[cause.type ?? ''] : undefined;
      throw new QuestionRequestError(code ?? 'invalid_answer', cause?.message ?? err.message);
    }
    if (err instanceof WorkflowNotFoundError) {
      throw new QuestionRequestError('finished', `Run "${workflowId}" ended before the answer arrived`);
    }
    throw err;
  }
}

/**
 * Submits the result of a client-side tool's call: the same update as an answer, checked against
 * the tool's output schema when it has one. The result reaches the model as the tool's result.
 */
export function submitToolResult(
  client: Client,
  workflowId: string,
  toolCallId: string,
  result: unknown,
  opts: AnswerOptions = {},
): Promise<QuestionAnswered> {
  return answerQuestion(client, workflowId, toolCallId, result, { by: opts.by ?? 'client' });
}

/** Options of {@link waitForQuestions}. */
export interface WaitForQuestionsOptions extends Omit<ListQuestionsOptions, 'workflowId' | 'user'> {
  /** How often the run is read (ms); default 500. */
  pollMs?: number;
  /** Give up after this long (ms) with a `timed_out` error; default: wait as long as the run runs. */
  timeoutMs?: number;
  /** Stops waiting (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/**
 * Waits until run `workflowId` (or one of its sub-agents) has calls waiting for input and returns
 * them: what a client that runs client-side tools, or a terminal that prompts, polls for. Throws
 * `finished` when the run ends first.
 */
export async function waitForQuestions(
  client: Client,
  workflowId: string,
  opts: WaitForQuestionsOptions = {},
): Promise<RunQuestion[]> {
  const pollMs = opts.pollMs ?? 500;
  const until = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  for (;;) {
    opts.signal?.throwIfAborted();
    const open = await listQuestions(client, { workflowId, ...(opts.kind ? { kind: opts.kind } : {}) });
    if (open.length) return open;
    if (Date.now() + pollMs > until)
      throw new QuestionRequestError('timed_out', `Nothing of run "${workflowId}" asked within the wait`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
