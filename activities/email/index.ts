import type { ToolActivity } from '../types';
import type { EmailConfig } from './config';
import type { EmailConnections } from './connections';
import { sharedEmailConnections } from './connections';
import type { FetchEmailInput } from './fetch';
import { fetchEmail } from './fetch';
import type { SendEmailInput, SendStallHook } from './send';
import { sendEmail } from './send';

export { closeEmailConnections, EmailConnections } from './connections';

/** What the email activities are built from. */
export interface EmailActivityDeps {
  /** The `email` section of the worker config (accounts by name). */
  config: EmailConfig;
  /** Connections to use (tests, benchmarks); by default a set closed by closeEmailConnections(). */
  connections?: EmailConnections;
  /** Test-only pause inside send_email; defaults to `config.testHooks`. */
  sendStall?: SendStallHook;
}

/**
 * The `fetch_email` and `send_email` activities, named after their tools. Accounts are resolved by
 * name from the config on each call; with no accounts configured both fail with a final
 * `EmailNotConfigured` error that says how to configure them.
 */
export function createEmailActivities(
  deps: EmailActivityDeps,
): Record<'fetch_email' | 'send_email', ToolActivity> {
  const connections = deps.connections ?? sharedEmailConnections(deps.config);
  const stall = deps.sendStall ?? deps.config.testHooks;
  return {
    fetch_email: (input) => fetchEmail(connections, input as FetchEmailInput),
    send_email: (input) => sendEmail(connections, input as SendEmailInput, stall),
  };
}
