/**
 * The local provider on the real llama.cpp runtime, with a tiny random-weight GGUF written at test
 * time: loading once, the chat format from the file's template, grammar-constrained output that is
 * always a valid call or answer, threads, cancellation, and the errors that name their fix. The
 * model talks gibberish, so these tests check the plumbing, never the quality (see the real-model
 * test and bench/local-model.ts for that).
 */
import { FileContentStore } from '../../activities/content/file-store';
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createModelActivities, modelToolSpecs } from '../../activities/model';
import { buildChat } from '../../activities/model/local/prompt';
import type { LocalProviderOptions } from '../../activities/model/local/provider';
import { createLocalProvider } from '../../activities/model/local/provider';
import { disposeLocalModels, loadLocalModel } from '../../activities/model/local/runtime';
import { LOCAL_TOOL_CARDS } from '../../prompts/local-model';
import type { ChatMessage } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice } from '../../shared/model';
import { findTool } from '../../shared/tools/registry';
import { tempDir, testConfig } from '../../testkit/temporal';
import { writeTinyGguf } from '../../testkit/tiny-gguf';

const dir = tempDir('local-model');
const tiny = path.join(dir, 'tiny.gguf');
const RUNTIME = { threads: 1, contextSize: 2048, sequences: 2 };
const OPTIONS: LocalProviderOptions = {
  ...RUNTIME,
  modelPath: tiny,
  modelsDir: dir,
  setupCommand: 'npm run setup',
};
const MODEL: Extract<ModelChoice, { provider: 'local' }> = { provider: 'local', maxTokens: 512 };
const tools = modelToolSpecs(['get_time', 'calculator', 'notify_user']);
const task: ChatMessage[] = [{ role: 'user', content: 'What is 6*7?' }];

beforeAll(() => {
  expect(writeTinyGguf(tiny)).toBeLessThan(1_000_000);
});
afterAll(async () => {
  await disposeLocalModels();
  fs.rmSync(dir, { recursive: true, force: true });
});

function validArgs(call: CallModelOutput['toolCalls'][number]): boolean {
  const def = findTool(call.name);
  if (!def) return false;
  return def.checkArgs ? def.checkArgs(call.arguments).ok : def.inputs.safeParse(call.arguments).success;
}

test('loads the file once per process, with the configured threads and a pool of sequences', async () => {
  const first = await loadLocalModel(tiny, RUNTIME);
  expect(await loadLocalModel(tiny, RUNTIME)).toBe(first);
  expect(first.context.currentThreads).toBe(1);
  expect(first.pool.available).toBe(2);
  expect(first.context.contextSize).toBeGreaterThanOrEqual(2048);
  const two = await loadLocalModel(tiny, { ...RUNTIME, threads: 2, sequences: 1 });
  expect(two).not.toBe(first);
  expect(two.context.currentThreads).toBe(2);
});

test("speaks the chat format of the file's own template", async () => {
  const { pool } = await loadLocalModel(tiny, RUNTIME);
  await pool.use(async (chat) => {
    expect(chat.chatWrapper.wrapperName).toBe('ChatML');
    const { contextText } = chat.chatWrapper.generateContextState({
      chatHistory: [...buildChat(task, tools, LOCAL_TOOL_CARDS), { type: 'model', response: [] }],
    });
    const text = contextText.toString();
    expect(text).toMatch(/^BOS<\|im_start\|>system\nYou are an assistant/);
    expect(text.endsWith('<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });
});

test('a model trained on tool calls keeps its own choice of tool; another one is calibrated', async () => {
  // In a folder of its own, so the models folder's listing stays as the other tests expect it.
  fs.mkdirSync(path.join(dir, 'trained'));
  const trained = path.join(dir, 'trained', 'tiny-tools.gguf');
  writeTinyGguf(trained, { toolCalls: true });
  const plain = await loadLocalModel(tiny, RUNTIME);
  const toolModel = await loadLocalModel(trained, RUNTIME);
  expect(plain.toolTrained).toBe(false);
  expect(toolModel.toolTrained).toBe(true);
  const first = await createLocalProvider({ ...OPTIONS, modelPath: trained })({
    model: MODEL,
    messages: task,
    tools,
  });
  expect(first.finishReason).toBe('tool_calls');
  expect(validArgs(first.toolCalls[0]!)).toBe(true);
  // No priors are computed for the trained model's choice; the plain model's are, once per tool set.
  expect(toolModel.memo.size).toBe(0);
  await createLocalProvider(OPTIONS)({ model: MODEL, messages: task, tools });
  expect(plain.memo.size).toBe(1);
});

test('every output is a valid call of an offered tool, or an answer once results are in', async () => {
  const provider = createLocalProvider(OPTIONS);
  const first = await provider({ model: MODEL, messages: task, tools });
  // The first decision of a run is a call; the grammar admits only the offered tools and their arguments.
  expect(first.finishReason).toBe('tool_calls');
  expect(first.toolCalls).toHaveLength(1);
  const [call] = first.toolCalls;
  expect(tools.map((t) => t.name)).toContain(call!.name);
  expect(validArgs(call!)).toBe(true);
  expect(first.usage.outputTokens).toBeGreaterThan(0);
  expect(first.usage.inputTokens).toBeGreaterThan(100);

  const later = await provider({
    model: MODEL,
    tools,
    messages: [
      ...task,
      { role: 'assistant', content: null, toolCalls: [call!] },
      { role: 'tool', toolCallId: call!.id, name: call!.name, content: '42' },
    ],
  });
  if (later.toolCalls.length === 0) {
    // An answer, complete or cut at maxTokens (random weights may write the longest string allowed).
    expect(['stop', 'length']).toContain(later.finishReason);
    expect(typeof later.content).toBe('string');
  } else {
    // A later call is one of the tools that have not answered yet, with valid arguments.
    expect(later.toolCalls[0]!.name).not.toBe(call!.name);
    expect(validArgs(later.toolCalls[0]!)).toBe(true);
  }
});

test('the same conversation gives the same decision (temperature 0, fixed seed)', async () => {
  const provider = createLocalProvider(OPTIONS);
  const strip = (o: CallModelOutput) => ({
    ...o,
    toolCalls: o.toolCalls.map(({ name, arguments: a }) => ({ name, a })),
  });
  const a = await provider({ model: MODEL, messages: task, tools });
  const b = await provider({ model: MODEL, messages: task, tools });
  expect(strip(b)).toEqual(strip(a));
});

test('cancellation stops generation and gives the sequence back', async () => {
  const provider = createLocalProvider(OPTIONS);
  // Only the answer is open after a result with every tool called: a long free string.
  const answerOnly: ChatMessage[] = [
    ...task,
    {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'c', name: 'calculator', arguments: { expression: '6*7' } }],
    },
    { role: 'tool', toolCallId: 'c', name: 'calculator', content: '42' },
  ];
  const req = { model: { ...MODEL, maxTokens: 2048 }, messages: answerOnly, tools: tools.slice(1, 2) };
  const t0 = performance.now();
  const full = await provider(req);
  const fullMs = performance.now() - t0;
  expect(full.usage.outputTokens).toBeGreaterThan(20);

  const controller = new AbortController();
  const reason = new Error('activity cancelled');
  setTimeout(() => controller.abort(reason), Math.min(30, fullMs / 4));
  const t1 = performance.now();
  await expect(provider({ ...req, signal: controller.signal })).rejects.toBe(reason);
  expect(performance.now() - t1).toBeLessThan(fullMs);
  expect((await loadLocalModel(tiny, RUNTIME)).pool.available).toBe(RUNTIME.sequences);
});

test('the event loop stays free while the model generates, so the activity keeps heartbeating', async () => {
  const provider = createLocalProvider(OPTIONS);
  // A blocked loop would show one gap as long as the whole generation; a busy machine only
  // spaces the ticks out, so the longest gap is what tells the two apart.
  let ticks = 0;
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    ticks += 1;
  }, 5);
  const t0 = performance.now();
  await provider({ model: MODEL, messages: task, tools });
  const ms = performance.now() - t0;
  clearInterval(timer);
  longestGap = Math.max(longestGap, performance.now() - last);
  expect(ticks).toBeGreaterThanOrEqual(3);
  expect(longestGap).toBeLessThan(ms / 2);
});

test('a missing model names the setup command; a named one lists what the folder holds', async () => {
  const missing = createLocalProvider({ ...OPTIONS, modelPath: path.join(dir, 'absent.gguf') });
  const error = await missing({ model: MODEL, messages: task, tools }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect(error).toMatchObject({ type: 'ModelNotConfigured', nonRetryable: true });
  expect((error as Error).message).toContain('absent.gguf does not exist. Run `npm run setup`');

  const named = await missing({ model: { ...MODEL, model: 'other' }, messages: task, tools }).catch(
    (e: unknown) => e,
  );
  expect((named as Error).message).toContain('"other" is not in the models folder');
  expect((named as Error).message).toContain('available: tiny.gguf');

  const configured = createLocalProvider({
    ...OPTIONS,
    modelPath: '/nowhere/x.gguf',
    modelPathConfigured: true,
  });
  const wrongPath = await configured({ model: MODEL, messages: task, tools }).catch((e: unknown) => e);
  expect((wrongPath as Error).message).toContain('DURABLE_AGENT_LOCAL_MODEL names /nowhere/x.gguf');
});

test('a file that is not a model fails clearly, and works once it is replaced', async () => {
  const file = path.join(dir, 'broken.gguf');
  fs.writeFileSync(file, 'not a model');
  const provider = createLocalProvider({ ...OPTIONS, modelPath: file });
  const error = await provider({ model: MODEL, messages: task, tools }).catch((e: unknown) => e);
  expect(error).toMatchObject({ type: 'ModelNotConfigured', nonRetryable: true });
  expect((error as Error).message).toMatch(
    /broken\.gguf could not be loaded .*Check that it is a GGUF model file/,
  );
  fs.copyFileSync(tiny, file);
  await expect(provider({ model: MODEL, messages: task, tools })).resolves.toMatchObject({
    finishReason: 'tool_calls',
  });
});

test('the callModel activity serves the local provider from the worker config', async () => {
  const base = testConfig();
  const { callModel } = createModelActivities({
    config: {
      ...base,
      models: { ...base.models, local: { ...base.models.local, ...RUNTIME, modelPath: tiny } },
    },
    store: new FileContentStore(tempDir('content')),
  });
  const out: CallModelOutput = await new MockActivityEnvironment().run(callModel, {
    model: { provider: 'local' },
    messages: task,
    tools: ['calculator', 'get_time'],
    step: 1,
  } as Parameters<typeof callModel>[0]);
  expect(out.toolCalls).toHaveLength(1);
  expect(['calculator', 'get_time']).toContain(out.toolCalls[0]!.name);
});
