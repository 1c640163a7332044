import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { jsonBytes } from '../../shared/temporal-limits';
import type { WindowPlan } from '../../shared/context-window';
import { DEFAULT_WINDOW, estimateTokens } from '../../shared/context-window';
import type { ChatMessage } from '../../shared/conversation';
import type { CallModelInput, CallModelOutput, ModelToolSpec } from '../../shared/model';
import type { ContentRef } from '../../shared/content';
import { DEFAULT_CONTEXT_TOKENS } from '../../shared/model';
import type { ContentStore } from '../content/store';
import { appendConversation, buildWindow } from './conversation';
import { boundModelOutput } from './output-budget';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import type { ToolDefinition } from '../../shared/tools/define';
import { toolParametersJsonSchema } from '../../shared/tools/define';
import { findTool } from '../../shared/tools/registry';
import type { ActivitiesConfig } from '../config';
import type { ModelActivities } from '../types';
import { createAnthropicProvider } from './anthropic';
import { createLocalProvider } from './local/provider';
import { createOpenAIProvider } from './openai';
import type { ModelDelta, ModelProvider } from './provider';
import type { StreamChannel } from '../streaming';
import { publishCall } from '../streaming';
import { createScriptedProvider } from './scripted';

/** The command that installs the local model's default weights, named when they are missing. */
export const LOCAL_SETUP_COMMAND = 'npm run setup';

/** How often a waiting model call heartbeats, so cancellation reaches it and a dead worker is noticed. */
const HEARTBEAT_MS = 5000;

function notConfigured(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ModelNotConfigured', message, nonRetryable: true });
}

/** Specs are built once per tool and process: the registry and prompts do not change while a worker runs. */
const specCache = new Map<string, ModelToolSpec>();

/** A tool's instructions: `prompts/<tool name with dashes>.md` when there is one, else its description. */
function toolInstructions(def: ToolDefinition): string {
  const file = path.join(PROJECT_ROOT, 'prompts', `${def.name.replace(/_/g, '-')}.md`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : def.description;
}

/** Tool specs the model sees, built from the same zod schemas the workflow validates with. */
export function modelToolSpecs(names: string[]): ModelToolSpec[] {
  return names.map((name) => {
    let spec = specCache.get(name);
    if (!spec) {
      const def = findTool(name);
      if (!def) throw notConfigured(`Tool "${name}" is not registered on this worker`);
      spec = {
        name: def.name,
        description: toolInstructions(def),
        parameters: toolParametersJsonSchema(def),
      };
      specCache.set(name, spec);
    }
    return spec;
  });
}

/**
 * The MCP or own tools a run offers, from the specs their discovery stored (read once per worker,
 * then cached by the store).
 */
async function storedToolSpecs(
  store: ContentStore,
  ref: ContentRef | undefined,
  kind: 'MCP' | 'own',
): Promise<ModelToolSpec[]> {
  if (!ref) return [];
  const specs = await store.get(ref);
  if (!Array.isArray(specs))
    throw notConfigured(`The ${kind} tool specs ${ref} in the content store are not a list`);
  return specs as ModelToolSpec[];
}

/** Dependencies of the model activity; providers may be swapped in tests. */
export interface ModelActivityDeps {
  config: Pick<ActivitiesConfig, 'scriptsDir' | 'models'>;
  /** Where conversations are kept by reference. */
  store: ContentStore;
  providers?: Partial<Record<CallModelInput['model']['provider'], ModelProvider>>;
  /** Where each call publishes its answer's deltas as they come (live tokens); none when null. */
  stream?: StreamChannel | null;
}

/** Tokens kept free for the answer when the model choice sets no output limit. */
const DEFAULT_RESERVE_TOKENS = 4096;

/** Picks the provider of a model choice, creating each once; a missing key fails naming the variable. */
export function createProviderSelector({
  config,
  providers = {},
}: Pick<ModelActivityDeps, 'config' | 'providers'>): (
  name: CallModelInput['model']['provider'],
) => ModelProvider {
  const scripted = providers.scripted ?? (createScriptedProvider(config.scriptsDir) as ModelProvider);
  const openai = config.models.openai;
  const anthropic = config.models.anthropic;
  let local: ModelProvider | undefined;

  return function provider(name: CallModelInput['model']['provider']): ModelProvider {
    if (providers[name]) return providers[name];
    switch (name) {
      case 'scripted':
        return scripted;
      case 'openai':
        if (!openai.apiKey && !openai.baseUrlConfigured) {
          throw notConfigured(
            'The openai provider needs an API key: set OPENAI_API_KEY in the worker’s environment ' +
              '(or OPENAI_BASE_URL for a local server that needs no key) and restart the worker',
          );
        }
        return createOpenAIProvider({ apiKey: openai.apiKey, baseUrl: openai.baseUrl }) as ModelProvider;
      case 'anthropic':
        if (!anthropic.apiKey) {
          throw notConfigured(
            'The anthropic provider needs an API key: set ANTHROPIC_API_KEY in the worker’s environment and restart the worker',
          );
        }
        return createAnthropicProvider({
          apiKey: anthropic.apiKey,
          baseUrl: anthropic.baseUrl,
        }) as ModelProvider;
      case 'local':
        local ??= createLocalProvider({
          ...config.models.local,
          setupCommand: LOCAL_SETUP_COMMAND,
        }) as ModelProvider;
        return local;
    }
  };
}

/** What a model call sends, built from its input as the activity builds it. */
export interface ModelRequest {
  tools: ModelToolSpec[];
  messages: ChatMessage[];
  /** The conversation through this call's input: the next call's `conversation`. */
  ref: ContentRef;
  plan: WindowPlan;
}

/**
 * The tools and the window of messages a call sends: the conversation stored so far plus what the
 * input adds (stored write-once, so a retry stores nothing new), cut to the model's context.
 */
export async function prepareModelRequest(store: ContentStore, input: CallModelInput): Promise<ModelRequest> {
  const tools = [
    ...modelToolSpecs(input.tools),
    ...(await storedToolSpecs(store, input.mcpTools, 'MCP')),
    ...(await storedToolSpecs(store, input.ownTools, 'own')),
    ...(input.agentTools ?? []),
    ...(input.clientTools ?? []),
  ];
  const { ref, node } = await appendConversation(store, input);
  const model = input.model as { maxTokens?: number };
  const contextTokens = input.window?.contextTokens ?? DEFAULT_CONTEXT_TOKENS[input.model.provider];
  const { messages, plan } = await buildWindow(store, node, {
    contextTokens,
    // Room for the answer, never more than a quarter of the context.
    reserveTokens: Math.min(model.maxTokens ?? DEFAULT_RESERVE_TOKENS, Math.floor(contextTokens / 4)),
    // The output schema travels beside the tools (a response format, or a tool of its own).
    toolTokens: estimateTokens(jsonBytes(tools) + (input.output ? jsonBytes(input.output) : 0)),
    maxMessages: input.window?.maxMessages ?? DEFAULT_WINDOW.maxMessages,
  });
  return { tools, messages, ref, plan };
}

/** Creates the `callModel` activity. Keys come from the worker's configuration only. */
export function createModelActivities({
  config,
  store,
  providers = {},
  stream = null,
}: ModelActivityDeps): ModelActivities {
  const provider = createProviderSelector({ config, providers });
  return {
    async callModel(input: CallModelInput): Promise<CallModelOutput> {
      const ctx = Context.current();
      const call = provider(input.model.provider);
      const { tools, messages, ref, plan } = await prepareModelRequest(store, input);
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      // Live tokens, outside history: tagged with the run, step, call and attempt (a retry's text
      // replaces the failed attempt's). Best effort: a channel that is down loses deltas, not the call.
      const run = ctx.info.workflowExecution?.workflowId;
      const live =
        stream && run
          ? publishCall(
              stream,
              {
                run,
                step: input.step ?? 0,
                call: ctx.info.activityId,
                attempt: ctx.info.attempt,
              },
              (message) => {
                ctx.log.warn(message);
              },
            )
          : null;
      try {
        const out = await call({
          model: input.model,
          messages,
          tools,
          step: input.step,
          ...(input.output ? { output: input.output } : {}),
          signal: ctx.cancellationSignal,
          ...(live ? { onDelta: (d: ModelDelta) => live.delta(d) } : {}),
        });
        // Not awaited: the answer goes back to the workflow now; the end frame follows the deltas.
        void live?.end();
        return {
          ...boundModelOutput(out),
          conversation: ref,
          window: {
            messages: messages.length,
            elided: plan.elided,
            dropped: plan.dropped,
            tokens: plan.tokens,
          },
        };
      } finally {
        clearInterval(beat);
      }
    },
  };
}
