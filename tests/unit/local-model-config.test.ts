import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LOCAL_WEIGHTS, LOCAL_WEIGHTS } from '../../activities/model/local/weights';
import { PROJECT_ROOT } from '../../shared/project-root';
import { ConfigError, defaultLocalThreads, loadWorkerConfig } from '../../workers/config';

test('the local model defaults to the weights the setup installs, on all cores but one', () => {
  expect(DEFAULT_LOCAL_WEIGHTS).toBe('qwen2.5-coder-0.5b');
  const { local } = loadWorkerConfig({}).models;
  expect(local.modelPath).toBe(path.join(PROJECT_ROOT, 'models', LOCAL_WEIGHTS[DEFAULT_LOCAL_WEIGHTS].file));
  expect(local.modelPathConfigured).toBe(false);
  expect(local.threads).toBe(Math.max(1, os.availableParallelism() - 1));
  expect([defaultLocalThreads(1), defaultLocalThreads(2), defaultLocalThreads(8)]).toEqual([1, 1, 7]);
});

test('the model file, the models folder and the threads come from the environment', () => {
  const { local } = loadWorkerConfig({
    DURABLE_AGENT_LOCAL_MODEL: 'weights/mine.gguf',
    DURABLE_AGENT_MODELS_DIR: '/srv/models',
    DURABLE_AGENT_LOCAL_THREADS: '3',
  }).models;
  expect(local).toMatchObject({
    modelPath: path.resolve('weights/mine.gguf'),
    modelPathConfigured: true,
    modelsDir: '/srv/models',
    threads: 3,
  });
  // Without a file of its own, the default file is looked for in the configured folder.
  expect(loadWorkerConfig({ DURABLE_AGENT_MODELS_DIR: '/srv/models' }).models.local.modelPath).toBe(
    path.join('/srv/models', LOCAL_WEIGHTS[DEFAULT_LOCAL_WEIGHTS].file),
  );
});

test('a bad thread count fails naming the variable', () => {
  expect(() => loadWorkerConfig({ DURABLE_AGENT_LOCAL_THREADS: 'two' })).toThrow(ConfigError);
  expect(() => loadWorkerConfig({ DURABLE_AGENT_LOCAL_THREADS: '0' })).toThrow(/DURABLE_AGENT_LOCAL_THREADS/);
});
