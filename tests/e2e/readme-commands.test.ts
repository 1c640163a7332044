/**
 * Every command in the README's ```bash blocks, exactly as printed, so an example cannot rot:
 *  - every `durable-agent` command line is parsed by the real CLI (DURABLE_AGENT_PARSE_ONLY=1: the
 *    command, its arguments, options and option values are checked, nothing runs), with optional
 *    `[…]` parts included and the first of `a|b` alternatives;
 *  - those that need no placeholder, key, model download or long-running process really run
 *    against a dev server and a worker on examples/config.json (the offline examples, notifications,
 *    the knowledge base), and must exit 0; a run that waits for approval is approved as the README says;
 *  - `npm run` names a script of package.json; `bash`, `npx tsx` and `npx jest` name files that exist
 *    (shell scripts must pass `bash -n`); `temporal` command lines are checked by the real binary
 *    (`--help` after the flags: unknown commands or flags fail); environment variables the README
 *    sets for the worker are ones it reads.
 * A command of any other kind fails the test until it is covered here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { temporalBinary } from '../../cli/binaries';
import { WORKER_ENV } from '../../workers/config';
import type { DevServerFixture } from '../support/dev-server';
import { startDevServerFixture } from '../support/dev-server';
import type { WorkerProcess } from '../support/processes';
import { runCli, startCli, startWorkerProcess } from '../support/processes';
import { uid } from '../support/temporal';

/** One simple command: leading VAR=value assignments, then the words. */
interface Command {
  line: string;
  env: Record<string, string>;
  words: string[];
}

/** The command lines of the README's bash blocks, with `# comments` removed. */
function readmeLines(): string[] {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const lines: string[] = [];
  for (const block of text.matchAll(/^```bash\n([\s\S]*?)^```/gm)) {
    // A line ending in a backslash goes on on the next one.
    for (const raw of (block[1] ?? '').replace(/\\\n\s*/g, ' ').split('\n')) {
      const line = stripComment(raw).trim();
      if (line) lines.push(line);
    }
  }
  return lines;
}

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) return line.slice(0, i);
  }
  return line;
}

/** Splits a line into simple commands (at `;` and `&&`) and each into words, the way a shell does. */
function parseLine(line: string): Command[] {
  const commands: Command[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let quote: string | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length) {
      const env: Record<string, string> = {};
      while (words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
        const [k, ...v] = words.shift()!.split('=');
        env[k!] = v.join('=');
      }
      commands.push({ line, env, words });
    }
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else word = (word ?? '') + c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === ';') endCommand();
    else if (c === '&' && line[i + 1] === '&') {
      endCommand();
      i++;
    } else if (/\s/.test(c)) endWord();
    else word = (word ?? '') + c;
  }
  endCommand();
  return commands;
}

/**
 * The arguments after `durable-agent`, with optional `[…]` parts included (of `[a | b]` the first
 * alternative) and `a|b` as `a`.
 */
function cliArgs(words: string[]): string[] {
  const out: string[] = [];
  let group: string[] | null = null;
  for (const w of words.slice(words.indexOf('durable-agent') + 1)) {
    const word = /^[a-z][a-z-]*(\|[a-z][a-z-]*)+\]?$/.test(w)
      ? w.split('|')[0]! + (w.endsWith(']') ? ']' : '')
      : w;
    if (group === null && word.startsWith('[')) group = [];
    if (group === null) {
      out.push(word);
      continue;
    }
    group.push(word.replace(/^\[|\]$/g, ''));
    if (word.endsWith(']')) {
      const bar = group.indexOf('|');
      out.push(...(bar < 0 ? group : group.slice(0, bar)).filter(Boolean));
      group = null;
    }
  }
  return out;
}

/** Whether a durable-agent command can really run here: no placeholders, keys, downloads or servers. */
function runsHere(args: string[]): boolean {
  const text = args.join(' ');
  if (/<[^>]+>|…/.test(text)) return false;
  if (/\b(openai|anthropic):|--model local|--watch/.test(text)) return false;
  return ['run', 'notify', 'notifications', 'mark-read', 'clear-notifications', 'kb'].includes(args[0] ?? '');
}

const lines = readmeLines();
const commands = lines.flatMap(parseLine);

let fx: DevServerFixture;
let worker: WorkerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  fx = await startDevServerFixture();
  env = {
    TEMPORAL_ADDRESS: fx.address,
    DURABLE_AGENT_TASK_QUEUE: uid('readme'),
    DURABLE_AGENT_CONFIG: path.join('examples', 'config.json'),
  };
  worker = await startWorkerProcess(env);
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  await worker?.exited;
  await fx?.stop();
});

test('the README has commands to check', () => {
  expect(lines.length).toBeGreaterThan(30);
  expect(commands.some((c) => c.words.join(' ') === 'npm run demo')).toBe(true);
  expect(commands.some((c) => c.words.join(' ') === 'npm test')).toBe(true);
});

test('every durable-agent command in the README parses, and those that can run here succeed', async () => {
  const cli = commands.filter((c) => c.words.includes('durable-agent'));
  expect(cli.length).toBeGreaterThan(20);
  const failures: string[] = [];
  let ran = 0;
  // Parsing is independent per command: three at a time.
  const parsedOk = new Array<boolean>(cli.length).fill(false);
  let next = 0;
  await Promise.all(
    [0, 1, 2].map(async () => {
      for (let i = next++; i < cli.length; i = next++) {
        const c = cli[i]!;
        for (const name of Object.keys(c.env)) {
          if (name.startsWith('DURABLE_AGENT_') && !(name in WORKER_ENV))
            failures.push(`${c.line}: ${name} is not a variable the worker reads`);
        }
        const parsed = await runCli(cliArgs(c.words), { ...env, ...c.env, DURABLE_AGENT_PARSE_ONLY: '1' });
        if (parsed.code === 0 && parsed.stdout.startsWith('parsed: ')) parsedOk[i] = true;
        else failures.push(`${c.line}: does not parse: ${parsed.stderr.trim()}`);
      }
    }),
  );
  for (const [i, c] of cli.entries()) {
    const args = cliArgs(c.words);
    if (!parsedOk[i]) continue;
    if (!runsHere(args)) continue;
    ran++;
    const live = startCli({ ...env, ...c.env }, args);
    // A run that waits for approval is approved, as the README's next command does.
    const approving = (async () => {
      for (;;) {
        const m = /Started (\S+)[\s\S]*waits for approval \((\S+)\)/.exec(live.stdout());
        if (m) return runCli(['approve', m[1]!, m[2]!], env);
        if (live.child.exitCode !== null) return undefined;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const code = await live.exited;
    await approving;
    if (code !== 0) failures.push(`${c.line}: exited ${code}:\n${live.stdout()}\n${live.stderr()}`);
  }
  expect(failures).toEqual([]);
  expect(ran).toBeGreaterThanOrEqual(8);
}, 600_000);

test('every other command in the README names a script, file or flag that exists', () => {
  const scripts = (
    JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const apiDir = path.join(PROJECT_ROOT, 'cli', 'api');
  const apiSource = fs
    .readdirSync(apiDir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => fs.readFileSync(path.join(apiDir, f), 'utf8'))
    .join('\n');
  const failures: string[] = [];
  const fileExists = (c: Command, f: string | undefined) => {
    if (!f || !fs.existsSync(path.join(PROJECT_ROOT, f))) failures.push(`${c.line}: no file ${f}`);
    return f;
  };
  for (const c of commands.filter((x) => !x.words.includes('durable-agent'))) {
    for (const name of Object.keys(c.env)) {
      if (name.startsWith('DURABLE_AGENT_') && !(name in WORKER_ENV))
        failures.push(`${c.line}: ${name} is not a variable the worker reads`);
    }
    const [cmd, ...rest] = c.words;
    if (cmd === undefined || cmd === 'export') continue; // assignments only
    if (cmd === 'npm' && rest[0] === 'test') continue;
    if (cmd === 'npm' && rest[0] === 'run') {
      if (!(rest[1]! in scripts)) failures.push(`${c.line}: package.json has no script "${rest[1]}"`);
    } else if (cmd === 'bash') {
      const f = fileExists(c, rest[0]);
      if (f && spawnSync('bash', ['-n', f], { cwd: PROJECT_ROOT }).status !== 0)
        failures.push(`${c.line}: bash -n ${f} fails`);
    } else if (cmd === 'npx' && (rest[0] === 'tsx' || rest[0] === 'jest')) {
      fileExists(c, rest[1]);
    } else if (cmd === 'eval') {
      // eval "$(bash scripts/x.sh args)": the inner script must exist.
      fileExists(c, /\$\(bash (\S+)/.exec(rest[0] ?? '')?.[1]);
    } else if (cmd === 'curl') {
      // An HTTP example: its path must be one the API serves (the API tests call each route).
      const url = rest.find((w) => /^https?:\/\//.test(w)) ?? '';
      const route = /^https?:\/\/[^/]+(\/api\/[a-z-]+)/.exec(url)?.[1];
      if (!route || !apiSource.includes(`'${route}`)) failures.push(`${c.line}: no API route for ${url}`);
    } else if (cmd === 'temporal') {
      const r = spawnSync(temporalBinary('temporal'), [...rest, '--help'], { encoding: 'utf8' });
      if (r.status !== 0) failures.push(`${c.line}: ${r.stderr.trim()}`);
    } else {
      failures.push(`${c.line}: a command of a kind this test does not check yet (${cmd})`);
    }
  }
  expect(failures).toEqual([]);
});
