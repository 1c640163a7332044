/**
 * Every command that takes a run id answers an unknown one in the same words, whatever it does with
 * the run: no raw `5 NOT_FOUND` from the server, exit code 1.
 */
import { runCli } from '../../testkit/processes';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ queue: 'unknown-ids' });

test.each([
  ['status', ['status', 'agent-nope']],
  ['cancel', ['cancel', 'agent-nope']],
  ['message', ['message', 'agent-nope', 'hello']],
  ['transcript', ['transcript', 'agent-nope']],
  ['export', ['export', 'agent-nope']],
  ['replay', ['replay', 'agent-nope']],
  ['fork', ['fork', 'agent-nope', '--from-step', '1']],
])(
  '%s of an unknown run id says there is no such run',
  async (_name, args) => {
    const out = await runCli(args, dev.env);
    expect(out.stderr).toContain('No run with id "agent-nope" in this namespace');
    expect(out.stderr).not.toMatch(/NOT_FOUND|workflow not found/);
    expect(out.code).toBe(1);
  },
  60_000,
);
