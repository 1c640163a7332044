/**
 * Choosing the tool by the model's own probabilities, calibrated. A model of 100–300 M parameters
 * that writes `{"tool":"` greedily mostly picks whichever name its prompt made likely in general
 * (the first tool listed, the last example) rather than the one the task needs. Scoring every
 * offered name, and dividing by the probability the same prompt gives it for a content-free task
 * ("contextual calibration", Zhao et al. 2021, "Calibrate Before Use"), removes that prior and leaves
 * the part of the choice that depends on the task.
 */
import type * as LlamaCpp from 'node-llama-cpp';

/** Content-free tasks whose average probabilities are the prior of each name. */
const CONTENT_FREE_TASKS = ['N/A', '?', ''];

/** What is written before the name. */
const NAME_PREFIX = '{"tool":"';
/** What follows the name; its first characters may share a token with the closing quote. */
const NAME_SUFFIX = '","arguments":';

/** The tokens of the chat up to where the model's reply starts. */
function chatTokens(chat: LlamaCpp.LlamaChat, history: LlamaCpp.ChatHistoryItem[]): LlamaCpp.Token[] {
  const { contextText } = chat.chatWrapper.generateContextState({
    chatHistory: [...history, { type: 'model', response: [] }],
  });
  return contextText.tokenize(chat.model.tokenizer);
}

/**
 * Log-probabilities of each name as the model's next words after `{"tool":"`. Names are read as a
 * token trie and the model is asked only where names part (for most tool sets, once at the first
 * token and once inside `sql_…`): past that point a name is already decided, and a full vocabulary
 * distribution costs about as much as evaluating a token. Leaves the sequence holding the chat, so
 * the generation that follows reuses it. With `onlyBest`, the scores are exact for the names that can
 * still be the most likely, and for the others an upper bound under the best (enough for an argmax).
 */
export async function nameLogProbs(
  chat: LlamaCpp.LlamaChat,
  history: LlamaCpp.ChatHistoryItem[],
  names: readonly string[],
  options: { onlyBest?: boolean } = {},
): Promise<number[]> {
  const { sequence, model } = chat;
  const prompt = chatTokens(chat, history);
  // Each reply runs to the token that holds the name's closing quote, tokenized as the model writes it.
  const replies = names.map((name) => {
    const head = `${NAME_PREFIX}${name}`;
    const tokens = model.tokenize(`${head}${NAME_SUFFIX}`, false, 'trimLeadingSpace');
    let end = 1;
    while (end < tokens.length && model.detokenize(tokens.slice(0, end)).length <= head.length) end += 1;
    return tokens.slice(0, end);
  });
  let shared = 0;
  while (replies.every((r) => r.length > shared + 1 && r[shared] === replies[0]?.[shared])) shared += 1;
  const context = [...prompt, ...(replies[0]?.slice(0, shared) ?? [])];
  const last = context.pop();
  if (last === undefined) throw new Error('empty prompt');

  const { firstDifferentIndex } = sequence.compareContextTokens(context);
  if (firstDifferentIndex < sequence.nextTokenIndex) {
    await sequence.eraseContextTokenRanges([{ start: firstDifferentIndex, end: sequence.nextTokenIndex }]);
  }
  if (firstDifferentIndex < context.length) {
    await sequence.evaluateWithoutGeneratingNewTokens(context.slice(firstDifferentIndex));
  }
  const base = sequence.nextTokenIndex;
  const scores = names.map(() => 0);

  /** Distribution of the next token after `path` (the tokens past the shared prefix). */
  const nextProbabilities = async (path: LlamaCpp.Token[]): Promise<Map<LlamaCpp.Token, number>> => {
    const input: LlamaCpp.ControlledEvaluateInputItem[] = [last, ...path];
    input[input.length - 1] = [
      input[input.length - 1] as LlamaCpp.Token,
      { generateNext: { probabilities: true } },
    ];
    const outputs = await sequence.controlledEvaluate(input);
    await sequence.eraseContextTokenRanges([{ start: base, end: sequence.nextTokenIndex }]);
    return outputs[outputs.length - 1]?.next.probabilities ?? new Map();
  };

  /**
   * Log-probability of the tokens that finish a name alone in its branch, closing quote included:
   * the branch's first token ("get") also carries every other name the model might have in mind
   * ("get_customers"), which only the rest of the name tells apart.
   */
  const tailLogProb = async (path: LlamaCpp.Token[], tail: LlamaCpp.Token[]): Promise<number> => {
    if (tail.length === 0) return 0;
    const input: LlamaCpp.ControlledEvaluateInputItem[] = [last, ...path, ...tail.slice(0, -1)];
    for (let i = path.length; i < input.length; i++) {
      input[i] = [input[i] as LlamaCpp.Token, { generateNext: { probabilities: true } }];
    }
    const outputs = await sequence.controlledEvaluate(input);
    await sequence.eraseContextTokenRanges([{ start: base, end: sequence.nextTokenIndex }]);
    let sum = 0;
    tail.forEach((token, k) => {
      const p = outputs[path.length + k]?.next.probabilities?.get(token) ?? 0;
      sum += Math.log(Math.max(p, 1e-12));
    });
    return sum;
  };

  /** Names alone in their branch, whose tails are scored once every branch is. */
  const alone: { i: number; path: LlamaCpp.Token[]; tail: LlamaCpp.Token[] }[] = [];
  const split = async (members: number[], depth: number, path: LlamaCpp.Token[]): Promise<void> => {
    if (members.length === 1) {
      const i = members[0] as number;
      alone.push({ i, path, tail: replies[i]?.slice(shared + depth) ?? [] });
      return;
    }
    if (members.length < 2) return;
    const probabilities = await nextProbabilities(path);
    const groups = new Map<LlamaCpp.Token, number[]>();
    for (const i of members) {
      const token = replies[i]?.[shared + depth];
      if (token === undefined) continue;
      groups.set(token, [...(groups.get(token) ?? []), i]);
    }
    for (const [token, group] of groups) {
      const logProb = Math.log(Math.max(probabilities.get(token) ?? 0, 1e-12));
      for (const i of group) scores[i] = (scores[i] ?? 0) + logProb;
      await split(group, depth + 1, [...path, token]);
    }
  };
  await split(
    names.map((_, i) => i),
    0,
    [],
  );
  // A tail only lowers a score, so with `onlyBest` a name whose score so far is already under the
  // best whole name cannot win, and its tail (a full distribution per token) is not computed.
  alone.sort((a, b) => (scores[b.i] ?? 0) - (scores[a.i] ?? 0));
  let best = -Infinity;
  for (const { i, path, tail } of alone) {
    if (options.onlyBest && (scores[i] ?? 0) < best) continue;
    scores[i] = (scores[i] ?? 0) + (await tailLogProb(path, tail));
    best = Math.max(best, scores[i] ?? 0);
  }
  return scores;
}

/** The prior of each name: its average probability over content-free tasks, as a log. */
export async function namePriors(
  chat: LlamaCpp.LlamaChat,
  historyFor: (task: string) => LlamaCpp.ChatHistoryItem[],
  names: readonly string[],
): Promise<number[]> {
  const sums = names.map(() => 0);
  for (const task of CONTENT_FREE_TASKS) {
    const logs = await nameLogProbs(chat, historyFor(task), names);
    logs.forEach((l, i) => (sums[i] = (sums[i] ?? 0) + Math.exp(l) / CONTENT_FREE_TASKS.length));
  }
  return sums.map((p) => Math.log(Math.max(p, 1e-12)));
}

/** The index of the name whose probability rose most over its prior. */
export function calibratedChoice(logProbs: readonly number[], priors: readonly number[]): number {
  let best = 0;
  logProbs.forEach((l, i) => {
    if (l - (priors[i] ?? 0) > (logProbs[best] ?? 0) - (priors[best] ?? 0)) best = i;
  });
  return best;
}
