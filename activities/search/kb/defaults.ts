/**
 * Defaults of the knowledge-base settings, in a module without the config schema's dependencies:
 * `kb search` with no config file runs on these without loading the validation library.
 */
export const KNOWLEDGE_BASE_DEFAULTS = Object.freeze({
  /** Folder of the index, relative to the project folder. */
  dataDir: '.data/kb',
  /** Folders indexed on first use when the knowledge base is empty. */
  seed: Object.freeze(['examples/kb']),
  /** Target chunk size in characters. */
  chunkChars: 1000,
  /** How long a writer waits for another process's lock. */
  lockTimeoutMs: 30_000,
});
