import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { SIZE_BUDGETS, formatBytes, jsonBytes, overBudgetMessage, utf8Bytes } from '../temporal-limits';
import { ModelChoiceSchema } from '../model';
import { TOOL_NAMES, findTool } from '../tools/registry';
import { isMcpRef, parseMcpPromptRef, parseMcpRef } from '../tools/mcp';
import { OWN_TOOL_LIMITS, isOwnToolName } from '../tools/own';
import { inboxUserProblem } from '../identifiers';
import { ApprovalPolicySchema, approvalPolicyProblems } from '../approvals';
import type { ApprovalPolicy } from '../approvals';
import { PriceTableSchema } from '../run-limits';
import type { PriceTable } from '../run-limits';
import { DEFAULT_OUTPUT_REPAIRS, outputSchemaProblems } from './output-schema';
import type { OutputSchema } from './output-schema';
import {
  DEFAULT_MAX_AGENT_DEPTH,
  DEFAULT_MAX_CHILD_AGENTS,
  SUB_AGENT_LIMITS,
  SUB_AGENT_NAME,
  agentRefName,
  isAgentRef,
} from './sub-agents';
import type { ParentLink } from './sub-agents';
import { ClientToolsSchema } from './questions';

/** Largest task and system prompt; with the rest they stay under SIZE_BUDGETS.agentInputBytes. */
export const AGENT_TEXT_BUDGETS = Object.freeze({ task: 128 * 1024, system: 64 * 1024 });

/** A Temporal duration written as milliseconds or as text such as "30 seconds" or "2h". */
const DurationSchema = schemaOnce('shared/agent#DurationSchema', () =>
  z.union([
    z.number().int().nonnegative(),
    z
      .string()
      .regex(
        /^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\s*$/i,
        'use milliseconds or text such as "30 seconds", "5m", "2h"',
      ),
  ]),
);

/** The shortest timeout a run may give a tool's activity (`policy.toolTimeouts`). */
export const MIN_TOOL_TIMEOUT_MS = 1000;

/** Milliseconds of a duration the schema accepted; undefined when unreadable (its own issue says why). */
function durationMsOf(d: number | string): number | undefined {
  try {
    // Temporal's reader takes "30 seconds" and "30s" but no other white space.
    return Math.round(typeof d === 'number' ? d : msToNumber(d.replace(/\s+/g, '') as Duration));
  } catch {
    return undefined;
  }
}

/**
 * A timeout of a tool's activity, kept as milliseconds: the workflow hands it to Temporal as it is,
 * and a duration Temporal could not read there would fail the workflow task rather than the run.
 */
const ToolTimeoutSchema = schemaOnce('shared/agent#ToolTimeoutSchema', () =>
  DurationSchema.transform((d) => durationMsOf(d) ?? 0).refine((ms) => ms >= MIN_TOOL_TIMEOUT_MS, {
    message: `must be at least ${MIN_TOOL_TIMEOUT_MS / 1000} second`,
  }),
);

/** Timeouts of one tool's activity that replace the ones the tool declares (shared/tools/). */
const ToolTimeoutsSchema = schemaOnce('shared/agent#ToolTimeoutsSchema', () =>
  z
    .object({
      startToCloseTimeout: ToolTimeoutSchema.optional().describe('Longest one attempt of a call may run'),
      heartbeatTimeout: ToolTimeoutSchema.optional().describe(
        'How long after its worker died an attempt is retried elsewhere (tools that heartbeat on a clock)',
      ),
    })
    .strict(),
);

/** Timeouts a run gives one tool's activity (`policy.toolTimeouts`), in milliseconds. */
export type ToolTimeouts = z.output<typeof ToolTimeoutsSchema>;

/** Checks `policy.toolTimeouts`: built-in tools, a heartbeat only where the tool beats on a clock. */
function checkToolTimeouts(timeouts: Record<string, ToolTimeouts>, ctx: z.RefinementCtx): void {
  for (const [name, t] of Object.entries(timeouts)) {
    const def = findTool(name);
    if (!def) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `"${name.slice(0, 80)}" is not a built-in tool; timeouts can be set for ${TOOL_NAMES.join(', ')}`,
      });
      continue;
    }
    if (def.category === 'human') {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `${name} runs no activity: its wait is set by its timeout_seconds or policy.questionTimeout`,
      });
      continue;
    }
    const declared = def.activity;
    if (t.heartbeatTimeout !== undefined && !declared.heartbeatsOnClock) {
      ctx.addIssue({
        code: 'custom',
        path: [name, 'heartbeatTimeout'],
        message: declared.heartbeatTimeout
          ? `${name} heartbeats as it makes progress, not on a clock: only its startToCloseTimeout can be set`
          : `${name} does not heartbeat: only its startToCloseTimeout can be set`,
      });
      continue;
    }
    const heartbeat = t.heartbeatTimeout ?? declared.heartbeatTimeout;
    const startToClose = t.startToCloseTimeout ?? declared.startToCloseTimeout;
    const heartbeatMs = heartbeat === undefined ? undefined : durationMsOf(heartbeat);
    const startToCloseMs = durationMsOf(startToClose);
    if (heartbeatMs !== undefined && startToCloseMs !== undefined && heartbeatMs >= startToCloseMs) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `${name}: the heartbeatTimeout (${String(heartbeat)}) must be shorter than the startToCloseTimeout (${String(startToClose)})`,
      });
    }
  }
}

/** Limits and rules for one run. */
export const PolicySchema = schemaOnce('shared/agent#PolicySchema', () =>
  z
    .object({
      maxSteps: z.number().int().min(1).max(10_000).default(25).describe('Model turns before the run stops'),
      maxTokens: z
        .number()
        .int()
        .positive()
        .optional()
        .describe('Total input+output tokens before the run stops'),
      maxParallelTools: z.number().int().min(1).max(32).default(4),
      maxInputTokens: z.number().int().positive().optional().describe('Input tokens before the run stops'),
      maxOutputTokens: z.number().int().positive().optional().describe('Output tokens before the run stops'),
      maxCostUsd: z
        .number()
        .positive()
        .optional()
        .describe(
          'Model cost in US dollars before the run stops (prices: `prices`, else the worker’s table)',
        ),
      maxWallClock: DurationSchema.optional().describe('Time from the start of the run before it stops'),
      prices: PriceTableSchema.optional().describe(
        'Model prices for this run, over the worker’s table: "provider:model" → USD per million tokens',
      ),
      requireApproval: z
        .array(z.string())
        .default([])
        .describe('Tool names whose calls always wait for an approve/reject update'),
      approvals: ApprovalPolicySchema.optional().describe(
        'Per-tool approval policies over the worker’s defaults (see README: Approvals and budgets)',
      ),
      approvalTimeout: DurationSchema.default('1 hour'),
      questionTimeout: DurationSchema.optional().describe(
        'How long a question (ask_user) or a client tool call waits for its answer unless the call says; default 1 day',
      ),
      wallClockCountsQuestions: z
        .boolean()
        .optional()
        .describe(
          'Whether time spent waiting for answers (ask_user, client tools) counts against maxWallClock; default false',
        ),
      maxContextMessages: z
        .number()
        .int()
        .min(4)
        .max(10_000)
        .default(200)
        .describe('Messages sent to the model per call: the system prompt and task, then the latest ones'),
      contextTokens: z
        .number()
        .int()
        .min(1024)
        .max(10_000_000)
        .optional()
        .describe(
          'The model’s context size in tokens; each call’s window is cut to fit (default per provider)',
        ),
      localActivities: z
        .enum(['never', 'tools', 'auto'])
        .default('never')
        .describe(
          'Quick steps as local activities (no server round trip): "tools" runs the tools declared pure and quick that way, "auto" also the model calls; "never" runs every step as a regular activity',
        ),
      outputRepairs: z
        .number()
        .int()
        .min(0)
        .max(10)
        .default(DEFAULT_OUTPUT_REPAIRS)
        .describe(
          'With `output`: turns an answer that does not match the schema gets to be repaired before the run fails',
        ),
      maxAgentDepth: z
        .number()
        .int()
        .min(0)
        .max(10)
        .default(DEFAULT_MAX_AGENT_DEPTH)
        .describe('How deep sub-agents may nest: a run is depth 0, its children 1, theirs 2, …'),
      maxChildAgents: z
        .number()
        .int()
        .min(1)
        .max(32)
        .default(DEFAULT_MAX_CHILD_AGENTS)
        .describe('Sub-agents one run has running at once; a call past it gets a tool error'),
      toolTimeouts: z
        .record(z.string(), ToolTimeoutsSchema)
        .superRefine(checkToolTimeouts)
        .optional()
        .describe(
          'Timeouts of built-in tools’ activities over their own, per tool: startToCloseTimeout and, for tools that heartbeat on a clock, heartbeatTimeout (at least 1 second each)',
        ),
      continueAsNewAfterSteps: z
        .number()
        .int()
        .min(1)
        .default(100)
        .describe('Steps in one workflow run before it continues as new (also on the server’s suggestion)'),
    })
    .strict(),
);
/** Limits and rules for one run. */
export type Policy = z.infer<typeof PolicySchema>;

/** Tools a run gets when its input names none. */
export const DEFAULT_TOOLS: readonly string[] = ['get_time', 'calculator'];

/** Checks a list of tool names: built-in ones, or well-formed `mcp:` references. */
function checkToolNames(names: string[], ctx: z.RefinementCtx): void {
  for (const name of names) {
    if (isAgentRef(name)) {
      // Whether the worker's config has it is checked when the run starts.
      if (!SUB_AGENT_NAME.test(agentRefName(name)))
        ctx.addIssue({
          code: 'custom',
          message: `"${name.slice(0, 80)}": agent:<name> names a sub-agent of the worker's config (lower case letters, digits and _)`,
        });
    } else if (isMcpRef(name)) {
      // Well formed here; whether the server and tool exist is checked when the run starts.
      const ref = parseMcpRef(name);
      if (typeof ref === 'string') ctx.addIssue({ code: 'custom', message: ref });
    } else if (!TOOL_NAMES.includes(name) && !isOwnToolName(name)) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown tool "${name.slice(0, 80)}"; known tools: ${TOOL_NAMES.join(', ')}, a tool of the worker's own (a snake_case name), or mcp:<server> / mcp:<server>/<tool> for the tools of an MCP server the worker's config names`,
      });
    }
  }
}

/** A server's prompt a run starts from: `mcp:<server>/prompt/<name>` and its (string) arguments. */
const McpPromptUseSchema = z
  .object({
    prompt: z.string().superRefine((name, ctx) => {
      const ref = parseMcpPromptRef(name);
      if (typeof ref === 'string') ctx.addIssue({ code: 'custom', message: ref });
    }),
    arguments: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** A JSON Schema of the subset `output` supports (also a sub-agent's input schema). */
function jsonSchemaField(what: string) {
  return z.custom<OutputSchema>().superRefine((schema, ctx) => {
    for (const message of outputSchemaProblems(schema)) ctx.addIssue({ code: 'custom', message });
    if (what === 'input' && typeof schema === 'object' && schema !== null && schema.type !== 'object')
      ctx.addIssue({ code: 'custom', message: 'a sub-agent’s input schema must be of type "object"' });
  });
}

/** One sub-agent a run offers its model as a tool (see shared/agent/sub-agents.ts). */
export interface SubAgentSpec {
  description: string;
  system?: string;
  model?: z.input<typeof ModelChoiceSchema>;
  tools?: string[];
  input?: OutputSchema;
  output?: OutputSchema;
  policy?: Record<string, unknown>;
  agents?: Record<string, SubAgentSpec>;
}

/** The `agents` of a run or of a sub-agent: name → spec, nested as deep as the input goes. */
export const SubAgentsSchema: z.ZodType<Record<string, SubAgentSpec>> = schemaOnce(
  'shared/agent#SubAgentsSchema',
  () =>
    z
      .record(
        z
          .string()
          .regex(SUB_AGENT_NAME, 'a sub-agent name is lower case: letters, digits and _ (at most 48)'),
        z
          .object({
            description: z
              .string()
              .trim()
              .min(1, 'say what the sub-agent does: the model reads it to decide when to call it')
              .max(SUB_AGENT_LIMITS.descriptionChars),
            system: z
              .string()
              .refine((t) => utf8Bytes(t) <= AGENT_TEXT_BUDGETS.system, {
                message: `the system prompt must be at most ${formatBytes(AGENT_TEXT_BUDGETS.system)} (UTF-8)`,
              })
              .optional(),
            model: ModelChoiceSchema.optional().describe('The child’s model; the parent’s when omitted'),
            tools: z.array(z.string()).superRefine(checkToolNames).optional(),
            input: jsonSchemaField('input')
              .refine((s) => jsonBytes(s) <= SUB_AGENT_LIMITS.inputSchemaBytes, {
                message: `a sub-agent’s input schema must be at most ${formatBytes(SUB_AGENT_LIMITS.inputSchemaBytes)} as JSON`,
              })
              .optional()
              .describe('JSON Schema of the arguments the model calls it with; default { task: string }'),
            output: jsonSchemaField('output').optional(),
            policy: z
              .record(z.string(), z.unknown())
              .superRefine((policy, ctx) => {
                const parsed = PolicySchema.safeParse(policy);
                if (!parsed.success) {
                  for (const issue of parsed.error.issues)
                    ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
                }
              })
              .optional(),
            get agents() {
              return SubAgentsSchema.optional();
            },
          })
          .strict(),
      )
      .superRefine((agents, ctx) => {
        const names = Object.keys(agents);
        if (names.length > SUB_AGENT_LIMITS.agents)
          ctx.addIssue({ code: 'custom', message: `at most ${SUB_AGENT_LIMITS.agents} sub-agents per run` });
        for (const name of names) {
          if (TOOL_NAMES.includes(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `"${name}" is a built-in tool's name; give the sub-agent another`,
            });
        }
      }),
);

/** Input of the agent workflow, validated inside the workflow before anything runs. */
export const AgentInputSchema = schemaOnce('shared/agent#AgentInputSchema', () =>
  z
    .object({
      task: z
        .string({
          error: (issue) =>
            issue.input === undefined
              ? 'the task is required: what the agent should do'
              : 'the task must be text',
        })
        .trim()
        .min(1, 'the task must not be empty')
        .refine((t) => utf8Bytes(t) <= AGENT_TEXT_BUDGETS.task, {
          message: `the task must be at most ${formatBytes(AGENT_TEXT_BUDGETS.task)} (UTF-8); put large material in a file the agent can search`,
        }),
      system: z
        .string()
        .refine((t) => utf8Bytes(t) <= AGENT_TEXT_BUDGETS.system, {
          message: `the system prompt must be at most ${formatBytes(AGENT_TEXT_BUDGETS.system)} (UTF-8)`,
        })
        .optional()
        .describe('System prompt; a default one is used when omitted'),
      prompts: z
        .object({ system: McpPromptUseSchema.optional(), task: McpPromptUseSchema.optional() })
        .strict()
        .optional()
        .describe(
          'Prompts of MCP servers the run starts from: system replaces the system prompt; task opens the task, which follows it',
        ),
      model: ModelChoiceSchema,
      tools: z
        .array(z.string())
        .default([...DEFAULT_TOOLS])
        .superRefine(checkToolNames),
      output: jsonSchemaField('output')
        .optional()
        .describe('JSON Schema the final answer must match; the result carries it parsed as `output`'),
      agents: SubAgentsSchema.optional().describe(
        'Other agents the model may call as tools: each call runs as a child agent workflow',
      ),
      clientTools: ClientToolsSchema.optional().describe(
        'Tools whose body runs in the client: the model calls them, the call waits until a client submits its result',
      ),
      parent: z
        .custom<ParentLink>(
          (v) =>
            typeof v === 'object' &&
            v !== null &&
            typeof (v as ParentLink).workflowId === 'string' &&
            typeof (v as ParentLink).toolCallId === 'string' &&
            typeof (v as ParentLink).agent === 'string' &&
            Number.isInteger((v as ParentLink).depth),
          'parent is set by the run that starts a sub-agent: { workflowId, toolCallId, agent, depth }',
        )
        .optional(),
      policy: PolicySchema.default(() => PolicySchema.parse({})),
      notify: z
        .object({
          user: z
            .string()
            .superRefine((user, ctx) => {
              const problem = inboxUserProblem(user);
              if (problem) ctx.addIssue({ code: 'custom', message: problem });
            })
            .describe('Also deliver notifications to inbox:<user>'),
        })
        .strict()
        .optional(),
    })
    .strict()
    .superRefine((input, ctx) => {
      if (input.system !== undefined && input.prompts?.system)
        ctx.addIssue({
          code: 'custom',
          path: ['prompts', 'system'],
          message: 'give the system prompt as system or as prompts.system, not both',
        });
      const own = input.tools.filter(isOwnToolName);
      if (own.length > OWN_TOOL_LIMITS.toolsPerRun)
        ctx.addIssue({
          code: 'custom',
          path: ['tools'],
          message: `at most ${OWN_TOOL_LIMITS.toolsPerRun} tools of the worker's own per run; this run names ${own.length}`,
        });
      for (const name of own) {
        if (input.agents && name in input.agents)
          ctx.addIssue({
            code: 'custom',
            path: ['tools'],
            message: `"${name}" names both a tool and a sub-agent (agents.${name}); rename one`,
          });
      }
      for (const ref of input.tools.filter(isAgentRef)) {
        if (input.agents && agentRefName(ref) in input.agents)
          ctx.addIssue({
            code: 'custom',
            path: ['tools'],
            message: `"${ref}" and agents.${agentRefName(ref)} name the same sub-agent; keep one`,
          });
      }
      for (const name of Object.keys(input.clientTools ?? {})) {
        if (TOOL_NAMES.includes(name) || (input.agents && name in input.agents))
          ctx.addIssue({
            code: 'custom',
            path: ['clientTools', name],
            message: `"${name}" is already the name of a ${TOOL_NAMES.includes(name) ? 'built-in tool' : 'sub-agent'}; give the client tool another`,
          });
      }
      const policy = input.policy;
      // Sub-agents are called by their names: policies may name them like tools.
      const enabled = [
        ...input.tools,
        ...Object.keys(input.agents ?? {}),
        ...input.tools.filter(isAgentRef).map(agentRefName),
      ];
      for (const p of approvalPolicyProblems(policy.approvals, policy.requireApproval, enabled)) {
        ctx.addIssue({ code: 'custom', message: p.message, path: ['policy', ...p.path] });
      }
    }),
);
/** Input of the agent workflow as callers write it (defaults may be omitted). */
export type AgentInput = z.input<typeof AgentInputSchema>;

/**
 * Checks a raw agent input against the workflow input budget (it is re-sent with every
 * continue-as-new). Returns the problem, or null when it fits.
 */
export function agentInputBudgetProblem(input: unknown): string | null {
  const bytes = jsonBytes(input);
  return bytes > SIZE_BUDGETS.agentInputBytes
    ? overBudgetMessage('The agent input', bytes, SIZE_BUDGETS.agentInputBytes)
    : null;
}
/** Input of the agent workflow after validation. */
export type ParsedAgentInput = z.output<typeof AgentInputSchema>;

/** What the worker's configuration sets for every run it executes, unless a run says otherwise. */
export interface RunDefaults {
  /** Approval policies per tool; a run's own policy wins tool by tool. */
  approvals?: ApprovalPolicy;
  /** Model prices; a run's `policy.prices` wins model by model. */
  prices?: PriceTable;
  /** Sub-agents a run may use by naming `agent:<name>` in its tools (config file `agents`). */
  agents?: Record<string, SubAgentSpec>;
  /**
   * What the worker knows and the run cannot see, filled in by the worker (never the config file):
   * the file name of its local model, which a `local` run that names none uses (its `AgentModel`).
   */
  localModel?: string;
  /**
   * Filled in by the worker: whether its namespace has the agent search attributes, so that a run
   * its starter gave none may set them itself (upserting one the namespace lacks fails the run's
   * workflow tasks).
   */
  searchAttributes?: boolean;
}
