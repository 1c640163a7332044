/**
 * Where `eval` reads recorded runs from: history files (from `export`, with the content bundle next
 * to them when there is one), folders of them, or workflow ids on the server, where every run of a
 * chain that continued as new is read, oldest first.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { BundleContentStore } from '../debug/content';
import { readBundle } from '../debug/content';
import type { History } from '../debug/history';
import { fetchRunHistory, readHistoryFile } from '../debug/history';

/** One recorded run to evaluate. */
export interface EvalSource {
  /** The file, or `<workflow id> run <run id>`, for the table. */
  label: string;
  history: History;
  /** The content exported with a history file; runs from the server read the configured store. */
  bundle?: BundleContentStore;
}

/** Most runs of one chain read from the server; a longer chain is cut, oldest runs first. */
const MAX_CHAIN_RUNS = 100;

/** The history files in a folder: its `.json` files but the content bundles, by name. */
function historyFilesIn(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.content.json'))
    .sort()
    .map((f) => path.join(dir, f));
}

function fileSource(file: string): EvalSource {
  const bundle = readBundle(file);
  return { label: file, history: readHistoryFile(file), ...(bundle ? { bundle } : {}) };
}

/** Every run of a workflow id, oldest first, following each run back to the one it continued. */
export async function fetchRunChain(client: Client, workflowId: string): Promise<EvalSource[]> {
  const chain: EvalSource[] = [];
  let runId: string | undefined;
  do {
    const history = await fetchRunHistory(client, workflowId, runId);
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    const label = `${workflowId} run ${started?.originalExecutionRunId ?? runId ?? ''}`;
    chain.unshift({ label, history });
    runId = started?.continuedExecutionRunId || undefined;
  } while (runId && chain.length < MAX_CHAIN_RUNS);
  return chain;
}

/**
 * The runs the arguments name, in order. An argument that is an existing file or folder is read
 * from disk; any other is a workflow id. A folder with no history file is an error, so a typo in a
 * path is not silently taken for an id with no runs.
 */
export async function resolveEvalSources(
  args: string[],
  connect: () => Promise<Client>,
): Promise<EvalSource[]> {
  const sources: EvalSource[] = [];
  let client: Client | undefined;
  try {
    for (const arg of args) {
      if (fs.existsSync(arg) && fs.statSync(arg).isDirectory()) {
        const files = historyFilesIn(arg);
        if (files.length === 0) throw new Error(`${arg} holds no history file (*.json from \`export\`)`);
        sources.push(...files.map(fileSource));
      } else if (fs.existsSync(arg)) {
        if (arg.endsWith('.content.json')) {
          throw new Error(
            `${arg} is a content bundle; give the history file beside it (${arg.replace(/\.content\.json$/, '.json')})`,
          );
        }
        sources.push(fileSource(arg));
      } else if (/[/\\]|\.json$/.test(arg)) {
        throw new Error(`${arg}: no such file or folder`);
      } else {
        client ??= await connect();
        sources.push(...(await fetchRunChain(client, arg)));
      }
    }
  } finally {
    await client?.connection.close();
  }
  return sources;
}
