/** What the browser reads from the API: the shapes of its JSON answers (see README, HTTP API). */

import type { PendingApproval } from '../shared/api-shapes';
export type { AgentEvent, PendingApproval, RunSummary } from '../shared/api-shapes';

/** Notification types, in the order filters list them. */
export const NOTIFICATION_TYPES = ['info', 'success', 'warning', 'error', 'progress'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Priority at and above which a toast stays until dismissed. */
export const HIGH_PRIORITY = 20;

export interface Notification {
  no: number;
  id: string;
  type: NotificationType;
  priority: number;
  title: string;
  message: string;
  detail: string;
  timestamp: string;
  display_time: number;
  read: boolean;
  group: string | null;
}

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

export interface AgentState {
  status: string;
  step: number;
  maxSteps: number;
  usage: { inputTokens?: number; outputTokens?: number; modelCalls: number; toolCalls: number };
  approvals?: PendingApproval[];
  costUsd?: number;
  lastError: string | null;
  continuations: number;
  answer: string | null;
  stopReason: string | null;
}

export interface RunDetail {
  workflowId: string;
  execution: string;
  started: string;
  closed: string | null;
  task: string | null;
  state: AgentState;
}

export interface TranscriptEntry {
  role: string;
  text: string;
  toolCalls?: { id: string; name: string; args: unknown }[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
  fullBytes?: number;
}

export interface TranscriptPage {
  entries: TranscriptEntry[];
  first: number;
  total: number;
  truncated: boolean;
}

export interface Citation {
  n: number;
  title: string;
  location: string;
  url: string;
}

export interface RunAnswer {
  status: string;
  answer: string | null;
  text: string | null;
  citations: Citation[];
}
