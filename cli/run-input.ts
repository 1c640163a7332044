import fs from 'node:fs';
import type { AgentInput } from '../shared/agent';
import { DEFAULT_TOOLS } from '../shared/agent';
import { checkAgentInput } from '../shared/agent/check-input';
import { TOOL_NAMES } from '../shared/tools/registry';
import { loadScriptFile, scriptTools } from '../client/model-spec';
import { parseModelSpec } from '../client/model-spec';

/** The options of `durable-agent run`. */
export interface RunOpts {
  model: string;
  tools?: string;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxWallClock?: string;
  approve?: string;
  system?: string;
  notifyUser?: string;
  input?: string;
  id?: string;
  reuse?: boolean;
  json?: boolean;
  /** false with --no-stream: answers printed when done, not typed as they come. */
  stream?: boolean;
  wait: boolean;
  taskQueue?: string;
  cancelOnExit?: boolean;
  /** false with --no-prompt: the run's questions are not asked in the terminal. */
  prompt?: boolean;
}

/** Reads `--input`: a JSON object (the whole workflow input), or an error that names the file and the fix. */
function readInputFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `--input ${file}: no such file`
        : `--input ${file}: cannot read it (${(err as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`--input ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    const found = json === null ? 'null' : Array.isArray(json) ? 'an array' : `a ${typeof json}`;
    throw new Error(
      `--input ${file} must hold a JSON object (the workflow input, e.g. {"task": "…"}); it holds ${found}`,
    );
  }
  return json as Record<string, unknown>;
}

/** A scripted run's script, as this command reads it (the worker reads the same folder by default). */
interface ScriptedRun {
  name: string;
  turns: Awaited<ReturnType<typeof loadScriptFile>>['turns'];
  task?: string;
}

/**
 * For a scripted model: reads the script (an unknown one is refused here, before a run starts) and,
 * since its turns replay whatever the task, enables its tools when the run names none.
 */
async function scriptedRun(
  input: Record<string, unknown>,
  toolsGiven: boolean,
  scriptsDir: string,
): Promise<ScriptedRun | undefined> {
  const model = input.model as { provider?: string; script?: string } | undefined;
  if (model?.provider !== 'scripted' || typeof model.script !== 'string') return undefined;
  const script = await loadScriptFile(scriptsDir, model.script).catch((err: Error) => {
    throw new Error(
      `${err.message} (scripts are read from ${scriptsDir}; DURABLE_AGENT_SCRIPTS_DIR sets it)`,
    );
  });
  if (!toolsGiven && !Array.isArray(input.tools)) {
    input.tools = [...new Set([...DEFAULT_TOOLS, ...scriptTools(script.turns)])];
  }
  return {
    name: model.script,
    turns: script.turns,
    ...(script.task !== undefined ? { task: script.task } : {}),
  };
}

/**
 * After the input is valid: a scripted run that lacks a tool its script calls is refused, and a
 * note says when the task is not the one the script was written for.
 */
function checkScriptedRun(input: AgentInput, script: ScriptedRun): void {
  const needed = scriptTools(script.turns);
  const tools = input.tools ?? [...DEFAULT_TOOLS];
  // Names the script calls may be MCP tools of an mcp: reference, which only the worker knows.
  if (tools.every((t) => TOOL_NAMES.includes(t))) {
    const missing = needed.filter((t) => !tools.includes(t));
    if (missing.length) {
      throw new Error(
        `The scripted model "${script.name}" calls ${needed.join(', ')}, but this run does not enable ` +
          `${missing.join(', ')}: add ${missing.length > 1 ? 'them' : 'it'} to --tools, or use a model that reads the task ` +
          '(--model local, openai:<model> or anthropic:<model>)',
      );
    }
  }
  if (script.task !== undefined && input.task.trim() !== script.task) {
    console.error(
      `note: the scripted model "${script.name}" replays a fixed script written for "${script.task}"; it does ` +
        'not read your task. For an answer to it use --model local (offline) or openai:<model> / anthropic:<model>.',
    );
  }
}

/** Builds and validates the workflow input locally, so mistakes are reported before anything starts. */
export async function buildInput(
  task: string | undefined,
  o: RunOpts,
  modelGiven: boolean,
  scriptsDir: string,
): Promise<AgentInput> {
  const input: Record<string, unknown> = o.input ? readInputFile(o.input) : {};
  if (task !== undefined) input.task = task;
  // --model's default applies when the input file names no model; a given --model always wins.
  if (modelGiven || input.model === undefined) input.model = parseModelSpec(o.model);
  if (o.tools !== undefined)
    input.tools = o.tools
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  if (o.system !== undefined) input.system = o.system;
  const policy = { ...((input.policy as object | undefined) ?? {}) } as Record<string, unknown>;
  if (o.maxSteps !== undefined) policy.maxSteps = o.maxSteps;
  if (o.maxTokens !== undefined) policy.maxTokens = o.maxTokens;
  if (o.maxCost !== undefined) policy.maxCostUsd = o.maxCost;
  if (o.maxWallClock !== undefined) policy.maxWallClock = o.maxWallClock;
  if (o.approve !== undefined) policy.requireApproval = o.approve.split(',').map((t) => t.trim());
  input.policy = policy;
  if (o.notifyUser) input.notify = { user: o.notifyUser };
  const script = await scriptedRun(input, o.tools !== undefined, scriptsDir);
  // The input's own mistakes (a misspelt tool, a missing task) come first: they are what to fix.
  const checked = checkAgentInput(input);
  if (!checked.ok) throw new Error(checked.message);
  if (script) checkScriptedRun(checked.input, script);
  return checked.input;
}
