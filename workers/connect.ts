import type { ClientInterceptors } from '@temporalio/client';
import { Client, Connection } from '@temporalio/client';
import type { NativeConnection, NativeConnectionOptions } from '@temporalio/worker';
import type * as TemporalWorker from '@temporalio/worker';
import { retryInterceptor } from './grpc-retry';
import { loadTemporalConnectConfig } from './temporal-config';
import { clientDataConverter, codecKeysFromEnv } from './payload-codec';

/** Address used when neither TEMPORAL_ADDRESS nor a config profile names one: the local dev server. */
export const LOCAL_ADDRESS = '127.0.0.1:7233';

/**
 * gRPC settings for client connections: a page of history of a long agent run (model inputs carry
 * the conversation) can exceed gRPC's default 4 MB message limit.
 */
export const CLIENT_CHANNEL_ARGS = { 'grpc.max_receive_message_length': 128 * 1024 * 1024 };

/** Connection settings from Temporal's standard environment variables and TOML profiles. */
export interface TemporalTarget {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
}

/**
 * Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and
 * TEMPORAL_CONFIG_FILE the way every Temporal tool does, defaulting to the local dev server. A bad
 * config file or profile is a ConfigError that names the file and its profiles.
 */
export function temporalTarget(overrides: { address?: string; namespace?: string } = {}): TemporalTarget {
  const cfg = loadTemporalConnectConfig();
  const connectionOptions: NativeConnectionOptions = { ...cfg.connectionOptions };
  connectionOptions.address = overrides.address ?? connectionOptions.address ?? LOCAL_ADDRESS;
  return { connectionOptions, namespace: overrides.namespace ?? cfg.namespace ?? 'default' };
}

/** A client connection for CLIs and the API (with tracing's interceptors when on). The caller closes it. */
export async function connectClient(
  target: TemporalTarget = temporalTarget(),
  interceptors?: ClientInterceptors,
): Promise<Client> {
  try {
    const connection = await Connection.connect({
      ...target.connectionOptions,
      connectTimeout: 5000,
      channelArgs: CLIENT_CHANNEL_ARGS,
      interceptors: [retryInterceptor()],
    });
    // With encryption keys configured, everything this client sends is sealed and everything it reads opened.
    const dataConverter = clientDataConverter(codecKeysFromEnv());
    return new Client({
      connection,
      namespace: target.namespace,
      ...(interceptors ? { interceptors } : {}),
      ...(dataConverter ? { dataConverter } : {}),
    });
  } catch (err) {
    throw new Error(
      `Cannot reach Temporal at ${target.connectionOptions.address}: ${(err as Error).message}. ` +
        'Start the local server with "durable-agent server start" or set TEMPORAL_ADDRESS.',
    );
  }
}

/** A worker connection. The caller closes it. */
export async function connectWorker(target: TemporalTarget = temporalTarget()): Promise<NativeConnection> {
  // Loaded here so client-only commands do not pay for the worker's native module.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { NativeConnection } = require('@temporalio/worker') as typeof TemporalWorker;
  try {
    return await NativeConnection.connect(target.connectionOptions);
  } catch (err) {
    throw new Error(
      `Cannot reach Temporal at ${target.connectionOptions.address}: ${(err as Error).message}. ` +
        'Start the local server with "durable-agent server start" or set TEMPORAL_ADDRESS.',
    );
  }
}
