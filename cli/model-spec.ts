import type { ModelChoice } from '../shared/model';

/**
 * Parses `--model` values: `scripted:<script>`, `openai:<model>` or `anthropic:<model>`.
 * Throws a message listing the accepted forms.
 */
export function parseModelSpec(spec: string): ModelChoice {
  const i = spec.indexOf(':');
  const provider = i < 0 ? spec : spec.slice(0, i);
  const name = i < 0 ? '' : spec.slice(i + 1);
  if (!name) throw new Error(`--model "${spec}": use scripted:<script>, openai:<model> or anthropic:<model>`);
  switch (provider) {
    case 'scripted':
      return { provider: 'scripted', script: name };
    case 'openai':
      return { provider: 'openai', model: name };
    case 'anthropic':
      return { provider: 'anthropic', model: name, maxTokens: 1024 };
    default:
      throw new Error(`--model "${spec}": unknown provider "${provider}"; use scripted, openai or anthropic`);
  }
}
