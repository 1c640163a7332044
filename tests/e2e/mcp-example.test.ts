/**
 * The MCP example (examples/runs/mcp.json) with the README's command against a real dev server and
 * a worker on the `mcp` section of examples/config.json: server-filesystem reads the launch plan,
 * server-memory stores its owner. The memory server's graph goes to a fresh file of this run, so
 * no earlier run's entities change what this one prints.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runCli } from '../../testkit/processes';
import { tempDir } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dir = tempDir('mcp-example');
const memoryFile = path.join(dir, 'memory.jsonl');

/** examples/config.json's MCP servers as they are, but for the memory server's file. */
function writeConfig(): string {
  const examples = JSON.parse(
    fs.readFileSync(path.join(PROJECT_ROOT, 'examples', 'config.json'), 'utf8'),
  ) as {
    mcp: { servers: { memory: { env: Record<string, string> } } };
  };
  examples.mcp.servers.memory.env.MEMORY_FILE_PATH = memoryFile;
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, JSON.stringify({ mcp: examples.mcp }));
  return file;
}

const dev = useDevServer({ worker: { DURABLE_AGENT_CONFIG: writeConfig() }, queue: 'mcp-example' });

test('mcp: reads the plan through server-filesystem and stores its owner in server-memory', async () => {
  const out = await runCli(['run', '--input', path.join('examples', 'runs', 'mcp.json')], dev.env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  const lines = out.stdout.split('\n');
  const line = (re: RegExp) => lines.find((l) => re.test(l));
  // The lines of a call as it starts: its arguments typed as the model wrote them (live tokens),
  // then the event line with the call's id.
  const starts = (tool: string) => lines.filter((l) => l.includes(`] → ${tool} `));
  // Each call with its arguments, then its result.
  expect(starts('read_text_file')).toContainEqual(
    expect.stringMatching(/\] → read_text_file \{"path":"launch-plan\.md"\} \(read_plan\)$/),
  );
  expect(line(/✓ read_text_file /)).toMatch(
    /\] ✓ read_text_file in \d+ ms: # Launch plan Owner: Ada Lovelace Launch date: 2027-03-14 /,
  );
  expect(starts('create_entities')).toContainEqual(
    expect.stringMatching(
      /\] → create_entities \{"entities":\[\{"name":"Ada Lovelace","entityType":"person","observations":\["owns the launch plan \(launch 2027-03-14\)"\]\}\]\} \(remember_owner\)$/,
    ),
  );
  // A new entity (the memory server answers [] for one it had already).
  expect(line(/✓ create_entities /)).toMatch(
    /\] ✓ create_entities in \d+ ms: \[ \{ "name": "Ada Lovelace", "entityType": "person", "observations": \[ "owns the launch plan \(launch 2027-03-14\)" \] \} \]$/,
  );
  expect(line(/✓ open_nodes /)).toContain('"name": "Ada Lovelace"');
  expect(out.stdout).toContain(
    'The launch plan belongs to Ada Lovelace; the memory server now holds:\n\n{\n  "entities": [\n    {\n      "name": "Ada Lovelace",',
  );
  expect(out.stdout).toMatch(/\n4 steps, 3 tool calls, /);
  // The memory server really holds it, in this run's file.
  expect(fs.readFileSync(memoryFile, 'utf8')).toContain('"name":"Ada Lovelace"');
}, 120_000);
