import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ChatMessage } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice, ScriptedTurn } from '../../shared/model';
import { ScriptedTurnSchema } from '../../shared/model';
import { formatZodIssues } from '../../shared/zod-issues';
import type { ModelDelta, ModelProvider } from './provider';

const ScriptFileSchema = z.object({
  description: z.string().optional(),
  /** The task the script was written for (a script replays its turns whatever the task). */
  task: z.string().optional(),
  turns: z.array(ScriptedTurnSchema).min(1),
});

/** A script file: its turns and what it was written for. */
export type ScriptFile = z.infer<typeof ScriptFileSchema>;

function scriptError(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ScriptError', message, nonRetryable: true });
}

/** Parsed scripts by file, reused while the file is unchanged (each model call would re-read it). */
const scriptCache = new Map<string, { mtimeMs: number; script: ScriptFile }>();

/** Reads and validates `<scriptsDir>/<name>.json` and returns its turns. */
export async function loadScript(scriptsDir: string, name: string): Promise<ScriptedTurn[]> {
  return (await loadScriptFile(scriptsDir, name)).turns;
}

/** Reads and validates `<scriptsDir>/<name>.json`. Names are plain file names, never paths. */
export async function loadScriptFile(scriptsDir: string, name: string): Promise<ScriptFile> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name) || name.includes('..')) {
    throw scriptError(`Script name "${name}" is not a plain file name (letters, digits, . _ -)`);
  }
  const file = path.join(scriptsDir, name.endsWith('.json') ? name : `${name}.json`);
  const stat = await fs.stat(file).catch(() => undefined);
  const cached = stat ? scriptCache.get(file) : undefined;
  if (stat && cached?.mtimeMs === stat.mtimeMs) return cached.script;
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    const available = (await fs.readdir(scriptsDir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5));
    throw scriptError(
      `Script "${name}" not found in ${scriptsDir}` +
        (available.length ? `; available: ${available.join(', ')}` : '; set DURABLE_AGENT_SCRIPTS_DIR'),
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw scriptError(`Script ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = ScriptFileSchema.safeParse(json);
  if (!parsed.success) throw scriptError(`Script ${file} is invalid: ${formatZodIssues(parsed.error)}`);
  if (stat) scriptCache.set(file, { mtimeMs: stat.mtimeMs, script: parsed.data });
  return parsed.data;
}

/** The tools a script's turns call, in order of first use. */
export function scriptTools(turns: ScriptedTurn[]): string[] {
  const names = new Set<string>();
  for (const turn of turns) if ('toolCalls' in turn) for (const c of turn.toolCalls) names.add(c.name);
  return [...names];
}

/** Rough token estimate (4 characters a token), so budgets work offline. */
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Fills `{{last_tool_results}}` (results of the latest tool turn) and `{{result:<toolCallId>}}`
 * from the conversation, so a scripted final answer can quote what the tools returned.
 */
export function renderScriptText(template: string, messages: ChatMessage[]): string {
  const toolMessages = messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  const latest = messages
    .slice(lastAssistant + 1)
    .filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool');
  return template
    .replace(/\{\{last_tool_results\}\}/g, () => latest.map((m) => m.content).join('\n'))
    .replace(/\{\{result:([^}]+)\}\}/g, (whole, id: string) => {
      const found = toolMessages.find((m) => m.toolCallId === id.trim());
      return found ? found.content : whole;
    });
}

/** Renders templates in every string inside tool-call arguments (e.g. a value found by an earlier call). */
function renderArgs(value: unknown, messages: ChatMessage[]): unknown {
  if (typeof value === 'string') return renderScriptText(value, messages);
  if (Array.isArray(value)) return value.map((v) => renderArgs(v, messages));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderArgs(v, messages)]));
  }
  return value;
}

/**
 * The offline model: turn N of the script answers the N-th model call of the run, counted from the
 * assistant messages already in the conversation. Stateless, so retries and replays give the same turn.
 */
export function createScriptedProvider(
  scriptsDir: string,
): ModelProvider<Extract<ModelChoice, { provider: 'scripted' }>> {
  return async ({ model, messages, step, onDelta, signal }): Promise<CallModelOutput> => {
    const turns = model.turns ?? (await loadScript(scriptsDir, model.script as string));
    const index = step !== undefined ? step - 1 : messages.filter((m) => m.role === 'assistant').length;
    const turn = turns[index];
    if (!turn) {
      throw scriptError(
        `The script has ${turns.length} turns and the run asked for turn ${index + 1}; add turns or end with a final answer`,
      );
    }
    const content = turn.content === undefined ? null : renderScriptText(turn.content, messages);
    const toolCalls =
      'toolCalls' in turn
        ? turn.toolCalls.map((c, i) => ({
            id: c.id ?? `call_${index + 1}_${i + 1}`,
            name: c.name,
            arguments: renderArgs(c.arguments ?? {}, messages),
          }))
        : [];
    const input = messages.map((m) => ('content' in m && m.content ? m.content : '')).join('\n');
    if (onDelta) await streamTurn(onDelta, content, toolCalls, turn.tokenDelayMs ?? 0, signal);
    return {
      content,
      toolCalls,
      usage: turn.usage ?? {
        inputTokens: estimateTokens(input),
        outputTokens: estimateTokens((content ?? '') + JSON.stringify(toolCalls)),
      },
      finishReason: toolCalls.length ? 'tool_calls' : 'stop',
    };
  };
}

/**
 * Plays a scripted turn as a stream (live tokens): its text word by word, then each tool call's
 * arguments (as JSON) a few characters at a time, as a hosted model streams them; pieces `delayMs`
 * apart. Stops early when the call is cancelled.
 */
async function streamTurn(
  onDelta: (d: ModelDelta) => void,
  content: string | null,
  toolCalls: { id: string; name: string; arguments: unknown }[],
  delayMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  for (const word of content?.match(/\s*\S+\s*/g) ?? []) {
    if (signal?.aborted) return;
    onDelta({ kind: 'text', text: word });
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  }
  for (const [index, c] of toolCalls.entries()) {
    const pieces = JSON.stringify(c.arguments).match(/[^]{1,8}/g) ?? [''];
    for (const [i, args] of pieces.entries()) {
      if (signal?.aborted) return;
      // The call's id and name come with its first piece, as in an OpenAI stream.
      onDelta({ kind: 'tool_call', index, ...(i === 0 ? { id: c.id, name: c.name } : {}), args });
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
