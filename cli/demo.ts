import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { AgentInput } from '../shared/agent';
import type * as NotificationMessages from '../shared/notifications/messages';
import type * as Config from '../workers/config';
import type { TemporalTarget } from '../workers/connect';
import type * as Connect from '../workers/connect';
import type * as DevServer from '../workers/dev-server';
import type * as WorkerRun from '../workers/run';
import type * as Deliver from '../client/deliver';
import type * as ModelSpec from '../client/model-spec';
import type * as StartRun from '../client/start-run';
import type * as Watch from '../client/watch';

/** What `demo` runs, loaded when it runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../shared/notifications/messages') as typeof NotificationMessages),
    ...(require('../workers/config') as typeof Config),
    ...(require('../workers/connect') as typeof Connect),
    ...(require('../workers/dev-server') as typeof DevServer),
    ...(require('../client/deliver') as typeof Deliver),
    ...(require('../client/model-spec') as typeof ModelSpec),
    ...(require('../client/start-run') as typeof StartRun),
    ...(require('../client/watch') as typeof Watch),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
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
        loadWorkerConfig,
        notificationDelivery,
        notificationsQuery,
        parseModelSpec,
        startAgentRun,
        startDevServer,
        watchRun,
      } = load();
      const model = parseModelSpec(o.model);
      const s = await startDevServer({});
      console.log(`Temporal dev server at ${s.address}${s.uiUrl ? `, Web UI ${s.uiUrl}` : ''}`);
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
                notify: { user: 'demo' },
              }
            : { ...LOCAL_DEMO, model, notify: { user: 'demo' } };
        const handle = await startAgentRun(client, input, { taskQueue: config.taskQueue, workflowId });
        console.log(`Started ${workflowId}\nTask: ${input.task}`);
        const outcome = await watchRun(client, handle, (l) => console.log(l));
        console.log(`\n${outcome.result?.answer ?? `Run ${outcome.outcome}: ${outcome.error ?? ''}`}\n`);
        const { notifications } = await handle.query(notificationsQuery);
        for (const n of notifications)
          console.log(`notification #${n.no} [${n.type}, priority ${n.priority}] ${n.title}: ${n.message}`);
        console.log(`(also in inbox:demo — durable-agent notifications inbox:demo)\n`);
        console.log(`Inspect it: .temporal/venv/bin/temporal workflow show --workflow-id ${workflowId}`);
        if (s.uiUrl) console.log(`or in the Web UI: ${s.uiUrl}/namespaces/default/workflows/${workflowId}`);
        console.log('Stop the server with: npx durable-agent server stop');
        process.exitCode = outcome.exitCode;
      } finally {
        await client.connection.close();
        await worker.stop();
      }
    });
}
