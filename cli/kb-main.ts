/**
 * Entry of `durable-agent kb …`, apart from the rest of the CLI so that a knowledge-base search
 * loads no Temporal client, workflow or worker code: `kb search` answers in a fraction of a second.
 * The commands are the same `registerKbCommands` the full CLI shows in its help.
 */
import { Command } from 'commander';
import { closeKbs } from '../client/knowledge-base';
import { exitAfterParsingWhenAsked, registerKbCommands } from './kb';

const program = new Command().name('durable-agent');
registerKbCommands(program);
exitAfterParsingWhenAsked(program);
program
  .parseAsync(process.argv)
  .then(() => closeKbs())
  .catch((err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
