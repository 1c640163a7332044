import type { ScriptedTurn } from '../shared/model';

/** A scripted tool-call turn. */
export function callTurn(...calls: [name: string, args: unknown, id?: string][]): ScriptedTurn {
  return { toolCalls: calls.map(([name, args, id]) => ({ name, arguments: args, ...(id ? { id } : {}) })) };
}

/** A scripted final answer. */
export function answerTurn(content: string): ScriptedTurn {
  return { content };
}
