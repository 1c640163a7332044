/**
 * Agents as steps of your own workflows: start an agent run as a child workflow and wait for its
 * answer, typed when you give an output schema. Cancelling your workflow cancels the agent (and the
 * tools it runs); its budgets are the ones its input sets.
 */
import { formatZodIssues } from '../../shared/zod-issues';
import type { ChildWorkflowHandle } from '@temporalio/workflow';
import {
  ApplicationFailure,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  executeChild,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { z } from 'zod';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { AGENT_WORKFLOW_TYPE } from '../../shared/agent/messages';
import { outputSchemaFromZod } from '../../shared/agent/output-schema';
import type { agentWorkflow } from '../agent';

/** An agent's input where `output` may also be a zod schema, for a typed `output` in the result. */
export type AgentStepInput<T = unknown> = Omit<AgentInput, 'output'> & {
  /** What the answer must be: a zod schema (the result's `output` is then typed) or a JSON Schema. */
  output?: z.ZodType<T> | Record<string, unknown>;
};

/** An agent's result whose `output` has the output schema's type. */
export type AgentStepResult<T> = Omit<AgentResult, 'output'> & { output?: T };

/** Where and how the agent's child workflow runs. */
export interface AgentStepOptions {
  /** The child's workflow id; default `<your workflow id>-agent-<uuid>`. */
  workflowId?: string;
  /** The task queue of workers with the plugin; default your workflow's own. */
  taskQueue?: string;
  /** Memo on the child (listed by the runs list); `task` is set for you. */
  memo?: Record<string, unknown>;
  /**
   * What happens to the agent when your workflow closes without waiting for it: by default it is
   * cancelled (gracefully: running tools are cancelled and cleaned up).
   */
  parentClosePolicy?: ParentClosePolicy;
}

function isZod(schema: unknown): schema is z.ZodType {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

/** The input the agent workflow takes, and the zod schema to parse its output with (if any). */
function agentInputOf<T>(input: AgentStepInput<T>): { input: AgentInput; parse?: z.ZodType<T> } {
  const { output, ...rest } = input;
  if (output === undefined) return { input: rest };
  if (!isZod(output)) return { input: { ...rest, output } };
  return { input: { ...rest, output: outputSchemaFromZod(output) }, parse: output };
}

function childOptions(input: AgentInput, options: AgentStepOptions) {
  return {
    args: [input] as Parameters<typeof agentWorkflow>,
    workflowId: options.workflowId ?? `${workflowInfo().workflowId}-agent-${uuid4()}`,
    ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    memo: { task: input.task.slice(0, 200), ...options.memo },
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    parentClosePolicy: options.parentClosePolicy ?? ParentClosePolicy.REQUEST_CANCEL,
  };
}

/** Parses a result's output with the step's zod schema; a mismatch fails the step, saying why. */
function typed<T>(result: AgentResult, parse: z.ZodType<T> | undefined): AgentStepResult<T> {
  if (!parse || result.output === undefined) return result as AgentStepResult<T>;
  const parsed = parse.safeParse(result.output);
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: 'OutputValidationError',
      message: `The agent's output does not match the zod schema: ${formatZodIssues(parsed.error)}`,
      nonRetryable: true,
    });
  }
  return { ...result, output: parsed.data };
}

/**
 * Runs an agent as a child workflow of yours and returns its result. With a zod `output` schema,
 * `result.output` is the answer parsed and typed. Fails as the child fails (invalid input, a model
 * or tool that cannot run, an output that never matches); a budget that stops it returns the
 * result with `stopReason` saying which.
 */
export async function runAgent<T = unknown>(
  input: AgentStepInput<T>,
  options: AgentStepOptions = {},
): Promise<AgentStepResult<T>> {
  const { input: agentInput, parse } = agentInputOf(input);
  const result = await executeChild<typeof agentWorkflow>(
    AGENT_WORKFLOW_TYPE,
    childOptions(agentInput, options),
  );
  return typed(result, parse);
}

/** A started agent: its child handle, and its typed result. */
export interface StartedAgent<T> {
  handle: ChildWorkflowHandle<typeof agentWorkflow>;
  result(): Promise<AgentStepResult<T>>;
}

/**
 * Starts an agent as a child workflow and returns at once (once the child has started): signal it,
 * run others beside it, then await `result()`.
 */
export async function startAgent<T = unknown>(
  input: AgentStepInput<T>,
  options: AgentStepOptions = {},
): Promise<StartedAgent<T>> {
  const { input: agentInput, parse } = agentInputOf(input);
  const handle = await startChild<typeof agentWorkflow>(
    AGENT_WORKFLOW_TYPE,
    childOptions(agentInput, options),
  );
  return { handle, result: async () => typed(await handle.result(), parse) };
}
