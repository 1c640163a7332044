/**
 * The one check of a run's input, used by every door that starts runs (the CLI, the HTTP API, the
 * MCP server, schedules, the client SDK) and by the workflow itself: the same order, the same words.
 */
import { formatZodIssues } from '../zod-issues';
import type { AgentInput, ParsedAgentInput } from './input';
import { AgentInputSchema, agentInputBudgetProblem } from './input';

/** What checking an input found: the input parsed, or what to fix. */
export type AgentInputCheck =
  | { ok: true; input: AgentInput; parsed: ParsedAgentInput }
  | {
      ok: false;
      /** `Invalid run: field: what to fix; field: …` */
      message: string;
    };

/**
 * Checks a run's input: its fields first (what a caller fixes), then its size (it is re-sent on
 * every continue-as-new, so it must stay within its budget).
 */
export function checkAgentInput(raw: unknown): AgentInputCheck {
  const parsed = AgentInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, message: `Invalid run: ${formatZodIssues(parsed.error)}` };
  const tooLarge = agentInputBudgetProblem(raw);
  if (tooLarge) return { ok: false, message: `Invalid run: ${tooLarge}` };
  return { ok: true, input: raw as AgentInput, parsed: parsed.data };
}
