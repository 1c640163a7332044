import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CallModelInput, CallModelOutput, ModelToolSpec } from '../../shared/model';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../cli/binaries';
import type { ToolDefinition } from '../../shared/tools/define';
import { toolParametersJsonSchema } from '../../shared/tools/define';
import { findTool } from '../../shared/tools/registry';
import type { WorkerConfig } from '../../workers/config';
import type { ModelActivities } from '../types';
import { createAnthropicProvider } from './anthropic';
import { createLocalProvider } from './local/provider';
import { createOpenAIProvider } from './openai';
import type { ModelProvider } from './provider';
import { createScriptedProvider } from './scripted';

/** The command that installs the local model's default weights, named when they are missing. */
const LOCAL_SETUP_COMMAND = 'npm run setup';

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

/** Dependencies of the model activity; providers may be swapped in tests. */
export interface ModelActivityDeps {
  config: Pick<WorkerConfig, 'scriptsDir' | 'models'>;
  providers?: Partial<Record<CallModelInput['model']['provider'], ModelProvider>>;
}

/** Creates the `callModel` activity. Keys come from the worker's configuration only. */
export function createModelActivities({ config, providers = {} }: ModelActivityDeps): ModelActivities {
  const scripted = providers.scripted ?? (createScriptedProvider(config.scriptsDir) as ModelProvider);
  const openai = config.models.openai;
  const anthropic = config.models.anthropic;
  let local: ModelProvider | undefined;

  function provider(name: CallModelInput['model']['provider']): ModelProvider {
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
  }

  return {
    async callModel(input: CallModelInput): Promise<CallModelOutput> {
      const ctx = Context.current();
      const call = provider(input.model.provider);
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
      try {
        return await call({
          model: input.model,
          messages: input.messages,
          tools: modelToolSpecs(input.tools),
          step: input.step,
          signal: ctx.cancellationSignal,
        });
      } finally {
        clearInterval(beat);
      }
    },
  };
}
