/**
 * Sub-agents: other agents a run offers its model as tools. Calling one starts a child
 * `agentWorkflow`; this module holds the pure parts both sides agree on (names, the default input
 * schema, the child's workflow id, its task, its reserved budgets, what the parent's model reads).
 * Pure and deterministic: it runs inside workflows.
 */
import { SIZE_BUDGETS } from '../temporal-limits';
import type { OutputSchema } from './output-schema';
import { validateOutput, formatOutputIssues } from './output-schema';

/** Limits of the `agents` a run offers. */
export const SUB_AGENT_LIMITS = Object.freeze({
  /** Sub-agents one run may offer. */
  agents: 8,
  /** Characters of a sub-agent's description (the model reads it as the tool's description). */
  descriptionChars: 1_000,
  /** Bytes of a sub-agent's input schema as JSON. */
  inputSchemaBytes: 4 * 1024,
  /** Characters of a child's answer the parent's model reads (the whole answer is in the child's result). */
  answerChars: 16_000,
  /** Finished children the parent's `state` query lists (newest), across continue-as-new. */
  childrenKept: 20,
} as const);

/** Default of `policy.maxAgentDepth`: a run (depth 0) → child (1) → grandchild (2) → great-grandchild (3). */
export const DEFAULT_MAX_AGENT_DEPTH = 3;
/** Default of `policy.maxChildAgents`: children one run has in flight at once. */
export const DEFAULT_MAX_CHILD_AGENTS = 4;

/** A sub-agent's name: what the model calls as a tool. */
export const SUB_AGENT_NAME = /^[a-z][a-z0-9_]{0,47}$/;

/** How a run's `tools` names a sub-agent of the worker's config file: `agent:<name>`. */
export const AGENT_REF_PREFIX = 'agent:';

/** Whether a tool name is a reference to a sub-agent of the worker's config (`agent:<name>`). */
export function isAgentRef(name: string): boolean {
  return name.startsWith(AGENT_REF_PREFIX);
}

/** The sub-agent's name in an `agent:<name>` reference. */
export function agentRefName(ref: string): string {
  return ref.slice(AGENT_REF_PREFIX.length);
}

/** The input schema of a sub-agent that declares none: one task in words. */
export const DEFAULT_SUB_AGENT_INPUT: OutputSchema = Object.freeze({
  type: 'object',
  properties: { task: { type: 'string', description: 'What the sub-agent should do, in full' } },
  required: ['task'],
  additionalProperties: false,
});

/** Where a child run came from: set by its parent when it starts the child. */
export interface ParentLink {
  /** The parent's workflow id. */
  workflowId: string;
  /** The parent's tool call that started this child. */
  toolCallId: string;
  /** The sub-agent's name in the parent. */
  agent: string;
  /** 1 for a child of a top-level run, 2 for its child, … */
  depth: number;
}

/**
 * The child's workflow id: the parent's id and the tool call's id (`<parent>:agent:<call>`), so a
 * replayed or retried parent never starts a second child for the same call. It is a run id people
 * can type (call ids are `[A-Za-z0-9_.:-]`, at most 64); when the parent's id is so long that the
 * whole would pass {@link SIZE_BUDGETS.runIdBytes}, the parent's part is cut and a hash of it
 * added, so two long parents still name different children.
 */
export function childWorkflowId(parentWorkflowId: string, toolCallId: string): string {
  const suffix = `:agent:${toolCallId}`;
  const whole = `${parentWorkflowId}${suffix}`;
  if (whole.length <= SIZE_BUDGETS.runIdBytes) return whole;
  const hash = `.${fnv1a(parentWorkflowId)}`;
  return `${parentWorkflowId.slice(0, SIZE_BUDGETS.runIdBytes - suffix.length - hash.length)}${hash}${suffix}`;
}

/** A 32-bit FNV-1a hash of `text` as 8 hex digits (deterministic, for ids). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The child's task from the call's arguments: the `task` itself under the default input schema,
 * else the arguments as JSON after a line that says so.
 */
export function childTask(args: unknown, inputSchema: OutputSchema | undefined): string {
  if (inputSchema === undefined && isRecord(args) && typeof args.task === 'string') return args.task;
  return `Your input (JSON, matching your input schema):\n${JSON.stringify(args, null, 2)}`;
}

/** What is wrong with a call's arguments against the sub-agent's input schema, or null. */
export function subAgentArgsProblem(
  agent: string,
  inputSchema: OutputSchema | undefined,
  args: unknown,
): string | null {
  const issues = validateOutput(inputSchema ?? DEFAULT_SUB_AGENT_INPUT, args);
  if (!issues.length) return null;
  const text = formatOutputIssues(issues).replaceAll('(answer)', '(arguments)');
  return `Invalid arguments for sub-agent ${agent}: ${text}. Fix them and call it again.`;
}

/** The budgets a run can reserve for a child, as numbers (wall clock in ms). */
export interface ReservableBudgets {
  steps: number;
  tokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  wallClockMs?: number;
}

/**
 * What a child may use: what the sub-agent's own policy asks, capped by an equal share of what the
 * parent has left for the children it is about to start (`starting`, this one included). The
 * parent's budgets the child does not name are shared the same way, but for time: children run at
 * once, so each may take what time is left. A budget the parent does not have stays as the child's
 * policy sets it.
 */
export function reserveBudgets(
  available: ReservableBudgets,
  asked: Partial<ReservableBudgets>,
  starting: number,
): ReservableBudgets {
  const share = (
    left: number | undefined,
    own: number | undefined,
    whole: boolean,
    shared = true,
  ): number | undefined => {
    if (left === undefined) return own;
    const part = Math.max(0, left) / (shared ? Math.max(1, starting) : 1);
    const fair = whole ? Math.floor(part) : part;
    return own === undefined ? fair : Math.min(own, fair);
  };
  const out: ReservableBudgets = { steps: share(available.steps, asked.steps, true) ?? 0 };
  const keys = ['tokens', 'inputTokens', 'outputTokens'] as const;
  for (const k of keys) {
    const v = share(available[k], asked[k], true);
    if (v !== undefined) out[k] = v;
  }
  // Children run at the same time: each may take all the time the parent has left.
  const wall = share(available.wallClockMs, asked.wallClockMs, true, false);
  if (wall !== undefined) out.wallClockMs = wall;
  const cost = share(available.costUsd, asked.costUsd, false);
  if (cost !== undefined) out.costUsd = cost;
  return out;
}

/** Which reserved budget leaves the child nothing to work with, in words, or null. */
export function emptyReservation(r: ReservableBudgets): string | null {
  if (r.steps < 1) return 'no steps';
  if (r.tokens !== undefined && r.tokens < 1) return 'no tokens';
  if (r.inputTokens !== undefined && r.inputTokens < 1) return 'no input tokens';
  if (r.outputTokens !== undefined && r.outputTokens < 1) return 'no output tokens';
  if (r.costUsd !== undefined && r.costUsd <= 0) return 'no cost budget';
  if (r.wallClockMs !== undefined && r.wallClockMs < 1000) return 'less than a second of wall-clock time';
  return null;
}

/** What the parent's model reads of a child that ended: its typed output, else its answer (cut). */
export function childAnswerText(result: {
  answer: string | null;
  stopReason: string;
  output?: unknown;
  budget?: string;
}): string {
  const body = result.output !== undefined ? JSON.stringify(result.output) : (result.answer ?? '');
  const cut =
    body.length > SUB_AGENT_LIMITS.answerChars
      ? `${body.slice(0, SUB_AGENT_LIMITS.answerChars)}… (cut at ${SUB_AGENT_LIMITS.answerChars} characters)`
      : body;
  if (result.stopReason === 'final_answer') return cut;
  const why = result.budget ?? result.stopReason;
  // A sub-agent a token or cost budget stopped gets no summary turn (workflows/agent/sub-agents.ts).
  if (!body) return `(The sub-agent stopped before it finished: ${why}, without a summary.)`;
  return `(The sub-agent stopped before it finished: ${why}. Its summary follows.)\n${cut}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
