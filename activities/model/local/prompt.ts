/**
 * Turns the run's conversation into the chat a small model reads: a short system prompt with one
 * card per offered tool (what it is for, its arguments, an example call), the run's own instructions
 * when they differ from the project default, then the task and the earlier turns, with tool results
 * shown as user turns (small models' chat formats have no tool role) and clipped to a budget.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { ChatMessage } from '../../../shared/conversation';
import type { ModelToolSpec } from '../../../shared/model';
import type { LocalToolCard } from '../../../prompts/local-model';
import {
  AFTER_RESULTS_TEXT,
  ANSWER_CARD,
  ANSWER_TOOL,
  FEW_SHOT_EXAMPLE,
  LOCAL_SYSTEM_PROMPT,
  extraInstructionsText,
  toolResultText,
} from '../../../prompts/local-model';
import { DEFAULT_SYSTEM_PROMPT } from '../../../prompts/system';
import { decisionText } from './decision';

/** Characters of one tool result the model reads; the rest is cut with a note. */
export const TOOL_RESULT_CHARS = 1500;
/** Characters of a tool description used for a tool without a card: its first sentence, at most this. */
const UNCARDED_SUMMARY_CHARS = 160;

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}… (cut)` : text;
}

/** The card of a tool, or one made from its spec: the first sentence of the description, the required fields. */
export function cardFor(tool: ModelToolSpec, cards: Readonly<Record<string, LocalToolCard>>): LocalToolCard {
  const card = cards[tool.name];
  if (card) return card;
  const sentence = /^[^.!?\n]*[.!?]?/.exec(tool.description.trim())?.[0] ?? tool.name;
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
  return {
    summary: clip(sentence, UNCARDED_SUMMARY_CHARS),
    args: Object.fromEntries(required.map((k) => [k, k])),
    example: { task: '', arguments: {} },
  };
}

function cardLines(name: string, card: LocalToolCard): string[] {
  const args = Object.entries(card.args)
    .map(([k, hint]) => `${k} (${hint})`)
    .join(', ');
  const lines = [`- ${name}: ${card.summary}. Arguments: ${args || 'none'}.`];
  if (card.example.task) {
    lines.push(`  Example: "${card.example.task}" -> ${decisionText(name, card.example.arguments)}`);
  }
  return lines;
}

/** The system prompt: rules, one card per offered tool and the answer card. */
export function systemText(tools: ModelToolSpec[], cards: Readonly<Record<string, LocalToolCard>>): string {
  return [
    LOCAL_SYSTEM_PROMPT,
    '',
    'Tools:',
    ...tools.flatMap((t) => cardLines(t.name, cardFor(t, cards))),
    ...cardLines(ANSWER_TOOL, ANSWER_CARD),
  ].join('\n');
}

/** The chat the model continues with its next decision. */
export function buildChat(
  messages: ChatMessage[],
  tools: ModelToolSpec[],
  cards: Readonly<Record<string, LocalToolCard>>,
): ChatHistoryItem[] {
  let system = systemText(tools, cards);
  const example = FEW_SHOT_EXAMPLE;
  const chat: ChatHistoryItem[] = tools.some((t) => t.name === example.tool)
    ? [
        { type: 'user', text: example.task },
        { type: 'model', response: [decisionText(example.tool, example.arguments)] },
        {
          type: 'user',
          text: [toolResultText(example.tool, example.result), AFTER_RESULTS_TEXT].join('\n\n'),
        },
        { type: 'model', response: [decisionText(ANSWER_TOOL, { text: example.answer })] },
      ]
    : [];
  let results: string[] = [];
  const flushResults = () => {
    if (results.length) chat.push({ type: 'user', text: [...results, AFTER_RESULTS_TEXT].join('\n\n') });
    results = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushResults();
    switch (message.role) {
      case 'system':
        if (message.content.trim() && message.content.trim() !== DEFAULT_SYSTEM_PROMPT.trim()) {
          system += `\n\n${extraInstructionsText(message.content.trim())}`;
        }
        break;
      case 'user':
        chat.push({ type: 'user', text: message.content });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        const text = calls.length
          ? calls.map((c) => decisionText(c.name, c.arguments)).join('\n')
          : decisionText(ANSWER_TOOL, { text: message.content ?? '' });
        chat.push({ type: 'model', response: [text] });
        break;
      }
      case 'tool':
        results.push(toolResultText(message.name, clip(message.content, TOOL_RESULT_CHARS)));
        break;
    }
  }
  flushResults();
  return [{ type: 'system', text: system }, ...chat];
}
