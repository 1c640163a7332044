import type { ModelChoice } from '../shared/model';
import { LOCAL_DEFAULT_MAX_TOKENS } from '../shared/model';

/**
 * Parses `--model` values: `scripted:<script>`, `openai:<model>`, `anthropic:<model>`, or `local`
 * (the worker's local model) and `local:<file>` (a GGUF file in the worker's models folder).
 * Throws a message listing the accepted forms.
 */
export function parseModelSpec(spec: string): ModelChoice {
  const i = spec.indexOf(':');
  const provider = i < 0 ? spec : spec.slice(0, i);
  const name = i < 0 ? '' : spec.slice(i + 1);
  if (provider === 'local') {
    return { provider: 'local', ...(name ? { model: name } : {}), maxTokens: LOCAL_DEFAULT_MAX_TOKENS };
  }
  if (!name) {
    throw new Error(
      `--model "${spec}": use scripted:<script>, openai:<model>, anthropic:<model>, local or local:<file>`,
    );
  }
  switch (provider) {
    case 'scripted':
      return { provider: 'scripted', script: name };
    case 'openai':
      return { provider: 'openai', model: name };
    case 'anthropic':
      return { provider: 'anthropic', model: name, maxTokens: 1024 };
    default:
      throw new Error(
        `--model "${spec}": unknown provider "${provider}"; use scripted, openai, anthropic or local`,
      );
  }
}

/** A script file of the scripted model, and the tools its turns call (checked before a run starts). */
export { loadScriptFile, scriptTools } from '../activities/model/scripted';
