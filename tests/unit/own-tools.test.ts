/**
 * Defining tools of one's own: every mistake in a definition, a set of tools or a tools module is
 * refused when it loads, with an error naming the tool and what to fix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolDefinitionError, checkToolSet, defineTool } from '../../activities/own-tools/define';
import { ownToolDefinition } from '../../shared/tools/own';
import { checkToolArgs } from '../../shared/tools/define';
import { loadToolsModule } from '../../workers/tools-module';
import { DurableAgentPlugin } from '../../workers/plugin';
import { testConfig } from '../../testkit/temporal';
import { PROJECT_ROOT } from '../../shared/project-root';

const ok = { description: 'Looks up an order.', input: z.object({ id: z.string() }), run: () => 'ok' };

test('a definition becomes a spec: JSON Schema of the arguments, activity options, declarations', () => {
  const tool = defineTool({
    ...ok,
    name: 'lookup_order',
    timeout: '2 minutes',
    heartbeatTimeout: '10s',
    maxAttempts: 5,
    approval: 'always',
    untrusted: true,
    local: true,
    category: 'database',
    sign: 'o',
  });
  expect(tool.spec).toEqual({
    name: 'lookup_order',
    description: 'Looks up an order.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
    },
    category: 'database',
    sign: 'o',
    activity: {
      startToCloseTimeout: 120_000,
      heartbeatTimeout: 10_000,
      maximumAttempts: 5,
      nonRetryableErrorTypes: ['ToolResultTooLarge', 'ToolNotRegistered'],
    },
    local: true,
    approval: 'always',
    untrusted: true,
  });
  // What the workflow checks calls with: built from the spec alone.
  const def = ownToolDefinition(tool.spec);
  expect(checkToolArgs(def, { id: 'A-1' })).toEqual({ success: true, data: { id: 'A-1' } });
  expect(checkToolArgs(def, { id: 1 })).toEqual({
    success: false,
    error: expect.stringMatching(/^Invalid arguments for lookup_order: id: expected string/) as unknown,
  });
});

test.each([
  [{ name: 'Lookup Order' }, /Tool name "Lookup Order" is not valid: use snake_case/],
  [{ name: 'calculator' }, /Tool "calculator" has the name of a built-in tool/],
  [{ name: 'x', description: ' ' }, /Tool "x" needs a description/],
  [
    { name: 'x', input: z.string() },
    /Tool "x": input must be an object schema \(z\.object\(\{\.\.\.\}\)\), not string/,
  ],
  [
    { name: 'x', input: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) },
    /Tool "x": input must be an object schema/,
  ],
  [{ name: 'x', input: { id: 'string' } }, /Tool "x": input must be a zod 4 object schema/],
  [
    { name: 'x', input: z.object({ when: z.date() }) },
    /Tool "x": its input schema cannot be written as JSON Schema/,
  ],
  [{ name: 'x', run: undefined }, /Tool "x" needs a run\(args, ctx\) function/],
  [{ name: 'x', timeout: 'soon' }, /Tool "x": timeout "soon" is not a duration/],
  [{ name: 'x', timeout: '10s', heartbeatTimeout: '10s' }, /heartbeatTimeout must be shorter than timeout/],
  [{ name: 'x', maxAttempts: 0 }, /maxAttempts must be a whole number from 1 to 100/],
  [{ name: 'x', sign: 'XY' }, /sign must be one lower-case letter/],
  [{ name: 'x', description: 'd'.repeat(5000) }, /the description has 5000 characters, more than 4000/],
])('a bad definition is refused naming the tool: %j', (override, message) => {
  expect(() => defineTool({ ...ok, ...override } as never)).toThrow(ToolDefinitionError);
  expect(() => defineTool({ ...ok, ...override } as never)).toThrow(message);
});

test('a set of tools with one name twice, or with something that is not a tool, is refused naming them', () => {
  const a = defineTool({ ...ok, name: 'a' });
  expect(() => checkToolSet([a, defineTool({ ...ok, name: 'a' })])).toThrow(
    /tools\[0\] and tools\[1\] are both named "a"/,
  );
  expect(() => checkToolSet([a, { name: 'b' }])).toThrow(/tools\[1\] is not a tool made by defineTool\(\)/);
  // The plugin checks the same when it is made.
  expect(() => new DurableAgentPlugin({ config: testConfig(), tools: [a, a] })).toThrow(/both named "a"/);
});

test('a tools module: its exported tools load; a missing file, a failing module or one with no tools is named', () => {
  // Inside the checkout, so the module's own imports (zod) resolve as in a user's project.
  fs.mkdirSync(path.join(PROJECT_ROOT, '.data'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(PROJECT_ROOT, '.data', 'tools-module-'));
  const define = path.resolve(__dirname, '../../activities/own-tools/define');
  const write = (name: string, body: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, body);
    return file;
  };
  const good = write(
    'tools.ts',
    `import { z } from 'zod';\nimport { defineTool } from ${JSON.stringify(define)};\n` +
      `export const a = defineTool({ name: 'a_tool', description: 'A', input: z.object({}), run: () => 'a' });\n` +
      `export default [defineTool({ name: 'b_tool', description: 'B', input: z.object({}), run: () => 'b' }), a];\n`,
  );
  expect(loadToolsModule(good).map((t) => t.spec.name)).toEqual(['b_tool', 'a_tool']);
  expect(() => loadToolsModule(path.join(dir, 'missing.ts'))).toThrow(
    /Tools module .*missing\.ts does not exist/,
  );
  expect(() => loadToolsModule(write('broken.js', 'throw new Error("no database");'))).toThrow(
    /Tools module .*broken\.js failed to load: no database/,
  );
  expect(() => loadToolsModule(write('empty.js', 'module.exports = { x: 1 };'))).toThrow(
    /Tools module .*empty\.js exports no tools: export the results of defineTool\(\)/,
  );
  fs.rmSync(dir, { recursive: true, force: true });
});
