/** What the browser reads from the API: the shapes of its JSON answers (see README, HTTP API). */

export type {
  AgentEvent,
  PendingApproval,
  PendingQuestion,
  RetryingActivityView,
  RunSummary,
  ScheduleSummary,
} from '../shared/api-shapes';
import type { RetryingActivityView } from '../shared/api-shapes';
import type { RunBuildView } from '../shared/worker-versioning';

export { NOTIFICATION_TYPES, NotificationPriority } from '../shared/notifications/kinds';
export type { NotificationType } from '../shared/notifications/kinds';
export type { Notification } from '../shared/notifications/schema';
export type { TranscriptEntry, TranscriptPage } from '../shared/agent/views';
export type { ResolvedCitation as Citation } from '../shared/render-citations';
import type { Notification } from '../shared/notifications/schema';
import type { AgentStateView } from '../shared/agent/views';
import type { ResolvedCitation } from '../shared/render-citations';

/** Where a mirrored list is: enough to ask for what changed since. */
export interface ListPosition {
  guid: string;
  update: number;
  count: number;
  evicted: number;
}

export interface Snapshot extends ListPosition {
  notifications: Notification[];
}

export interface Changes extends ListPosition {
  dropped: number;
  added: Notification[];
  updated: Notification[];
}

export interface Resume extends ListPosition {
  reset: boolean;
  notifications: Notification[];
}

/** What the `state` query answers, as the run page reads it. */
export type AgentState = AgentStateView;

export interface RunDetail {
  workflowId: string;
  execution: string;
  started: string;
  closed: string | null;
  task: string | null;
  state: AgentState;
  /** The build the run is on (Worker Versioning); null on unversioned workers. */
  build?: RunBuildView | null;
  /** Activities the server is retrying (a model endpoint that does not answer, a failing tool). */
  retrying?: RetryingActivityView[];
}

export interface RunAnswer {
  status: string;
  answer: string | null;
  /** The answer with its marks numbered, without the sources (`citations` lists them). */
  body: string | null;
  text: string | null;
  /** With an output schema: the answer parsed (absent until it matched). */
  output?: unknown;
  citations: ResolvedCitation[];
  /** Set when the run's sources could not be read (no worker answered in time): `text` lacks them. */
  warning?: string;
}
