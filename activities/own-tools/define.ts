/**
 * `defineTool`: a tool of the library user's own, written in TypeScript. Everything that can be
 * wrong with a definition is found here, when the module that defines it loads (a name that is not
 * snake_case, a schema that is not an object or that JSON Schema cannot carry, options out of
 * range), with an error naming the tool — never later, in a run.
 */
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { z } from 'zod';
import type { ContentRef } from '../../shared/content';
import type { ToolActivityOptions, ToolCategory } from '../../shared/tools/define';
import type { OwnToolApproval, OwnToolSpec } from '../../shared/tools/own';
import { OWN_TOOL_LIMITS, OWN_TOOL_NAME } from '../../shared/tools/own';
import { jsonSchemaProblems } from '../../shared/tools/json-schema-check';
import { TOOL_NAMES } from '../../shared/tools/names';
import { jsonBytes } from '../../shared/temporal-limits';

/** What a tool's `run` gets besides its arguments. */
export interface ToolRunContext {
  /**
   * The same on every attempt of one call, different for every call: `<run id>/<tool call id>`.
   * Pass it to the system the tool changes (an `Idempotency-Key` header, a unique column) so a
   * retried call does not do its work twice.
   */
  readonly idempotencyKey: string;
  /** The run's workflow id. */
  readonly runId: string;
  /** The model's tool call id. */
  readonly toolCallId: string;
  /** 1 on the first attempt, 2 on the first retry, … */
  readonly attempt: number;
  /** Reports progress; a call that stops heartbeating for `heartbeatTimeout` is retried elsewhere. */
  heartbeat(details?: unknown): void;
  /** What the last attempt last heartbeated (to resume from), or undefined. */
  readonly heartbeatDetails: unknown;
  /** Aborted when the run is cancelled or the call timed out: stop and clean up. */
  readonly signal: AbortSignal;
  /** The worker's logger, with the run and the call in every line. */
  readonly log: ToolLogger;
  /** Keeps large JSON values by reference (content-addressed, write-once). */
  readonly store: ToolContentStore;
}

/** The logger a tool writes to. */
export interface ToolLogger {
  debug(message: string, attrs?: Record<string, unknown>): void;
  info(message: string, attrs?: Record<string, unknown>): void;
  warn(message: string, attrs?: Record<string, unknown>): void;
  error(message: string, attrs?: Record<string, unknown>): void;
}

/** The content store as tools see it. */
export interface ToolContentStore {
  /** Stores a JSON value; its reference is the SHA-256 of its JSON bytes. */
  put(value: unknown): Promise<ContentRef>;
  /** Reads a stored value back. */
  get(ref: ContentRef): Promise<unknown>;
}

/**
 * What `run` returns: a string is what the model reads; any other JSON value is given to the model
 * as JSON and kept whole for UIs as the call's data.
 */
export type ToolOutput =
  string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

/** The object schema of a tool's arguments. */
export type ToolInputSchema = z.ZodObject;

/** How a tool is defined. */
export interface ToolOptions<S extends ToolInputSchema> {
  /** What the model calls it by, and its activity type: snake_case, at most 64 characters. */
  name: string;
  /** What it does and when to use it, for the model. */
  description: string;
  /** Its arguments: a zod object. The model sees it as JSON Schema; the run checks every call against it. */
  input: S;
  /** The tool's body: runs in an activity on a worker, with the checked arguments. */
  run(args: z.output<S>, ctx: ToolRunContext): ToolOutput | Promise<ToolOutput>;
  /** Longest one attempt may run (default 1 minute). */
  timeout?: Duration;
  /** For long calls that heartbeat: a worker that dies is noticed after this long. */
  heartbeatTimeout?: Duration;
  /** Attempts in all, the first included (default 3; 1 never retries). */
  maxAttempts?: number;
  /** Wait before the first retry (default 1 second; doubles each time). */
  retryInterval?: Duration;
  /** Error types (`ApplicationFailure` types or error class names) that are not retried. */
  nonRetryableErrors?: string[];
  /**
   * Pure and quick (no side effects, seconds at most): may run as a local activity when a run's
   * `policy.localActivities` allows, without a server round trip. A local call may run again after
   * a worker crash, so a tool that changes anything must not set it.
   */
  local?: boolean;
  /** Whether calls wait for a person's approval unless the run's policy says otherwise (default "never"). */
  approval?: OwnToolApproval;
  /** The results are data written by others (mail, web pages, tickets): reading one makes the run untrusted. */
  untrusted?: boolean;
  /** What kind of work it does, for UIs (default "utility"). */
  category?: ToolCategory;
  /** One lower-case letter for citations and UI badges (default "u"). */
  sign?: string;
}

/** A defined tool: register it with the plugin (`new DurableAgentPlugin({ tools: [...] })`). */
export interface Tool<S extends ToolInputSchema = ToolInputSchema> {
  /** What the workflow and the model know of it. */
  readonly spec: OwnToolSpec;
  /** The arguments' schema, checked again on the worker before `run` (refinements JSON Schema cannot say). */
  readonly input: S;
  readonly run: ToolOptions<S>['run'];
}

/** A definition the library refuses, naming the tool and what to fix. */
export class ToolDefinitionError extends Error {
  override readonly name = 'ToolDefinitionError';
}

const CATEGORIES: readonly ToolCategory[] = ['utility', 'search', 'email', 'database', 'notification'];
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

function durationOf(tool: string, field: string, value: Duration | undefined): number | undefined {
  if (value === undefined) return undefined;
  let ms: number;
  try {
    ms = msToNumber(value);
  } catch {
    throw new ToolDefinitionError(
      `Tool "${tool}": ${field} ${JSON.stringify(value)} is not a duration (write e.g. "30 seconds", "5m" or milliseconds)`,
    );
  }
  if (!Number.isFinite(ms) || ms < 1000 || ms > MAX_TIMEOUT_MS)
    throw new ToolDefinitionError(`Tool "${tool}": ${field} must be between 1 second and 24 hours`);
  return ms;
}

/** The JSON Schema of a tool's arguments as the model sees it, or why there is none. */
function inputJsonSchema(name: string, input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || !('_zod' in input)) {
    throw new ToolDefinitionError(
      `Tool "${name}": input must be a zod 4 object schema, e.g. z.object({ orderId: z.string() })`,
    );
  }
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(input as z.ZodType, { io: 'input' });
  } catch (err) {
    throw new ToolDefinitionError(
      `Tool "${name}": its input schema cannot be written as JSON Schema (${(err as Error).message}); use types JSON can carry`,
    );
  }
  delete schema.$schema;
  if (schema.type !== 'object') {
    throw new ToolDefinitionError(
      `Tool "${name}": input must be an object schema (z.object({...})), not ${typeof schema.type === 'string' ? schema.type : 'a union or other type'}: models call tools with an object of named arguments`,
    );
  }
  return schema;
}

/**
 * Defines a tool of your own. Register it with the plugin; a run offers it to the model when its
 * `tools` name it. The run checks every call's arguments against `input` before any activity is
 * scheduled (a wrong call goes back to the model as an error), the call runs as an activity named
 * after the tool with the timeouts and retries given here, and the result joins the run's
 * transcript, events and live view like a built-in tool's.
 */
export function defineTool<S extends ToolInputSchema>(options: ToolOptions<S>): Tool<S> {
  const name = (options as { name?: unknown }).name;
  if (typeof name !== 'string' || !OWN_TOOL_NAME.test(name)) {
    throw new ToolDefinitionError(
      `Tool name ${JSON.stringify(name)} is not valid: use snake_case (a-z, 0-9, _), starting with a letter, at most 64 characters`,
    );
  }
  if (TOOL_NAMES.includes(name)) {
    throw new ToolDefinitionError(`Tool "${name}" has the name of a built-in tool; choose another name`);
  }
  const description = options.description;
  if (typeof description !== 'string' || !description.trim()) {
    throw new ToolDefinitionError(
      `Tool "${name}" needs a description: the model reads it to decide when to call it`,
    );
  }
  if (description.length > OWN_TOOL_LIMITS.descriptionChars) {
    throw new ToolDefinitionError(
      `Tool "${name}": the description has ${description.length} characters, more than ${OWN_TOOL_LIMITS.descriptionChars}`,
    );
  }
  if (typeof options.run !== 'function')
    throw new ToolDefinitionError(`Tool "${name}" needs a run(args, ctx) function`);
  const category = options.category ?? 'utility';
  if (!CATEGORIES.includes(category)) {
    throw new ToolDefinitionError(`Tool "${name}": category must be one of ${CATEGORIES.join(', ')}`);
  }
  const sign = options.sign ?? 'u';
  if (!/^[a-z]$/.test(sign))
    throw new ToolDefinitionError(`Tool "${name}": sign must be one lower-case letter`);
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100) {
    throw new ToolDefinitionError(`Tool "${name}": maxAttempts must be a whole number from 1 to 100`);
  }
  if (options.approval !== undefined && options.approval !== 'always' && options.approval !== 'never') {
    throw new ToolDefinitionError(`Tool "${name}": approval must be "always" or "never"`);
  }
  const startToClose = durationOf(name, 'timeout', options.timeout) ?? 60_000;
  const heartbeat = durationOf(name, 'heartbeatTimeout', options.heartbeatTimeout);
  if (heartbeat !== undefined && heartbeat >= startToClose) {
    throw new ToolDefinitionError(`Tool "${name}": heartbeatTimeout must be shorter than timeout`);
  }
  const interval = durationOf(name, 'retryInterval', options.retryInterval);
  const activity: ToolActivityOptions = {
    startToCloseTimeout: startToClose,
    maximumAttempts: maxAttempts,
    ...(heartbeat !== undefined ? { heartbeatTimeout: heartbeat } : {}),
    ...(interval !== undefined ? { initialInterval: interval } : {}),
    // A result over its budget or a call the worker's schema refuses fails the same way every time.
    nonRetryableErrorTypes: [
      ...(options.nonRetryableErrors ?? []),
      'ToolResultTooLarge',
      'ToolNotRegistered',
    ],
  };
  const spec: OwnToolSpec = {
    name,
    description,
    inputSchema: inputJsonSchema(name, options.input),
    category,
    sign,
    activity,
    ...(options.local ? { local: true as const } : {}),
    ...(options.approval === 'always' ? { approval: 'always' as const } : {}),
    ...(options.untrusted ? { untrusted: true as const } : {}),
  };
  const bytes = jsonBytes(spec);
  if (bytes > OWN_TOOL_LIMITS.specBytes) {
    throw new ToolDefinitionError(
      `Tool "${name}": its description and input schema take ${bytes} bytes as JSON, more than ${OWN_TOOL_LIMITS.specBytes}; shorten them`,
    );
  }
  // The run checks calls against the JSON Schema: one it could not follow is refused now, not in a run.
  const problems = jsonSchemaProblems(spec.inputSchema);
  if (problems.length) {
    throw new ToolDefinitionError(
      `Tool "${name}": a run could not check calls against its input schema: ${problems.join('; ').slice(0, 500)}`,
    );
  }
  const run: Tool<S>['run'] = (args, ctx) => options.run(args, ctx);
  return Object.freeze({ spec: Object.freeze(spec), input: options.input, run });
}

/** Checks a worker's own tools as a set: each a defined tool, no two with one name. */
export function checkToolSet(tools: readonly unknown[]): Tool[] {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  tools.forEach((t, i) => {
    const spec = (t as Partial<Tool> | null)?.spec;
    if (!spec || typeof (t as { run?: unknown }).run !== 'function') {
      problems.push(`tools[${i}] is not a tool made by defineTool()`);
      return;
    }
    const first = seen.get(spec.name);
    if (first !== undefined) problems.push(`tools[${first}] and tools[${i}] are both named "${spec.name}"`);
    else seen.set(spec.name, i);
  });
  if (problems.length) throw new ToolDefinitionError(`Own tools: ${problems.join('; ')}`);
  return tools as Tool[];
}
