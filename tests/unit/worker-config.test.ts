import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadWorkerConfig } from '../../workers/config';
import { DurableAgentPlugin } from '../../workers/plugin';
import { McpPool } from '../../activities/mcp/pool';
import { redactSecrets, secretsOfConfig } from '../../shared/redact-secrets';

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
  expect(loadWorkerConfig({}).stickyQueueTimeoutMs).toBeUndefined();
  expect(loadWorkerConfig({ DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: '3s' }).stickyQueueTimeoutMs).toBe(3000);
  for (const bad of ['500ms', '0s', '10m', 'soon'])
    expect(() => loadWorkerConfig({ DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: bad })).toThrow(
      /DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: must be a duration from 1s to 5m/,
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

test('the mcp section resolves ${env:NAME} in env and headers; every value there is a secret; a missing one is named', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      mcp: {
        servers: {
          local: { command: 'node', args: ['server.js'], env: { API_KEY: '${env:LOCAL_KEY}' } },
          tickets: {
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer ${env:TICKETS_TOKEN}' },
          },
        },
      },
    }),
  );
  const env = {
    DURABLE_AGENT_CONFIG: file,
    LOCAL_KEY: 'local-key-1234',
    TICKETS_TOKEN: 'tickets-token-5678',
  };
  const config = loadWorkerConfig(env);
  expect(config.mcp.servers.local).toMatchObject({ env: { API_KEY: 'local-key-1234' } });
  expect(config.mcp.servers.tickets).toMatchObject({
    headers: { Authorization: 'Bearer tickets-token-5678' },
  });
  // The worker's error sanitizer and the pool both mask them.
  const line = 'failed with local-key-1234 and Bearer tickets-token-5678';
  expect(redactSecrets(line, secretsOfConfig(config))).toBe('failed with *** and ***');
  expect(new McpPool(config.mcp).redact(line)).toBe('failed with *** and ***');
  expect(() => loadWorkerConfig({ ...env, TICKETS_TOKEN: '' })).toThrow(
    /mcp\.servers\.tickets\.headers\.Authorization: environment variable TICKETS_TOKEN is not set/,
  );
});

test('the config file’s agents become run defaults; a bad one is named; live tokens default to a folder', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, 'config.json');
  const translator = {
    description: 'Translates',
    tools: [],
    model: { provider: 'scripted', script: 'demo' },
  };
  fs.writeFileSync(file, JSON.stringify({ agents: { translator } }));
  expect(loadWorkerConfig({ DURABLE_AGENT_CONFIG: file }).runDefaults.agents).toEqual({ translator });
  fs.writeFileSync(file, JSON.stringify({ agents: { translator: { ...translator, tools: ['No pe'] } } }));
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: file })).toThrow(
    /agents\.translator\.tools.*unknown tool "No pe"/,
  );
  // A well-formed name may be a tool of the worker's own: the plugin, which knows them, checks it.
  fs.writeFileSync(file, JSON.stringify({ agents: { translator: { ...translator, tools: ['nope'] } } }));
  const config = loadWorkerConfig({ DURABLE_AGENT_CONFIG: file });
  expect(() => new DurableAgentPlugin({ config })).toThrow(
    /agents\.translator\.tools: unknown tool "nope"; this worker's own tools are \(none\)/,
  );
  expect(loadWorkerConfig({}).stream).toEqual({
    kind: 'file',
    dir: expect.stringMatching(/\.data\/streams$/),
  });
  expect(loadWorkerConfig({ DURABLE_AGENT_STREAM: 'off' }).stream).toEqual({ kind: 'off' });
  expect(() => loadWorkerConfig({ DURABLE_AGENT_STREAM: 'redis://x' })).toThrow(
    /DURABLE_AGENT_STREAM: give off/,
  );
});

test('content garbage collection: hourly by default, off, or an interval; a grace is a duration', () => {
  expect(loadWorkerConfig({}).contentGc).toEqual({ everyMs: 3_600_000 });
  expect(loadWorkerConfig({ DURABLE_AGENT_CONTENT_GC: 'off' }).contentGc.everyMs).toBeNull();
  expect(
    loadWorkerConfig({ DURABLE_AGENT_CONTENT_GC: '6h', DURABLE_AGENT_CONTENT_GC_GRACE: '7d' }).contentGc,
  ).toEqual({ everyMs: 6 * 3_600_000, graceMs: 7 * 86_400_000 });
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONTENT_GC: 'hourly' })).toThrow(
    /DURABLE_AGENT_CONTENT_GC: must be off or an interval of 1s or more/,
  );
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONTENT_GC_GRACE: 'a week' })).toThrow(
    /DURABLE_AGENT_CONTENT_GC_GRACE: must be a duration/,
  );
});
