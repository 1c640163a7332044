/**
 * The durable-agent plugin: one object, on Temporal's own plugin interface, that adds the agent's
 * workflows, its activities (the model, the built-in tools, the tools of your own), the payload
 * codec and the tracing and metrics interceptors to someone's `Worker.create` and `Client`.
 * `durable-agent worker` is built on it too (workers/worker.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { DataConverter, Logger } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { Runtime } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import { createActivities } from '../activities';
import { contentStoreFor } from '../activities/content/config';
import { createContentGcActivities } from '../activities/content/gc-activity';
import type { RunLiveness } from '../activities/content/gc';
import { temporalLiveness, temporalServiceId } from '../activities/content/liveness';
import type { ContentStore } from '../activities/content/store';
import { deliveryOverActivityClient } from '../activities/notifications/deliver';
import type { Tool } from '../activities/own-tools/define';
import { ToolDefinitionError, checkToolSet } from '../activities/own-tools/define';
import type { NotificationDelivery } from '../shared/notifications/delivery';
import { secretsOfConfig } from '../shared/redact-secrets';
import { hasEveryAgentAttribute } from '../shared/search-attributes';
import { TOOL_NAMES } from '../shared/tools/names';
import { isOwnToolName } from '../shared/tools/own';
import type { SubAgentSpec } from '../shared/agent';
import type { WorkerConfig } from './config';
import { loadWorkerConfig } from './config';
import { ActivityOutcomeLogger } from './observability/interceptors';
import { MeteredContentStore } from './observability/metered-store';
import type { AgentMetrics } from './observability/metrics';
import { AgentMetricsInterceptor } from './observability/metrics-interceptor';
import { PrivateValuesInterceptor } from './observability/private-values';
import { ErrorSanitizer } from './observability/sanitize-errors';
import type { Tracing } from './observability/tracing';
import { AesGcmCodec } from './payload-codec';
import { WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH, VERSIONED_WORKFLOWS_PATH } from './workflows-bundle';

/** The plugin's name, as Temporal lists plugins. */
export const PLUGIN_NAME = 'durable-agent';

/** Path of the failure converter the workflow sandbox loads when payloads are encrypted. */
const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** Names the generated modules' files start with. */
const GENERATED_PREFIX = 'workflows-';

/** The workflows the plugin adds to a worker (see workflows/index.ts). */
export const AGENT_WORKFLOW_NAMES = [
  'agentWorkflow',
  'inboxWorkflow',
  'toolCallWorkflow',
  'contentGcWorkflow',
];

/** What the plugin is built from. */
export interface DurableAgentPluginOptions {
  /** Tools of your own, made with `defineTool`; runs name them in their `tools`. */
  tools?: readonly Tool[];
  /**
   * The worker's configuration: model keys, mail accounts, databases, search, MCP servers, the
   * content store, run defaults. Read from the environment (as `durable-agent worker` reads it) when
   * absent.
   */
  config?: WorkerConfig;
  /** Where large content is kept by reference; the configured store when absent. */
  store?: ContentStore;
  /** How notifications reach runs and inboxes; over the worker's own client when absent. */
  deliver?: NotificationDelivery;
  /** Tracing to install (see the worker's `DURABLE_AGENT_TRACING`). */
  tracing?: Tracing;
  /** The agent's metrics to record. */
  metrics?: AgentMetrics;
}

/** Settings only the project's own worker and tests use. */
export interface AgentPluginInternals {
  providers?: ActivityDeps['providers'];
  /** Extra or replacement activities (tests: instrumented tools). */
  activityOverrides?: Record<string, (...args: never[]) => Promise<unknown>>;
  /** How content GC asks Temporal about runs; the worker's own client when absent. */
  contentLiveness?: RunLiveness;
  /** The Temporal service the worker serves, named in content claims; asked of the worker's client when absent. */
  temporalService?: string | (() => Promise<string>);
  /** The namespace content GC collects for; the activity's own when absent. */
  namespace?: string;
}

/** The Temporal runtime's logger, looked up on each use. */
function runtimeLogger(): Logger {
  const logger = () => Runtime.instance().logger;
  return {
    log: (level, message, meta) => void logger().log(level, message, meta),
    trace: (message, meta) => void logger().trace(message, meta),
    debug: (message, meta) => void logger().debug(message, meta),
    info: (message, meta) => void logger().info(message, meta),
    warn: (message, meta) => void logger().warn(message, meta),
    error: (message, meta) => void logger().error(message, meta),
  };
}

/** The id of the Temporal service, asked once of the client of the worker running the activity. */
function activityClientServiceId(): () => Promise<string> {
  let id: Promise<string> | undefined;
  return () => (id ??= temporalServiceId(Context.current().client.workflowService));
}

/**
 * Whether the namespace of the worker running the activity has the agent search attributes, asked
 * once when the first run starts: a namespace where the question is refused (some Cloud API keys),
 * or an activity without a client, counts as lacking them, as the client's start function counts it.
 */
function activityClientAgentAttributes(): () => Promise<boolean> {
  let known: Promise<boolean> | undefined;
  return () =>
    (known ??= Promise.resolve()
      .then(() => {
        const { client } = Context.current();
        return client.connection.operatorService.listSearchAttributes({
          namespace: client.options.namespace,
        });
      })
      .then((r) => hasEveryAgentAttribute(r.customAttributes))
      .catch(() => false));
}

/** Answers content GC's questions over the client of the worker running the activity. */
function activityClientLiveness(): RunLiveness {
  const service = () => Context.current().client.workflowService;
  const serviceId = activityClientServiceId();
  return {
    serviceId,
    retentionMs: (namespace) => temporalLiveness(service()).retentionMs(namespace),
    status: (namespace, workflowId) => temporalLiveness(service()).status(namespace, workflowId),
  };
}

/** Checks the worker's sub-agents name only tools it has: built-in, own, MCP or other sub-agents. */
function checkSubAgentTools(
  agents: Record<string, SubAgentSpec> | undefined,
  own: Set<string>,
  where = 'agents',
): void {
  for (const [name, spec] of Object.entries(agents ?? {})) {
    const unknown = (spec.tools ?? []).filter((t) => isOwnToolName(t) && !own.has(t));
    if (unknown.length) {
      throw new ToolDefinitionError(
        `${where}.${name}.tools: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `"${t}"`).join(', ')}; ` +
          `this worker's own tools are ${[...own].join(', ') || '(none)'}; built-in tools are ${TOOL_NAMES.join(', ')}`,
      );
    }
    checkSubAgentTools(spec.agents, own, `${where}.${name}.agents`);
  }
}

/**
 * Where generated workflow modules are kept: the cache folder of the node_modules that holds the
 * Temporal SDK (the app's own, with the SDK as a peer dependency), so that the SDK's bundler
 * resolves `@temporalio/workflow` from them as from the app's own files.
 */
function generatedModulesDir(): string {
  const sdk = require.resolve('@temporalio/workflow');
  const at = sdk.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  const nodeModules =
    at >= 0 ? sdk.slice(0, at + '/node_modules'.length) : path.join(process.cwd(), 'node_modules');
  return path.join(nodeModules, '.cache', 'durable-agent');
}

/**
 * The module a worker bundles when it has workflows of its own: theirs, and the agent's by name
 * (ours win where a file of theirs re-exports them too). Written once per pair of paths.
 */
function combinedWorkflowsModule(own: string, ours: string): string {
  const body =
    `// Generated by the durable-agent plugin: this worker's workflows and the agent's.\n` +
    `const own = require(${JSON.stringify(path.resolve(own))});\n` +
    `const ours = require(${JSON.stringify(ours)});\n` +
    `module.exports = { ...own, ${AGENT_WORKFLOW_NAMES.map((n) => `${n}: ours.${n}`).join(', ')} };\n`;
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 16);
  const dir = generatedModulesDir();
  // CommonJS whatever the app's package says, so the bundler reads it the same in every app.
  const file = path.join(dir, `${GENERATED_PREFIX}${hash}.cjs`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, file);
  }
  return file;
}

/** Bundler options with the agent's over the worker's own: its preloaded schemas and compile target. */
function withAgentBundlerOptions(options: WorkerOptions['bundlerOptions']): WorkerOptions['bundlerOptions'] {
  const own = options ?? {};
  const hook = own.webpackConfigHook;
  return {
    ...own,
    preloadModules: [...(own.preloadModules ?? []), ...WORKFLOW_BUNDLER_OPTIONS.preloadModules],
    webpackConfigHook: (config) => WORKFLOW_BUNDLER_OPTIONS.webpackConfigHook(hook ? hook(config) : config),
  };
}

/**
 * Adds durable agents to a Temporal worker and client:
 *
 * ```ts
 * const plugin = new DurableAgentPlugin({ tools: [lookupOrder] });
 * const worker = await Worker.create({ connection, taskQueue: 'durable-agent', plugins: [plugin] });
 * const client = new Client({ connection: clientConnection, plugins: [plugin] });
 * ```
 *
 * The worker then runs `agentWorkflow` (and the inbox and content-collection workflows) beside
 * its own workflows, and registers the model activity, one activity per built-in tool and one per
 * tool of yours. Your tools' names and sub-agents' tools are checked when the plugin is made: a
 * duplicate or unknown name throws, naming it.
 */
export class DurableAgentPlugin extends SimplePlugin {
  /** The configuration the activities read. */
  readonly config: WorkerConfig;
  /** The tools of your own the plugin registers. */
  readonly tools: readonly Tool[];
  private readonly workflowsPath: string;
  private readonly dataConverter: DataConverter | undefined;

  constructor(options: DurableAgentPluginOptions & AgentPluginInternals = {}) {
    const config = options.config ?? loadWorkerConfig();
    const tools = checkToolSet(options.tools ?? []);
    checkSubAgentTools(config.runDefaults.agents, new Set(tools.map((t) => t.spec.name)));
    const store = options.store ?? contentStoreFor(config.contentStore);
    const { metrics, tracing } = options;
    const dataConverter: DataConverter | undefined = config.codecKeys
      ? { payloadCodecs: [new AesGcmCodec(config.codecKeys)], failureConverterPath: FAILURE_CONVERTER_PATH }
      : undefined;
    const secrets = secretsOfConfig(config);
    super({
      name: PLUGIN_NAME,
      ...(dataConverter ? { dataConverter } : {}),
      ...(tracing ? { clientInterceptors: tracing.clientInterceptors } : {}),
      workerInterceptors: {
        // The call's arguments are known to everything inside it (to redact them from messages);
        // Temporal's tracing interceptor comes next, so the agent's spans nest under RunActivity.
        activity: [
          // Outermost: what leaves an activity (into the SDK's log and into history) is sanitized last.
          () => ({ inbound: new ErrorSanitizer(secrets) }),
          () => ({ inbound: new PrivateValuesInterceptor() }),
          ...(tracing ? tracing.activityInterceptors.slice(0, 1) : []),
          () => ({ inbound: new ActivityOutcomeLogger() }),
          ...(metrics
            ? [() => ({ inbound: new AgentMetricsInterceptor(metrics, config.runDefaults.prices) })]
            : []),
          ...(tracing ? tracing.activityInterceptors.slice(1) : []),
        ],
        ...(tracing ? { workflowModules: tracing.workflowModules } : {}),
        ...(tracing ? { client: tracing.clientInterceptors } : {}),
      },
    });
    this.config = config;
    this.tools = tools;
    this.dataConverter = dataConverter;
    this.workflowsPath = config.versioning ? VERSIONED_WORKFLOWS_PATH : WORKFLOWS_PATH;
    this.activities = {
      ...createActivities({
        config,
        temporalService: options.temporalService ?? activityClientServiceId(),
        store: metrics ? new MeteredContentStore(store, metrics) : store,
        providers: options.providers,
        deliver: options.deliver ?? deliveryOverActivityClient(),
        // The runtime's logger: what MCP connections report reaches the worker's log like activities'
        // lines. Asked for when first used, so making the plugin installs no runtime of its own.
        logger: runtimeLogger(),
        tools,
        agentSearchAttributes: activityClientAgentAttributes(),
      }),
      ...createContentGcActivities({
        store,
        liveness: options.contentLiveness ?? activityClientLiveness(),
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(metrics
          ? { onCollected: (r) => metrics.contentCollected(r.dryRun ? 0 : r.removedBytes, r.storeBytes) }
          : {}),
      }),
      ...options.activityOverrides,
    };
    this.sinks = tracing?.sinks;
  }

  private readonly activities: Record<string, unknown>;
  private readonly sinks: Tracing['sinks'] | undefined;

  /** The workflows path a worker bundles: the agent's, or a module of the worker's own and the agent's. */
  private workflowsPathFor(existing: string | undefined): string {
    if (!existing || path.resolve(existing) === this.workflowsPath) return this.workflowsPath;
    // A worker made with the plugin bundles through it again (the plugin is its bundler's too).
    const generated =
      path.dirname(existing) === generatedModulesDir() &&
      path.basename(existing).startsWith(GENERATED_PREFIX);
    return generated ? existing : combinedWorkflowsModule(existing, this.workflowsPath);
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    // A prebuilt bundle was made with this plugin's configureBundler (or holds the agent's workflows).
    const bundled =
      options.workflowBundle !== undefined
        ? options
        : {
            ...options,
            workflowsPath: this.workflowsPathFor(options.workflowsPath),
            bundlerOptions: withAgentBundlerOptions(options.bundlerOptions),
          };
    return {
      ...super.configureWorker(bundled),
      activities: { ...this.activities, ...options.activities },
      ...(this.sinks ? { sinks: { ...options.sinks, ...this.sinks } } : {}),
    };
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    if (options.workflowBundle !== undefined) return super.configureReplayWorker(options);
    return super.configureReplayWorker({
      ...options,
      workflowsPath: this.workflowsPathFor(options.workflowsPath),
      bundlerOptions: withAgentBundlerOptions(options.bundlerOptions),
    });
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    return super.configureBundler({
      ...options,
      ...withAgentBundlerOptions(options),
      workflowsPath: this.workflowsPathFor(options.workflowsPath),
    });
  }

  /** The data converter the plugin adds (payload encryption), for clients made without the plugin. */
  get payloadDataConverter(): DataConverter | undefined {
    return this.dataConverter;
  }
}
