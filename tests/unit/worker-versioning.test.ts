import { WORKFLOW_VERSIONING_BEHAVIOR } from '../../shared/worker-versioning';
import { ConfigError, loadWorkerConfig } from '../../workers/config';
import { workerDeploymentOptions } from '../../workers/versioning';

test('Worker Versioning is off unless both the deployment name and the build id are set', () => {
  expect(loadWorkerConfig({}).versioning).toBeUndefined();
  expect(
    loadWorkerConfig({ DURABLE_AGENT_DEPLOYMENT_NAME: ' ', DURABLE_AGENT_BUILD_ID: '' }).versioning,
  ).toBe(undefined);
  const c = loadWorkerConfig({
    DURABLE_AGENT_DEPLOYMENT_NAME: 'agents',
    DURABLE_AGENT_BUILD_ID: ' 4f1c2ab ',
  });
  expect(c.versioning).toEqual({ deploymentName: 'agents', buildId: '4f1c2ab' });
  expect(workerDeploymentOptions(c.versioning!)).toEqual({
    version: { deploymentName: 'agents', buildId: '4f1c2ab' },
    useWorkerVersioning: true,
    defaultVersioningBehavior: 'PINNED',
  });
});

test('one of the two alone, or a value the server would refuse, fails naming the variable and the fix', () => {
  const load = (name?: string, build?: string) => () =>
    loadWorkerConfig({
      ...(name !== undefined ? { DURABLE_AGENT_DEPLOYMENT_NAME: name } : {}),
      ...(build !== undefined ? { DURABLE_AGENT_BUILD_ID: build } : {}),
    });
  expect(load('agents')).toThrow(ConfigError);
  expect(load('agents')).toThrow(/DURABLE_AGENT_BUILD_ID is not; set it to this build's id/);
  expect(load(undefined, 'b1')).toThrow(/DURABLE_AGENT_DEPLOYMENT_NAME is not/);
  // The server's own rules, seen on the dev server: it refuses these polls without failing the worker.
  expect(load('agents.prod', 'b1')).toThrow(/DURABLE_AGENT_DEPLOYMENT_NAME: must not contain "\." or ":"/);
  expect(load('agents:prod', 'b1')).toThrow(/DURABLE_AGENT_DEPLOYMENT_NAME: must not contain/);
  expect(load('__unversioned__', 'b1')).toThrow(/must not start with "__"/);
  expect(load('agents', '__b1')).toThrow(/DURABLE_AGENT_BUILD_ID: must not start with "__"/);
  expect(load('agents', 'x'.repeat(256))).toThrow(
    /DURABLE_AGENT_BUILD_ID: is 256 characters; a build id has at most 255/,
  );
  expect(load('my agents', 'b1')).toThrow(/must not contain spaces/);
  // A build id may hold what a version string often does.
  expect(load('agents', 'v1.2.3+git.4f1c2ab')().versioning?.buildId).toBe('v1.2.3+git.4f1c2ab');
});

/** The behaviour each workflow of a module declares, by workflow type (undefined: none). */
function declaredBy(modulePath: string): Record<string, string | undefined> {
  let mod: Record<string, unknown> = {};
  // A module graph of its own: workflows/versioned.ts sets options on the functions ./index exports.
  jest.isolateModules(() => {
    mod = require(modulePath) as Record<string, unknown>; // eslint-disable-line @typescript-eslint/no-require-imports
  });
  return Object.fromEntries(
    Object.entries(mod).map(([name, fn]) => [
      name,
      (fn as { workflowDefinitionOptions?: { versioningBehavior?: string } }).workflowDefinitionOptions
        ?.versioningBehavior,
    ]),
  );
}

test('a versioned worker’s workflows declare their behaviour; an unversioned worker’s declare none', () => {
  // The server refuses a task an unversioned worker completes with a behaviour, so ./index has none.
  expect(declaredBy('../../workflows')).toEqual({
    agentWorkflow: undefined,
    inboxWorkflow: undefined,
    toolCallWorkflow: undefined,
    contentGcWorkflow: undefined,
  });
  expect(declaredBy('../../workflows/versioned')).toEqual(WORKFLOW_VERSIONING_BEHAVIOR);
  expect(WORKFLOW_VERSIONING_BEHAVIOR).toEqual({
    agentWorkflow: 'AUTO_UPGRADE',
    inboxWorkflow: 'AUTO_UPGRADE',
    toolCallWorkflow: 'PINNED',
    // A collection is short and runs again on its schedule: it ends on the build it started on.
    contentGcWorkflow: 'PINNED',
  });
});
