/** Every workflow the worker registers. */
export { agentWorkflow } from './agent';
export { inboxWorkflow } from './inbox';
export { toolCallWorkflow } from './tool-call';
export { contentGcWorkflow } from './content-gc';
