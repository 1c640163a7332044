/**
 * `durable-agent/workflow`: what your workflow code may import (deterministic, no Node built-ins):
 * run an agent as a step and get its typed answer, notify a user's inbox, ask for an approval, and
 * the agent workflow's signals, queries and updates. The plugin adds the agent's own workflows to
 * your worker; you do not import them.
 */
export * from '../workflows/public';
export type { BuiltInToolActivities } from '../shared/tools/activities';
