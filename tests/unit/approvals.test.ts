/**
 * Approval policies and run budgets as pure logic: tool names checked with the valid choices, the
 * safe defaults, the rules (recipient domains, SQL writes, untrusted content), prices and budgets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentInputSchema } from '../../shared/agent';
import { loadWorkerConfig } from '../../workers/config';
import {
  approvalPolicyProblems,
  approvalReason,
  isUntrustedSource,
  mergeApprovalPolicies,
  recipientsOf,
  sqlMayWrite,
  summarizeArgs,
  toolNameProblems,
} from '../../shared/approvals';
import {
  runLimitsToWarn,
  costOf,
  describeRunLimit,
  exhaustedRunLimit,
  priceFor,
} from '../../shared/run-limits';
import { formatZodIssues } from '../../shared/zod-issues';

const model = { provider: 'scripted' as const, turns: [{ content: 'x' }] };

function inputProblems(input: Record<string, unknown>): string {
  const r = AgentInputSchema.safeParse({ task: 't', model, ...input });
  return r.success ? '' : formatZodIssues(r.error);
}

test('approval tool names: unknown and wrongly cased names are refused with the valid names', () => {
  const msg = inputProblems({
    tools: ['send_email'],
    policy: { requireApproval: ['send_emial', 'Send_Email'] },
  });
  expect(msg).toMatch(
    /policy\.requireApproval: unknown tool "send_emial"; valid tools: get_time, calculator,/,
  );
  expect(msg).toMatch(/unknown tool "Send_Email" \(did you mean "send_email"\? names are case-sensitive\)/);
  expect(toolNameProblems(['send_email'])).toEqual([]);
});

test('a policy naming a tool that is not enabled for the run is an error', () => {
  const msg = inputProblems({
    tools: ['calculator'],
    policy: { requireApproval: ['send_email'], approvals: { tools: { sql_query: 'always' } } },
  });
  expect(msg).toMatch(
    /policy\.requireApproval: tool "send_email" is not enabled for this run; enabled tools: calculator/,
  );
  expect(msg).toMatch(/policy\.approvals\.tools\.sql_query: tool "sql_query" is not enabled/);
});

test('bad rules are refused with the valid choices', () => {
  expect(
    inputProblems({ tools: ['send_email'], policy: { approvals: { tools: { send_email: 'sometimes' } } } }),
  ).toMatch(/policy\.approvals\.tools\.send_email: use "always", "never" or rules such as/);
  const msg = inputProblems({
    tools: ['calculator', 'send_email'],
    policy: {
      approvals: {
        tools: { calculator: { allowedDomains: ['example.com'] }, send_email: {} },
        untrustedTools: ['fetch_mail'],
      },
    },
  });
  expect(msg).toMatch(/policy\.approvals\.tools\.calculator: allowedDomains applies to send_email only/);
  expect(msg).toMatch(/policy\.approvals\.tools\.send_email: give at least one rule/);
  expect(msg).toMatch(/policy\.approvals\.untrustedTools: unknown tool "fetch_mail"/);
  expect(
    inputProblems({
      tools: ['send_email'],
      policy: { approvals: { tools: { send_email: { allowedDomains: ['not a domain'] } } } },
    }),
  ).toMatch(/give a domain such as "example\.com"/);
});

test('safe defaults: mail always asks, SQL asks for writes, other tools run', () => {
  const policy = mergeApprovalPolicies(undefined, undefined);
  const clean = { untrusted: null };
  expect(approvalReason(policy, 'send_email', { to: 'a@example.com' }, clean)).toMatch(/every email/);
  expect(approvalReason(policy, 'sql_query', { sql: 'SELECT 1' }, clean)).toBeNull();
  expect(approvalReason(policy, 'sql_query', { sql: 'DELETE FROM t WHERE id = 1' }, clean)).toMatch(
    /may write/,
  );
  expect(approvalReason(policy, 'calculator', { expression: '1' }, clean)).toBeNull();
});

test('untrusted content makes side-effecting calls ask, even where a domain rule would allow them', () => {
  const policy = mergeApprovalPolicies(
    { tools: { send_email: { allowedDomains: ['example.com'] } } },
    undefined,
  );
  expect(approvalReason(policy, 'send_email', { to: ['ann@example.com'] }, { untrusted: null })).toBeNull();
  expect(
    approvalReason(
      policy,
      'send_email',
      { to: ['ann@example.com'] },
      { untrusted: 'fetch_email result at step 1' },
    ),
  ).toMatch(/untrusted content is in the conversation \(fetch_email result at step 1\)/);
  // Reads stay reads after untrusted content; writes ask.
  expect(approvalReason(policy, 'sql_query', { sql: 'SELECT 1' }, { untrusted: 'x' })).toBeNull();
  // "never" is the user's explicit choice, and per-tool `untrusted: false` turns the rule off.
  const relaxed = mergeApprovalPolicies(undefined, { tools: { send_email: 'never' } });
  expect(approvalReason(relaxed, 'send_email', { to: 'x@evil.example' }, { untrusted: 'x' })).toBeNull();
});

test('MCP tools: their results are untrusted; then a tool not marked read-only asks; policies name a tool or its whole server', () => {
  const defaults = mergeApprovalPolicies(undefined, undefined);
  // Results of any MCP tool count as untrusted content unless a list says otherwise.
  expect(isUntrustedSource(defaults, 'mcp:files/read_text_file')).toBe(true);
  expect(isUntrustedSource(defaults, 'calculator')).toBe(false);
  const listed = mergeApprovalPolicies(undefined, { untrustedTools: ['mcp:files', 'mcp:memory/read_graph'] });
  expect(isUntrustedSource(listed, 'mcp:files/read_text_file')).toBe(true);
  expect(isUntrustedSource(listed, 'mcp:memory/read_graph')).toBe(true);
  expect(isUntrustedSource(listed, 'mcp:memory/open_nodes')).toBe(false);

  // The default for an MCP tool: it runs, until untrusted content is in the conversation; a tool
  // the server marks read-only runs even then.
  const write = 'mcp:memory/create_entities';
  expect(approvalReason(defaults, write, {}, { untrusted: null })).toBeNull();
  expect(
    approvalReason(defaults, write, {}, { untrusted: 'mcp:files/read_text_file result at step 1' }),
  ).toBe('untrusted content is in the conversation (mcp:files/read_text_file result at step 1)');
  expect(approvalReason(defaults, 'mcp:everything/echo', {}, { untrusted: 'x', readOnly: true })).toBeNull();

  // A whole server by mcp:<server>; one of its tools by mcp:<server>/<tool>, which wins.
  const byServer = mergeApprovalPolicies(
    { tools: { 'mcp:memory': 'always' } },
    { tools: { 'mcp:memory/read_graph': 'never' } },
    ['mcp:files/write_file'],
  );
  expect(approvalReason(byServer, write, {}, { untrusted: null })).toMatch(
    /every mcp:memory\/create_entities call/,
  );
  expect(approvalReason(byServer, 'mcp:memory/read_graph', {}, { untrusted: 'x' })).toBeNull();
  expect(approvalReason(byServer, 'mcp:files/write_file', {}, { untrusted: null })).toMatch(/every/);
  expect(approvalReason(byServer, 'mcp:files/read_text_file', {}, { untrusted: null })).toBeNull();
  expect(
    approvalReason(
      mergeApprovalPolicies(undefined, { tools: { 'mcp:memory': 'never' } }),
      write,
      {},
      {
        untrusted: 'x',
      },
    ),
  ).toBeNull();

  // Names are checked against what the run enables: a tool of an enabled server, or a server.
  const enabled = ['calculator', 'mcp:memory', 'mcp:files/read_text_file'];
  const problems = (tools: Record<string, 'always' | 'never'>) =>
    approvalPolicyProblems({ tools }, [], enabled).map((p) => p.message);
  expect(
    problems({ [write]: 'always', 'mcp:memory': 'never', 'mcp:files/read_text_file': 'always' }),
  ).toEqual([]);
  expect(problems({ 'mcp:files/write_file': 'always' })).toEqual([
    expect.stringMatching(
      /tool "mcp:files\/write_file" is not enabled for this run; enabled tools: calculator, mcp:memory/,
    ),
  ]);
  expect(problems({ 'mcp:bad name': 'always' })).toEqual([
    expect.stringMatching(/an MCP server name is 1–64/),
  ]);
});

test('recipient domains: to, cc and bcc all count; subdomains are inside; display names are read', () => {
  const policy = mergeApprovalPolicies(undefined, {
    tools: { send_email: { allowedDomains: ['Example.com'] } },
  });
  const ctx = { untrusted: null };
  expect(approvalReason(policy, 'send_email', { to: 'Ann <ann@mail.example.com>' }, ctx)).toBeNull();
  expect(
    approvalReason(policy, 'send_email', { to: ['ann@example.com'], bcc: ['x@evil.example'] }, ctx),
  ).toBe('recipients outside Example.com: x@evil.example');
  expect(approvalReason(policy, 'send_email', { to: 'ann@example.com.evil.example' }, ctx)).toMatch(
    /outside/,
  );
  expect(recipientsOf({ to: 'a@x.example, b@y.example', cc: ['c@z.example'] })).toEqual([
    'a@x.example',
    'b@y.example',
    'c@z.example',
  ]);
});

test('the run policy wins over worker defaults tool by tool; requireApproval means always', () => {
  const merged = mergeApprovalPolicies(
    { tools: { sql_query: 'never', send_email: 'never' }, untrustedTools: ['knowledge_base_search'] },
    { tools: { sql_query: { writes: true } } },
    ['calculator'],
  );
  expect(merged).toEqual({
    tools: { sql_query: { writes: true }, send_email: 'never', calculator: 'always' },
    untrustedTools: ['knowledge_base_search'],
  });
});

test('SQL write detection is conservative: only plain reads count as reads', () => {
  for (const sql of [
    'SELECT * FROM t',
    "select 'delete' as word",
    '  (SELECT 1) ',
    'WITH a AS (SELECT 1) SELECT * FROM a',
    'EXPLAIN SELECT 1',
    '-- drop table\nSELECT 1',
  ]) {
    expect([sql, sqlMayWrite(sql)]).toEqual([sql, false]);
  }
  for (const sql of [
    'DELETE FROM t',
    'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
    'SELECT * INTO new_t FROM t',
    'update t set a=1',
    'CALL p()',
    '',
    'SELECT 1; DROP TABLE t',
    'SELECT * FROM t FOR UPDATE',
  ]) {
    expect([sql, sqlMayWrite(sql)]).toEqual([sql, true]);
  }
});

test('argument summaries are readable and bounded', () => {
  expect(summarizeArgs({ to: ['a@x.example', 'b@x.example'], subject: 'Invoices', text: 'hi' })).toBe(
    'to: a@x.example, b@x.example; subject: "Invoices"; text: "hi"',
  );
  expect(summarizeArgs({ text: 'x'.repeat(5000) }).length).toBeLessThanOrEqual(600);
});

test('prices: the run table over the worker table, model over provider; cost and budgets', () => {
  const run = { 'openai:gpt-x': { inputPerMillion: 1, outputPerMillion: 2 } };
  const worker = { openai: { inputPerMillion: 10, outputPerMillion: 20 } };
  expect(priceFor({ provider: 'openai', model: 'gpt-x' }, run, worker)).toEqual(run['openai:gpt-x']);
  expect(priceFor({ provider: 'openai', model: 'other' }, run, worker)).toEqual(worker.openai);
  expect(priceFor({ provider: 'local' }, run, worker)).toBeUndefined();
  expect(
    costOf({ inputTokens: 1_000_000, outputTokens: 500_000 }, { inputPerMillion: 1, outputPerMillion: 2 }),
  ).toBe(2);

  const use = { max_tokens: { used: 80, max: 100 }, max_cost: { used: 0.5, max: 1 } };
  expect(runLimitsToWarn(use, [])).toEqual(['max_tokens']);
  expect(runLimitsToWarn(use, ['max_tokens'])).toEqual([]);
  expect(exhaustedRunLimit(use)).toBeNull();
  expect(exhaustedRunLimit({ ...use, max_cost: { used: 1, max: 1 } })).toBe('max_cost');
  expect(describeRunLimit('max_tokens', { used: 8200, max: 10000 })).toBe(
    '8,200 of 10,000 tokens (input + output) (82 %)',
  );
  expect(describeRunLimit('max_cost', { used: 0.5, max: 1 })).toBe('$0.5000 of $1.0000 cost (USD) (50 %)');
});

test('worker config: run defaults (approvals, prices) are read and checked with the valid choices', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-defaults-'));
  const file = path.join(dir, 'config.json');
  const runs = {
    approvals: { tools: { sql_query: 'never', send_email: { allowedDomains: ['example.com'] } } },
    prices: { 'openai:gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 } },
  };
  fs.writeFileSync(file, JSON.stringify({ runs }));
  expect(loadWorkerConfig({ DURABLE_AGENT_CONFIG: file }).runDefaults).toEqual(runs);

  fs.writeFileSync(file, JSON.stringify({ runs: { approvals: { tools: { SQL_QUERY: 'never' } } } }));
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: file })).toThrow(
    /runs\.approvals\.tools\.SQL_QUERY: unknown tool "SQL_QUERY" \(did you mean "sql_query"\?/,
  );
  fs.writeFileSync(
    file,
    JSON.stringify({ runs: { prices: { gpt: { inputPerMillion: 1, outputPerMillion: 1 } } } }),
  );
  expect(() => loadWorkerConfig({ DURABLE_AGENT_CONFIG: file })).toThrow(/key prices by "provider:model"/);
  expect(loadWorkerConfig({}).runDefaults).toEqual({});
});
