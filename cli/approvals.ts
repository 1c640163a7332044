/** `approvals`, `approve` and `reject`: what waits for a person, and the decisions. */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { TemporalTarget } from '../workers/connect';
import { decideApproval, formatApproval, listApprovals } from '../client/approval-client';
import { withClient, withCommandClient } from '../client/traced-client';

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

/** Registers the approval commands. */
export function registerApprovalCommands(program: Command, target: () => TemporalTarget): void {
  program
    .command('approvals')
    .description('List tool calls waiting for approval: of one run, or of every running agent run')
    .argument('[id]', 'workflow id (default: every running agent run)')
    .option('--user <user>', 'only runs that notify inbox:<user>')
    .option('--json', 'JSON output')
    .action(async (id: string | undefined, o: { user?: string; json?: boolean }) => {
      await withClient(target(), async (client) => {
        const waiting = await listApprovals(client, {
          ...(id ? { workflowId: id } : {}),
          ...(o.user !== undefined ? { user: o.user } : {}),
        });
        if (o.json) console.log(JSON.stringify(waiting, null, 2));
        else if (waiting.length === 0) console.log('Nothing waits for approval.');
        else for (const a of waiting) console.log(formatApproval(a));
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
      await withCommandClient(target(), 'reject', async (client) => {
        const r = await decideApproval(client, id, { toolCallId, approve: false, reason: o.reason });
        console.log(`${r.toolCallId}: rejected`);
      });
    });
}
