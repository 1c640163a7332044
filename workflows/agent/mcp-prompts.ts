import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { McpActivities } from '../../activities/types';
import type { ParsedAgentInput } from '../../shared/agent';
import { AGENT_TEXT_BUDGETS } from '../../shared/agent/input';
import { formatBytes, utf8Bytes } from '../../shared/temporal-limits';

/** The prompts a run starts from: a server that cannot answer now is retried a few times. */
const { mcpPrompts } = proxyActivities<McpActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['McpPromptInvalid'] },
});

/** The system prompt and task a run starts from. */
export interface StartingPrompts {
  system: string | undefined;
  task: string;
}

/**
 * The run's system prompt and task with its MCP prompts (`prompts.system`, `prompts.task`) got from
 * their servers: the system prompt is the prompt's text; the task is the prompt's text followed by
 * the run's own task. Called once, when the run starts (a continued run carries its conversation).
 * A prompt that cannot be used fails the run at once, saying why.
 */
export async function startingPrompts(input: ParsedAgentInput): Promise<StartingPrompts> {
  if (!input.prompts?.system && !input.prompts?.task) return { system: input.system, task: input.task };
  let out;
  try {
    out = await mcpPrompts(input.prompts);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const type = cause instanceof ApplicationFailure ? cause.type : undefined;
    throw ApplicationFailure.create({
      type: type === 'McpPromptInvalid' ? 'InvalidAgentInput' : 'McpPromptFailed',
      message: `MCP prompts: ${cause?.message ?? (err as Error).message}`,
      nonRetryable: true,
    });
  }
  const task = out.task === undefined ? input.task : `${out.task}\n\n${input.task}`;
  if (utf8Bytes(task) > AGENT_TEXT_BUDGETS.task) {
    throw ApplicationFailure.create({
      type: 'InvalidAgentInput',
      message: `MCP prompts: the task with its prompt is ${formatBytes(utf8Bytes(task))}, over the ${formatBytes(AGENT_TEXT_BUDGETS.task)} a task may take`,
      nonRetryable: true,
    });
  }
  return { system: out.system ?? input.system, task };
}
