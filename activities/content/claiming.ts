import { Context } from '@temporalio/activity';
import { claimantOf } from '../../shared/content-gc';
import type { ContentStore } from './store';

/**
 * The claimant of the activity running now (the worker's Temporal service, the run's namespace and
 * workflow id); undefined outside one.
 */
export function currentClaimant(service: string): string | undefined {
  let info;
  try {
    info = Context.current().info;
  } catch {
    return undefined;
  }
  const workflowId = info.workflowExecution?.workflowId;
  return workflowId === undefined ? undefined : claimantOf(service, info.namespace, workflowId);
}

/** Whether the code runs inside an activity. */
function inActivity(): boolean {
  try {
    Context.current();
    return true;
  } catch {
    return false;
  }
}

/**
 * The store as activities use it: every value an activity stores is claimed for the workflow that
 * ran it, the workflow whose history will hold the reference. Claims are by workflow id, so the
 * runs of a continue-as-new chain share them and the newest run keeps what earlier runs stored.
 * `service` may be asked for lazily (the first time an activity stores something).
 */
export function claimedByCurrentRun(
  store: ContentStore,
  service: string | (() => Promise<string>),
): ContentStore {
  return {
    get where() {
      return store.where;
    },
    put: async (value, claimant) => {
      if (claimant !== undefined || typeof service === 'string')
        return store.put(value, claimant ?? currentClaimant(service as string));
      // Outside an activity there is no run to claim for, and no worker client to ask.
      return store.put(value, inActivity() ? currentClaimant(await service()) : undefined);
    },
    get: (ref) => store.get(ref),
    close: () => store.close(),
  };
}
