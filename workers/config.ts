import fs from 'node:fs';
import { formatZodIssues } from '../shared/zod-issues';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { EmailConfigSchema } from '../activities/email/config';
import { DEFAULT_LOCAL_WEIGHTS, LOCAL_WEIGHTS } from '../activities/model/local/weights';
import { SearchConfigSchema } from '../activities/search/config';
import { DatabasesConfigSchema } from '../activities/sql/config';
import { McpConfigSchema } from '../activities/mcp/config';
import { DATA_ROOT, PROJECT_ROOT } from '../shared/project-root';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues';
import { DEFAULT_CONTENT_GC_EVERY_MS } from '../shared/content-gc';
import { MIN_INTERVAL_MS, durationMs } from '../shared/schedule-spec';
import type { ContentStoreConfig } from '../activities/content/config';
import type { ActivitiesConfig } from '../activities/config';
import { ApprovalPolicySchema, approvalPolicyProblems } from '../shared/approvals';
import { PriceTableSchema } from '../shared/run-limits';
import { parseContentStoreSetting } from '../activities/content/config';
import type { StreamConfig } from '../activities/streaming';
import { parseStreamSetting } from '../activities/streaming';
import { SubAgentsSchema } from '../shared/agent/input';
import type { CodecKeys } from './payload-codec';
import { parseCodecKeys } from './payload-codec';
import { ConfigError } from './config-error';
import type { WorkerVersioningConfig } from './versioning';
import { parseWorkerVersioning } from './versioning';
import { resolveEnvRefs } from './env-refs';

/**
 * Where the Prometheus endpoint binds unless configured: loopback, on the port OpenTelemetry's
 * Prometheus exporter uses by default.
 */
export const DEFAULT_METRICS_ADDRESS = '127.0.0.1:9464';

/** Environment variables the worker reads, with what each sets. The README's table mirrors this. */
export const WORKER_ENV = {
  DURABLE_AGENT_CONFIG: 'JSON file with email accounts, databases and search settings (see README)',
  DURABLE_AGENT_TASK_QUEUE: 'Task queue to poll',
  DURABLE_AGENT_SCRIPTS_DIR: 'Folder of scripted-model files (`<name>.json`)',
  DURABLE_AGENT_LOG_LEVEL: 'TRACE | DEBUG | INFO | WARN | ERROR',
  DURABLE_AGENT_LOG_FORMAT:
    'text (default: one line per event on stderr) | json (one object per line on stdout)',
  DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: 'Activities one worker runs at once',
  DURABLE_AGENT_STICKY_QUEUE_TIMEOUT:
    "How long a run's next task waits for the worker that keeps the run in memory before any worker may take it (default 10s, 1s to 5m; Temporal's stickyQueueScheduleToStartTimeout)",
  OPENAI_API_KEY: 'Key for the openai provider',
  OPENAI_BASE_URL: 'OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, …)',
  ANTHROPIC_API_KEY: 'Key for the anthropic provider',
  ANTHROPIC_BASE_URL: 'Anthropic Messages API endpoint',
  DURABLE_AGENT_LOCAL_MODEL:
    'GGUF file of the local model provider (default: the one `npm run setup` installs)',
  DURABLE_AGENT_MODELS_DIR: 'Folder of GGUF files a run may name with `model: { provider: "local", model }`',
  DURABLE_AGENT_LOCAL_THREADS: 'CPU threads of the local model (default: the cores available less one)',
  DURABLE_AGENT_TRACING: 'OpenTelemetry tracing: off (default) | otlp | console (JSON lines on stderr)',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'OTLP/HTTP base URL; `/v1/traces` is appended',
  OTEL_SERVICE_NAME: 'service.name on every span (default durable-agent-worker)',
  DURABLE_AGENT_METRICS:
    "Prometheus metrics: off (default) | prometheus (the SDK's worker metrics and the agent's, at /metrics)",
  DURABLE_AGENT_METRICS_ADDRESS: `IP address and port the metrics endpoint binds (default ${DEFAULT_METRICS_ADDRESS})`,
  DURABLE_AGENT_CONTENT_STORE:
    'Where large tool results and conversations are kept: a folder (default .data/content) or a postgres:// URL',
  DURABLE_AGENT_CONTENT_GC:
    'How often the content store garbage collection schedule fires (default 1h, e.g. 30m, 6h), or off (no schedule is set up)',
  DURABLE_AGENT_CONTENT_GC_GRACE:
    "How long content outlives its last write and the runs that reference it (default and minimum: the namespace's retention)",
  DURABLE_AGENT_STREAM:
    'Where live tokens travel: a folder (default .data/streams; worker and watchers on one machine), a postgres:// URL (LISTEN/NOTIFY, across machines), or off',
  DURABLE_AGENT_DEPLOYMENT_NAME:
    'Worker Versioning: the worker deployment this worker belongs to (with DURABLE_AGENT_BUILD_ID; off when both are unset)',
  DURABLE_AGENT_BUILD_ID:
    "Worker Versioning: this build's id, e.g. its git commit (with DURABLE_AGENT_DEPLOYMENT_NAME)",
  DURABLE_AGENT_WORKFLOW_BUNDLE:
    'A prebuilt workflow bundle (a .js file of bundleWorkflowCode) to load instead of bundling workflows/ at start; not with tracing, payload encryption or Worker Versioning on',
  DURABLE_AGENT_TOOLS_MODULE:
    'A module (.ts or .js) exporting tools of your own made with defineTool; the worker registers them (as `worker --tools-module`)',
} as const;

/**
 * Whether a metrics bind address is `<ip>:<port>`: Temporal's exporter takes an IP address (IPv6
 * in brackets), not a host name.
 */
function isBindAddress(value: string): boolean {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (!m) return false;
  const host = m[1] ?? m[2] ?? '';
  const family = net.isIP(host);
  return (m[1] ? family === 6 : family === 4) && Number(m[3]) <= 65535;
}

/** Bounds of DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: a live worker needs a moment; a dead one should not hold runs long. */
const MIN_STICKY_QUEUE_TIMEOUT_MS = 1_000;
const MAX_STICKY_QUEUE_TIMEOUT_MS = 5 * 60_000;

const optionalString = z
  .string()
  .transform((s) => s.trim())
  .optional()
  .transform((s) => (s ? s : undefined));

const EnvSchema = z.object({
  DURABLE_AGENT_CONFIG: z.string().trim().min(1).optional(),
  DURABLE_AGENT_TASK_QUEUE: z.string().trim().min(1).default(DEFAULT_TASK_QUEUE),
  DURABLE_AGENT_SCRIPTS_DIR: z
    .string()
    .trim()
    .min(1)
    .default(path.join(PROJECT_ROOT, 'examples', 'scripts')),
  DURABLE_AGENT_LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
  DURABLE_AGENT_LOG_FORMAT: z.enum(['text', 'json'], { message: 'must be text or json' }).default('text'),
  DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).max(1000).default(100),
  DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: z
    .string()
    .trim()
    .refine(
      (v) => {
        const ms = durationMs(v);
        return ms !== null && ms >= MIN_STICKY_QUEUE_TIMEOUT_MS && ms <= MAX_STICKY_QUEUE_TIMEOUT_MS;
      },
      { message: 'must be a duration from 1s to 5m, e.g. 3s or 10s' },
    )
    .optional(),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: z.url({ message: 'must be a URL such as http://127.0.0.1:11434/v1' }).optional(),
  ANTHROPIC_API_KEY: optionalString,
  ANTHROPIC_BASE_URL: z.url({ message: 'must be a URL such as https://api.anthropic.com' }).optional(),
  DURABLE_AGENT_LOCAL_MODEL: z.string().trim().min(1).optional(),
  DURABLE_AGENT_MODELS_DIR: z.string().trim().min(1).default(path.join(DATA_ROOT, 'models')),
  DURABLE_AGENT_LOCAL_THREADS: z.coerce
    .number({ message: 'must be a whole number of threads, e.g. 2' })
    .int({ message: 'must be a whole number of threads, e.g. 2' })
    .min(1)
    .max(256)
    .optional(),
  DURABLE_AGENT_TRACING: z
    .enum(['off', 'otlp', 'console'], { message: 'must be off, otlp or console' })
    .default('off'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ message: 'must be a URL such as http://127.0.0.1:4318/v1/traces' })
    .optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ message: 'must be a URL such as http://127.0.0.1:4318' }).optional(),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('durable-agent-worker'),
  DURABLE_AGENT_METRICS: z
    .enum(['off', 'prometheus'], { message: 'must be off or prometheus' })
    .default('off'),
  DURABLE_AGENT_METRICS_ADDRESS: z
    .string()
    .trim()
    .refine(isBindAddress, {
      message:
        'must be <ip>:<port>, e.g. 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464 (an IP address, not a host name)',
    })
    .default(DEFAULT_METRICS_ADDRESS),
  DURABLE_AGENT_CONTENT_STORE: z.string().trim().optional(),
  DURABLE_AGENT_CONTENT_GC: z
    .string()
    .trim()
    .refine((v) => v === 'off' || (durationMs(v) ?? 0) >= MIN_INTERVAL_MS, {
      message: 'must be off or an interval of 1s or more, e.g. 1h, 30m or 6h',
    })
    .optional(),
  DURABLE_AGENT_CONTENT_GC_GRACE: z
    .string()
    .trim()
    .refine((v) => durationMs(v) !== null, { message: 'must be a duration, e.g. 7d or 36h' })
    .optional(),
  DURABLE_AGENT_STREAM: z.string().trim().optional(),
  DURABLE_AGENT_WORKFLOW_BUNDLE: optionalString,
  DURABLE_AGENT_TOOLS_MODULE: optionalString,
  DURABLE_AGENT_DEPLOYMENT_NAME: optionalString,
  DURABLE_AGENT_BUILD_ID: optionalString,
});

/** The worker's metrics settings (see WORKER_ENV). */
export interface MetricsConfig {
  exporter: 'off' | 'prometheus';
  /** `<ip>:<port>` the Prometheus endpoint binds (it serves `/metrics`). */
  address: string;
}

/** The content store's garbage collection (see WORKER_ENV and docs/content-retention.md). */
export interface ContentGcConfig {
  /** How often its schedule fires; null: the worker sets up no schedule. */
  everyMs: number | null;
  /** The grace asked for; the namespace's retention when longer or unset. */
  graceMs?: number;
}

/** The worker's tracing settings (see WORKER_ENV). */
export interface TracingConfig {
  exporter: 'off' | 'otlp' | 'console';
  /** OTLP/HTTP traces endpoint; the exporter's default (localhost:4318) when unset. */
  endpoint?: string;
  serviceName: string;
}

/**
 * Threads of the local model unless configured: the cores available, less one for the worker's own
 * work (Temporal's SDK, tools, a dev server beside it). llama.cpp's threads wait on each other at
 * every layer, so when the OS deschedules one of them the others spin: with as many threads as
 * cores on a busy 2-core machine generation ran at 0.8 tokens/s, against 19.7 with one thread.
 */
export function defaultLocalThreads(cores = os.availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** Default context of the local model, per sequence. */
export const LOCAL_CONTEXT_SIZE = 4096;
/** Default number of sequences: two calls generate at once, so one long answer does not stall the others. */
export const LOCAL_SEQUENCES = 2;

/**
 * The worker's configuration: what its activities read (secrets included, which never enter
 * history) and the settings of the worker process itself.
 */
export interface WorkerConfig extends ActivitiesConfig {
  /** A prebuilt workflow bundle file, loaded instead of bundling workflows/ at start. */
  workflowBundle?: string;
  /** A module exporting tools of the user's own, which `durable-agent worker` registers. */
  toolsModule?: string;
  logLevel: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  logFormat: 'text' | 'json';
  maxConcurrentActivities: number;
  /**
   * How long a run's next task waits for the worker that keeps the run in memory (its sticky queue)
   * before any worker may take it; the SDK's 10 s when undefined. A worker that died without shutting
   * down holds its runs this long.
   */
  stickyQueueTimeoutMs?: number;
  tracing: TracingConfig;
  metrics: MetricsConfig;
  /** Where content kept by reference lives (see activities/content). */
  contentStore: ContentStoreConfig;
  contentGc: ContentGcConfig;
  /** Payload encryption keys (DURABLE_AGENT_CODEC_KEYS); undefined = payloads in clear. */
  codecKeys?: CodecKeys;
  /** The deployment and build this worker declares (Worker Versioning); undefined = unversioned. */
  versioning?: WorkerVersioningConfig;
}

/** The config file: named connections for tools. Strings `${env:NAME}` are read from the environment. */
const FileSchema = z
  .object({
    email: EmailConfigSchema.default(() => EmailConfigSchema.parse({})),
    databases: DatabasesConfigSchema,
    search: SearchConfigSchema,
    mcp: McpConfigSchema.default(() => McpConfigSchema.parse({})),
    /** Sub-agents every run may use by naming `agent:<name>` in its tools. */
    agents: SubAgentsSchema.optional(),
    runs: z
      .object({
        approvals: ApprovalPolicySchema.optional(),
        prices: PriceTableSchema.optional(),
      })
      .strict()
      .default({})
      .superRefine((runs, ctx) => {
        // Tool names are checked here (not against a run's tools: runs choose their own).
        for (const p of approvalPolicyProblems(runs.approvals, [], undefined))
          ctx.addIssue({ code: 'custom', message: p.message, path: p.path });
      }),
  })
  .strict();

function loadConfigFile(file: string | undefined, env: NodeJS.ProcessEnv): z.output<typeof FileSchema> {
  if (!file) return FileSchema.parse({});
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`DURABLE_AGENT_CONFIG: cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = FileSchema.safeParse(resolveEnvRefs(raw, env, ''));
  if (!parsed.success) {
    throw new ConfigError(`Invalid config file ${file}: ${formatZodIssues(parsed.error)}`);
  }
  return parsed.data;
}

export { ConfigError };

/** Parses the worker configuration from the environment; fails fast naming each bad variable. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const picked: Record<string, string> = Object.fromEntries(
    Object.keys(WORKER_ENV)
      .map((k): [string, string | undefined] => [k, env[k]])
      .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  const parsed = EnvSchema.safeParse(picked);
  if (!parsed.success) {
    throw new ConfigError(`Invalid worker configuration: ${formatZodIssues(parsed.error)}`);
  }
  const e = parsed.data;
  const file = loadConfigFile(e.DURABLE_AGENT_CONFIG, env);
  let contentStore: ContentStoreConfig;
  try {
    contentStore = parseContentStoreSetting(
      e.DURABLE_AGENT_CONTENT_STORE,
      path.join(DATA_ROOT, '.data', 'content'),
    );
  } catch (err) {
    throw new ConfigError(`Invalid worker configuration: ${(err as Error).message}`);
  }
  let stream: StreamConfig;
  try {
    stream = parseStreamSetting(e.DURABLE_AGENT_STREAM, path.join(DATA_ROOT, '.data', 'streams'));
  } catch (err) {
    throw new ConfigError(`Invalid worker configuration: ${(err as Error).message}`);
  }
  let codecKeys: CodecKeys | undefined;
  try {
    codecKeys = parseCodecKeys(env.DURABLE_AGENT_CODEC_KEYS);
  } catch (err) {
    throw new ConfigError(`Invalid worker configuration: ${(err as Error).message}`);
  }
  const versioning = parseWorkerVersioning(e.DURABLE_AGENT_DEPLOYMENT_NAME, e.DURABLE_AGENT_BUILD_ID);
  return {
    ...(codecKeys ? { codecKeys } : {}),
    ...(versioning ? { versioning } : {}),
    contentStore,
    contentGc: {
      everyMs:
        e.DURABLE_AGENT_CONTENT_GC === 'off'
          ? null
          : (durationMs(e.DURABLE_AGENT_CONTENT_GC ?? '') ?? DEFAULT_CONTENT_GC_EVERY_MS),
      ...(e.DURABLE_AGENT_CONTENT_GC_GRACE
        ? { graceMs: durationMs(e.DURABLE_AGENT_CONTENT_GC_GRACE) as number }
        : {}),
    },
    stream,
    email: file.email,
    databases: file.databases,
    search: file.search,
    mcp: file.mcp,
    runDefaults: { ...file.runs, ...(file.agents ? { agents: file.agents } : {}) },
    taskQueue: e.DURABLE_AGENT_TASK_QUEUE,
    ...(e.DURABLE_AGENT_WORKFLOW_BUNDLE
      ? { workflowBundle: path.resolve(e.DURABLE_AGENT_WORKFLOW_BUNDLE) }
      : {}),
    ...(e.DURABLE_AGENT_TOOLS_MODULE ? { toolsModule: path.resolve(e.DURABLE_AGENT_TOOLS_MODULE) } : {}),
    scriptsDir: path.resolve(e.DURABLE_AGENT_SCRIPTS_DIR),
    logLevel: e.DURABLE_AGENT_LOG_LEVEL,
    logFormat: e.DURABLE_AGENT_LOG_FORMAT,
    maxConcurrentActivities: e.DURABLE_AGENT_MAX_CONCURRENT_ACTIVITIES,
    ...(e.DURABLE_AGENT_STICKY_QUEUE_TIMEOUT
      ? { stickyQueueTimeoutMs: durationMs(e.DURABLE_AGENT_STICKY_QUEUE_TIMEOUT) as number }
      : {}),
    tracing: {
      exporter: e.DURABLE_AGENT_TRACING,
      endpoint:
        e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        (e.OTEL_EXPORTER_OTLP_ENDPOINT
          ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`
          : undefined),
      serviceName: e.OTEL_SERVICE_NAME,
    },
    metrics: { exporter: e.DURABLE_AGENT_METRICS, address: e.DURABLE_AGENT_METRICS_ADDRESS },
    models: {
      openai: {
        apiKey: e.OPENAI_API_KEY,
        baseUrl: e.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        baseUrlConfigured: e.OPENAI_BASE_URL !== undefined,
      },
      anthropic: {
        apiKey: e.ANTHROPIC_API_KEY,
        baseUrl: e.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com',
      },
      local: {
        modelPath: path.resolve(
          e.DURABLE_AGENT_LOCAL_MODEL ??
            path.join(e.DURABLE_AGENT_MODELS_DIR, LOCAL_WEIGHTS[DEFAULT_LOCAL_WEIGHTS].file),
        ),
        modelPathConfigured: e.DURABLE_AGENT_LOCAL_MODEL !== undefined,
        modelsDir: path.resolve(e.DURABLE_AGENT_MODELS_DIR),
        threads: e.DURABLE_AGENT_LOCAL_THREADS ?? defaultLocalThreads(),
        contextSize: LOCAL_CONTEXT_SIZE,
        sequences: LOCAL_SEQUENCES,
      },
    },
  };
}
