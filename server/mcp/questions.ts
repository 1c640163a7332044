/**
 * Questions over MCP: `agent_asks` lists what a run (with its sub-agents), or every run of a user,
 * waits for; `agent_answer` answers a question or submits a client tool's result. A client that
 * declares the elicitation capability may leave the answer out: the server then asks its user
 * (`elicitation/create`, a form built from the question's schema when MCP's flat forms can say it)
 * and sends what they accept. Everything goes through client/questions.ts, as the CLI and the HTTP
 * API do, so refusals read the same at every door.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { OutputSchema } from '../../shared/agent/output-schema';
import { QuestionRequestError, answerQuestion, listQuestions } from '../../client/questions';
import { errorResult, jsonResult } from './results';

/** The property an answer that is not an object travels in, inside an elicitation form. */
const WRAPPED = 'answer';

/** A flat field MCP's elicitation forms can show, for one JSON Schema, or null. */
function primitive(s: OutputSchema | undefined): Record<string, unknown> | null {
  if (!s) return { type: 'string', title: 'Answer' };
  const described = typeof s.description === 'string' ? { description: s.description } : {};
  const titled = typeof s.title === 'string' ? { title: s.title } : {};
  if (Array.isArray(s.enum)) {
    return s.enum.every((e) => typeof e === 'string')
      ? { type: 'string', enum: s.enum, ...titled, ...described }
      : null;
  }
  const pick = (keys: string[]) =>
    Object.fromEntries(keys.filter((k) => s[k] !== undefined).map((k) => [k, s[k]]));
  switch (s.type) {
    case 'boolean':
      return { type: 'boolean', ...titled, ...described };
    case 'number':
    case 'integer':
      return { type: s.type, ...pick(['minimum', 'maximum']), ...titled, ...described };
    case 'string': {
      const format = ['email', 'uri', 'date', 'date-time'].includes(s.format as string)
        ? { format: s.format }
        : {};
      return { type: 'string', ...pick(['minLength', 'maxLength']), ...format, ...titled, ...described };
    }
    default:
      return null;
  }
}

/**
 * The elicitation form for an answer schema, and how to read the accepted content back: an object
 * of flat fields is asked as it is; a single value is asked as one field, `answer`. Null when the
 * schema needs more than MCP's forms have (lists, nesting, alternatives).
 */
export function elicitationFormOf(
  schema: OutputSchema | undefined,
): { requestedSchema: Record<string, unknown>; read(content: Record<string, unknown>): unknown } | null {
  if (schema?.type === 'object' && schema.properties && typeof schema.properties === 'object') {
    const properties: Record<string, unknown> = {};
    for (const [key, sub] of Object.entries(schema.properties as Record<string, OutputSchema>)) {
      const field = primitive(sub);
      if (!field) return null;
      properties[key] = field;
    }
    const required = Array.isArray(schema.required) ? schema.required : [];
    return { requestedSchema: { type: 'object', properties, required }, read: (content) => content };
  }
  const field = primitive(schema);
  if (!field) return null;
  return {
    requestedSchema: { type: 'object', properties: { [WRAPPED]: field }, required: [WRAPPED] },
    read: (content) => content[WRAPPED],
  };
}

function failure(err: unknown): CallToolResult {
  if (err instanceof QuestionRequestError) return jsonResult({ error: err.message, code: err.code }, true);
  throw err;
}

/** Registers `agent_asks` and `agent_answer`. */
export function registerQuestionTools(server: McpServer, client: Client): void {
  const RunId = z.string().min(1).max(1000);
  server.registerTool(
    'agent_asks',
    {
      description:
        'Questions (ask_user) and client-tool calls waiting for input: of one run and its sub-agents (id), or of every running run of a user. Answer them with agent_answer.',
      inputSchema: {
        id: RunId.optional().describe('The run’s workflow id; omit for every running run'),
        user: z.string().min(1).max(128).optional().describe('Only runs that notify inbox:<user>'),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ id, user }) => {
      try {
        const questions = await listQuestions(client, {
          ...(id ? { workflowId: id } : {}),
          ...(user ? { user } : {}),
        });
        return jsonResult({ questions });
      } catch (err) {
        return failure(err);
      }
    },
  );

  server.registerTool(
    'agent_answer',
    {
      description:
        'Answer a question of a run (or submit a client tool’s result): `answer` is any JSON value matching the question’s schema. ' +
        'Leave `answer` out to have this server ask your user for it (MCP elicitation, when your client supports it). ' +
        'A sub-agent’s question is answered on the sub-agent’s run, as agent_asks lists it.',
      inputSchema: {
        id: RunId.describe('The workflow id of the run that asks (agent_asks lists it)'),
        toolCallId: z.string().min(1).max(1000).describe('The call that waits (agent_asks lists it)'),
        answer: z.unknown().optional().describe('The answer; omit to ask your user through elicitation'),
      },
    },
    async ({ id, toolCallId, answer }) => {
      try {
        if (answer !== undefined)
          return jsonResult({
            workflowId: id,
            ...(await answerQuestion(client, id, toolCallId, answer, { by: 'mcp' })),
          });
        const open = (await listQuestions(client, { workflowId: id })).find(
          (q) => q.workflowId === id && q.toolCallId === toolCallId,
        );
        if (!open)
          return errorResult(`No question ${toolCallId} of run "${id}" waits for an answer; see agent_asks`);
        const form = elicitationFormOf(open.schema);
        if (!server.server.getClientCapabilities()?.elicitation) {
          return errorResult(
            'Give the answer in `answer`: this client does not declare elicitation, so its user cannot be asked from here',
          );
        }
        if (!form) {
          return errorResult(
            `Give the answer in \`answer\`: its schema (${JSON.stringify(open.schema).slice(0, 500)}) needs more than an elicitation form can ask`,
          );
        }
        const reply = await server.server.elicitInput({
          mode: 'form',
          message: open.kind === 'question' ? open.question : `${open.tool}: ${open.question}`,
          requestedSchema: form.requestedSchema as never,
        });
        if (reply.action !== 'accept' || !reply.content) {
          return errorResult(`Your user chose to ${reply.action}; ${toolCallId} still waits for an answer`);
        }
        const value = form.read(reply.content);
        return jsonResult({
          workflowId: id,
          ...(await answerQuestion(client, id, toolCallId, value, { by: 'mcp' })),
        });
      } catch (err) {
        return failure(err);
      }
    },
  );
}
