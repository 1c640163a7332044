/**
 * Byte budgets for everything the project sends to Temporal or keeps in workflow state, each
 * named after the Temporal limit it protects. Sizes are encoded bytes: the UTF-8 length of the
 * JSON a payload converter writes, not string lengths (a CJK character is three bytes, a quote
 * inside a string two).
 *
 * Pure and deterministic (no Node built-ins), so workflow code, activities and clients all import
 * it. Every door (tool, CLI, HTTP API, signal/update payload, workflow input) checks against these
 * numbers before sending, so an over-budget value is refused or truncated with a message instead
 * of failing a workflow task later.
 */

/** Temporal's own limits (server defaults), which the budgets below stay under. */
export const TEMPORAL_LIMITS = Object.freeze({
  /** The server refuses any single payload (input, result, signal, query answer) over this. */
  payloadBytes: 2 * 1024 * 1024,
  /** The server logs a warning for payloads over this. */
  payloadWarnBytes: 512 * 1024,
  /** The server terminates a workflow whose history grows past this. */
  historyBytes: 50 * 1024 * 1024,
  /** … or past this many events. */
  historyEvents: 51_200,
  /** Default largest gRPC message a client receives (query results travel in one). */
  grpcMessageBytes: 4 * 1024 * 1024,
  /** Longest workflow id (and other ids) the server accepts (`limit.maxIDLength`). */
  idBytes: 1000,
} as const);

/**
 * The project's budgets. Every figure leaves head-room under the limit it protects, because a
 * payload carries envelope fields (metadata, encoding) and several values can share one message.
 */
export const SIZE_BUDGETS = Object.freeze({
  // ---- notifications (protect: signal payload, inbox state in continue-as-new input and queries)
  /** `title` of a notification. */
  notificationTitleBytes: 1024,
  /** `message` of a notification. */
  notificationMessageBytes: 16 * 1024,
  /** `detail` (expandable HTML) of a notification. */
  notificationDetailBytes: 64 * 1024,
  /** `id` and `group` of a notification. */
  notificationIdBytes: 256,
  /** One whole notification as JSON (its fields' budgets plus escaping and the other fields). */
  notificationBytes: 96 * 1024,
  /**
   * All notifications a run or inbox keeps, as JSON. Over it the oldest are evicted, like over the
   * count capacity. Protects: the continue-as-new input and the `notifications` query answer
   * (payload limit), with room for the change log and the rest of the carried state.
   */
  notificationStateBytes: 1024 * 1024,
  /**
   * Ids (with a content fingerprint) of the most recently evicted notifications a run or inbox
   * remembers, so that a producer's retry of one does not create it again; in number and in JSON
   * bytes. Protects: the continue-as-new input (carried with the list).
   */
  notificationTombstones: 1000,
  notificationTombstoneBytes: 64 * 1024,
  /**
   * Raw `notify` signals one run (of an agent run or an inbox) takes, in bytes and in number; later
   * ones are dropped and counted until the run continues as new. A signal cannot be refused (it is
   * in history before the workflow sees it), so this bounds the work a flood can put into one
   * workflow task: past the 5 s a task may run, every retry would hold more signals and the
   * workflow could never run again. Twice the history budget a run continues as new at, so a run
   * continues before it meets it unless signals come faster than it can close. Protects: the
   * workflow task timeout, and through it the history limits. (The `notify` update is refused
   * while busy instead, and producers use it.)
   */
  notifySignalBytesPerRun: 8 * 1024 * 1024,
  notifySignalsPerRun: 4_000,

  // ---- agent runs (protect: activity inputs/results, workflow input, continue-as-new input)
  /** The agent workflow's input (task, system prompt, settings); it is re-sent on each continue-as-new. */
  agentInputBytes: 256 * 1024,
  /**
   * The run's output schema (`output`), as JSON: part of the agent input, and sent with every model
   * call of the run, so it stays small beside the model input's budget.
   */
  outputSchemaBytes: 16 * 1024,
  /** A tool result kept by value in history; larger ones go to the content store by reference. */
  inlineToolResultBytes: 4 * 1024,
  /** The preview of a by-reference tool result that history keeps (for transcripts and UIs). */
  toolResultPreviewBytes: 1024,
  /** The most one tool result may hold at all (by reference); more is truncated with a notice. */
  toolResultBytes: 1024 * 1024,
  /** Arguments of one tool call, as the model sent them. */
  toolArgumentsBytes: 64 * 1024,
  /** The model activity's input: references plus what is new since the last call. */
  modelInputBytes: 512 * 1024,
  /** The model activity's output (answer text and tool calls). */
  modelOutputBytes: 256 * 1024,
  /**
   * A continue-as-new input as a whole (the agent input plus everything the run carries:
   * conversation references, notifications, events, citations, the recent transcript), with
   * room under the payload limit for the envelope.
   */
  continueAsNewInputBytes: 1900 * 1024,
  /** The run's recent events kept for live progress (`events` query). */
  eventsBytes: 64 * 1024,
  /** The run's citation records (`citations` query, carried over). */
  citationsBytes: 192 * 1024,
  /** The recent transcript a run keeps for the `transcript` query. */
  transcriptBytes: 64 * 1024,
  /**
   * The part of the recent events and transcript a run carries into continue-as-new: enough for
   * live progress and the `transcript` query to go on (history and the content store keep it all),
   * small so a continue-as-new adds little history.
   */
  carriedEventsBytes: 16 * 1024,
  carriedTranscriptBytes: 32 * 1024,
  /** One user message sent into a running agent; longer ones are cut with a notice. */
  userMessageBytes: 16 * 1024,
  /** User messages waiting for the next model turn, together; more are refused with an event. */
  pendingUserMessagesBytes: 64 * 1024,

  // ---- tools' argument schemas (protect: the workflow task that checks arguments against them)
  /**
   * One tool's argument JSON Schema (an MCP tool's, an own tool's) as JSON: the workflow walks it
   * when a run offers the tool and follows it on every call; a larger schema is refused, saying so.
   */
  toolSchemaBytes: 32 * 1024,

  // ---- MCP tools (protect: the discovery result, the continue-as-new input that carries it)
  /** One MCP tool's spec (name, description, input schema) as JSON; a larger tool is skipped, saying so. */
  mcpToolSpecBytes: 32 * 1024,
  /** Every MCP tool a run keeps (its catalog); tools past it are skipped, saying so. */
  mcpCatalogBytes: 256 * 1024,

  // ---- own tools (protect: the catalog a run gets from the worker and carries across continue-as-new)
  /** Every own tool a run names, as its catalog (specs with JSON Schemas); more fails the run's start, saying so. */
  ownToolCatalogBytes: 256 * 1024,

  // ---- databases (protect: the worker's memory, before any result reaches a payload)
  /**
   * Bytes one SQL statement's session may receive from the database server. Counted on the socket
   * while rows arrive, so one huge value is cut off mid-row instead of being held whole.
   */
  sqlWireBytes: 8 * 1024 * 1024,

  // ---- identifiers (protect: the server's id length limit, and terminals and logs that show ids)
  /** A run's workflow id given with `run --id` or as a notification target. */
  runIdBytes: 256,
  /** The user of an inbox (`inbox:<user>`). */
  inboxUserBytes: 128,
  /**
   * A schedule's id, which its runs' ids start with: Temporal names each run `<id>-<time>`
   * (`nightly-2026-12-04T09:00:00Z`, 21 more characters), and that id must fit {@link runIdBytes}.
   */
  scheduleIdBytes: 200,

  // ---- queries (protect: the payload limit on a query answer)
  /** Any query answer the project defines; lists page or trim to fit and say so. */
  queryResultBytes: 1536 * 1024,

  // ---- history (protect: the 50 MB / 51,200-event termination)
  /** A long-lived workflow continues as new once its history passes this many bytes. */
  continueAsNewHistoryBytes: 4 * 1024 * 1024,
  /** … or this many events. */
  continueAsNewHistoryEvents: 4_000,
  /**
   * A workflow whose history passed this (continue-as-new is overdue, e.g. under a flood) refuses
   * new updates in their validators, which keeps them out of history, until it has continued.
   */
  refuseUpdatesHistoryBytes: 16 * 1024 * 1024,
  /** … or this many events (the same protection against the 51,200-event limit). */
  refuseUpdatesHistoryEvents: 16_000,
} as const);

/** Names of {@link SIZE_BUDGETS}. */
export type SizeBudgetName = keyof typeof SIZE_BUDGETS;

/** UTF-8 length of a string, counted without encoding it (workflow code has no Buffer). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** Bytes of a value as a JSON payload (`undefined` counts as nothing). */
export function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8Bytes(text);
}

/**
 * The longest prefix of `text` whose UTF-8 length is at most `maxBytes`, cut between code points
 * (never inside a surrogate pair).
 */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    let size = 1;
    let width = 1;
    if (c >= 0x80 && c < 0x800) size = 2;
    else if (c >= 0x800) {
      const next = text.charCodeAt(i + 1);
      if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        size = 4;
        width = 2;
      } else size = 3;
    }
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += width;
  }
  return text.slice(0, i);
}

/** A human size: `512 B`, `64 KiB`, `1.5 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trimNumber(bytes / 1024)} KiB`;
  return `${trimNumber(bytes / (1024 * 1024))} MiB`;
}

function trimNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1).replace(/\.0$/, '');
}

/** What {@link truncateUtf8} returns. */
export interface Truncated {
  text: string;
  /** True when the text was cut. */
  truncated: boolean;
  /** UTF-8 length of the original text. */
  originalBytes: number;
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes including a notice that says how much was cut
 * (so a reader — a model, a person — knows the text is partial). Texts within budget come back
 * unchanged.
 */
export function truncateUtf8(text: string, maxBytes: number, what = 'text'): Truncated {
  const originalBytes = utf8Bytes(text);
  if (originalBytes <= maxBytes) return { text, truncated: false, originalBytes };
  const notice = `\n… [${what} truncated: ${formatBytes(originalBytes)} is over the ${formatBytes(maxBytes)} budget]`;
  const keep = utf8Prefix(text, Math.max(0, maxBytes - utf8Bytes(notice)));
  return { text: `${keep}${notice}`, truncated: true, originalBytes };
}

/**
 * The message for a value over its budget, naming what it is, its size and the budget, so the
 * producer knows what to shrink.
 */
export function overBudgetMessage(what: string, bytes: number, budget: number): string {
  return `${what} is ${formatBytes(bytes)} (UTF-8), over its budget of ${formatBytes(budget)}`;
}
