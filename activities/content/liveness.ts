/**
 * The collector's questions answered by Temporal's workflow service: a namespace's retention
 * (DescribeNamespace) and where a workflow is (DescribeWorkflowExecution, the authoritative
 * answer, not the visibility store, which lags). Works over a client's connection and a worker's.
 */
import type { temporal } from '@temporalio/proto';
import { UNKNOWN_SERVICE } from '../../shared/content-gc';
import type { RunLiveness, RunStatus } from './gc';

type Service = Pick<
  temporal.api.workflowservice.v1.WorkflowService,
  'describeNamespace' | 'describeWorkflowExecution' | 'getClusterInfo'
>;

/** gRPC NOT_FOUND. */
const NOT_FOUND = 5;

/** Stands for "keeps closed runs for good": a century. */
const FOREVER_MS = 100 * 365 * 86_400_000;

const notFound = (err: unknown) => (err as { code?: unknown }).code === NOT_FOUND;

/** Milliseconds of a protobuf timestamp or duration. */
function ms(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!t) return undefined;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/**
 * The id claims name a Temporal service by: its cluster id, kept by the service across restarts
 * (a dev server's is made with its database); {@link UNKNOWN_SERVICE} when it does not say.
 */
export async function temporalServiceId(service: Pick<Service, 'getClusterInfo'>): Promise<string> {
  try {
    const info = await service.getClusterInfo({});
    return info.clusterId && !info.clusterId.includes('/') ? info.clusterId : UNKNOWN_SERVICE;
  } catch {
    // Some hosted services refuse the call; their namespaces are unique on their own.
    return UNKNOWN_SERVICE;
  }
}

/** Answers the collector from the workflow service of a connection. */
export function temporalLiveness(service: Service): RunLiveness {
  let id: Promise<string> | undefined;
  return {
    serviceId() {
      id ??= temporalServiceId(service);
      return id;
    },
    async retentionMs(namespace) {
      try {
        const d = await service.describeNamespace({ namespace });
        // No retention set means the server keeps closed runs for good: nothing they claim expires.
        return ms(d.config?.workflowExecutionRetentionTtl) || FOREVER_MS;
      } catch (err) {
        if (notFound(err)) return null;
        throw err;
      }
    },
    async status(namespace, workflowId): Promise<RunStatus> {
      try {
        const d = await service.describeWorkflowExecution({ namespace, execution: { workflowId } });
        const closed = ms(d.workflowExecutionInfo?.closeTime);
        return closed === undefined ? { state: 'open' } : { state: 'closed', closedAt: new Date(closed) };
      } catch (err) {
        if (notFound(err)) return { state: 'gone' };
        throw err;
      }
    },
  };
}
