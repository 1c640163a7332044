/**
 * Every command in the ```bash blocks of the README and of every guide in docs/ (indented blocks in
 * lists too; ```sh, ```json, ```text and unlabelled blocks are not commands), exactly as printed,
 * so an example cannot rot:
 *  - every `durable-agent` command line is parsed by the real CLI (DURABLE_AGENT_PARSE_ONLY=1: the
 *    command, its arguments, options and option values are checked, nothing runs), with optional
 *    `[…]` parts included and the first of `a|b` alternatives;
 *  - those that need no placeholder, key, model download or long-running process really run
 *    against a dev server and a worker on examples/config.json (the offline examples, notifications,
 *    the knowledge base), and must exit 0; a run that waits for approval is approved as the pages say;
 *    a line printed on several pages runs once;
 *  - `npm run` names a script of package.json; `bash`, `npx tsx` and `npx jest` name files that exist
 *    (shell scripts must pass `bash -n`); `temporal` command lines are checked by the real binary
 *    (`--help` after the flags: unknown commands or flags fail); environment variables the pages
 *    set for the worker are ones it reads.
 * A command of any other kind fails the test until it is covered here. And every relative link of
 * these pages (images too) points to a file that exists, and to a heading that exists when it names one.
 */
import { TOOL_NAMES } from '../../shared/tools/registry';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { temporalBinary } from '../../workers/binaries';
import { WORKER_ENV } from '../../workers/config';
import { runCli, startCli } from '../../testkit/processes';
import { EXAMPLES_CONFIG, exclusive, useDevServer } from '../support/environments';

/** One simple command: leading VAR=value assignments, then the words. */
interface Command {
  /** The command line as printed, prefixed with the pages that print it. */
  line: string;
  env: Record<string, string>;
  words: string[];
}

/** The pages whose commands and links are checked: the README and every guide in docs/. */
const PAGES = [
  'README.md',
  ...fs
    .readdirSync(path.join(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

function readPage(page: string): string {
  return fs.readFileSync(path.join(PROJECT_ROOT, page), 'utf8');
}

/** The command lines of a page's bash blocks, with `# comments` removed. */
function bashLines(page: string): string[] {
  const lines: string[] = [];
  // A block may be indented (inside a list item); its closing fence has the same indent.
  for (const block of readPage(page).matchAll(/^( *)```bash\n([\s\S]*?)^\1```/gm)) {
    const indent = new RegExp(`^ {0,${block[1]?.length ?? 0}}`);
    const body = (block[2] ?? '')
      .split('\n')
      .map((l) => l.replace(indent, ''))
      .join('\n');
    // A line ending in a backslash goes on on the next one.
    for (const raw of body.replace(/\\\n\s*/g, ' ').split('\n')) {
      const line = stripComment(raw).trim();
      if (line) lines.push(line);
    }
  }
  return lines;
}

/** Every distinct command line of the pages, once, with the pages that print it. */
function pageLines(): { line: string; pages: string[] }[] {
  const found = new Map<string, string[]>();
  for (const page of PAGES) {
    for (const line of bashLines(page)) {
      const pages = found.get(line) ?? [];
      if (!pages.includes(page)) pages.push(page);
      found.set(line, pages);
    }
  }
  return [...found].map(([line, pages]) => ({ line, pages }));
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

/**
 * Splits a line into simple commands (at `;` and `&&`) and each into words, the way a shell does;
 * `where` names the pages that print it, for messages.
 */
function parseLine(line: string, where = ''): Command[] {
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
      commands.push({ line: where ? `${where}: ${line}` : line, env, words });
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
  // A run of an app's own tools needs that app's worker (this file's knows the built-in ones only).
  const tools = /--tools (\S+)/.exec(text)?.[1]?.split(',') ?? [];
  if (tools.some((t) => /^[a-z][a-z0-9_]*$/.test(t) && !TOOL_NAMES.includes(t))) return false;
  return ['run', 'notify', 'notifications', 'mark-read', 'clear-notifications', 'kb'].includes(args[0] ?? '');
}

/**
 * A heading's anchor as GitHub makes it: lower case, links and code marks reduced to their text,
 * punctuation dropped, spaces to hyphens; a repeated heading gets `-1`, `-2`, ….
 */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutFences(markdown).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = (m[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The text outside fenced blocks, where headings live. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^( *)(```|~~~)[\s\S]*?^\1\2/gm, '');
}

/** The text outside fenced blocks and inline code, where links live. */
function withoutCode(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** The relative link targets of a page: `[text](target)` and `![alt](target)`, without titles. */
function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const m of withoutCode(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1] ?? '';
    if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) targets.push(target);
  }
  return targets;
}

const lines = pageLines();
const commands = lines.flatMap(({ line, pages }) => parseLine(line, pages.join(', ')));

const dev = useDevServer({
  worker: { DURABLE_AGENT_CONFIG: path.join('examples', 'config.json') },
  queue: 'readme',
});

test('the README has its two commands, and the pages have commands to check', () => {
  expect(PAGES.length).toBeGreaterThan(10);
  const readme = bashLines('README.md').flatMap((line) => parseLine(line));
  expect(readme.some((c) => c.words.join(' ') === 'npm run demo')).toBe(true);
  expect(readme.some((c) => c.words.join(' ') === 'npm test')).toBe(true);
  expect(lines.length).toBeGreaterThan(30);
});

test('every relative link in the README and the guides points to a file (and heading) that exists', () => {
  const failures: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const link of relativeLinks(readPage(page))) {
      checked++;
      const [file = '', anchor] = link.split('#');
      const target = file
        ? path.join(path.dirname(path.join(PROJECT_ROOT, page)), decodeURI(file))
        : path.join(PROJECT_ROOT, page);
      if (
        !path
          .relative(PROJECT_ROOT, target)
          .split(path.sep)
          .every((part) => part !== '..')
      ) {
        failures.push(`${page}: ${link} points outside the project`);
      } else if (!fs.existsSync(target)) {
        failures.push(`${page}: ${link}: no file ${path.relative(PROJECT_ROOT, target)}`);
      } else if (anchor && target.endsWith('.md') && !anchors(fs.readFileSync(target, 'utf8')).has(anchor)) {
        failures.push(`${page}: ${link}: no heading #${anchor} in ${path.relative(PROJECT_ROOT, target)}`);
      }
    }
  }
  expect(failures).toEqual([]);
  expect(checked).toBeGreaterThan(20);
});

test('every guide starts with a summary and links back to the README', () => {
  const failures = PAGES.filter((p) => p !== 'README.md').filter((page) => {
    const [title, blank, summary] = readPage(page).split('\n');
    return !/^# \S/.test(title ?? '') || blank !== '' || !summary?.includes('](../README.md)');
  });
  expect(failures).toEqual([]);
});

test('every durable-agent command in the README and the guides parses, and those that can run here succeed', async () => {
  // Commands that run the CLI (\`durable-agent …\`, \`npx durable-agent …\`), not those that name the
  // package (\`npm install durable-agent\`).
  const cli = commands.filter((c) => {
    const at = c.words.indexOf('durable-agent');
    return at === 0 || (at > 0 && c.words[at - 1] === 'npx');
  });
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
        const parsed = await runCli(cliArgs(c.words), {
          ...dev.env,
          ...c.env,
          DURABLE_AGENT_PARSE_ONLY: '1',
        });
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
    // The examples' state is shared with tests/e2e/examples.test.ts: one command at a time.
    await exclusive(EXAMPLES_CONFIG, async () => {
      const live = startCli({ ...dev.env, ...c.env }, args);
      // A run that waits for approval is approved, as the pages' next command does.
      const approving = (async () => {
        for (;;) {
          const m = /Started (\S+)[\s\S]*waits for approval \((\S+)\)/.exec(live.stdout());
          if (m) return runCli(['approve', m[1]!, m[2]!], dev.env);
          if (live.child.exitCode !== null) return undefined;
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      const code = await live.exited;
      await approving;
      if (code !== 0) failures.push(`${c.line}: exited ${code}:\n${live.stdout()}\n${live.stderr()}`);
    });
  }
  expect(failures).toEqual([]);
  expect(ran).toBeGreaterThanOrEqual(8);
}, 600_000);

test('every other command in the README and the guides names a script, file or flag that exists', () => {
  const scripts = (
    JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const apiDir = path.join(PROJECT_ROOT, 'server', 'api');
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
