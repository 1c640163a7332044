/**
 * The live-token channels with real files and a real PostgreSQL: a publisher and a watcher on
 * separate channel objects (as a worker and the API in separate processes), deltas in order, the
 * answer so far for a late joiner, resuming after a frame, a retry's text replacing the failed
 * attempt's, the budgets (a cut past the attempt's, a run file started afresh, old files swept),
 * and a channel that is down losing frames, never the call.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { StreamChannel, StreamFrame } from '../../activities/streaming';
import {
  STREAM_BUDGETS,
  frameId,
  parseStreamSetting,
  partialAnswer,
  publishCall,
} from '../../activities/streaming';
import { FileStreamChannel, sweepFolder } from '../../activities/streaming/file-channel';
import { PostgresStreamChannel } from '../../activities/streaming/postgres-channel';
import type { LiveEvent } from '../../client/live-tokens';
import { followLiveTokens } from '../../client/live-tokens';
import { liveTokenPrinter } from '../../cli/live-token-printer';
import { PG_URL } from '../../testkit/sql-fixtures';
import { tempDir, uid } from '../../testkit/temporal';

async function until<T>(what: string, fn: () => T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const tag = (run: string, attempt = 1) => ({ run, step: 1, call: '5', attempt });
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);

/**
 * The watchers' fallback poll, far longer than any wait below: frames that arrive in time came
 * through file-system events or LISTEN/NOTIFY (their latency is bench/streaming.ts's to measure,
 * not a test's on a busy machine).
 */
const POLL_MS = 120_000;

describe.each([
  ['file', () => new FileStreamChannel(tempDir('live-file'), POLL_MS)],
  ['postgres', () => new PostgresStreamChannel(PG_URL, POLL_MS)],
] as const)('the %s channel', (_name, open) => {
  let dir: string | undefined;
  let publisher: StreamChannel;
  let watcher: StreamChannel;
  beforeAll(() => {
    publisher = open();
    // The same place through another object, as another process would open it.
    watcher =
      publisher instanceof FileStreamChannel
        ? new FileStreamChannel(publisher.dir, POLL_MS)
        : new PostgresStreamChannel(PG_URL, POLL_MS);
    dir = publisher instanceof FileStreamChannel ? publisher.dir : undefined;
  });
  afterAll(async () => {
    await publisher.close();
    await watcher.close();
  });

  it('hands a watcher every delta in order, as the channel announces it (not by the poll)', async () => {
    const run = uid('live');
    const got: LiveEvent[] = [];
    const follower = followLiveTokens(watcher, run, { onEvent: (e) => void got.push(e) });
    await follower.ready;
    const call = publishCall(publisher, tag(run), () => undefined);
    for (const w of words(30)) {
      call.delta({ kind: 'text', text: w });
      await new Promise((r) => setTimeout(r, 5));
    }
    call.delta({ kind: 'tool_call', index: 0, id: 't1', name: 'calculator', args: '{"expression":' });
    call.delta({ kind: 'tool_call', index: 0, args: '"1+1"}' });
    await call.end();
    // Well within the poll: only the channel's announcements can deliver it in time.
    await until('the end frame', () => got.some((e) => e.type === 'frame' && e.frame.kind === 'end'));
    follower.stop();
    const frames = got.flatMap((e) => (e.type === 'frame' ? [e.frame] : []));
    expect(frames[0]?.kind).toBe('start');
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(
      frames
        .filter((f) => f.kind === 'text')
        .map((f) => f.text)
        .join(''),
    ).toBe(words(30).join(''));
    const answer = partialAnswer(frames);
    expect(answer?.tools).toEqual([{ index: 0, id: 't1', name: 'calculator', args: '{"expression":"1+1"}' }]);
    expect(answer?.ended).toBe(true);
  });

  it('gives a late joiner the answer so far in one event, and a resuming watcher only what it missed', async () => {
    const run = uid('live');
    const call = publishCall(publisher, tag(run), () => undefined);
    for (const w of words(10)) call.delta({ kind: 'text', text: w });
    // Joins once the ten words are in the channel (however busy the machine).
    for (let i = 0; i < 500; i++) {
      const { frames } = await watcher.read(run);
      if (partialAnswer(frames)?.text === words(10).join('')) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const late: LiveEvent[] = [];
    const follower = followLiveTokens(watcher, run, { onEvent: (e) => void late.push(e) });
    await until('the partial answer', () => late[0]);
    expect(late[0]).toMatchObject({ type: 'partial', answer: { text: words(10).join(''), ended: false } });
    const resumeFrom = late[0]?.id as string;
    call.delta({ kind: 'text', text: 'more ' });
    await call.end();
    await until('the end', () => late.some((e) => e.type === 'frame' && e.frame.kind === 'end'));
    follower.stop();
    expect(
      late.flatMap((e) => (e.type === 'frame' && e.frame.kind === 'text' ? [e.frame.text] : [])),
    ).toEqual(['more ']);
    // Resuming after the partial's frame: the rest, once.
    const resumed: LiveEvent[] = [];
    const again = followLiveTokens(watcher, run, { after: resumeFrom, onEvent: (e) => void resumed.push(e) });
    await until('the resumed end', () => resumed.some((e) => e.type === 'frame' && e.frame.kind === 'end'));
    again.stop();
    expect(resumed.map((e) => (e.type === 'frame' ? e.frame.kind : e.type))).toEqual(['text', 'end']);
  });

  it('replaces a failed attempt’s text with the retry’s: a watcher never sees two answers glued', async () => {
    const run = uid('live');
    const out: string[] = [];
    const printer = liveTokenPrinter((t) => out.push(t));
    printer.reached(1); // the run's events are at the call's step
    const got: StreamFrame[] = [];
    const follower = followLiveTokens(watcher, run, {
      onEvent: (e) => {
        printer.onEvent(e);
        if (e.type === 'frame') got.push(e.frame);
      },
    });
    await follower.ready;
    const first = publishCall(publisher, tag(run, 1), () => undefined);
    first.delta({ kind: 'text', text: 'The answer is 4' });
    // A retry comes after the failed attempt's words reached the watcher (a second or more later).
    await until('the first attempt’s words', () => got.some((f) => f.kind === 'text'));
    // The attempt failed (no end); the retry streams from the start.
    const second = publishCall(publisher, tag(run, 2), () => undefined);
    second.delta({ kind: 'text', text: 'The answer is 2.' });
    await second.end();
    await until('the retry’s end', () => got.some((f) => f.kind === 'end'));
    follower.stop();
    expect(partialAnswer(got)?.text).toBe('The answer is 2.');
    expect(out.join('')).toBe(
      '[step 1] The answer is 4\n[step 1] (attempt 2, from the start) The answer is 2.\n',
    );
  });

  it('cuts an attempt past its budget with a cut frame', async () => {
    const run = uid('live');
    const call = publishCall(publisher, tag(run), () => undefined);
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i * chunk.length <= STREAM_BUDGETS.attemptBytes + chunk.length; i++)
      call.delta({ kind: 'text', text: chunk });
    await call.end();
    const { frames } = await watcher.read(run);
    expect(frames.at(-1)?.kind).toBe('cut');
    expect(frames.filter((f) => f.kind === 'end')).toHaveLength(0);
    const sent = frames.reduce((n, f) => n + (f.text?.length ?? 0), 0);
    expect(sent).toBeLessThanOrEqual(STREAM_BUDGETS.attemptBytes);
    if (dir) {
      // The run's file is past its budget: the next call starts it afresh.
      const file = path.join(dir, `${encodeURIComponent(run)}.jsonl`);
      expect(fs.statSync(file).size).toBeGreaterThan(STREAM_BUDGETS.runFileBytes / 2);
      for (let i = 0; i < 20; i++)
        await publisher.publish(run, [
          { ...tag(run), call: `f${i}`, seq: 0, kind: 'text', text: chunk, at: 0 },
        ]);
      const next = publishCall(publisher, { ...tag(run), call: '9' }, () => undefined);
      next.delta({ kind: 'text', text: 'fresh' });
      await next.end();
      expect(fs.statSync(file).size).toBeLessThan(1024);
      const after = await watcher.read(run);
      expect(after.frames.map((f) => frameId(f))).toEqual(['9.1.0', '9.1.1', '9.1.2']);
    }
  });
});

test('old stream files are swept; the setting reads off, a folder or a postgres URL', async () => {
  const dir = tempDir('live-sweep');
  fs.writeFileSync(path.join(dir, 'old.jsonl'), '{}\n');
  fs.writeFileSync(path.join(dir, 'new.jsonl'), '{}\n');
  const past = new Date(Date.now() - STREAM_BUDGETS.keepMs - 60_000);
  fs.utimesSync(path.join(dir, 'old.jsonl'), past, past);
  expect(await sweepFolder(dir, Date.now() - STREAM_BUDGETS.keepMs)).toBe(1);
  expect(fs.readdirSync(dir)).toEqual(['new.jsonl']);
  expect(parseStreamSetting(undefined, '/d')).toEqual({ kind: 'file', dir: '/d' });
  expect(parseStreamSetting('off', '/d')).toEqual({ kind: 'off' });
  expect(parseStreamSetting('postgres://u:pw@db/x', '/d')).toEqual({
    kind: 'postgres',
    url: 'postgres://u:pw@db/x',
  });
  expect(() => parseStreamSetting('redis://h', '/d')).toThrow(/give off, a folder/);
});

test('a channel that is down loses frames, never the call: one warning, and end() resolves', async () => {
  const blocked = path.join(tempDir('live-down'), 'not-a-folder');
  fs.writeFileSync(blocked, 'a file where the folder should be');
  const warnings: string[] = [];
  const call = publishCall(new FileStreamChannel(blocked), tag('r-down'), (m) => warnings.push(m));
  for (const w of words(20)) call.delta({ kind: 'text', text: w });
  await call.end();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/^live tokens of r-down step 1 not sent: /);
  const pgDown = publishCall(
    new PostgresStreamChannel('postgres://postgres@127.0.0.1:1/test'),
    tag('r-pg'),
    (m) => warnings.push(m),
  );
  pgDown.delta({ kind: 'text', text: 'x' });
  await pgDown.end();
  expect(warnings).toHaveLength(2);
});
