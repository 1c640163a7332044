/**
 * What the model providers' tests share: fake API keys (never real: the secret canaries look for
 * them in logs and history), one tool and one question, as the recorded API transcripts of
 * tests/fixtures/streaming were made with them.
 */
import type { ChatMessage } from '../../shared/conversation';
import type { ModelToolSpec } from '../../shared/model';

export const OPENAI_KEY = 'sk-test-openai-0123456789abcdef';
export const ANTHROPIC_KEY = 'sk-ant-api03-test-0123456789abcdef';

export const WEATHER_TOOL: ModelToolSpec = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
};

export const QUESTION: ChatMessage[] = [
  { role: 'system', content: 'You are a weather assistant.' },
  { role: 'user', content: 'Weather in Paris and Rome?' },
];
