/** Task queue the agent workflows and their activities run on unless configured otherwise. */
export const DEFAULT_TASK_QUEUE = 'durable-agent';
