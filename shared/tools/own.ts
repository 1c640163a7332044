/**
 * Own tools: tools a user of the library defines in TypeScript (`defineTool` of the package root)
 * and registers on a worker with the plugin. A run names them in its `tools` like built-in tools.
 * The workflow never sees their code or their zod schemas: when a run names one, an activity of
 * the worker describes them (JSON Schema of the arguments, options), the run keeps that catalog and
 * checks the model's arguments against it, so the workflow bundle is the same whatever tools a
 * worker has. Pure and deterministic: workflow code imports it.
 */
import { z } from 'zod';
import type { ContentRef } from '../content';
import type { ToolActivityOptions, ToolCategory, ToolDefinition } from './define';
import { TOOL_NAMES } from './names';
import { isMcpRef } from './mcp';
import { jsonSchemaArgsChecker } from './json-schema-check';

/** An own tool's name: snake_case, as models expect; also its activity type. */
export const OWN_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Limits of what an own tool declares and of a run's catalog of them. */
export const OWN_TOOL_LIMITS = Object.freeze({
  /** Characters of a tool's description (the model reads it). */
  descriptionChars: 4_000,
  /** One tool's spec (name, description, JSON Schema of its arguments, options) as JSON. */
  specBytes: 32 * 1024,
  /** Own tools one run may name. */
  toolsPerRun: 64,
} as const);

/** How an own tool's calls are approved unless the run's policy says otherwise. */
export type OwnToolApproval = 'always' | 'never';

/** One own tool as the worker describes it to a run: what the workflow needs to check and call it. */
export interface OwnToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (from the tool's zod schema, as the model sees it). */
  inputSchema: Record<string, unknown>;
  category: ToolCategory;
  /** One letter, for citations and UI badges. */
  sign: string;
  /** The activity's options: timeouts, retries, heartbeats. */
  activity: ToolActivityOptions;
  /** Pure and quick: may run as a local activity when the run's `policy.localActivities` allows. */
  local?: true;
  /** Calls wait for approval unless the run's policy names the tool otherwise. */
  approval?: 'always';
  /** Results are data written by others: once one is read, the run counts as untrusted. */
  untrusted?: true;
}

/** What a run keeps of its own tools: their specs, and the model-facing ones in the content store. */
export interface OwnToolCatalog {
  tools: OwnToolSpec[];
  /** The tools as the model sees them (name, description, parameters), which model calls name. */
  specsRef: ContentRef;
}

/** Input of the `describeOwnTools` activity. */
export interface DescribeOwnToolsInput {
  /** The own tools the run names. */
  names: string[];
}

/**
 * Whether a name in a run's `tools` may be an own tool: a well-formed name that is neither a
 * built-in tool nor an `mcp:`/`agent:` reference. Whether the worker has it is known at start.
 */
export function isOwnToolName(name: string): boolean {
  return OWN_TOOL_NAME.test(name) && !TOOL_NAMES.includes(name) && !isMcpRef(name);
}

/**
 * The tool as the run's tool runner handles every tool: its arguments checked against its JSON
 * Schema by the check MCP tools and client-side tools get (the worker checks them again with the
 * tool's own zod schema before it runs, refinements included). `defineTool` refuses a schema the
 * check cannot follow, so every spec a worker describes has a usable one.
 */
export function ownToolDefinition(spec: OwnToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    description_zh: spec.description,
    category: spec.category,
    sign: spec.sign,
    own: true,
    inputs: z.unknown(),
    checkArgs: jsonSchemaArgsChecker(spec.inputSchema, { name: spec.name }),
    output: 'the tool result',
    activity: spec.activity,
    ...(spec.local ? { local: true } : {}),
  };
}
