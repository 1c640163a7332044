import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { SIZE_BUDGETS, formatBytes, jsonBytes, overBudgetMessage, utf8Bytes } from '../temporal-limits';
import { ModelChoiceSchema } from '../model';
import { TOOL_NAMES } from '../tools/registry';
import { isMcpRef, parseMcpRef } from '../tools/mcp';
import { inboxUserProblem } from '../identifiers';
import { ApprovalPolicySchema, approvalPolicyProblems } from '../approvals';
import type { ApprovalPolicy } from '../approvals';
import { PriceTableSchema } from '../run-limits';
import type { PriceTable } from '../run-limits';

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
      model: ModelChoiceSchema,
      tools: z
        .array(z.string())
        .default([...DEFAULT_TOOLS])
        .superRefine((names, ctx) => {
          for (const name of names) {
            if (isMcpRef(name)) {
              // Well formed here; whether the server and tool exist is checked when the run starts.
              const ref = parseMcpRef(name);
              if (typeof ref === 'string') ctx.addIssue({ code: 'custom', message: ref });
            } else if (!TOOL_NAMES.includes(name)) {
              ctx.addIssue({
                code: 'custom',
                message: `unknown tool "${name}"; known tools: ${TOOL_NAMES.join(', ')}, or mcp:<server> / mcp:<server>/<tool> for the tools of an MCP server the worker's config names`,
              });
            }
          }
        }),
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
      const policy = input.policy;
      for (const p of approvalPolicyProblems(policy.approvals, policy.requireApproval, input.tools)) {
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
}
