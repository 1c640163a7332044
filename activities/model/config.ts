/** The worker's local model settings (DURABLE_AGENT_LOCAL_* in the worker's environment). */
export interface LocalModelConfig {
  /** The GGUF file used when a run names none. */
  modelPath: string;
  /** Whether modelPath came from DURABLE_AGENT_LOCAL_MODEL (else it is the default the setup installs). */
  modelPathConfigured: boolean;
  modelsDir: string;
  threads: number;
  /** Tokens one sequence holds: the scaffold (~600), the run's turns and clipped tool results. */
  contextSize: number;
  /** Model calls generated at once; further calls wait for a free sequence. */
  sequences: number;
}

/** Where each model provider is and its key (keys stay in the worker: never in history). */
export interface ModelsConfig {
  openai: { apiKey?: string; baseUrl: string; baseUrlConfigured: boolean };
  anthropic: { apiKey?: string; baseUrl: string };
  local: LocalModelConfig;
}
