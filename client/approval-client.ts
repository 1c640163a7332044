/**
 * Approvals as clients see them: what waits (one run, or every running agent run found through
 * visibility), and decisions sent as the validated `approveToolCall` update. The CLI and the HTTP
 * API share it, so both say the same thing about finished runs and refused decisions.
 */
import { runningHandle as runningWorkflow } from './temporal-errors';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApprovalDecision, PendingApproval } from '../shared/agent';
import { AGENT_WORKFLOW_TYPE, approveToolCallUpdate, stateQuery } from '../shared/agent/messages';

/** Most runs `listApprovals` looks at across the namespace. */
export const MAX_RUNS_LISTED = 200;

/** A call waiting for approval, with its run. */
export interface RunApproval extends PendingApproval {
  workflowId: string;
}

/** Why a decision was not taken: no such run, a finished run, or the run's validator refused it. */
export class ApprovalRequestError extends Error {
  override readonly name = 'ApprovalRequestError';
  constructor(
    readonly code: 'not_found' | 'finished' | 'refused',
    message: string,
  ) {
    super(message);
  }
}

/** The handle of a running workflow, or an error saying it does not exist or is finished (and how). */
function runningHandle(client: Client, workflowId: string) {
  return runningWorkflow(
    client,
    workflowId,
    (code, message) => new ApprovalRequestError(code, message),
    'no tool call of it waits for approval',
  );
}

/**
 * Calls waiting for approval: of one run (an error when it is finished or unknown), or of every
 * running agent run (at most {@link MAX_RUNS_LISTED}), optionally only runs that notify `user`.
 */
export async function listApprovals(
  client: Client,
  opts: { workflowId?: string; user?: string } = {},
): Promise<RunApproval[]> {
  if (opts.workflowId) {
    const state = await (await runningHandle(client, opts.workflowId)).query(stateQuery);
    return (state.approvals ?? []).map((a) => ({ workflowId: opts.workflowId as string, ...a }));
  }
  const out: RunApproval[] = [];
  let seen = 0;
  for await (const wf of client.workflow.list({
    query: `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`,
  })) {
    if (++seen > MAX_RUNS_LISTED) break;
    if (opts.user !== undefined && wf.memo?.notifyUser !== opts.user) continue;
    try {
      const state = await client.workflow.getHandle(wf.workflowId).query(stateQuery);
      for (const a of state.approvals ?? []) out.push({ workflowId: wf.workflowId, ...a });
    } catch (err) {
      // A run that finished between the listing and the query has nothing waiting.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return out.sort((a, b) => a.deadline.localeCompare(b.deadline));
}

/**
 * Sends a decision. The run's validator checks it (unknown or decided id, edited arguments against
 * the tool's schema); a refusal comes back as an error with the validator's own message.
 */
export async function decideApproval(
  client: Client,
  workflowId: string,
  decision: ApprovalDecision,
): Promise<{ toolCallId: string; approved: boolean; editedArgs?: boolean }> {
  // No state query: workflows of your own that ask with ApprovalRequests take decisions too.
  const handle = await runningHandle(client, workflowId);
  try {
    return await handle.executeUpdate(approveToolCallUpdate, { args: [decision] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      throw new ApprovalRequestError('refused', err.cause?.message ?? err.message);
    }
    if (err instanceof WorkflowNotFoundError) {
      throw new ApprovalRequestError('finished', `Run "${workflowId}" finished before the decision arrived`);
    }
    throw err;
  }
}
