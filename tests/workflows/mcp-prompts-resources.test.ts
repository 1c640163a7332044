/**
 * A server's prompts and resources, with server-everything from npm over stdio, on a real dev
 * server with the scripted model: a run starts from its prompts (as system prompt and task, with
 * arguments), reads its resources through the server's resources tool (a listing, a text read by
 * reference, a blob stored), and discovers again when the server says its resource list changed.
 */
import type { Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { closeMcpConnections } from '../../activities/mcp';
import type { AgentEvent, AgentInput, AgentResult } from '../../shared/agent';
import { AgentInputSchema, eventsQuery, transcriptQuery } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { notificationDelivery } from '../../client/deliver';
import { scheduledActivityTypes } from '../../testkit/history';
import { everythingServer, mcpConfig } from '../../testkit/mcp';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;

// The worker stops (inner afterAll) before the file's dev server does (outer afterAll).
describe('server-everything prompts and resources', () => {
  beforeAll(async () => {
    taskQueue = uid('mcp-prompts');
    // No fetch of a URL may leave the machine: only data: URIs are compressed here.
    const mcp = mcpConfig({
      everything: everythingServer(uid('everything-marker'), { env: { GZIP_ALLOWED_DOMAINS: '127.0.0.1' } }),
    });
    worker = await createAgentWorker({
      connection: temporal.env.nativeConnection,
      namespace: temporal.env.namespace ?? 'default',
      config: testConfig({ mcp, taskQueue }),
      taskQueue,
      workflowBundle: await workflowBundle(),
      deliver: notificationDelivery(temporal.env.client, taskQueue),
    });
    running = worker.run();
  }, 180_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await closeMcpConnections();
  });

  async function run(input: AgentInput) {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('mcp-prompts'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    const history = await handle.fetchHistory();
    return {
      result,
      events: await handle.query(eventsQuery, {}),
      transcript: await handle.query(transcriptQuery, {}),
      history,
      scheduled: scheduledActivityTypes(history),
    };
  }

  const finished = (events: AgentEvent[]): Record<string, AgentEvent> =>
    Object.fromEntries(events.filter((e) => e.kind === 'tool_finished').map((e) => [e.toolCallId ?? '', e]));

  test('a run starts from server-everything’s prompts (system, and task with arguments) and reads its resources', async () => {
    const out = await run({
      task: 'Answer from the server’s documents.',
      prompts: {
        system: { prompt: 'mcp:everything/prompt/simple-prompt' },
        task: { prompt: 'mcp:everything/prompt/args-prompt', arguments: { city: 'Paris', state: 'Texas' } },
      },
      tools: ['mcp:everything/resources/*'],
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['everything__resources', {}, 'list']),
          callTurn(
            ['everything__resources', { uri: 'demo://resource/static/document/features.md' }, 'read'],
            ['everything__resources', { uri: 'demo://resource/dynamic/blob/1' }, 'blob'],
          ),
          callTurn(['everything__resources', { uri: 'demo://resource/nope' }, 'missing']),
          answerTurn('{{result:list}}\n---\n{{result:read}}'),
        ],
      },
    });
    expect(out.result.stopReason).toBe('final_answer');
    const [listing = '', read = ''] = (out.result.answer ?? '').split('\n---\n');
    // The prompts are the conversation's head.
    const [system, task] = out.transcript.entries;
    expect(system).toEqual(
      expect.objectContaining({ role: 'system', text: 'This is a simple prompt without arguments.' }),
    );
    expect(task).toEqual(
      expect.objectContaining({
        role: 'user',
        text: "What's weather in Paris, Texas?\n\nAnswer from the server’s documents.",
      }),
    );
    expect(out.scheduled.filter((t) => t === 'mcpPrompts')).toHaveLength(1);
    expect(out.scheduled.indexOf('mcpPrompts')).toBeLessThan(out.scheduled.indexOf('mcpDiscover'));
    // Only the resources tool is offered, read-only.
    expect(out.events.find((e) => e.kind === 'mcp_tools')?.text).toBe('MCP tools: everything__resources');
    const results = finished(out.events);
    expect(listing).toContain('- features.md <demo://resource/static/document/features.md> (text/markdown)');
    expect(listing).toContain('Templates (fill in each {…} and read the URI):');
    expect(listing).toContain(
      '- demo://resource/dynamic/text/{resourceId} (Dynamic Text Resource, text/plain)',
    );
    // A text resource over the inline budget travels by reference: history holds a preview.
    expect(results.read?.text).toMatch(
      /^\[resource <demo:\/\/resource\/static\/document\/features\.md> \(text\/markdown\)\]\n# Everything Server - Features/,
    );
    expect(read).toContain('## Resource Subscriptions and Notifications');
    const completed = (out.history.events ?? [])
      .flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? [])
      .map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8'));
    const stored = completed.filter((r) => r.includes('"contentRef"'));
    expect(stored).toHaveLength(1);
    expect(stored[0]).toContain('# Everything Server - Features');
    expect(stored[0]).not.toContain('## Resource Subscriptions and Notifications');
    expect(results.blob?.text).toMatch(
      /\[resource <demo:\/\/resource\/dynamic\/blob\/1>, [\d.]+ (B|KiB) of text\/plain, stored as sha256:[0-9a-f]{64}\]/,
    );
    expect(results.missing).toEqual(expect.objectContaining({ isError: true }));
    expect(results.missing?.text).toMatch(
      /MCP error from everything\/resources\/\*: .*demo:\/\/resource\/nope/,
    );
  }, 120_000);

  test('a server that says its resource list changed makes the run discover again, like a changed tool list', async () => {
    const out = await run({
      task: 'Compress a note and read it back.',
      tools: ['mcp:everything/gzip-file-as-resource', 'mcp:everything/resources/*'],
      policy: { approvals: { tools: { 'mcp:everything': 'never' } } },
      model: {
        provider: 'scripted',
        turns: [
          callTurn([
            'gzip-file-as-resource',
            { name: 'note.txt.gz', data: 'data:text/plain;base64,aGVsbG8gd29ybGQ=' },
            'gz',
          ]),
          callTurn(['everything__resources', { uri: 'demo://resource/session/note.txt.gz' }, 'read']),
          answerTurn('{{result:read}}'),
        ],
      },
    });
    expect(out.scheduled.filter((t) => t === 'mcpDiscover')).toHaveLength(2);
    const listings = out.events.filter((e) => e.kind === 'mcp_tools' && !e.tool).map((e) => e.text);
    expect(listings).toEqual([
      'MCP tools: gzip-file-as-resource, everything__resources',
      'MCP tools changed, now: gzip-file-as-resource, everything__resources',
    ]);
    expect(out.result.answer).toMatch(
      /\[resource <demo:\/\/resource\/session\/note\.txt\.gz>, [\d.]+ B of application\/gzip, stored as sha256:/,
    );
  }, 120_000);

  test('a prompt that cannot be used fails the run at start, saying what to fix', async () => {
    const failure = async (prompts: AgentInput['prompts']) => {
      const err = await run({
        task: 't',
        prompts,
        model: { provider: 'scripted', turns: [answerTurn('never')] },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      return ((err as WorkflowFailedError).cause as Error).message;
    };
    expect(await failure({ task: { prompt: 'mcp:everything/prompt/no-such' } })).toMatch(
      /^MCP prompts: MCP server "everything" has no prompt "no-such"; its prompts: simple-prompt, args-prompt/,
    );
    expect(
      await failure({ task: { prompt: 'mcp:everything/prompt/args-prompt', arguments: { town: 'x' } } }),
    ).toBe(
      'MCP prompts: the prompt mcp:everything/prompt/args-prompt needs the argument city and has no argument town; its arguments: city (required), state',
    );
    expect(await failure({ system: { prompt: 'mcp:nosuch/prompt/x' } })).toMatch(
      /unknown MCP server "nosuch"/,
    );
    // Input mistakes are refused before anything runs.
    const both = AgentInputSchema.safeParse({
      task: 't',
      system: 's',
      prompts: { system: { prompt: 'mcp:everything/prompt/simple-prompt' } },
      model: { provider: 'scripted', turns: [] },
    });
    expect(both.error?.issues.map((i) => i.message)).toContain(
      'give the system prompt as system or as prompts.system, not both',
    );
    const tool = AgentInputSchema.safeParse({
      task: 't',
      tools: ['mcp:everything/prompt/simple-prompt'],
      model: { provider: 'scripted', turns: [] },
    });
    expect(tool.error?.issues.map((i) => i.message)).toContain(
      '"mcp:everything/prompt/simple-prompt" is a prompt, not a tool: use it as the run\'s prompts.task or prompts.system',
    );
  }, 120_000);
});
