/**
 * The llama.cpp runtime (node-llama-cpp, CPU build) as the worker process holds it: the runtime is
 * started once, each GGUF file is loaded once and keeps one context whose sequences form a pool, and
 * grammars are built once per tool set. Model calls borrow a sequence, generate, and give it back;
 * a sequence keeps its evaluated tokens, so the next call sharing the prompt's opening (system
 * prompt, tool cards, earlier turns of the run) evaluates only what is new.
 */
import fs from 'node:fs';
import type * as LlamaCpp from 'node-llama-cpp';
import type { GrammarSchema } from './decision';
import { SequencePool } from './pool';

/** How the runtime runs; the worker's configuration decides. */
export interface LocalRuntimeOptions {
  /** CPU threads for evaluation. Leaving this to the runtime on a small machine is ~150× slower. */
  threads: number;
  /** Tokens one sequence can hold: prompt, tool cards, the run's turns and the answer. */
  contextSize: number;
  /** Sequences in the pool: model calls the worker generates at once; more calls wait their turn. */
  sequences: number;
}

/** A loaded model with its sequence pool. */
export interface LoadedLocalModel {
  path: string;
  model: LlamaCpp.LlamaModel;
  context: LlamaCpp.LlamaContext;
  pool: SequencePool<LlamaCpp.LlamaChat>;
  /** Wall-clock time the load took, in ms. */
  loadMs: number;
  /**
   * Whether the model was trained to call tools (its chat template has tool calls). Such a model's
   * own preference among tool names is kept; the others' is calibrated (see choose.ts).
   */
  toolTrained: boolean;
  /** Values derived from the model and kept with it (the tool-choice priors), by key. */
  memo: Map<string, unknown>;
  /** A grammar for a decision schema, built once per distinct schema. */
  grammar(schema: GrammarSchema): Promise<LlamaCpp.LlamaGrammar>;
}

/** Grammars kept per model; tool sets rarely vary, so a small bound is plenty. */
const GRAMMAR_CACHE_LIMIT = 32;

/**
 * node-llama-cpp is an ES module with top-level await, which `require` cannot load, and the
 * CommonJS output of tsc and of the test transform would turn a plain `import()` into `require`.
 * A function built at run time keeps the import native in every one of them.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- a fixed string: the native import() itself
const importNative = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<unknown>;

let runtimeModule: Promise<typeof LlamaCpp> | undefined;
/** The node-llama-cpp module, imported once per process. */
export function llamaCpp(): Promise<typeof LlamaCpp> {
  runtimeModule ??= importNative('node-llama-cpp') as Promise<typeof LlamaCpp>;
  return runtimeModule;
}

const runtimes = new Map<number, Promise<LlamaCpp.Llama>>();
const models = new Map<string, Promise<LoadedLocalModel>>();

/** The runtime for a thread count: CPU only, never building or downloading anything. */
function runtime(threads: number): Promise<LlamaCpp.Llama> {
  let llama = runtimes.get(threads);
  if (!llama) {
    llama = llamaCpp().then(({ getLlama, LlamaLogLevel }) =>
      getLlama({
        gpu: false,
        build: 'never',
        usePrebuiltBinaries: true,
        logLevel: LlamaLogLevel.error,
        maxThreads: threads,
      }),
    );
    llama.catch(() => runtimes.delete(threads));
    runtimes.set(threads, llama);
  }
  return llama;
}

/** Why a model file cannot be used; the provider turns it into a message naming the fix. */
export class LocalModelMissing extends Error {
  override readonly name = 'LocalModelMissing';
}

/**
 * The model at `path`, loaded on first use and shared by every later call with the same options.
 * A failed load is forgotten, so fixing the file and calling again works without a restart.
 */
export function loadLocalModel(path: string, options: LocalRuntimeOptions): Promise<LoadedLocalModel> {
  const key = JSON.stringify([path, options.threads, options.contextSize, options.sequences]);
  let loaded = models.get(key);
  if (!loaded) {
    loaded = load(path, options);
    loaded.catch(() => models.delete(key));
    models.set(key, loaded);
  }
  return loaded;
}

async function load(path: string, options: LocalRuntimeOptions): Promise<LoadedLocalModel> {
  if (!fs.existsSync(path)) throw new LocalModelMissing(`no model file at ${path}`);
  const started = performance.now();
  const { LlamaChat } = await llamaCpp();
  const llama = await runtime(options.threads);
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({
    contextSize: options.contextSize,
    sequences: options.sequences,
    threads: options.threads,
  });
  const chats: LlamaCpp.LlamaChat[] = [];
  for (let i = 0; i < options.sequences; i++) {
    chats.push(new LlamaChat({ contextSequence: context.getSequence() }));
  }
  const grammars = new Map<string, Promise<LlamaCpp.LlamaGrammar>>();
  return {
    path,
    model,
    context,
    pool: new SequencePool(chats),
    loadMs: performance.now() - started,
    toolTrained: toolTrained(model),
    memo: new Map(),
    grammar(schema) {
      const key = JSON.stringify(schema);
      let grammar = grammars.get(key);
      if (!grammar) {
        if (grammars.size >= GRAMMAR_CACHE_LIMIT) grammars.delete(grammars.keys().next().value as string);
        const created: Promise<LlamaCpp.LlamaGrammar> =
          llama.createGrammarForJsonSchema<LlamaCpp.GbnfJsonSchema>(schema as LlamaCpp.GbnfJsonSchema);
        created.catch(() => grammars.delete(key));
        grammars.set(key, created);
        grammar = created;
      }
      return grammar;
    },
  };
}

/** Whether the model's chat template has tool calls and tool results (Qwen2.5's has, SmolLM2's not). */
export function toolTrained(model: LlamaCpp.LlamaModel): boolean {
  const template = (model.fileInfo.metadata as { tokenizer?: { chat_template?: unknown } }).tokenizer
    ?.chat_template;
  return (
    typeof template === 'string' &&
    /tool_call/.test(template) &&
    /tool_response|role == "tool"|'tool'/.test(template)
  );
}

/** Frees every loaded model and runtime (tests and benchmarks; a worker keeps them until it exits). */
export async function disposeLocalModels(): Promise<void> {
  const loaded = [...models.values()];
  const llamas = [...runtimes.values()];
  models.clear();
  runtimes.clear();
  for (const m of loaded) await m.then((x) => x.model.dispose()).catch(() => undefined);
  for (const l of llamas) await l.then((x) => x.dispose()).catch(() => undefined);
}
