import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadWorkerConfig } from '../../workers/config';

test('defaults need no environment at all', () => {
  const c = loadWorkerConfig({});
  expect(c.taskQueue).toBe('durable-agent');
  expect(c.logLevel).toBe('INFO');
  expect(c.logFormat).toBe('text');
  expect(c.tracing.exporter).toBe('off');
  expect(c.models.openai).toMatchObject({ baseUrl: 'https://api.openai.com/v1', baseUrlConfigured: false });
  expect(c.models.openai.apiKey).toBeUndefined();
  expect(fs.existsSync(path.join(c.scriptsDir, 'demo.json'))).toBe(true);
});

test('a bad variable fails fast and names it', () => {
  expect(() => loadWorkerConfig({ DURABLE_AGENT_LOG_LEVEL: 'LOUD' })).toThrow(ConfigError);
  expect(() => loadWorkerConfig({ DURABLE_AGENT_LOG_LEVEL: 'LOUD' })).toThrow(/DURABLE_AGENT_LOG_LEVEL/);
  expect(() => loadWorkerConfig({ OPENAI_BASE_URL: 'not a url' })).toThrow(/OPENAI_BASE_URL: must be a URL/);
  expect(() => loadWorkerConfig({ DURABLE_AGENT_LOG_FORMAT: 'xml' })).toThrow(
    /DURABLE_AGENT_LOG_FORMAT: must be text or json/,
  );
  expect(loadWorkerConfig({ DURABLE_AGENT_LOG_FORMAT: 'json' }).logFormat).toBe('json');
  expect(() => loadWorkerConfig({ DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: '0' })).toThrow(
    /DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES/,
  );
});

test('keys are read from the environment and blank ones count as missing', () => {
  const c = loadWorkerConfig({ OPENAI_API_KEY: 'sk-test-123', ANTHROPIC_API_KEY: '   ' });
  expect(c.models.openai.apiKey).toBe('sk-test-123');
  expect(c.models.anthropic.apiKey).toBeUndefined();
});

test('the config file resolves ${env:NAME} and names a missing variable without its value', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify({ databases: {}, search: { note: '${env:SEARCH_NOTE}' } }));
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: file })).toThrow(
    /search\.note: environment variable SEARCH_NOTE is not set/,
  );
  fs.writeFileSync(file, '{ not json');
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: file })).toThrow(/DURABLE_AGENT_CONFIG: cannot read/);
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: path.join(dir, 'missing.json') })).toThrow(
    /cannot read/,
  );
});
