import { SIZE_BUDGETS, formatBytes, jsonBytes, truncateUtf8 } from '../../shared/temporal-limits';
import type { CallModelOutput } from '../../shared/model';

/** Room kept for the answer text and the output's other fields. */
const TEXT_ROOM = 16 * 1024;

/**
 * Keeps a model's answer within its budgets before it enters history: arguments of a tool call
 * over SIZE_BUDGETS.toolArgumentsBytes (or past what the whole output may hold) become a note the
 * workflow hands back to the model, which then sends smaller arguments; answer text is cut so the
 * whole output stays under SIZE_BUDGETS.modelOutputBytes.
 */
export function boundModelOutput(out: CallModelOutput): CallModelOutput {
  let argsRoom = SIZE_BUDGETS.modelOutputBytes - TEXT_ROOM;
  const toolCalls = out.toolCalls.map((call) => {
    const bytes = jsonBytes(call.arguments);
    if (bytes <= SIZE_BUDGETS.toolArgumentsBytes && bytes <= argsRoom) {
      argsRoom -= bytes;
      return call;
    }
    const budget = Math.min(SIZE_BUDGETS.toolArgumentsBytes, Math.max(0, argsRoom));
    return {
      ...call,
      arguments: `[arguments of ${formatBytes(bytes)} left out: over the ${formatBytes(budget)} left for this tool call; send smaller arguments]`,
    };
  });
  const room = SIZE_BUDGETS.modelOutputBytes - jsonBytes({ ...out, content: '', toolCalls });
  const content =
    out.content === null ? null : truncateUtf8(out.content, Math.max(1024, room), 'answer').text;
  return { ...out, content, toolCalls };
}
