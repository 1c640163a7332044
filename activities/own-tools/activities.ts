/**
 * The activities of a worker's own tools: one per tool, named after it, and `describeOwnTools`,
 * which tells a run that names own tools what they are (their catalog).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelToolSpec } from '../../shared/model';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { formatZodIssues } from '../../shared/zod-issues';
import type { DescribeOwnToolsInput, OwnToolCatalog } from '../../shared/tools/own';
import { OWN_TOOL_LIMITS } from '../../shared/tools/own';
import { TOOL_NAMES } from '../../shared/tools/names';
import { closestName } from '../../shared/closest-name';
import { SIZE_BUDGETS, formatBytes, jsonBytes, utf8Bytes } from '../../shared/temporal-limits';
import type { ContentStore } from '../content/store';
import type { OwnToolActivities, ToolActivity } from '../types';
import type { Tool, ToolOutput, ToolRunContext } from './define';

/** What own tools' activities are built from. */
export interface OwnToolActivityDeps {
  tools: readonly Tool[];
  /** Where large results and the model-facing specs are kept by reference. */
  store: ContentStore;
}

function failure(type: string, message: string, nonRetryable = true): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable });
}

/** A short, safe description of a thrown value that is not an Error. */
function describeThrown(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 200))}`;
  if (typeof value === 'object')
    return `an object (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return `the ${typeof value} ${String(value)}`;
  return `a ${typeof value}`;
}

/** What the model reads of a tool's return value; a value JSON cannot carry fails naming the tool. */
function resultOf(name: string, out: ToolOutput | undefined): ToolResult {
  if (typeof out === 'string') return { content: out };
  if (out === undefined) return { content: '(the tool returned nothing)' };
  let text: string | undefined;
  try {
    text = JSON.stringify(out);
  } catch (err) {
    throw failure(
      'ToolResultNotJson',
      `Tool "${name}" returned a value JSON cannot carry (${(err as Error).message}); return a string or plain data`,
    );
  }
  if (text === undefined) {
    throw failure(
      'ToolResultNotJson',
      `Tool "${name}" returned a ${typeof out}; return a string or plain data`,
    );
  }
  return { content: text };
}

/** The activity that runs one tool: checks the arguments with the tool's zod schema, runs it, bounds what it returns. */
function toolActivity(tool: Tool, store: ContentStore): ToolActivity {
  const { name } = tool.spec;
  return async (input: ToolActivityInput<unknown>): Promise<ToolResult> => {
    const ctx = Context.current();
    // The run checked the JSON Schema; refinements and transforms only the zod schema knows.
    const parsed = tool.input.safeParse(input.args ?? {});
    if (!parsed.success) {
      return {
        content: `Invalid arguments for ${name}: ${formatZodIssues(parsed.error)}. Fix them and call the tool again.`,
        isError: true,
      };
    }
    const runId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
    const runContext: ToolRunContext = {
      idempotencyKey: `${runId}/${input.toolCallId}`,
      runId,
      toolCallId: input.toolCallId,
      attempt: ctx.info.attempt,
      heartbeat: (details?: unknown) => ctx.heartbeat(details),
      heartbeatDetails: ctx.info.heartbeatDetails,
      signal: ctx.cancellationSignal,
      log: ctx.log,
      store: { put: (value) => store.put(value), get: (ref) => store.get(ref) },
    };
    let out: ToolOutput | undefined;
    try {
      out = await tool.run(parsed.data, runContext);
    } catch (err) {
      if (err instanceof Error) throw err;
      throw failure(
        'ToolThrewNonError',
        `Tool "${name}" threw ${describeThrown(err)} instead of an Error; throw an Error (or ApplicationFailure) so the failure says what went wrong`,
        false,
      );
    }
    const result = resultOf(name, out);
    const bytes = utf8Bytes(result.content);
    if (bytes > SIZE_BUDGETS.toolResultBytes) {
      throw failure(
        'ToolResultTooLarge',
        `Tool "${name}" returned ${formatBytes(bytes)}, more than the ${formatBytes(SIZE_BUDGETS.toolResultBytes)} one result may hold; return less (a page or a summary), or keep the rest with ctx.store and return its reference`,
      );
    }
    return result;
  };
}

/**
 * Creates the activities of the given own tools (checked as a set by the caller): one per tool,
 * and `describeOwnTools`, which answers a run's catalog of the tools it names.
 */
export function createOwnToolActivities({
  tools,
  store,
}: OwnToolActivityDeps): Record<string, ToolActivity | OwnToolActivities['describeOwnTools']> {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const activities: Record<string, ToolActivity> = {};
  for (const tool of tools) activities[tool.spec.name] = toolActivity(tool, store);
  return {
    ...activities,
    async describeOwnTools({ names }: DescribeOwnToolsInput): Promise<OwnToolCatalog> {
      const wanted = [...new Set(names)];
      const unknown = wanted.filter((n) => !byName.has(n));
      if (unknown.length > 0) {
        const own = [...byName.keys()];
        const named = unknown.map((n) => {
          const meant = closestName(n, [...TOOL_NAMES, ...own]);
          return `"${n.slice(0, 80)}"${meant ? ` (did you mean "${meant}"?)` : ''}`;
        });
        throw failure(
          'OwnToolsUnknown',
          `unknown tool${unknown.length > 1 ? 's' : ''} ${named.join(', ')}: ` +
            `this worker's own tools are ${own.join(', ') || '(none: register tools with the plugin, or start the worker with --tools-module)'}; ` +
            `built-in tools are ${TOOL_NAMES.join(', ')}`,
        );
      }
      if (wanted.length > OWN_TOOL_LIMITS.toolsPerRun) {
        throw failure(
          'OwnToolsUnknown',
          `a run may name at most ${OWN_TOOL_LIMITS.toolsPerRun} own tools; this one names ${wanted.length}`,
        );
      }
      const specs = wanted.map((n) => (byName.get(n) as Tool).spec);
      const bytes = jsonBytes(specs);
      if (bytes > SIZE_BUDGETS.ownToolCatalogBytes) {
        throw failure(
          'OwnToolsUnknown',
          `the own tools this run names take ${formatBytes(bytes)} as JSON, more than the ${formatBytes(SIZE_BUDGETS.ownToolCatalogBytes)} a run keeps; name fewer tools or shorten their descriptions and schemas`,
        );
      }
      const forModel: ModelToolSpec[] = specs.map((s) => ({
        name: s.name,
        description: s.description,
        parameters: s.inputSchema,
      }));
      return { tools: specs, specsRef: await store.put(forModel) };
    },
  };
}
