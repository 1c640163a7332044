import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { AgentInput } from '../shared/agent';
import type * as NotificationMessages from '../shared/notifications/messages';
import type * as Config from '../workers/config';
import type { TemporalTarget } from '../workers/connect';
import type * as Connect from '../workers/connect';
import type * as DevServer from '../workers/dev-server';
import type * as Binaries from '../workers/binaries';
import type * as WorkerRun from '../workers/run';
import type * as Deliver from '../client/deliver';
import type * as ModelSpec from '../client/model-spec';
import type * as StartRun from '../client/start-run';
import type * as Watch from '../client/watch';
import type * as Progress from './progress';
import type * as Printer from './live-token-printer';

/** What `demo` runs, loaded when it runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../shared/notifications/messages') as typeof NotificationMessages),
    ...(require('../workers/config') as typeof Config),
    ...(require('../workers/connect') as typeof Connect),
    ...(require('../workers/dev-server') as typeof DevServer),
    ...(require('../workers/binaries') as typeof Binaries),
    ...(require('../client/deliver') as typeof Deliver),
    ...(require('../client/model-spec') as typeof ModelSpec),
    ...(require('../client/start-run') as typeof StartRun),
    ...(require('../client/watch') as typeof Watch),
    ...(require('./progress') as typeof Progress),
    ...(require('./live-token-printer') as typeof Printer),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** The user whose inbox the demo's notifications reach. */
const DEMO_USER = 'demo';

/** A word as a shell reads it: quoted when it holds anything but path characters. */
function shellWord(word: string): string {
  return /^[\w./@:=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The demo job of the local model: a database question (the schema or a query, then the answer). */
const LOCAL_DEMO: Pick<AgentInput, 'task' | 'tools'> = {
  task: 'How many customers are in the database?',
  tools: ['get_time', 'calculator', 'knowledge_base_search', 'sql_schema', 'sql_query', 'notify_user'],
};

/**
 * The demo's model when `--model` names none: the local model (a small model run here, no key), but
 * in CI (`CI` set, as CI services do) the scripted one, which needs no weights and takes a second.
 */
export function defaultDemoModel(env: NodeJS.ProcessEnv = process.env): string {
  const ci = env.CI?.trim().toLowerCase();
  return ci && ci !== 'false' && ci !== '0' ? 'scripted:demo' : 'local';
}

/** `durable-agent demo`: the dev server, a worker and the demo job, in one command. */
export function registerDemoCommand(program: Command, target: () => TemporalTarget): void {
  program
    .command('demo')
    .description('Start the dev server and a worker, run the demo agent job with an offline model')
    .addOption(
      new Option(
        '--model <provider:name>',
        'local (a small model run here) | scripted:demo (a replayed script)',
      ).default(defaultDemoModel(), 'local; scripted:demo when CI is set'),
    )
    .action(async (o: { model: string }) => {
      const {
        connectClient,
        devServerStatus,
        isServing,
        LOCAL_ADDRESS,
        loadWorkerConfig,
        notificationDelivery,
        notificationsQuery,
        parseModelSpec,
        startAgentRun,
        startDevServer,
        temporalBinary,
        watchRun,
      } = load();
      const model = parseModelSpec(o.model);
      const { connectionOptions, namespace } = target();
      const address = connectionOptions.address ?? LOCAL_ADDRESS;
      // The project's dev server, started if need be; but where it is not running and another server
      // answers at the demo's address (TEMPORAL_ADDRESS, --address), that one: starting ours would
      // only find its port taken, or leave a server nobody connects to.
      const s =
        !(await devServerStatus({})).running && (await isServing(address)) ? null : await startDevServer({});
      console.log(
        s
          ? `Temporal dev server at ${s.address}${s.uiUrl ? `, Web UI ${s.uiUrl}` : ''}`
          : `Temporal server at ${address}`,
      );
      const config = loadWorkerConfig();
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
      const { installLogging, runWorker } = require('../workers/run') as typeof WorkerRun;
      installLogging('WARN', config.logFormat);
      const worker = runWorker({
        config,
        target: target(),
        deliveryFor: notificationDelivery,
        installSignalHandlers: false,
      });
      const client = await connectClient(target());
      try {
        const workflowId = `demo-${randomUUID()}`;
        const input: AgentInput =
          model.provider === 'scripted'
            ? {
                task: 'Plan my Tokyo trip budget: 4 hotel nights at 182.50 EUR, a 912 EUR flight, plus a 10% reserve. What time is it there now?',
                model,
                tools: ['get_time', 'calculator', 'notify_user'],
                notify: { user: DEMO_USER },
              }
            : { ...LOCAL_DEMO, model, notify: { user: DEMO_USER } };
        const handle = await startAgentRun(client, input, { taskQueue: config.taskQueue, workflowId });
        console.log(`Started ${workflowId}\nTask: ${input.task}`);
        const outcome = await watchRun(client, handle, (l) => console.log(l));
        console.log(`\n${outcome.result?.answer ?? `Run ${outcome.outcome}: ${outcome.error ?? ''}`}\n`);
        const { notifications } = await handle.query(notificationsQuery);
        for (const n of notifications)
          console.log(`notification #${n.no} [${n.type}, priority ${n.priority}] ${n.title}: ${n.message}`);
        // The run's notifications went to its user's inbox too; without any, there may be no inbox.
        if (notifications.length > 0)
          console.log(`(also in inbox:${DEMO_USER} — durable-agent notifications inbox:${DEMO_USER})\n`);
        // The binary by its absolute path and the server by its address: the line works from any folder.
        const where = [
          ...(address !== LOCAL_ADDRESS ? [`--address ${address}`] : []),
          ...(namespace !== 'default' ? [`--namespace ${namespace}`] : []),
        ];
        console.log(
          `Inspect it: ${shellWord(temporalBinary('temporal'))} workflow show --workflow-id ${workflowId}` +
            where.map((w) => ` ${w}`).join(''),
        );
        if (s?.uiUrl)
          console.log(`or in the Web UI: ${s.uiUrl}/namespaces/${namespace}/workflows/${workflowId}`);
        if (s) console.log('Stop the server with: npx durable-agent server stop');
        process.exitCode = outcome.exitCode;
      } finally {
        await client.connection.close();
        await worker.stop();
      }
    });
}
