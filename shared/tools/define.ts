import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import type { ContentRef } from '../content';

/**
 * What kind of work a tool does; UIs group and colour tools by it. `human` (ask_user) and `client`
 * (a run's client-side tools) run no activity: the workflow waits for the answer an update brings.
 */
export type ToolCategory =
  'utility' | 'search' | 'email' | 'database' | 'notification' | 'mcp' | 'agent' | 'human' | 'client';

/** Activity options a tool declares for its own activity type. */
export interface ToolActivityOptions {
  startToCloseTimeout: Duration;
  /** Set for tools that run long: they heartbeat, and a dead worker is noticed after this long. */
  heartbeatTimeout?: Duration;
  /**
   * Set when the activity heartbeats on a clock, at least every third of the heartbeat timeout its
   * call was given (activities/heartbeats.ts), rather than as it makes progress: a run may then
   * shorten its `heartbeatTimeout` (`policy.toolTimeouts`) without a live call being taken for a dead one.
   */
  heartbeatsOnClock?: true;
  maximumAttempts?: number;
  initialInterval?: Duration;
  nonRetryableErrorTypes?: string[];
}

/**
 * A tool the agent can call. The same zod schema validates arguments inside the workflow and
 * becomes the JSON Schema the model sees, so the two cannot drift apart.
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  /** Also the activity type name. snake_case, as models expect. */
  name: string;
  description: string;
  description_zh: string;
  category: ToolCategory;
  /** One letter used in citations and UI badges. */
  sign: string;
  /** Set for an app's own tool (defineTool): metrics label it by its name, as a built-in tool. */
  own?: true;
  inputs: S;
  /** Human description of what the tool returns to the model. */
  output: string;
  activity: ToolActivityOptions;
  /**
   * Set for pure, quick tools (no side effects, seconds at most): a run whose
   * `policy.localActivities` allows it runs their calls as local activities, in the worker that runs
   * the workflow, without a server round trip. A local call may run again after a worker crash, so
   * tools that change anything (send mail, write rows, notify) never set it.
   */
  local?: boolean;
  /**
   * Checks arguments in place of the zod schema where a tool's contract fixes the exact error text
   * the model receives (notify_user). Runs inside the workflow, so it must be pure. The error is
   * returned to the model verbatim.
   */
  checkArgs?: (args: unknown) => { ok: true; value: unknown } | { ok: false; error: string };
}

/** Input of every tool activity: the call id (for idempotency and events) and validated arguments. */
export interface ToolActivityInput<A> {
  toolCallId: string;
  args: A;
  /** The run's step when the model asked for the call (for traces and logs). */
  step?: number;
  /** Run settings some tools need (e.g. the inbox notify_user also delivers to). */
  context?: ToolContext;
}

/** Run settings passed to tool activities. */
export interface ToolContext {
  /** Deliver notifications to `inbox:<notifyUser>` as well as to the run. */
  notifyUser?: string;
}

/**
 * Output of every tool activity. `content` is what the model reads; `data` is the full record for
 * UIs. Results too large for history are kept in the content store by the worker (see
 * activities/content/tool-results.ts): then `content` is a preview and `contentRef` names the whole.
 */
export interface ToolResult {
  content: string;
  isError?: boolean;
  data?: unknown;
  /** The whole content in the content store, when it was too large for history. */
  contentRef?: ContentRef;
  /** UTF-8 size of the whole content, when `contentRef` is set. */
  contentBytes?: number;
  /** The whole `data` in the content store, when it was too large; `data` is then compact or absent. */
  dataRef?: ContentRef;
  /** UTF-8 size of the whole `data`, when `dataRef` is set. */
  dataBytes?: number;
  /** MCP tools: the digest of the server's tool list as the call saw it (the run discovers again when it changed). */
  toolsDigest?: string;
}

/** Declares a tool, checking the metadata conventions at definition time. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(def.name)) {
    throw new Error(`Tool name "${def.name}" must be snake_case (a-z, 0-9, _), at most 64 characters`);
  }
  if (!/^[a-z]$/.test(def.sign)) throw new Error(`Tool "${def.name}": sign must be one lower-case letter`);
  if (!def.description.trim() || !def.description_zh.trim()) {
    throw new Error(`Tool "${def.name}" needs both an English and a Chinese description`);
  }
  return def;
}

/** The JSON Schema of a tool's arguments, as sent to the model. */
export function toolParametersJsonSchema(def: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(def.inputs, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return schema;
}

import { formatZodIssues } from '../zod-issues';

/** Validates tool arguments with the tool's own check or its zod schema; errors are for the model. */
export function checkToolArgs(
  def: ToolDefinition,
  raw: unknown,
): { success: true; data: unknown } | { success: false; error: string } {
  if (def.checkArgs) {
    const r = def.checkArgs(raw);
    return r.ok ? { success: true, data: raw } : { success: false, error: r.error };
  }
  const parsed = def.inputs.safeParse(raw);
  return parsed.success
    ? { success: true, data: parsed.data }
    : {
        success: false,
        error: `Invalid arguments for ${def.name}: ${formatZodIssues(parsed.error)}. Fix them and call the tool again.`,
      };
}
