/**
 * The input of `agent_start` / `agent_run`, built into an agent workflow input and validated the
 * way `durable-agent run` does it (client/model-spec.ts, the workflow's own schema and budget), so a
 * bad run is refused with a clear message before anything starts.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AgentInput } from '../../shared/agent';
import { DEFAULT_TOOLS } from '../../shared/agent';
import { checkAgentInput } from '../../shared/agent/check-input';
import { runIdProblem } from '../../shared/identifiers';
import { isMcpRef } from '../../shared/tools/mcp';
import { TOOL_NAMES } from '../../shared/tools/registry';
import type { ScriptedTurn } from '../../shared/model';
import { loadScriptFile, scriptTools } from '../../activities/model/scripted';
import { parseModelSpec } from '../../client/model-spec';

/** The model a run gets when the request names none: the offline demo script, no key needed. */
export const DEFAULT_MCP_MODEL = 'scripted:demo';

/** Arguments of `agent_start` and `agent_run`. */
export const StartRunShape = {
  task: z.string().describe('What the agent should do'),
  model: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .optional()
    .describe(
      `scripted:<script> (default ${DEFAULT_MCP_MODEL}), local, local:<file>, openai:<model>, anthropic:<model>, ` +
        'or a model object as in examples/runs/*.json (e.g. {"provider":"scripted","turns":[…]})',
    ),
  tools: z
    .array(z.string())
    .optional()
    .describe(
      'Tools the run may call (default get_time, calculator; a scripted model adds the ones its script calls)',
    ),
  system: z.string().optional().describe('System prompt; a default one is used when omitted'),
  policy: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'Run policy: maxSteps, maxTokens, requireApproval, approvalTimeout, … (see docs/approvals-and-budgets.md)',
    ),
  notifyUser: z.string().optional().describe('Also deliver the run’s notifications to inbox:<user>'),
  id: z
    .string()
    .optional()
    .describe(
      'Run (workflow) id, default agent-<uuid>; starting again under an id that exists returns that run',
    ),
};

/** Parsed arguments of `agent_start` and `agent_run`. */
export type StartRunArgs = z.infer<z.ZodObject<typeof StartRunShape>>;

/** A run ready to start, or why it cannot. */
export type BuiltRun = { ok: true; workflowId: string; input: AgentInput } | { ok: false; error: string };

/** The tools a scripted model calls, when its script can be read here (best effort: the worker decides). */
async function scriptedTools(
  model: Record<string, unknown>,
  scriptsDir: string,
): Promise<string[] | undefined> {
  if (model.provider !== 'scripted') return undefined;
  if (Array.isArray(model.turns)) {
    try {
      return scriptTools(model.turns as ScriptedTurn[]);
    } catch {
      return undefined; // Malformed turns: the input's validation says what is wrong.
    }
  }
  if (typeof model.script !== 'string') return undefined;
  const script = await loadScriptFile(scriptsDir, model.script).catch(() => undefined);
  return script ? scriptTools(script.turns) : undefined;
}

/** Builds and checks a run from the tool's arguments. */
export async function buildRun(args: StartRunArgs, scriptsDir: string): Promise<BuiltRun> {
  const workflowId = args.id ?? `agent-${randomUUID()}`;
  const idProblem = runIdProblem(workflowId);
  if (idProblem) return { ok: false, error: `Invalid run: id: ${idProblem}` };
  let model: Record<string, unknown>;
  try {
    model = typeof args.model === 'object' ? args.model : parseModelSpec(args.model ?? DEFAULT_MCP_MODEL);
  } catch (err) {
    return { ok: false, error: `Invalid run: model: ${(err as Error).message.replace(/^--model /, '')}` };
  }
  const input: Record<string, unknown> = { task: args.task, model };
  if (args.system !== undefined) input.system = args.system;
  if (args.policy !== undefined) input.policy = args.policy;
  if (args.notifyUser !== undefined) input.notify = { user: args.notifyUser };
  const needed = await scriptedTools(model, scriptsDir);
  if (args.tools !== undefined) {
    input.tools = args.tools;
    // Unknown tool names are the input validation's to report.
    const known = args.tools.every((t) => TOOL_NAMES.includes(t) || isMcpRef(t));
    const missing = known ? (needed ?? []).filter((t) => !args.tools?.includes(t)) : [];
    if (missing.length) {
      return {
        ok: false,
        error:
          `Invalid run: the scripted model calls ${(needed ?? []).join(', ')}, but tools does not enable ` +
          `${missing.join(', ')}: add ${missing.length > 1 ? 'them' : 'it'}, or use a model that reads the task`,
      };
    }
  } else if (needed) {
    input.tools = [...new Set([...DEFAULT_TOOLS, ...needed])];
  }
  const checked = checkAgentInput(input);
  if (!checked.ok) return { ok: false, error: checked.message };
  return { ok: true, workflowId, input: checked.input };
}
