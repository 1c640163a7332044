import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { startAgentRun } from '../client/start-run';
import type { AgentInput } from '../shared/agent';
import {
  answerQuestionUpdate,
  approveToolCallUpdate,
  childWorkflowId,
  stateQuery,
  userMessageSignal,
} from '../shared/agent';
import { inboxWorkflowId, markReadSignal, notifySignal } from '../shared/notifications/messages';
import type { WorkerConfig } from '../workers/config';
import { emailConfig } from './mail';
import { everythingServer, filesystemServer, mcpConfig, memoryServer } from './mcp';
import { answerTurn, callTurn } from './scripts';
import { SearchConfigSchema } from '../activities/search/config';
import { tempDir } from './temporal';

/** One recorded scenario: starts a run (and drives it), returns the workflow ids whose histories to keep. */
export interface Scenario {
  name: string;
  /** Worker configuration the scenario needs (connections for its tools). */
  config?: () => Partial<WorkerConfig>;
  run(client: Client, taskQueue: string, id: string): Promise<string[]>;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let mcpFolder: string | undefined;
/** The files the `mcp` scenario's filesystem server serves, and its memory server's graph file. */
function mcpFiles(): string {
  if (!mcpFolder) {
    mcpFolder = tempDir('replay-mcp');
    fs.writeFileSync(path.join(mcpFolder, 'plan.md'), '# Plan\nOwner: Ada Lovelace\n');
  }
  return mcpFolder;
}

async function agent(client: Client, taskQueue: string, id: string, input: AgentInput): Promise<string[]> {
  await client.workflow.execute('agentWorkflow', { taskQueue, workflowId: id, args: [input] });
  return [id];
}

/**
 * The scenarios whose histories are committed under tests/replay/histories and replayed on every
 * test run. Re-record on purpose with `npx tsx scripts/record-histories.ts` after a deliberate,
 * versioned change (see docs/versioning.md).
 */
export const SCENARIOS: Scenario[] = [
  {
    name: 'utility-tools',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'utility tools',
        tools: ['get_time', 'calculator', 'wait'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(
              ['get_time', { timezone: 'Europe/Paris' }, 't'],
              ['calculator', { expression: '6*7' }, 'c'],
            ),
            callTurn(
              ['wait', { seconds: 1 }, 'w'],
              ['calculator', { expr: 'bad' }, 'bad'],
              ['nope', {}, 'unknown'],
            ),
            answerTurn('{{result:c}}'),
          ],
        },
      }),
  },
  {
    // Started as the CLI starts runs (with the agent's search attributes), so the run upserts them:
    // the step, the last tool, an approval wait and the end.
    name: 'search-attributes',
    async run(client, tq, id) {
      const turns = [
        ...Array.from({ length: 6 }, (_, i) =>
          callTurn(
            i % 2
              ? ['calculator', { expression: `${i}*2` }, `c${i}`]
              : ['get_time', { timezone: 'UTC' }, `t${i}`],
          ),
        ),
        callTurn(['calculator', { expression: '7*7' }, 'ask']),
        answerTurn('{{result:ask}}'),
      ];
      const handle = await startAgentRun(
        client,
        {
          task: 'search attributes',
          tools: ['get_time', 'calculator'],
          model: { provider: 'scripted', turns },
          policy: { requireApproval: ['calculator'], approvalTimeout: '10 minutes' },
        },
        { taskQueue: tq, workflowId: id },
      );
      for (const toolCallId of ['c1', 'c3', 'c5', 'ask']) {
        await until(
          async () =>
            (await handle.query(stateQuery)).approvals?.some((a) => a.toolCallId === toolCallId) ?? false,
          `approval of ${toolCallId}`,
        );
        await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId, approve: true }] });
      }
      await handle.result();
      return [id];
    },
  },
  {
    // Started by a plain client (no memo, no search attributes) on a namespace that has the agent's
    // search attributes: the run sets its memo and search attributes itself (SELF_DESCRIBED_RUN_PATCH).
    name: 'self-described',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'a run started by a plain client',
        tools: ['calculator'],
        model: {
          provider: 'scripted',
          turns: [callTurn(['calculator', { expression: '6*7' }, 'c']), answerTurn('{{result:c}}')],
        },
        notify: { user: 'replay' },
      }),
  },
  {
    // The fast path: model calls and quick tools as local activities, the wait a regular one.
    name: 'local-activities',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'fast path',
        tools: ['get_time', 'calculator', 'wait'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['get_time', { timezone: 'UTC' }, 't'], ['calculator', { expression: '6*7' }, 'c']),
            callTurn(['wait', { seconds: 1 }, 'w'], ['calculator', { expression: '1/0' }, 'z']),
            answerTurn('{{result:c}}'),
          ],
        },
        policy: { localActivities: 'auto' },
      }),
  },
  {
    // An output schema (STRUCTURED_OUTPUT_PATCH): a tool call, an answer that misses, a repair turn.
    name: 'structured-output',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'structured output',
        tools: ['calculator'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['calculator', { expression: '6*7' }, 'c']),
            answerTurn('{"value":"{{result:c}}"}'),
            answerTurn('{"value":{{result:c}}}'),
          ],
        },
        output: {
          type: 'object',
          properties: { value: { type: 'number' } },
          required: ['value'],
          additionalProperties: false,
        },
      }),
  },
  {
    // Sub-agents: two children in parallel (typed output, a tool each), then the parent's answer;
    // the parent's history and both children's are kept.
    name: 'sub-agents',
    run: async (client, tq, id) => {
      await agent(client, tq, id, {
        task: 'sub-agents',
        tools: ['get_time'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['counter', { task: 'Berlin' }, 'b'], ['counter', { task: 'Paris' }, 'p']),
            answerTurn('{{result:b}} {{result:p}}'),
          ],
        },
        agents: {
          counter: {
            description: 'Counts',
            tools: ['calculator'],
            model: {
              provider: 'scripted',
              turns: [
                callTurn(['calculator', { expression: '2*21' }, 'c']),
                answerTurn('{"n":{{result:c}}}'),
              ],
            },
            output: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
          },
        },
      });
      return [id, childWorkflowId(id, 'b'), childWorkflowId(id, 'p')];
    },
  },
  {
    // A sub-agent stopped by its reserved share of the parent's token budget: it ends without a
    // summary turn (the patch sub-agent-budget-stop-without-summary), and the parent stops too.
    name: 'sub-agent-budget',
    run: async (client, tq, id) => {
      const usage = { inputTokens: 80, outputTokens: 20 };
      await agent(client, tq, id, {
        task: 'sub-agent budget',
        tools: [],
        policy: { maxTokens: 450 },
        model: {
          provider: 'scripted',
          turns: [
            { ...callTurn(['helper', { task: 'work' }, 'h']), usage },
            { ...answerTurn('helper said: {{result:h}}'), usage },
          ],
        },
        agents: {
          helper: {
            description: 'Works in many steps',
            tools: ['calculator'],
            model: {
              provider: 'scripted',
              turns: [
                ...Array.from({ length: 8 }, (_, i) => ({
                  ...callTurn(['calculator', { expression: `${i}+1` }, `c${i}`]),
                  usage,
                })),
                { ...answerTurn('done'), usage },
              ],
            },
          },
        },
      });
      return [id, childWorkflowId(id, 'h')];
    },
  },
  {
    name: 'search',
    config: () => ({
      search: SearchConfigSchema.parse({ knowledgeBase: { dataDir: tempDir('replay-kb') } }),
    }),
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'search',
        tools: ['knowledge_base_search'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['knowledge_base_search', { query: 'continue as new', max_results: 2 }, 'k1']),
            callTurn(['knowledge_base_search', { query: 'signals and queries', max_results: 2 }, 'k2']),
            answerTurn('see [[a1]]'),
          ],
        },
      }),
  },
  {
    name: 'sql',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'sql',
        tools: ['sql_schema', 'sql_query'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['sql_schema', {}, 'schema']),
            callTurn(
              [
                'sql_query',
                { sql: 'SELECT count(*) AS n FROM orders WHERE status = $1', params: ['shipped'] },
                'q',
              ],
              ['sql_query', { sql: 'DELETE FROM orders' }, 'refused'],
            ),
            answerTurn('{{result:q}}'),
          ],
        },
      }),
  },
  {
    // Results over the inline budget travel by reference (content store), and model calls carry
    // only what is new: the history holds previews and references.
    name: 'large-results',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'large results',
        tools: ['sql_query'],
        model: {
          provider: 'scripted',
          turns: [
            callTurn(['sql_query', { sql: 'SELECT repeat(chr(65), 60000) AS big' }, 'big1']),
            callTurn(['sql_query', { sql: 'SELECT repeat(chr(66), 60000) AS big' }, 'big2']),
            answerTurn('Both values read.'),
          ],
        },
      }),
  },
  {
    // MCP tools from the reference servers over stdio: discovery, two calls in one turn, one that
    // needs no approval by policy, then continue-as-new carrying the discovered tools to the last step.
    name: 'mcp',
    config: () => ({
      mcp: mcpConfig({
        files: filesystemServer(mcpFiles()),
        memory: memoryServer(path.join(mcpFiles(), 'memory.jsonl')),
        everything: everythingServer('replay-mcp'),
      }),
    }),
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'mcp',
            tools: ['mcp:files/read_text_file', 'mcp:memory', 'mcp:everything/echo'],
            policy: {
              approvals: { tools: { 'mcp:memory/create_entities': 'never' } },
              continueAsNewAfterSteps: 2,
            },
            model: {
              provider: 'scripted',
              turns: [
                callTurn(
                  ['read_text_file', { path: 'plan.md' }, 'read'],
                  ['echo', { message: 'hello' }, 'echo'],
                ),
                callTurn([
                  'create_entities',
                  {
                    entities: [
                      { name: 'Ada Lovelace', entityType: 'person', observations: ['owns the plan'] },
                    ],
                  },
                  'store',
                ]),
                callTurn(['echo', { message: 'after continue-as-new' }, 'again']),
                answerTurn('{{result:read}} {{result:echo}} {{result:again}}'),
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await handle.result();
      // The first run (discovers, ends with continue-as-new) and the last (its carried catalog).
      return [`${id}@${handle.firstExecutionRunId}`, id];
    },
  },
  {
    // A run that starts from a server's prompts, reads its resources, and has a call refused by
    // the workflow's JSON Schema check.
    name: 'mcp-prompts-resources',
    config: () => ({ mcp: mcpConfig({ everything: everythingServer('replay-mcp-prompts') }) }),
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'Answer from the documents.',
            prompts: {
              system: { prompt: 'mcp:everything/prompt/simple-prompt' },
              task: { prompt: 'mcp:everything/prompt/args-prompt', arguments: { city: 'Paris' } },
            },
            tools: ['mcp:everything/resources/*', 'mcp:everything/get-sum'],
            model: {
              provider: 'scripted',
              turns: [
                callTurn(['get-sum', { a: 'one', b: 2 }, 'bad']),
                callTurn(
                  ['get-sum', { a: 1, b: 2 }, 'sum'],
                  [
                    'everything__resources',
                    { uri: 'demo://resource/static/document/architecture.md' },
                    'doc',
                  ],
                ),
                answerTurn('{{result:sum}} {{result:doc}}'),
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await handle.result();
      return [id];
    },
  },
  {
    name: 'email',
    config: () => ({ email: emailConfig() }),
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'email',
        tools: ['send_email', 'fetch_email'],
        policy: { approvals: { tools: { send_email: 'never' } } },
        model: {
          provider: 'scripted',
          turns: [
            callTurn([
              'send_email',
              { to: ['user@example.test'], subject: `replay ${id}`, text: 'hello' },
              's1',
            ]),
            callTurn(['fetch_email', { unseenOnly: true, limit: 5 }, 'f1']),
            answerTurn('sent'),
          ],
        },
      }),
  },
  {
    name: 'notifications',
    run: (client, tq, id) =>
      agent(client, tq, id, {
        task: 'notifications',
        tools: ['notify_user'],
        notify: { user: `${id}-user` },
        model: {
          provider: 'scripted',
          turns: [
            callTurn(
              ['notify_user', { message: '0%', type: 'progress', id: 'p', priority: 10 }, 'n1'],
              ['notify_user', { message: 'x', type: 'critical' }, 'n2'],
            ),
            callTurn(['notify_user', { message: 'done', type: 'success', id: 'p' }, 'n3']),
            answerTurn('ok'),
          ],
        },
      }),
  },
  {
    name: 'approvals',
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'approvals',
            tools: ['calculator'],
            policy: { requireApproval: ['calculator'], approvalTimeout: '2 seconds' },
            model: {
              provider: 'scripted',
              turns: [
                callTurn(
                  ['calculator', { expression: '1+1' }, 'yes'],
                  ['calculator', { expression: '2+2' }, 'no'],
                ),
                callTurn(['calculator', { expression: '3+3' }, 'late']),
                answerTurn('{{last_tool_results}}'),
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await until(
        async () => (await handle.query(stateQuery)).pendingToolCalls.length === 2,
        'two approvals',
      );
      await handle.signal(userMessageSignal, { text: 'only the first one' });
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'yes', approve: true }] });
      await handle.executeUpdate(approveToolCallUpdate, {
        args: [{ toolCallId: 'no', approve: false, reason: 'not needed' }],
      });
      await handle.result(); // 'late' times out after 2 s
      return [id];
    },
  },
  {
    // ask_user (a choice answered, a question that times out into its default) and a client tool's
    // call, under a wall-clock budget that stands still while they wait.
    name: 'questions',
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'questions',
            tools: ['ask_user'],
            clientTools: {
              read_document: {
                description: 'Reads the open document',
                output: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
              },
            },
            policy: { maxWallClock: '1 hour' },
            model: {
              provider: 'scripted',
              turns: [
                callTurn(
                  ['ask_user', { question: 'Which city?', schema: { enum: ['Lisbon', 'Porto'] } }, 'city'],
                  ['read_document', {}, 'doc'],
                ),
                callTurn(['ask_user', { question: 'Seats?', timeout_seconds: 2, default: '2' }, 'seats']),
                answerTurn('{{result:city}} {{result:doc}} {{result:seats}}'),
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await until(
        async () => ((await handle.query(stateQuery)).questions ?? []).length === 2,
        'two questions',
      );
      // Refused by the validator: it leaves no trace in history.
      await handle
        .executeUpdate(answerQuestionUpdate, { args: [{ toolCallId: 'city', answer: 'Faro' }] })
        .catch(() => undefined);
      await handle.executeUpdate(answerQuestionUpdate, {
        args: [{ toolCallId: 'city', answer: 'Porto', by: 'web' }],
      });
      await handle.executeUpdate(answerQuestionUpdate, {
        args: [{ toolCallId: 'doc', answer: { title: 'Plan' }, by: 'client' }],
      });
      await handle.result(); // 'seats' takes its default after 2 s
      return [id];
    },
  },
  {
    name: 'continue-as-new',
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'continue as new',
            tools: ['calculator'],
            policy: { continueAsNewAfterSteps: 1 },
            model: {
              provider: 'scripted',
              turns: [
                callTurn(['calculator', { expression: '1' }, 'a']),
                callTurn(['calculator', { expression: '2' }, 'b']),
                answerTurn('{{result:a}}{{result:b}}'),
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await handle.result();
      // Keep the first run (ends with continue-as-new) and the last (completes).
      return [`${id}@${handle.firstExecutionRunId}`, id];
    },
  },
  {
    name: 'cancellation',
    async run(client, tq, id) {
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'cancel me',
            tools: ['wait'],
            model: {
              provider: 'scripted',
              turns: [callTurn(['wait', { seconds: 30 }, 'w']), answerTurn('never')],
            },
          } satisfies AgentInput,
        ],
      });
      await until(
        async () => (await handle.query(stateQuery)).pendingToolCalls.some((p) => p.state === 'running'),
        'the wait',
      );
      await new Promise((r) => setTimeout(r, 1500));
      await handle.cancel();
      await handle.result().catch(() => undefined);
      return [id];
    },
  },
  {
    name: 'inbox',
    async run(client, tq, id) {
      const user = `${id}-user`;
      const handle = await client.workflow.signalWithStart('inboxWorkflow', {
        workflowId: inboxWorkflowId(user),
        taskQueue: tq,
        args: [{ maxNotifications: 3, continueAsNewAfter: 5 }],
        signal: notifySignal,
        signalArgs: [{ message: 'first' }],
      });
      for (let i = 2; i <= 4; i++)
        await handle.signal(notifySignal, { message: `n${i}`, id: i === 4 ? 'x' : undefined });
      await handle.signal(notifySignal, { message: 'bad', priority: 15 } as never);
      await handle.signal(markReadSignal, { all: true });
      await until(async () => (await handle.describe()).runId !== handle.signaledRunId, 'continue-as-new');
      await handle.terminate('recorded');
      return [`${inboxWorkflowId(user)}@${handle.signaledRunId}`];
    },
  },
  {
    // Approval policies (send_email asks by default; the user approves with edited arguments, the
    // request notice updated in place in the inbox) and a token budget that warns, then stops the
    // run with a tool-less summary turn.
    name: 'policies-and-budgets',
    config: () => ({ email: emailConfig() }),
    async run(client, tq, id) {
      const usage = { inputTokens: 250, outputTokens: 50 };
      const calc = (n: number) => ({
        ...callTurn(['calculator', { expression: `${n}*${n}` }, `c${n}`]),
        usage,
      });
      const handle = await client.workflow.start('agentWorkflow', {
        taskQueue: tq,
        workflowId: id,
        args: [
          {
            task: 'approval policies',
            tools: ['send_email', 'calculator'],
            notify: { user: `${id}-user` },
            policy: { maxTokens: 1000, approvalTimeout: '10 minutes' },
            model: {
              provider: 'scripted',
              turns: [
                {
                  ...callTurn([
                    'send_email',
                    { to: ['x@elsewhere.example'], subject: 'draft', text: 'draft' },
                    's1',
                  ]),
                  usage,
                },
                calc(2),
                calc(3),
                calc(4),
                { content: 'Summary: one mail sent, three products computed.', usage },
              ],
            },
          } satisfies AgentInput,
        ],
      });
      await until(
        async () => ((await handle.query(stateQuery)).approvals ?? []).length === 1,
        'the approval',
      );
      await handle.executeUpdate(approveToolCallUpdate, {
        args: [
          {
            toolCallId: 's1',
            approve: true,
            args: { to: ['user@example.test'], subject: `replay ${id}`, text: 'edited' },
          },
        ],
      });
      await handle.result();
      return [id];
    },
  },
];
