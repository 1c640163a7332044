/**
 * Defaults of the knowledge-base settings, in a module without the config schema's dependencies:
 * `kb search` with no config file runs on these without loading the validation library.
 */
export const KNOWLEDGE_BASE_DEFAULTS = Object.freeze({
  /** The embedded engine: a folder on this machine, no setup. */
  engine: 'embedded',
  /** Prefix of the `postgres` engine's table names. */
  tablePrefix: 'durable_agent_kb',
  /** Connections the `postgres` engine opens per process. */
  poolSize: 4,
  /** Folder of the index, relative to the project folder. */
  dataDir: '.data/kb',
  /** Folders indexed on first use when the knowledge base is empty. */
  seed: Object.freeze(['examples/kb']),
  /** Target chunk size in characters. */
  chunkChars: 1000,
  /** How long a writer waits for another process's lock. */
  lockTimeoutMs: 30_000,
});
