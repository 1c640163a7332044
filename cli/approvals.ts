/** `approvals`, `approve` and `reject`: what waits for a person, and the decisions. */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { TemporalTarget } from '../workers/connect';
import { DEFAULT_API_URL } from './options';
import type * as ApprovalClient from '../client/approval-client';
import type * as TracedClient from '../client/traced-client';
import type { RunApproval } from '../client/approval-client';
import { localTime } from '../shared/local-time';
import { runPagePath } from '../shared/approval-notice';

/** What the commands run, loaded when one runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../client/approval-client') as typeof ApprovalClient),
    ...(require('../client/traced-client') as typeof TracedClient),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** The run page of a call: a full URL when the web UI's address is known, else its path. */
export function runPageOf(a: RunApproval, apiUrl?: string): string {
  const p = runPagePath(a.workflowId);
  return apiUrl ? `${apiUrl.replace(/\/+$/, '')}${p}` : p;
}

/**
 * A waiting call for terminals: run, call, tool and deadline (local time), then the arguments in
 * words and the run page (`apiUrl`: where `durable-agent api` serves the web UI).
 */
export function formatApproval(a: RunApproval, apiUrl?: string): string {
  return (
    `${a.workflowId} ${a.toolCallId}: ${a.tool} until ${localTime(a.deadline)} (${a.reason})\n` +
    `    ${a.summary}\n    run page: ${runPageOf(a, apiUrl)}`
  );
}

/** Largest `--args` file: edited arguments travel in one update, far below Temporal's payload limit. */
const MAX_ARGS_FILE_BYTES = 256 * 1024;

function readArgsFile(file: string): unknown {
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_ARGS_FILE_BYTES) {
      throw new Error(`is ${size} bytes; edited arguments must be at most ${MAX_ARGS_FILE_BYTES} bytes`);
    }
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--args ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`--args ${file} is not JSON: ${(err as Error).message}`);
  }
}

/** The web UI's address from `--api-url` or the environment: an http(s) URL, or none. */
function apiUrlOf(raw: string | undefined): string | undefined {
  const text = raw?.trim();
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--api-url / DURABLE_AGENT_API_URL "${text}" is not a URL (e.g. http://127.0.0.1:8787)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`--api-url / DURABLE_AGENT_API_URL must be an http or https URL, not "${text}"`);
  return url.href;
}

/** Registers the approval commands. */
export function registerApprovalCommands(program: Command, target: () => TemporalTarget): void {
  program
    .command('approvals')
    .description('List tool calls waiting for approval: of one run, or of every running agent run')
    .argument('[id]', 'workflow id (default: every running agent run)')
    .option('--user <user>', 'only runs that notify inbox:<user>')
    .option(
      '--api-url <url>',
      `where \`durable-agent api\` serves the web UI, for each run page’s address (default: $DURABLE_AGENT_API_URL, else ${DEFAULT_API_URL}, its default)`,
    )
    .option('--json', 'JSON output')
    .action(async (id: string | undefined, o: { user?: string; apiUrl?: string; json?: boolean }) => {
      const apiUrl = apiUrlOf(o.apiUrl ?? process.env.DURABLE_AGENT_API_URL) ?? DEFAULT_API_URL;
      const { listApprovals, withClient } = load();
      await withClient(target(), async (client) => {
        const waiting = await listApprovals(client, {
          ...(id ? { workflowId: id } : {}),
          ...(o.user !== undefined ? { user: o.user } : {}),
        });
        if (o.json)
          console.log(
            JSON.stringify(
              waiting.map((a) => ({ ...a, runPage: runPageOf(a, apiUrl) })),
              null,
              2,
            ),
          );
        else if (waiting.length === 0) console.log('Nothing waits for approval.');
        else for (const a of waiting) console.log(formatApproval(a, apiUrl));
      });
    });

  program
    .command('approve')
    .description('Approve a tool call that waits for approval, optionally with edited arguments')
    .argument('<id>', 'workflow id')
    .argument('<toolCallId>', 'tool call id (see `approvals`)')
    .option('--args <file.json>', 'run the call with these arguments instead (checked by the tool’s schema)')
    .option('--reason <text>', 'a note kept with the decision')
    .option('--reject', 'reject instead (same as `reject`)')
    .action(
      async (id: string, toolCallId: string, o: { args?: string; reason?: string; reject?: boolean }) => {
        if (o.reject && o.args) throw new Error('--args goes with an approval, not with --reject');
        const args = o.args ? readArgsFile(o.args) : undefined;
        const { decideApproval, withCommandClient } = load();
        await withCommandClient(target(), o.reject ? 'reject' : 'approve', async (client) => {
          const r = await decideApproval(client, id, {
            toolCallId,
            approve: !o.reject,
            ...(o.reason ? { reason: o.reason } : {}),
            ...(args !== undefined ? { args } : {}),
          });
          console.log(
            `${r.toolCallId}: ${r.approved ? (r.editedArgs ? 'approved with edited arguments' : 'approved') : 'rejected'}`,
          );
        });
      },
    );

  program
    .command('reject')
    .description('Reject a tool call that waits for approval; the reason is shown to the model')
    .argument('<id>', 'workflow id')
    .argument('<toolCallId>', 'tool call id (see `approvals`)')
    .requiredOption('--reason <text>', 'why (shown to the model)')
    .action(async (id: string, toolCallId: string, o: { reason: string }) => {
      if (!o.reason.trim()) throw new Error('--reason must not be empty');
      const { decideApproval, withCommandClient } = load();
      await withCommandClient(target(), 'reject', async (client) => {
        const r = await decideApproval(client, id, { toolCallId, approve: false, reason: o.reason });
        console.log(`${r.toolCallId}: rejected`);
      });
    });
}
