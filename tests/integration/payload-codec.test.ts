/**
 * Payload encryption end to end on a real dev server: a worker process and the CLI share
 * DURABLE_AGENT_CODEC_KEYS; the `temporal` CLI (no codec) then sees only ciphertext in inputs,
 * results, signals, query answers and failures, while `status`, `export`, `transcript` and
 * `replay` read the runs in plain text. The codec server decodes for the Web UI's origin only,
 * a payload sealed with a rotated-out key still opens, and the dev server passes the codec
 * endpoint to the UI.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { temporalBinary } from '../../workers/binaries';
import { startCodecServer } from '../../server/codec-server';
import type { RunningCodecServer } from '../../server/codec-server';
import { startDevServer, stopDevServer } from '../../workers/dev-server';
import type { CodecKeys } from '../../workers/payload-codec';
import { CodecConfigError, openPayload, parseCodecKeys, sealPayload } from '../../workers/payload-codec';
import { freePort, runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const SECRET_WORD = `Plaintext${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const key = () => randomBytes(32).toString('base64');
const OLD = `k1:${key()}`;
const NEW = `k2:${key()}`;
const UI_ORIGIN = 'http://127.0.0.1:8233';

/** What `temporal workflow show` prints, with every base64 `data` field decoded so plaintext cannot hide. */
function rawHistory(address: string, workflowId: string): string {
  const out = execFileSync(
    temporalBinary('temporal'),
    ['workflow', 'show', '--address', address, '-w', workflowId, '--output', 'json'],
    { encoding: 'utf8' },
  );
  return JSON.stringify(JSON.parse(out), (k, v: unknown) =>
    k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('latin1') : v,
  );
}

describe('keys and rotation', () => {
  it('seals with the first key, opens with any configured key, and names a missing one', () => {
    const old = parseCodecKeys(OLD) as CodecKeys;
    const sealed = sealPayload(old, {
      metadata: { encoding: Buffer.from('json/plain') },
      data: Buffer.from('"hi"'),
    });
    expect(Buffer.from(sealed.metadata?.['encryption-key-id'] as Uint8Array).toString()).toBe('k1');
    expect(Buffer.from(sealed.data as Uint8Array).toString('latin1')).not.toContain('hi"');

    const rotated = parseCodecKeys(`${NEW},${OLD}`) as CodecKeys;
    expect(rotated.current).toBe('k2');
    expect(Buffer.from(openPayload(rotated, sealed).data as Uint8Array).toString()).toBe('"hi"');

    const dropped = parseCodecKeys(NEW) as CodecKeys;
    expect(() => openPayload(dropped, sealed)).toThrow(
      /encrypted with key "k1", which is not in DURABLE_AGENT_CODEC_KEYS \(configured: k2\)/,
    );
  });

  it('refuses malformed keys without echoing them', () => {
    const short = Buffer.from('too short').toString('base64');
    expect(() => parseCodecKeys(`k1:${short}`)).toThrow(CodecConfigError);
    expect(() => parseCodecKeys(`k1:${short}`)).toThrow(/key "k1" must be 32 bytes/);
    expect(() => parseCodecKeys(`k1:${short}`)).not.toThrow(new RegExp(short));
    expect(() => parseCodecKeys(`bad id:${key()}`)).toThrow(/each entry must be id:base64-key/);
  });
});

describe('with the codec on', () => {
  const dev = useDevServer({
    worker: { DURABLE_AGENT_CODEC_KEYS: `${NEW},${OLD}`, ANTHROPIC_API_KEY: '' },
    queue: 'codec',
  });
  let codec: RunningCodecServer;
  const ok = uid('codec-ok');
  const failed = uid('codec-failed');

  beforeAll(async () => {
    codec = await startCodecServer({
      keys: parseCodecKeys(`${NEW},${OLD}`) as CodecKeys,
      host: '127.0.0.1',
      port: 0,
      uiOrigins: [UI_ORIGIN],
    });
    dev.defer(() => codec.close());
    const run = await runCli(
      [
        'run',
        '--id',
        ok,
        '--json',
        '--tools',
        'get_time,calculator,notify_user',
        '--notify-user',
        uid('codec-user'),
        `Plan ${SECRET_WORD}`,
      ],
      dev.env,
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'completed' });
    // A run that fails in the worker (its model provider has no key there), so history holds a failure.
    const bad = await runCli(
      ['run', '--id', failed, '--model', 'anthropic:claude-test', `Ask ${SECRET_WORD}`],
      dev.env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('needs an API key');
  }, 180_000);

  test('the temporal CLI sees only ciphertext: inputs, results, signals, failures and query answers', () => {
    const history = rawHistory(dev.fx.address, ok);
    const encrypted = Buffer.from('binary/encrypted').toString('base64');
    expect(history).toContain(encrypted);
    expect(history).not.toContain(SECRET_WORD);
    expect(history).not.toContain('Working out your Tokyo budget');
    const failure = rawHistory(dev.fx.address, failed);
    expect(failure).toContain('Encoded failure');
    expect(failure).not.toContain('API key');
    expect(failure).not.toContain(SECRET_WORD);

    const query = execFileSync(
      temporalBinary('temporal'),
      ['workflow', 'query', '--address', dev.fx.address, '-w', ok, '--type', 'state', '--output', 'json'],
      { encoding: 'utf8' },
    );
    expect(query).toContain(encrypted);
    expect(query).not.toContain(SECRET_WORD);
  });

  test('the project’s own commands read the runs in plain text', async () => {
    const status = await runCli(['status', ok, '--json'], dev.env);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'completed' });
    const transcript = await runCli(['transcript', ok], dev.env);
    expect(transcript.stdout).toContain(SECRET_WORD);
    const file = path.join(tempDir('codec-export'), 'history.json');
    const exported = await runCli(['export', ok, '-o', file], dev.env);
    expect(exported.code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('binary/encrypted');
    const replay = await runCli(['replay', '--file', file], dev.env);
    expect(replay.code).toBe(0);
    const replayLive = await runCli(['replay', ok], dev.env);
    expect(replayLive.code).toBe(0);
    // Without the keys the same commands cannot read the run, and say which key is missing.
    const noKeys = await runCli(['transcript', ok], { ...dev.env, DURABLE_AGENT_CODEC_KEYS: `k9:${key()}` });
    expect(noKeys.code).toBe(1);
    expect(noKeys.stderr).toMatch(/encrypted with key "k2"/);
  }, 300_000);

  test('the codec server decodes for the Web UI origin only', async () => {
    const raw = JSON.parse(
      execFileSync(
        temporalBinary('temporal'),
        ['workflow', 'show', '--address', dev.fx.address, '-w', ok, '--output', 'json'],
        {
          encoding: 'utf8',
        },
      ),
    ) as { events: { workflowExecutionStartedEventAttributes?: { input: { payloads: unknown[] } } }[] };
    const payloads = raw.events[0]?.workflowExecutionStartedEventAttributes?.input.payloads;
    const post = (origin: string | undefined) =>
      fetch(`${codec.url}/decode`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-namespace': 'default',
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ payloads }),
      });
    const res = await post(UI_ORIGIN);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const decoded = (await res.json()) as { payloads: { data: string }[] };
    expect(Buffer.from(decoded.payloads[0]?.data ?? '', 'base64').toString()).toContain(SECRET_WORD);

    const evil = await post('https://evil.example');
    expect(evil.status).toBe(403);
    expect(await evil.text()).not.toContain(SECRET_WORD);
    const preflight = await fetch(`${codec.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
  });

  test('a codec server with a token refuses requests without it', async () => {
    const guarded = await startCodecServer({
      keys: parseCodecKeys(NEW) as CodecKeys,
      host: '127.0.0.1',
      port: 0,
      uiOrigins: [UI_ORIGIN],
      token: 'codec-token-0123456789',
    });
    try {
      const body = JSON.stringify({ payloads: [] });
      const headers = { 'content-type': 'application/json' };
      expect((await fetch(`${guarded.url}/encode`, { method: 'POST', headers, body })).status).toBe(401);
      const ok = await fetch(`${guarded.url}/encode`, {
        method: 'POST',
        headers: { ...headers, authorization: 'Bearer codec-token-0123456789' },
        body,
      });
      expect(ok.status).toBe(200);
    } finally {
      await guarded.close();
    }
    await expect(
      startCodecServer({ keys: parseCodecKeys(NEW) as CodecKeys, host: '0.0.0.0', port: 0, uiOrigins: [] }),
    ).rejects.toThrow(/Refusing to bind 0.0.0.0 without a token/);
  });
});

test('the dev server hands the codec endpoint to its Web UI when configured', async () => {
  const dataDir = tempDir('codec-devserver');
  const port = await freePort();
  const uiPort = await freePort();
  process.env.DURABLE_AGENT_CODEC_ENDPOINT = 'http://127.0.0.1:8081';
  try {
    const s = await startDevServer({ dataDir, port, uiPort });
    const settings = (await (await fetch(`${s.uiUrl}/api/v1/settings`)).json()) as {
      Codec?: { Endpoint?: string };
    };
    expect(settings.Codec?.Endpoint).toBe('http://127.0.0.1:8081');
  } finally {
    delete process.env.DURABLE_AGENT_CODEC_ENDPOINT;
    await stopDevServer({ dataDir, port, uiPort });
  }
}, 60_000);
