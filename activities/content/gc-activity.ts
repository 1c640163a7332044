import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ContentGcReport } from '../../shared/content-gc';
import type { ContentGcActivities } from '../types';
import type { ContentStore } from './store';
import { isCollectable } from './collectable';
import type { RunLiveness } from './gc';
import { collectContent } from './gc';

/** What the GC activity is built from: the worker's store and its Temporal connection. */
export interface ContentGcDeps {
  store: ContentStore;
  liveness: RunLiveness;
  /** The worker's namespace; the activity's own when absent. */
  namespace?: string;
  /** Told of every collection that finished (metrics). */
  onCollected?: (report: ContentGcReport) => void;
}

/**
 * The `collectContentGarbage` activity the GC schedule's workflow runs: one collection of the
 * worker's store, heartbeating as it goes (a worker that dies mid-collection leaves nothing half
 * done: each removal stands on its own, and the next attempt starts over).
 */
export function createContentGcActivities(deps: ContentGcDeps): ContentGcActivities {
  return {
    async collectContentGarbage(input) {
      const { store } = deps;
      if (!isCollectable(store))
        throw ApplicationFailure.nonRetryable(
          `The content store (${store.where}) of this worker cannot be collected`,
          'NotCollectable',
        );
      const ctx = Context.current();
      const report = await collectContent(
        {
          store,
          liveness: deps.liveness,
          namespace: deps.namespace ?? ctx.info.namespace,
          progress: (what) => ctx.heartbeat(what),
        },
        input,
      );
      deps.onCollected?.(report);
      return report;
    },
  };
}
