import { MCP_PREFIX, isMcpRef, parseMcpRef } from './tools/mcp';
import { z } from 'zod';
import { schemaOnce } from './schema-once';
import { TOOL_NAMES } from './tools/registry';
import { redactedPreview } from './redact-secrets';
import type { PreviewBounds } from './redact-secrets';

/**
 * Approval policies: which tool calls wait for a person's yes. One module, used by every door that
 * takes tool names (workflow input, CLI, HTTP API) and by the workflow when a call is requested, so
 * the names, the rules and their defaults cannot drift apart. Pure code: it runs inside workflows.
 */

/** Tools whose calls change something outside the run (mail goes out, rows change). */
export const SIDE_EFFECT_TOOLS: readonly string[] = Object.freeze(['send_email', 'sql_query']);

/** Tools whose results are written by others (mail, web pages): once read, the run is untrusted. */
export const DEFAULT_UNTRUSTED_TOOLS: readonly string[] = Object.freeze(['fetch_email', 'web_search']);

/** The ways one tool's calls can be approved: always, never, or when a rule says so. */
export const APPROVAL_MODES = ['always', 'never', 'rules'] as const;

/** Rules for one tool: the call waits for approval when any rule that is set matches. */
export const ToolApprovalRulesSchema = schemaOnce('shared/approvals#ToolApprovalRulesSchema', () =>
  z
    .object({
      allowedDomains: z
        .array(
          z
            .string()
            .trim()
            .toLowerCase()
            .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, {
              message: 'give a domain such as "example.com"',
            }),
        )
        .max(100)
        .optional()
        .describe('send_email: recipients (to, cc, bcc) outside these domains need approval'),
      writes: z
        .boolean()
        .optional()
        .describe('sql_query: statements that may write need approval (true) or not (false)'),
      untrusted: z
        .boolean()
        .optional()
        .describe('Calls need approval once untrusted content (e.g. fetched mail) is in the conversation'),
    })
    .strict(),
);
/** Rules for one tool. */
export type ToolApprovalRules = z.infer<typeof ToolApprovalRulesSchema>;

/** How one tool's calls are approved: "always", "never", or rules. */
export const ToolApprovalSchema = schemaOnce('shared/approvals#ToolApprovalSchema', () =>
  z.union([z.enum(['always', 'never']), ToolApprovalRulesSchema], {
    error: `use "always", "never" or rules such as { "allowedDomains": ["example.com"] }, { "writes": true }, { "untrusted": true }`,
  }),
);
/** How one tool's calls are approved. */
export type ToolApproval = z.infer<typeof ToolApprovalSchema>;

/** Approval settings of a run (or the worker's defaults for runs). */
export const ApprovalPolicySchema = schemaOnce('shared/approvals#ApprovalPolicySchema', () =>
  z
    .object({
      tools: z
        .record(z.string(), ToolApprovalSchema)
        .optional()
        .describe('Per tool: "always", "never" or rules; tools not named follow the safe defaults'),
      untrustedTools: z
        .array(z.string())
        .max(64)
        .optional()
        .describe('Tools whose results are untrusted content (default: fetch_email, web_search)'),
    })
    .strict(),
);
/** Approval settings of a run. */
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/**
 * Problems with tool names given by a caller, each saying what to write instead: unknown or wrongly
 * cased names, and names of tools the run does not enable (when `enabled` is given).
 */
export function toolNameProblems(names: readonly string[], enabled?: readonly string[]): string[] {
  const problems: string[] = [];
  for (const name of names) {
    if (isMcpRef(name)) {
      const ref = parseMcpRef(name);
      if (typeof ref === 'string') problems.push(ref);
      else if (
        enabled &&
        !enabled.includes(name) &&
        !enabled.includes(`${MCP_PREFIX}${ref.server}`) &&
        // A whole server names the tools of it that the run enables one by one.
        !(ref.tool === undefined && enabled.some((t) => t.startsWith(`${name}/`)))
      ) {
        problems.push(
          `tool "${name}" is not enabled for this run; enabled tools: ${enabled.join(', ') || '(none)'} (enable it or remove it from the policy)`,
        );
      }
    } else if (!TOOL_NAMES.includes(name) && !enabled?.includes(name)) {
      // A name the run enables that is no built-in tool is one of its sub-agents.
      const cased = TOOL_NAMES.find((t) => t.toLowerCase() === name.trim().toLowerCase());
      problems.push(
        `unknown tool "${name}"${cased ? ` (did you mean "${cased}"? names are case-sensitive)` : ''}; valid tools: ${TOOL_NAMES.join(', ')}`,
      );
    } else if (enabled && !enabled.includes(name)) {
      problems.push(
        `tool "${name}" is not enabled for this run; enabled tools: ${enabled.join(', ') || '(none)'} (enable it or remove it from the policy)`,
      );
    }
  }
  return problems;
}

/**
 * The `mcp:<server>` names of a policy that are valid only because a whole server names the tools
 * of it a run enables one by one (`mcp:<server>/<tool>`); runs recorded before that was allowed
 * failed at start on them (see the agent workflow's MCP_SERVER_POLICY_NAMES_PATCH).
 */
export function serverNamesOfToolsEnabledOneByOne(
  policy: ApprovalPolicy | undefined,
  requireApproval: readonly string[],
  enabled: readonly string[],
): string[] {
  return [...Object.keys(policy?.tools ?? {}), ...requireApproval].filter((name) => {
    const ref = isMcpRef(name) ? parseMcpRef(name) : null;
    return (
      ref !== null &&
      typeof ref !== 'string' &&
      ref.tool === undefined &&
      !enabled.includes(name) &&
      enabled.some((t) => t.startsWith(`${name}/`))
    );
  });
}

/** A problem with a policy: where (a path under the policy) and what to fix. */
export interface PolicyProblem {
  path: (string | number)[];
  message: string;
}

/** Problems with the approval settings of a run with these tools (empty when they are valid). */
export function approvalPolicyProblems(
  policy: ApprovalPolicy | undefined,
  requireApproval: readonly string[],
  enabled: readonly string[] | undefined,
): PolicyProblem[] {
  const problems: PolicyProblem[] = toolNameProblems(requireApproval, enabled).map((message) => ({
    path: ['requireApproval'],
    message,
  }));
  for (const [name, rule] of Object.entries(policy?.tools ?? {})) {
    const path = ['approvals', 'tools', name];
    const named = toolNameProblems([name], enabled);
    problems.push(...named.map((message) => ({ path, message })));
    if (named.length || typeof rule === 'string') continue;
    if (rule.allowedDomains && name !== 'send_email')
      problems.push({ path, message: 'allowedDomains applies to send_email only' });
    if (rule.writes !== undefined && name !== 'sql_query')
      problems.push({ path, message: 'writes applies to sql_query only' });
    if (Object.keys(rule).length === 0)
      problems.push({
        path,
        message: 'give at least one rule (allowedDomains, writes, untrusted) or "always" / "never"',
      });
  }
  // Tools that are not enabled produce no content: naming them untrusted is harmless.
  problems.push(
    ...toolNameProblems(policy?.untrustedTools ?? []).map((message) => ({
      path: ['approvals', 'untrustedTools'],
      message,
    })),
  );
  return problems;
}

/**
 * The run's policy over the worker's defaults: the run's per-tool settings win tool by tool;
 * `requireApproval` names are "always".
 */
export function mergeApprovalPolicies(
  workerDefaults: ApprovalPolicy | undefined,
  run: ApprovalPolicy | undefined,
  requireApproval: readonly string[] = [],
): ApprovalPolicy {
  const tools: Record<string, ToolApproval> = { ...workerDefaults?.tools, ...run?.tools };
  for (const name of requireApproval) tools[name] = 'always';
  const untrustedTools = run?.untrustedTools ?? workerDefaults?.untrustedTools;
  return { tools, ...(untrustedTools ? { untrustedTools } : {}) };
}

/**
 * The safe default for a tool no policy names: side-effecting tools ask (mail always, SQL when it may
 * write), and so does any side-effecting call once untrusted content is in the conversation.
 */
function defaultRules(tool: string): ToolApprovalRules | 'never' {
  if (tool === 'send_email') return { allowedDomains: [], untrusted: true };
  if (tool === 'sql_query') return { writes: true, untrusted: true };
  // An MCP tool may change anything: with untrusted content in the conversation it waits, unless read-only.
  if (isMcpRef(tool)) return { untrusted: true };
  return 'never';
}

/** What the workflow knows when it decides whether a call waits. */
export interface ApprovalContext {
  /** Where untrusted content entered the conversation (e.g. "fetch_email at step 2"), or null. */
  untrusted: string | null;
  /** The tool says it changes nothing (an MCP tool's readOnlyHint). */
  readOnly?: boolean;
  /** The tool's own definition asks for approval of every call unless a policy names it (own tools). */
  declaredAlways?: boolean;
}

/**
 * Why this call must wait for approval, in words for the person asked, or null when it may run.
 * `args` are the tool's validated arguments.
 */
export function approvalReason(
  policy: ApprovalPolicy,
  tool: string,
  args: unknown,
  ctx: ApprovalContext,
): string | null {
  const server = isMcpRef(tool) && tool.includes('/') ? tool.slice(0, tool.indexOf('/')) : undefined;
  const named = policy.tools?.[tool] ?? (server ? policy.tools?.[server] : undefined);
  if (named === undefined && ctx.declaredAlways) return `the ${tool} tool asks for approval of every call`;
  const rule = named ?? defaultRules(tool);
  if (rule === 'always') return `the policy asks for approval of every ${tool} call`;
  if (rule === 'never') return null;
  const sideEffect = ctx.readOnly ? false : tool !== 'sql_query' || sqlMayWrite(sqlOf(args));
  // Untrusted content counts for side effects unless the rule says otherwise (`untrusted: false`).
  const untrustedRule = rule.untrusted ?? SIDE_EFFECT_TOOLS.includes(tool);
  if (untrustedRule && ctx.untrusted && sideEffect) {
    return `untrusted content is in the conversation (${ctx.untrusted})`;
  }
  if (rule.allowedDomains && tool === 'send_email') {
    const outside = recipientsOf(args).filter((r) => !inDomains(r, rule.allowedDomains ?? []));
    if (outside.length > 0) {
      return rule.allowedDomains.length
        ? `recipients outside ${rule.allowedDomains.join(', ')}: ${outside.join(', ')}`
        : `every email needs approval (recipients: ${outside.join(', ')})`;
    }
  }
  if (rule.writes && tool === 'sql_query' && sideEffect) return 'the statement may write to the database';
  return null;
}

/**
 * Whether the result of this tool makes the conversation untrusted: the policy's list when it has
 * one, else the defaults and tools that declare their results untrusted.
 */
export function isUntrustedSource(policy: ApprovalPolicy, tool: string, declaredUntrusted = false): boolean {
  const listed = policy.untrustedTools;
  // MCP servers are written by others: their results are untrusted unless a list says otherwise.
  if (listed === undefined)
    return DEFAULT_UNTRUSTED_TOOLS.includes(tool) || isMcpRef(tool) || declaredUntrusted;
  return listed.includes(tool) || (isMcpRef(tool) && listed.includes(tool.slice(0, tool.indexOf('/'))));
}

function sqlOf(args: unknown): string {
  const sql = (args as { sql?: unknown } | null)?.sql;
  return typeof sql === 'string' ? sql : '';
}

/** Every recipient address of send_email arguments (to, cc, bcc), as written. */
export function recipientsOf(args: unknown): string[] {
  const a = (args ?? {}) as { to?: unknown; cc?: unknown; bcc?: unknown };
  const list = (v: unknown): string[] =>
    typeof v === 'string'
      ? v.split(',')
      : Array.isArray(v)
        ? v.filter((x): x is string => typeof x === 'string')
        : [];
  return [...list(a.to), ...list(a.cc), ...list(a.bcc)].map((r) => r.trim()).filter(Boolean);
}

/** Whether an address ("Ann <ann@x.example>" or "ann@x.example") is in one of the domains (or a subdomain). */
function inDomains(recipient: string, domains: readonly string[]): boolean {
  const address = /<([^<>]*)>\s*$/.exec(recipient)?.[1] ?? recipient;
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
  return domains.some((raw) => {
    const d = raw.toLowerCase();
    return domain === d || domain.endsWith(`.${d}`);
  });
}

const READ_STARTS = new Set(['select', 'with', 'show', 'explain', 'describe', 'desc', 'values', 'table']);
const WRITE_WORDS =
  /\b(insert|update|delete|merge|upsert|replace|create|drop|alter|truncate|grant|revoke|call|copy|lock|into|load|rename|vacuum|refresh|reindex|cluster|import|handler|execute|prepare)\b/i;

/**
 * Whether a statement may write. Conservative on purpose (a false yes only asks the user): a
 * statement counts as a read only when it starts with a read keyword and no write keyword appears
 * outside string literals and comments. The SQL guard in the activity still decides what may run.
 */
export function sqlMayWrite(sql: string): boolean {
  const code = sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, "''")
    .trim();
  const first = /^\(*\s*([A-Za-z]+)/.exec(code)?.[1]?.toLowerCase();
  if (!first || !READ_STARTS.has(first)) return true;
  return WRITE_WORDS.test(code);
}

/** How much of the arguments a summary reads: far more than it shows, bounded whatever their size. */
const SUMMARY_PREVIEW: PreviewBounds = Object.freeze({ chars: 400, items: 30, depth: 4 });

/**
 * A readable one-line summary of tool arguments for the person asked, e.g. `to: a@x.example;
 * subject: "Hi"`. Secrets are masked ({@link redactedPreview}): it goes into notifications.
 */
export function summarizeArgs(rawArgs: unknown, maxChars = 600): string {
  const args = redactedPreview(rawArgs, SUMMARY_PREVIEW);
  const one = (v: unknown): string => {
    const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
    return s.length > 160 ? `${s.slice(0, 157)}…` : s;
  };
  const text =
    args && typeof args === 'object' && !Array.isArray(args)
      ? Object.entries(args as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .map(
            ([k, v]) =>
              `${k}: ${Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(', ') : one(v)}`,
          )
          .join('; ')
      : one(args);
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}
