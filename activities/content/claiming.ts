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

/**
 * The store as activities use it: every value an activity stores is claimed for the workflow that
 * ran it, the workflow whose history will hold the reference. Claims are by workflow id, so the
 * runs of a continue-as-new chain share them and the newest run keeps what earlier runs stored.
 */
export function claimedByCurrentRun(store: ContentStore, service: string): ContentStore {
  return {
    get where() {
      return store.where;
    },
    put: (value, claimant) => store.put(value, claimant ?? currentClaimant(service)),
    get: (ref) => store.get(ref),
    close: () => store.close(),
  };
}
