/**
 * CLI commands for notifications (`notifications`, `notify`, `mark-read`, `clear-notifications`) and
 * the HTTP API server (`api`). Every command goes through the public contract: updates to change,
 * queries to read, so what the CLI does any other Temporal client can do.
 */
import { formatZodIssues } from '../shared/zod-issues';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Notification } from '../shared/notifications/schema';
import type { NotificationHistory } from '../shared/notifications/reads';
import type { TemporalTarget } from '../workers/connect';
import type { NotificationFeedEvent } from '../client/notification-client';
import { printable } from '../shared/identifiers';
import { counted } from '../shared/words';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from './options';
import type * as NotificationSchema from '../shared/notifications/schema';
import type * as Config from '../workers/config';
import type * as Connect from '../workers/connect';
import type * as NotificationClient from '../client/notification-client';
import type * as TracedClient from '../client/traced-client';
import type * as ApiServer from '../server/api/server';
import type * as WebAssets from '../server/web/assets';

/** What the commands run, loaded when one runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../shared/notifications/schema') as typeof NotificationSchema),
    ...(require('../workers/config') as typeof Config),
    ...(require('../workers/connect') as typeof Connect),
    ...(require('../client/notification-client') as typeof NotificationClient),
    ...(require('../client/traced-client') as typeof TracedClient),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Widest message column of the table; longer messages are cut with an ellipsis. */
const MESSAGE_WIDTH = 60;
/** Widest title column of the table. */
const TITLE_WIDTH = 24;

/** One line, at most `width` characters: newlines become spaces so a row stays a row. */
function cell(text: string, width: number): string {
  // A title or message can come from a model or an API caller: show control characters, never obey them.
  const flat = printable(text.replace(/\s+/g, ' ').trim());
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

const COLUMNS = ['no', 'type', 'priority', 'read', 'title', 'message', 'timestamp', 'id'] as const;

function row(n: Notification): string[] {
  return [
    String(n.no),
    n.type,
    String(n.priority),
    n.read ? 'yes' : 'no',
    cell(n.title, TITLE_WIDTH),
    cell(n.message, MESSAGE_WIDTH),
    n.timestamp,
    printable(n.id),
  ];
}

/** Aligns rows under the header, two spaces between columns. */
function table(rows: string[][], header: readonly string[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

function printList(
  history: NotificationHistory & { truncated?: boolean; before?: number },
  unreadOnly: boolean,
): void {
  const shown = unreadOnly ? history.notifications.filter((n) => !n.read) : history.notifications;
  const unread = history.notifications.filter((n) => !n.read).length;
  if (shown.length === 0) console.log(unreadOnly ? 'No unread notifications.' : 'No notifications.');
  else for (const l of table(shown.map(row), COLUMNS)) console.log(l);
  if (history.truncated) {
    console.log(
      `${history.notifications.length} of ${counted(history.count, 'notification')} shown, ${unread} of them unread` +
        (history.before !== undefined ? `; older ones: --before ${history.before}` : ''),
    );
  } else console.log(`${counted(history.count, 'notification')}, ${unread} unread`);
}

/** Prints one watch event as labelled rows, or as one JSON line with --json. */
function printEvent(event: NotificationFeedEvent, o: { json?: boolean; unread?: boolean }): void {
  const keep = (list: readonly Notification[]) => (o.unread ? list.filter((n) => !n.read) : [...list]);
  if (o.json) {
    if (event.kind === 'snapshot') {
      const { history } = event;
      console.log(
        JSON.stringify({ event: 'snapshot', ...history, notifications: keep(history.notifications) }),
      );
      return;
    }
    const { kind, ...rest } = event;
    const lists =
      'added' in rest
        ? { added: keep(rest.added), updated: keep(rest.updated) }
        : { notifications: keep(rest.notifications) };
    console.log(JSON.stringify({ event: kind, ...rest, ...lists }));
    return;
  }
  if (event.kind === 'snapshot') {
    printList(event.history, o.unread === true);
    return;
  }
  const labelled =
    event.kind === 'reset'
      ? keep(event.notifications).map((n) => ['now', ...row(n)])
      : [
          ...keep(event.added).map((n) => ['new', ...row(n)]),
          ...keep(event.updated).map((n) => ['updated', ...row(n)]),
        ];
  if (event.kind === 'reset')
    console.log(`— list replaced (cleared or resynced): ${counted(event.count, 'notification')} —`);
  // Without the header: the columns are those of the table printed first.
  for (const l of table(labelled, ['', ...COLUMNS]).slice(1)) console.log(l);
}

/** Parses a comma-separated id list; empty entries are dropped. */
function idList(value: string): string[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) throw new InvalidArgumentError('give at least one id, e.g. --ids a,b');
  return ids;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return n;
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError('must be a whole number ≥ 0');
  }
  return n;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be a port number 0–65535');
  return n;
}

interface NotifyOpts {
  type?: string;
  priority?: string;
  title?: string;
  detail?: string;
  id?: string;
  group?: string;
  displayTime?: string;
  json?: boolean;
}

/**
 * Adds the notification commands and `api` to `program`. `target` resolves the Temporal connection
 * from the program's global options when a command runs.
 */
export function registerNotificationCommands(program: Command, target: () => TemporalTarget): void {
  program
    .command('notifications')
    .description('Show the notifications of a run or an inbox (inbox:<user>)')
    .argument('<target>', 'agent run id or inbox:<user>')
    .option('--unread', 'only unread notifications')
    .option('--json', 'JSON output (with --watch: one JSON event per line)')
    .option('--watch', 'keep running and print new and updated notifications as they happen')
    .option('--interval <ms>', 'with --watch: milliseconds between checks', positiveInt, 500)
    .option('--limit <n>', 'only the newest n notifications (a page)', positiveInt)
    .option(
      '--before <no>',
      'only notifications numbered below no (the next page of a --limit listing)',
      wholeNumber,
    )
    .action(
      async (
        rawTarget: string,
        o: {
          unread?: boolean;
          json?: boolean;
          watch?: boolean;
          interval: number;
          limit?: number;
          before?: number;
        },
      ) => {
        const { followNotifications, readNotifications, requireTarget, withClient } = load();
        const id = requireTarget(rawTarget);
        if (o.watch && (o.limit !== undefined || o.before !== undefined)) {
          throw new Error('--watch follows the whole list: drop --limit/--before');
        }
        await withClient(target(), async (client) => {
          const history = await readNotifications(client, id, {
            ...(o.limit !== undefined ? { limit: o.limit } : {}),
            ...(o.before !== undefined ? { before: o.before } : {}),
          });
          if (o.json && !o.watch) {
            const notifications = o.unread
              ? history.notifications.filter((n) => !n.read)
              : history.notifications;
            const unread = history.notifications.filter((n) => !n.read).length;
            console.log(JSON.stringify({ target: id, ...history, unread, notifications }, null, 2));
            return;
          }
          printEvent({ kind: 'snapshot', history }, o);
          if (!o.watch) return;

          const stop = new AbortController();
          const abort = () => stop.abort();
          process.once('SIGINT', abort);
          process.once('SIGTERM', abort);
          let warned = false;
          console.error(`Watching ${id} (Ctrl-C to stop)…`);
          try {
            await followNotifications(client, id, {
              from: history,
              intervalMs: o.interval,
              signal: stop.signal,
              onEvent: (event) => printEvent(event, o),
              onRetry: (err) => {
                // One warning per outage, not one per poll.
                if (!warned) console.error(`warning: ${(err as Error).message}; retrying`);
                warned = true;
              },
            });
          } finally {
            process.off('SIGINT', abort);
            process.off('SIGTERM', abort);
          }
        });
      },
    );

  program
    .command('notify')
    .description('Send a notification to a run or an inbox (inbox:<user> is created if needed)')
    .argument('<target>', 'agent run id or inbox:<user>')
    .argument('<message>', 'the text shown to the user')
    .option('--type <type>', 'info | success | warning | error | progress (default info)')
    .option('--priority <n>', '10 normal, 20 high (default 10)')
    .option('--title <text>', 'short heading')
    .option('--detail <html>', 'longer content shown when expanded; may contain HTML')
    .option('--id <id>', 'reuse an id to update that notification in place (default: a new uuid)')
    .option('--group <name>', 'groups related notifications')
    .option('--display-time <seconds>', 'seconds on screen (default 3; negative or non-numeric → 3)')
    .option('--json', 'print {"id","target"} as JSON')
    .action(async (rawTarget: string, message: string, o: NotifyOpts) => {
      const { loadWorkerConfig, prepareNotification, requireTarget, sendNotification, withCommandClient } =
        load();
      const id = requireTarget(rawTarget);
      // Validate before connecting: a bad signal payload would only be logged and dropped by the workflow.
      const prepared = prepareNotification({
        message,
        type: o.type,
        priority: o.priority,
        title: o.title,
        detail: o.detail,
        id: o.id,
        group: o.group,
        display_time: o.displayTime,
      });
      if (!prepared.ok) throw new Error(prepared.error);
      const stored = await withCommandClient(target(), 'notify', (client) =>
        sendNotification(client, loadWorkerConfig().taskQueue, id, prepared.notification),
      );
      const sent = { ...stored, target: id };
      console.log(
        o.json
          ? JSON.stringify(sent)
          : sent.no >= 0
            ? `Sent notification ${sent.id} to ${sent.target} as #${sent.no}; the list holds ${counted(sent.count, 'notification')}`
            : `Sent notification ${sent.id} to ${sent.target}: it is not in the list (delivered before and evicted since, unchanged; the list holds ${counted(sent.count, 'notification')}, ${sent.evicted} evicted)`,
      );
    });

  program
    .command('mark-read')
    .description('Mark notifications read: --ids a,b or --all')
    .argument('<target>', 'agent run id or inbox:<user>')
    .option('--ids <ids>', 'comma-separated notification ids', idList)
    .option('--all', 'every notification')
    .action(async (rawTarget: string, o: { ids?: string[]; all?: boolean }) => {
      const { MarkReadInputSchema, requireTarget, sendMarkRead, withCommandClient } = load();
      const id = requireTarget(rawTarget);
      if ((o.ids !== undefined) === (o.all === true))
        throw new Error('Give exactly one of --ids a,b or --all');
      const input = MarkReadInputSchema.safeParse(o.all ? { all: true } : { ids: o.ids });
      if (!input.success) throw new Error(`Invalid --ids: ${formatZodIssues(input.error)}`);
      await withCommandClient(target(), 'mark-read', async (client) => {
        const result = await sendMarkRead(client, id, input.data);
        console.log(`Marked read in ${id}; ${result.unread} unread left`);
        if (result.unknown?.length) {
          // The others were marked; the command still fails, so a script notices the typo.
          console.error(
            `error: ${id} holds no notification with id ${result.unknown.map((u) => `"${printable(u)}"`).join(', ')} (see durable-agent notifications ${id})`,
          );
          process.exitCode = 1;
        }
      });
    });

  program
    .command('clear-notifications')
    .description('Remove every notification of a run or an inbox (clients resync: the guid changes)')
    .argument('<target>', 'agent run id or inbox:<user>')
    .action(async (rawTarget: string) => {
      const { requireTarget, sendClearNotifications, withCommandClient } = load();
      const id = requireTarget(rawTarget);
      await withCommandClient(target(), 'clear-notifications', async (client) => {
        await sendClearNotifications(client, id);
      });
      console.log(`Cleared the notifications of ${id}`);
    });

  program
    .command('api')
    .description('Serve the HTTP API and the web UI (token: DURABLE_AGENT_API_TOKEN)')
    .option('--host <address>', 'address to bind; anything but loopback needs a token', DEFAULT_API_HOST)
    .option('--port <port>', 'port (0 = any free port)', port, DEFAULT_API_PORT)
    .action(async (o: { host: string; port: number }) => {
      const { connectClient, loadWorkerConfig } = load();
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
      const { loadApiConfig, startApiServer } = require('../server/api/server') as typeof ApiServer;
      // The token comes only from the environment: a command-line flag would show in `ps` and shell history.
      const config = loadApiConfig();
      const client = await connectClient(target());
      const server = await startApiServer({
        client,
        taskQueue: loadWorkerConfig().taskQueue,
        host: o.host,
        port: o.port,
        token: config.token,
        corsOrigins: config.corsOrigins,
        rateLimit: config.rateLimit,
        ...(config.mcpTools ? { mcp: { tools: config.mcpTools } } : {}),
      }).catch(async (err: unknown) => {
        await client.connection.close();
        throw err;
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
      const web = require('../server/web/assets') as typeof WebAssets;
      // Built by startApiServer already; this prints what a page weighs.
      console.log(web.describeWeight(await web.webAssets()));
      console.log(
        `durable-agent API listening on ${server.url} (${config.token ? 'bearer token required' : 'no token: loopback only'}); web UI at ${server.url}/`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      await client.connection.close();
    });
}
