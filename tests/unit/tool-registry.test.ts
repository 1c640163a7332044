import { createActivities } from '../../activities';
import { contentStoreFor } from '../../activities/content/config';
import { modelToolSpecs } from '../../activities/model';
import { parseModelSpec } from '../../client/model-spec';
import { AgentInputSchema } from '../../shared/agent';
import { defineTool } from '../../shared/tools/define';
import { formatZodIssues } from '../../shared/zod-issues';
import { TOOL_REGISTRY } from '../../shared/tools/registry';
import { loadWorkerConfig } from '../../workers/config';
import { z } from 'zod';

test('every registered tool follows the conventions and has an activity named after it', () => {
  const config = loadWorkerConfig({});
  const activities = createActivities({ config, store: contentStoreFor(config.contentStore) });
  for (const def of Object.values(TOOL_REGISTRY)) {
    expect(def.name).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(def.sign).toMatch(/^[a-z]$/);
    expect(def.description.length).toBeGreaterThan(10);
    expect(def.description_zh).toMatch(/[\u4e00-\u9fff]/);
    // ask_user has no body on any worker: the workflow waits for the answer itself.
    if (def.category === 'human') expect(activities[def.name]).toBeUndefined();
    else expect(typeof activities[def.name]).toBe('function');
  }
});

test('the model sees JSON Schema generated from the same zod schema the workflow validates with', () => {
  const [calc] = modelToolSpecs(['calculator']);
  expect(calc?.parameters).toMatchObject({
    type: 'object',
    properties: { expression: { type: 'string', minLength: 1, maxLength: 500 } },
    required: ['expression'],
  });
  expect(calc?.parameters).not.toHaveProperty('$schema');
  const [notify] = modelToolSpecs(['notify_user']);
  // notify_user's instructions come from prompts/notify-user.md.
  expect(notify?.description).toContain('priority values: 20 high urgency, 10 normal urgency; omit for high');
  expect(() => modelToolSpecs(['nope'])).toThrow(/Tool "nope" is not registered/);
});

test('defineTool refuses tools that break the conventions', () => {
  const base = {
    name: 'ok_tool',
    description: 'd',
    description_zh: '描述',
    category: 'utility' as const,
    sign: 'o',
    inputs: z.object({}),
    output: 'x',
    activity: { startToCloseTimeout: '1s' as const },
  };
  expect(() => defineTool({ ...base, name: 'Bad-Name' })).toThrow(/snake_case/);
  expect(() => defineTool({ ...base, sign: 'ab' })).toThrow(/one lower-case letter/);
  expect(() => defineTool({ ...base, description_zh: ' ' })).toThrow(/Chinese description/);
});

test('agent input validation names every bad field', () => {
  const r = AgentInputSchema.safeParse({
    task: 'x',
    model: { provider: 'scripted' },
    policy: { maxParallelTools: 0, approvalTimeout: 'soon' },
    extra: 1,
  });
  expect(r.success).toBe(false);
  const msg = formatZodIssues(r.error!);
  expect(msg).toMatch(/model: give exactly one of "script" or "turns"/);
  expect(msg).toMatch(/policy\.maxParallelTools/);
  expect(msg).toMatch(/policy\.approvalTimeout: use milliseconds or text such as "30 seconds"/);
  expect(msg).toMatch(/Unrecognized key: "extra"/);
});

test('policy.toolTimeouts: built-in tools only, at least 1 second, a heartbeat only where the tool beats on a clock', () => {
  const parse = (toolTimeouts: unknown) =>
    AgentInputSchema.safeParse({
      task: 'x',
      model: { provider: 'scripted', script: 'demo' },
      policy: { toolTimeouts },
    });
  const ok = parse({
    sql_query: { heartbeatTimeout: '5 seconds' },
    web_search: { startToCloseTimeout: 90_000 },
  });
  expect(ok.success).toBe(true);
  // Kept as milliseconds: the workflow hands them to Temporal as they are.
  expect(ok.data?.policy.toolTimeouts).toEqual({
    sql_query: { heartbeatTimeout: 5000 },
    web_search: { startToCloseTimeout: 90_000 },
  });
  expect(parse(undefined).data?.policy.toolTimeouts).toBeUndefined();
  const problems = (toolTimeouts: unknown) => {
    const r = parse(toolTimeouts);
    expect(r.success).toBe(false);
    return formatZodIssues(r.error!);
  };
  expect(problems({ 'mcp:files/read': { startToCloseTimeout: '1m' } })).toMatch(
    /policy\.toolTimeouts\.mcp:files\/read: "mcp:files\/read" is not a built-in tool; timeouts can be set for get_time, /,
  );
  expect(problems({ sql_query: { heartbeatTimeout: '500ms' } })).toMatch(
    /policy\.toolTimeouts\.sql_query\.heartbeatTimeout: must be at least 1 second/,
  );
  expect(problems({ calculator: { heartbeatTimeout: '5s' } })).toMatch(
    /calculator does not heartbeat: only its startToCloseTimeout can be set/,
  );
  expect(problems({ fetch_email: { heartbeatTimeout: '5s' } })).toMatch(
    /fetch_email heartbeats as it makes progress, not on a clock/,
  );
  // The tool's own heartbeat timeout (15 s) against the run's start-to-close timeout.
  expect(problems({ sql_query: { startToCloseTimeout: '10 seconds' } })).toMatch(
    /sql_query: the heartbeatTimeout \(15 seconds\) must be shorter than the startToCloseTimeout \(10000\)/,
  );
  expect(problems({ send_email: { heartbeatTimeout: 'soon' } })).toMatch(
    /send_email\.heartbeatTimeout: use milliseconds or text such as "30 seconds"/,
  );
  expect(problems({ wait: { retries: 3 } })).toMatch(/Unrecognized key: "retries"/);
});

test('--model values parse into model choices, with a clear error otherwise', () => {
  expect(parseModelSpec('scripted:demo')).toEqual({ provider: 'scripted', script: 'demo' });
  expect(parseModelSpec('openai:gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
  expect(parseModelSpec('anthropic:claude-sonnet-4-5')).toMatchObject({
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
  });
  expect(() => parseModelSpec('ollama:llama3')).toThrow(/unknown provider "ollama"/);
  expect(() => parseModelSpec('openai:')).toThrow(/use scripted:<script>/);
});

test('only pure, quick tools may run as local activities; tools with side effects never do', () => {
  const local = Object.values(TOOL_REGISTRY)
    .filter((def) => def.local === true)
    .map((def) => def.name)
    .sort();
  expect(local).toEqual(['calculator', 'get_time', 'knowledge_base_search', 'sql_schema']);
  for (const name of ['send_email', 'notify_user', 'sql_query', 'wait', 'fetch_email', 'web_search'])
    expect(TOOL_REGISTRY[name]?.local).not.toBe(true);
  for (const def of Object.values(TOOL_REGISTRY))
    if (def.category === 'email' || def.category === 'notification') expect(def.local).not.toBe(true);
});
