import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createScriptedProvider, loadScript, renderScriptText } from '../../activities/model/scripted';
import type { ChatMessage } from '../../shared/conversation';

const scripts = fs.mkdtempSync(path.join(os.tmpdir(), 'scripts-'));
fs.writeFileSync(
  path.join(scripts, 'two.json'),
  JSON.stringify({
    turns: [
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] },
      { content: 'r={{last_tool_results}}' },
    ],
  }),
);
fs.writeFileSync(path.join(scripts, 'broken.json'), JSON.stringify({ turns: [{ toolCalls: [] }] }));

test('the turn is chosen by counting assistant messages, so a retry or replay gives the same turn', async () => {
  const model = createScriptedProvider(scripts);
  const choice = { provider: 'scripted' as const, script: 'two' };
  const first = await model({ model: choice, messages: [{ role: 'user', content: 'go' }], tools: [] });
  expect(first.toolCalls).toEqual([{ id: 'call_1_1', name: 'calculator', arguments: { expression: '1+1' } }]);
  expect(first.finishReason).toBe('tool_calls');
  const again = await model({ model: choice, messages: [{ role: 'user', content: 'go' }], tools: [] });
  expect(again).toEqual(first);
  const messages: ChatMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: first.toolCalls },
    { role: 'tool', toolCallId: 'call_1_1', name: 'calculator', content: '2' },
  ];
  const second = await model({ model: choice, messages, tools: [] });
  expect(second).toMatchObject({ content: 'r=2', toolCalls: [], finishReason: 'stop' });
  expect(second.usage.inputTokens).toBeGreaterThan(0);
  messages.push({ role: 'assistant', content: 'r=2' });
  await expect(model({ model: choice, messages, tools: [] })).rejects.toThrow(
    /has 2 turns and the run asked for turn 3/,
  );
});

test('script files are validated and names cannot escape the folder', async () => {
  await expect(loadScript(scripts, '../etc/passwd')).rejects.toThrow(/not a plain file name/);
  await expect(loadScript(scripts, 'nope')).rejects.toThrow(
    /Script "nope" not found .*available: broken, two/,
  );
  await expect(loadScript(scripts, 'broken')).rejects.toThrow(/is invalid: turns\.0/);
});

test('templates quote tool results by id and leave unknown ids visible', () => {
  const messages: ChatMessage[] = [
    { role: 'tool', toolCallId: 'a', name: 'x', content: 'A' },
    { role: 'assistant', content: null },
    { role: 'tool', toolCallId: 'b', name: 'x', content: 'B' },
  ];
  expect(renderScriptText('{{result:a}} {{result:b}} {{result:zz}} [{{last_tool_results}}]', messages)).toBe(
    'A B {{result:zz}} [B]',
  );
});
