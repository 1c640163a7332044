import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { z } from 'zod';
import type { McpActivities, ToolActivity } from '../../activities/types';
import type { ParsedAgentInput } from '../../shared/agent';
import type { AgentEvent } from '../../shared/api-shapes';
import type { ToolDefinition } from '../../shared/tools/define';
import type { McpCatalog, McpToolSpec } from '../../shared/tools/mcp';
import { isMcpRef, mcpActivityType, mcpToolId } from '../../shared/tools/mcp';
import { jsonSchemaArgsChecker } from '../../shared/tools/json-schema-check';

/**
 * Runs recorded before it checked MCP tool arguments with zod's `z.fromJSONSchema`, which judges a
 * few schemas differently (it strips unknown fields, applies defaults, reads patterns without the
 * `u` flag); since, with the workflow's own JSON Schema check, which follows every schema
 * discovery offers.
 */
export const MCP_JSON_SCHEMA_CHECK_PATCH = 'mcp-json-schema-check';

/** Skipped tools whose reasons get an event each; the worker's log has them all. */
const MAX_SKIPPED_EVENTS = 20;

/** Discovery: connect and list tools; a server that cannot start is retried a few times. */
const { mcpDiscover } = proxyActivities<McpActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['McpToolsUnknown'] },
});

/**
 * Options of every MCP call. The call's own timeout (the server's `callTimeoutMs`) tells the model;
 * these bound the activity: a worker that dies mid-call is noticed by the heartbeat timeout and the
 * call runs again elsewhere with the same idempotency key.
 */
const MCP_CALL_OPTIONS = {
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['ActivityNotRegistered', 'McpServerUnknown'],
  },
} as const satisfies ActivityOptions;

/** Read-only, idempotent MCP tools as local activities (a run's `policy.localActivities`). */
const MCP_LOCAL_CALL_OPTIONS = {
  startToCloseTimeout: '2 minutes',
  retry: MCP_CALL_OPTIONS.retry,
} as const;

const mcpCalls = proxyActivities<Record<string, ToolActivity>>(MCP_CALL_OPTIONS);
const mcpLocalCalls = proxyLocalActivities<Record<string, ToolActivity>>(MCP_LOCAL_CALL_OPTIONS);

/** What the toolbox needs of its run. */
export interface McpHost {
  readonly input: ParsedAgentInput;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
  /** Whether the run takes a patch's behaviour (RunPatches.has). */
  patched(id: string): boolean;
}

/**
 * The run's MCP tools: discovered when the run starts (or carried from the run before), offered to
 * the model by reference, validated against their own JSON Schemas, and discovered again when a
 * call reports that its server's tool list changed.
 */
export class McpToolbox {
  private catalog: McpCatalog | undefined;
  private byName = new Map<string, McpToolSpec>();
  private readonly definitions = new Map<string, ToolDefinition>();
  /** Set when a call saw another digest of its server's tools than the catalog holds. */
  private stale = false;
  /** Whether calls are checked by the JSON Schema check (see MCP_JSON_SCHEMA_CHECK_PATCH); asked once. */
  private jsonSchemaCheck: boolean | undefined;
  /** The run's `mcp:` references. */
  readonly refs: string[];

  constructor(
    private readonly host: McpHost,
    carried: McpCatalog | undefined,
  ) {
    this.refs = host.input.tools.filter(isMcpRef);
    if (carried) this.use(carried);
  }

  /** Whether the run enables MCP tools at all. */
  get enabled(): boolean {
    return this.refs.length > 0;
  }

  /** Whether discovery must run before the next model call: at start, or after a change. */
  needsDiscovery(): boolean {
    return this.enabled && (this.catalog === undefined || this.stale);
  }

  /** Discovers the tools; unknown servers or tools fail the run, saying what exists. */
  async discover(): Promise<void> {
    const first = this.catalog === undefined;
    let catalog: McpCatalog;
    try {
      catalog = await mcpDiscover({
        refs: this.refs,
        // Names the model already calls: built-in tools and sub-agents.
        reserved: [
          ...this.host.input.tools.filter((t) => !isMcpRef(t)),
          ...Object.keys(this.host.input.agents ?? {}),
        ],
      });
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      const type = cause instanceof ApplicationFailure ? cause.type : undefined;
      throw ApplicationFailure.create({
        type: type === 'McpToolsUnknown' ? 'InvalidAgentInput' : 'McpDiscoveryFailed',
        message: `MCP tools: ${cause?.message ?? (err as Error).message}`,
        nonRetryable: true,
      });
    }
    this.use(catalog);
    this.stale = false;
    const names = catalog.tools.map((t) => t.name);
    const skipped = catalog.skipped.map((s) => mcpToolId(s.server, s.tool));
    this.host.emit({
      kind: 'mcp_tools',
      text: `${first ? 'MCP tools' : 'MCP tools changed, now'}: ${names.join(', ') || '(none)'}${
        skipped.length ? `; skipped: ${skipped.join(', ')}` : ''
      }`,
    });
    // Each skipped tool's reason in an event of its own, so no reason is cut short by another's.
    for (const s of catalog.skipped.slice(0, MAX_SKIPPED_EVENTS))
      this.host.emit({
        kind: 'mcp_tools',
        tool: mcpToolId(s.server, s.tool),
        text: `skipped: ${s.reason}`,
        isError: true,
      });
    if (catalog.skipped.length > MAX_SKIPPED_EVENTS)
      this.host.emit({
        kind: 'mcp_tools',
        text: `${catalog.skipped.length - MAX_SKIPPED_EVENTS} more tools skipped; the worker's log says why`,
        isError: true,
      });
  }

  /** The tools the model sees by reference: the catalog's stored specs, when the run has MCP tools. */
  modelTools(): { mcpTools: McpCatalog['specsRef'] } | Record<string, never> {
    return this.catalog && this.catalog.tools.length > 0 ? { mcpTools: this.catalog.specsRef } : {};
  }

  /** The MCP tool the model calls by this name, if any. */
  find(name: string): McpToolSpec | undefined {
    return this.byName.get(name);
  }

  /** Names the model may call, for error messages. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The tool as the tool runner handles every tool: name, category, and a schema to check arguments with. */
  definition(spec: McpToolSpec): ToolDefinition {
    let def = this.definitions.get(spec.name);
    if (!def) {
      const own = (this.jsonSchemaCheck ??= this.host.patched(MCP_JSON_SCHEMA_CHECK_PATCH));
      def = {
        name: spec.name,
        description: spec.description,
        description_zh: spec.description,
        category: 'mcp',
        sign: 'm',
        // Discovery keeps only schemas the check follows; the server validates again on its side.
        ...(own
          ? { inputs: z.unknown(), checkArgs: jsonSchemaArgsChecker(spec.inputSchema, { name: spec.name }) }
          : { inputs: z.fromJSONSchema(spec.inputSchema) }),
        output: 'the MCP tool result',
        activity: { startToCloseTimeout: MCP_CALL_OPTIONS.startToCloseTimeout },
      };
      this.definitions.set(spec.name, def);
    }
    return def;
  }

  /** The activity that runs a call: named after the tool; local only for read-only, idempotent tools. */
  activity(spec: McpToolSpec, localTools: boolean): ToolActivity {
    const type = mcpActivityType(spec.server, spec.tool);
    const local = localTools && spec.readOnly === true && spec.idempotent === true;
    return (local ? mcpLocalCalls : mcpCalls)[type] as ToolActivity;
  }

  /** Notes the digest a call saw; another than the catalog's means the server's tools changed. */
  noteDigest(server: string, digest: string | undefined): void {
    if (digest && this.catalog && this.catalog.digests[server] !== digest) this.stale = true;
  }

  /** What the run carries across continue-as-new. */
  carry(): McpCatalog | undefined {
    return this.catalog;
  }

  /** Drops the catalog when the carried state is short of space: the next run discovers again. */
  forget(): void {
    this.catalog = undefined;
    this.byName = new Map();
    this.definitions.clear();
  }

  private use(catalog: McpCatalog): void {
    this.catalog = catalog;
    this.byName = new Map(catalog.tools.map((t) => [t.name, t]));
    this.definitions.clear();
  }
}
