#!/usr/bin/env node
// Commands load what they run when they run (a `require` in the action): registering them, and so
// `--help` or a mistyped flag, loads no Temporal code. bin/durable-agent.js runs this file from a
// bundle (bin/cli-entry.js).
import path from 'node:path';
import { Command } from 'commander';
import { printable } from '../shared/identifiers';
import type * as Config from '../workers/config';
import type * as Connect from '../workers/connect';
import type { TemporalTarget } from '../workers/connect';
import type * as DevServer from '../workers/dev-server';
import type * as PayloadCodec from '../workers/payload-codec';
import type * as WorkerRun from '../workers/run';
import type * as Deliver from '../client/deliver';
import type * as CodecServer from '../server/codec-server';
import { registerApprovalCommands } from './approvals';
import { registerQuestionCommands } from './questions';
import { registerContentCommands } from './content';
import { registerDebugCommands } from './debug/commands';
import { registerDemoCommand } from './demo';
import { exitAfterParsingWhenAsked, registerKbCommands } from './kb';
import { registerMcpCommand } from './mcp';
import { registerNotificationCommands } from './notifications';
import { positiveInt } from './options';
import { registerRunCommand } from './run-command';
import { registerRunControlCommands } from './run-control';
import { registerScheduleCommands } from './schedules';

const program = new Command();
program
  .name('durable-agent')
  .description('Run AI agents as durable Temporal workflows')
  .option(
    '--address <host:port>',
    'Temporal frontend (default: TEMPORAL_ADDRESS, a profile, or 127.0.0.1:7233)',
  )
  .option('--namespace <name>', 'Temporal namespace (default: TEMPORAL_NAMESPACE or "default")');

/** The Temporal connection of the global options; commands call it when they connect. */
function target(): TemporalTarget {
  const o = program.opts<{ address?: string; namespace?: string }>();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { temporalTarget } = require('../workers/connect') as typeof Connect;
  return temporalTarget({ address: o.address, namespace: o.namespace });
}

// ---------------------------------------------------------------- server
const server = program
  .command('server')
  .description('The local Temporal dev server (persistent SQLite file)');
const serverOpts = (cmd: Command) =>
  cmd
    .option('--data-dir <dir>', 'folder for the database, pid and log (default .data/temporal)')
    .option('--port <port>', 'gRPC port', positiveInt, 7233)
    .option('--ui-port <port>', 'Web UI port (default: port + 1000)', positiveInt)
    .option('--headless', 'no Web UI');
type ServerOpts = { dataDir?: string; port: number; uiPort?: number; headless?: boolean };

serverOpts(server.command('start').description('Start it (idempotent); returns once it answers')).action(
  async (o: ServerOpts) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { startDevServer } = require('../workers/dev-server') as typeof DevServer;
    const s = await startDevServer(o);
    console.log(`Temporal dev server running at ${s.address} (pid ${s.pid})`);
    if (s.uiUrl) console.log(`Web UI: ${s.uiUrl}`);
    console.log(`Database: ${s.dbFile}`);
  },
);
serverOpts(server.command('stop').description('Stop it')).action(async (o: ServerOpts) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { stopDevServer } = require('../workers/dev-server') as typeof DevServer;
  console.log(
    (await stopDevServer(o)) ? 'Temporal dev server stopped' : 'Temporal dev server was not running',
  );
});
serverOpts(server.command('status').description('Is it running?')).action(async (o: ServerOpts) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { devServerStatus } = require('../workers/dev-server') as typeof DevServer;
  const s = await devServerStatus(o);
  console.log(s.running ? `running at ${s.address} (pid ${s.pid}); database ${s.dbFile}` : 'not running');
  process.exitCode = s.running ? 0 : 3;
});

// ---------------------------------------------------------------- worker
program
  .command('worker')
  .description('Run a worker: agent workflows, the model activity and every tool activity')
  .option(
    '--tools-module <file>',
    'a .ts or .js module exporting tools of your own (defineTool); also DURABLE_AGENT_TOOLS_MODULE',
  )
  .action(async (o: { toolsModule?: string }) => {
    // The worker (activities, bundler) is loaded only by the commands that run one.
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
    const { runWorker } = require('../workers/run') as typeof WorkerRun;
    const { loadWorkerConfig } = require('../workers/config') as typeof Config;
    const { notificationDelivery } = require('../client/deliver') as typeof Deliver;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const config = loadWorkerConfig();
    await runWorker({
      config: o.toolsModule ? { ...config, toolsModule: path.resolve(o.toolsModule) } : config,
      target: target(),
      deliveryFor: notificationDelivery,
    }).done;
  });

registerRunCommand(program, target);
registerRunControlCommands(program, target);
registerDemoCommand(program, target);
registerScheduleCommands(program, target);
registerContentCommands(program, target);

// ---------------------------------------------------------------- codec-server
program
  .command('codec-server')
  .description('Serve /encode and /decode for the Web UI with the keys of DURABLE_AGENT_CODEC_KEYS')
  .option(
    '--host <address>',
    'address to bind; anything but loopback needs DURABLE_AGENT_CODEC_TOKEN',
    '127.0.0.1',
  )
  .option('--port <port>', 'port (0 = any free port)', (v) => Number(v), 8081)
  .option(
    '--ui-origin <origins>',
    'comma-separated Web UI origins allowed by CORS',
    'http://127.0.0.1:8233,http://localhost:8233',
  )
  .action(async (o: { host: string; port: number; uiOrigin: string }) => {
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
    const { codecKeysFromEnv } = require('../workers/payload-codec') as typeof PayloadCodec;
    const { startCodecServer } = require('../server/codec-server') as typeof CodecServer;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const keys = codecKeysFromEnv();
    if (!keys) throw new Error('Set DURABLE_AGENT_CODEC_KEYS (id:base64-key,…) to run the codec server');
    const token = process.env.DURABLE_AGENT_CODEC_TOKEN?.trim() || undefined;
    const server = await startCodecServer({
      keys,
      host: o.host,
      port: o.port,
      uiOrigins: o.uiOrigin
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      ...(token ? { token } : {}),
    });
    console.log(
      `Codec server on ${server.url} (start the dev server with DURABLE_AGENT_CODEC_ENDPOINT=${server.url})`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
  });

registerNotificationCommands(program, target);
registerApprovalCommands(program, target);
registerQuestionCommands(program, target);
registerMcpCommand(program, target);
exitAfterParsingWhenAsked(program);

registerDebugCommands(program, target);
registerKbCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Messages can quote what the user typed (ids, targets): never let it drive the terminal.
  console.error(`error: ${printable(err instanceof Error ? err.message : String(err), true)}`);
  process.exit(1);
});
