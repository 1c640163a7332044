/**
 * Notification vocabulary shared by workflows, activities and clients: types, priorities, defaults,
 * limits, the item shape, and the validator whose error messages are part of the notify_user contract.
 *
 * Everything here is pure and deterministic, so workflow code may import it.
 */
import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { SIZE_BUDGETS, jsonBytes, overBudgetMessage, utf8Bytes } from '../temporal-limits';

export {
  DEFAULT_NOTIFICATION_TYPE,
  NOTIFICATION_PRIORITIES,
  NOTIFICATION_TYPES,
  NotificationPriority,
} from './kinds';
export type { NotificationType } from './kinds';
import type { NotificationType } from './kinds';
import {
  DEFAULT_NOTIFICATION_TYPE,
  NOTIFICATION_PRIORITIES,
  NOTIFICATION_TYPES,
  NotificationPriority,
} from './kinds';

/** Notifications a state keeps before the oldest are evicted. */
export const DEFAULT_MAX_NOTIFICATIONS = 100;

/**
 * Change-log entries a state keeps for incremental sync. A client further behind than this gets a
 * full resync instead of a diff; the bound keeps state small enough to carry through continue-as-new.
 */
export const DEFAULT_MAX_UPDATES = 1000;

/** Largest accepted length, in UTF-16 code units, of each text field of a notification. */
export const NOTIFICATION_LIMITS = Object.freeze({
  title: 200,
  message: 10_000,
  detail: 50_000,
  id: 200,
  group: 200,
} as const);

/**
 * Byte budgets (UTF-8) of the text fields, on top of the character limits: a character can take up
 * to four bytes, and what Temporal limits is bytes. Defined in `shared/temporal-limits.ts`.
 */
export const NOTIFICATION_FIELD_BUDGETS = Object.freeze({
  title: SIZE_BUDGETS.notificationTitleBytes,
  message: SIZE_BUDGETS.notificationMessageBytes,
  detail: SIZE_BUDGETS.notificationDetailBytes,
  id: SIZE_BUDGETS.notificationIdBytes,
  group: SIZE_BUDGETS.notificationIdBytes,
} as const);

/** Producer-specific defaults applied by {@link validateNotificationInput}. */
export interface NotificationDefaults {
  /** Priority when the input gives none. */
  readonly priority: NotificationPriority;
  /** Display time in seconds when the input gives none. */
  readonly displayTime: number;
  /**
   * What a negative or non-numeric display time does: `fallback` uses {@link displayTime};
   * `reject` fails validation so the producer (a model) can correct itself.
   */
  readonly onInvalidDisplayTime: 'fallback' | 'reject';
}

/**
 * Defaults for the agent's notify_user tool: an agent speaks up rarely and when it does the user
 * should notice, hence HIGH priority and a 30 s display time. A bad `timeout` is reported back to
 * the model rather than silently replaced.
 */
export const AGENT_TOOL_NOTIFICATION_DEFAULTS: NotificationDefaults = Object.freeze({
  priority: NotificationPriority.HIGH,
  displayTime: 30,
  onInvalidDisplayTime: 'reject',
});

/**
 * Defaults for notifications created through the HTTP API or the CLI: NORMAL priority and 3 s on
 * screen; a negative or non-numeric display time falls back to 3 s.
 */
export const API_NOTIFICATION_DEFAULTS: NotificationDefaults = Object.freeze({
  priority: NotificationPriority.NORMAL,
  displayTime: 3,
  onInvalidDisplayTime: 'fallback',
});

/**
 * The arguments a producer sends: notify_user tool arguments (`timeout`) and API/CLI bodies
 * (`display_time`) alike. Use it to generate the JSON Schema the model sees and for producer types.
 *
 * Do not validate with it: {@link validateNotificationInput} is the contract (check order, exact
 * messages, numeric-string priorities, per-producer defaults).
 */
export const NotificationInputSchema = schemaOnce('shared/notifications/schema#NotificationInputSchema', () =>
  z.object({
    message: z.string().max(NOTIFICATION_LIMITS.message).describe('Text shown to the user (required)'),
    title: z.string().max(NOTIFICATION_LIMITS.title).optional().describe('Short heading'),
    detail: z
      .string()
      .max(NOTIFICATION_LIMITS.detail)
      .optional()
      .describe('Longer content shown when the user expands the notification; may contain HTML'),
    type: z
      .enum(NOTIFICATION_TYPES)
      .optional()
      .describe('info (plain notes), success (completed tasks only), warning, error, progress; default info'),
    priority: z
      .literal(NOTIFICATION_PRIORITIES)
      .optional()
      .describe('20 high urgency, 10 normal urgency; omit for high'),
    timeout: z
      .number()
      .nonnegative()
      .optional()
      .describe('Seconds the notification stays on screen; default 30'),
    display_time: z
      .number()
      .nonnegative()
      .optional()
      .describe('Seconds on screen (API/CLI name of timeout; wins when both are given)'),
    id: z
      .string()
      .max(NOTIFICATION_LIMITS.id)
      .optional()
      .describe('Reuse an id to update that notification in place, e.g. for progress'),
    group: z
      .string()
      .max(NOTIFICATION_LIMITS.group)
      .optional()
      .describe('Groups related notifications, e.g. all from one job'),
  }),
);

/** What a producer sends; see {@link NotificationInputSchema}. */
export type NotificationInput = z.input<typeof NotificationInputSchema>;

/** An input that passed {@link validateNotificationInput}, with defaults applied. */
export interface ValidNotificationInput {
  type: NotificationType;
  priority: NotificationPriority;
  message: string;
  title: string;
  /** Expandable HTML content. */
  detail: string;
  /** Seconds on screen. */
  display_time: number;
  /** Absent when the producer gave none (or an empty string): the state machine assigns one. */
  id?: string;
  group: string;
}

/** Outcome of {@link validateNotificationInput}. */
export type NotificationValidation =
  | { ok: true; value: ValidNotificationInput }
  | {
      ok: false;
      /** What is wrong and what to fix; may quote (a bounded prefix of) the rejected value. */
      error: string;
      /**
       * The fields at fault (`(notification)` for the whole), so a caller can report or log the
       * failure without echoing the value.
       */
      fields: string[];
    };

/** One stored notification, as queries return it. */
export const NotificationSchema = schemaOnce('shared/notifications/schema#NotificationSchema', () =>
  z.object({
    /** Position in the list, 0 = oldest; re-assigned when old notifications are evicted. */
    no: z.number().int().nonnegative(),
    id: z.string().min(1).max(NOTIFICATION_LIMITS.id),
    type: z.enum(NOTIFICATION_TYPES),
    priority: z.literal(NOTIFICATION_PRIORITIES),
    title: z.string(),
    message: z.string(),
    detail: z.string(),
    /** ISO 8601 time of creation or of the last in-place update. */
    timestamp: z.iso.datetime({ offset: true }),
    display_time: z.number().nonnegative(),
    read: z.boolean(),
    group: z.string(),
  }),
);

/** One stored notification; see {@link NotificationSchema}. */
export type Notification = z.infer<typeof NotificationSchema>;

/** Payload of "mark read": either `ids` (unknown ids are ignored) or `all: true`, not both. */
export const MarkReadInputSchema = schemaOnce('shared/notifications/schema#MarkReadInputSchema', () =>
  z
    .object({
      ids: z.array(z.string().min(1).max(NOTIFICATION_LIMITS.id)).max(10_000).optional(),
      all: z.boolean().optional(),
    })
    .strict()
    .refine((v) => (v.ids !== undefined) !== (v.all === true), {
      error: 'give either ids (a list of notification ids) or all: true, not both',
    }),
);

/** Payload of "mark read"; see {@link MarkReadInputSchema}. */
export type MarkReadInput = z.infer<typeof MarkReadInputSchema>;

/** Longest echo of a rejected value in an error message, so a huge bad value cannot flood the model. */
const MAX_ECHO = 200;

/** Renders a rejected value for an error message: strings as they are, everything else as JSON. */
function echo(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}…` : text;
}

/** Missing means absent or null: models often send null for optional arguments. */
function isMissing(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** Accepts a priority value as a number or a string of digits ("20"), as models send either. */
function parsePriority(value: unknown): NotificationPriority | undefined {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d+\s*$/.test(value)
        ? Number(value)
        : NaN;
  return NOTIFICATION_PRIORITIES.find((p) => p === n);
}

/** A finite, non-negative number of seconds, given as a number or a numeric string; else undefined. */
function parseSeconds(value: unknown): number | undefined {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)
        ? Number(value)
        : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Type and length checks run after the three contract checks; messages name the field. */
const FieldsSchema = schemaOnce('shared/notifications/schema#FieldsSchema', () =>
  z.object({
    message: z.string({ error: 'message must be a string' }).max(NOTIFICATION_LIMITS.message, {
      error: `message must be at most ${NOTIFICATION_LIMITS.message} characters`,
    }),
    title: z
      .string({ error: 'title must be a string' })
      .max(NOTIFICATION_LIMITS.title, {
        error: `title must be at most ${NOTIFICATION_LIMITS.title} characters`,
      })
      .nullish(),
    detail: z
      .string({ error: 'detail must be a string' })
      .max(NOTIFICATION_LIMITS.detail, {
        error: `detail must be at most ${NOTIFICATION_LIMITS.detail} characters`,
      })
      .nullish(),
    id: z
      .string({ error: 'id must be a string' })
      .max(NOTIFICATION_LIMITS.id, { error: `id must be at most ${NOTIFICATION_LIMITS.id} characters` })
      .nullish(),
    group: z
      .string({ error: 'group must be a string' })
      .max(NOTIFICATION_LIMITS.group, {
        error: `group must be at most ${NOTIFICATION_LIMITS.group} characters`,
      })
      .nullish(),
  }),
);

/**
 * Validates a producer's raw input and applies `defaults`.
 *
 * Checks run in the contract's order and the first failure wins, with exactly these messages:
 * 1. `type` (absent or null means {@link DEFAULT_NOTIFICATION_TYPE}; otherwise one of
 *    {@link NOTIFICATION_TYPES}, case-sensitive) → `Invalid notification type: X`
 * 2. `priority` (absent or null means `defaults.priority`; otherwise a value of
 *    {@link NotificationPriority} as a number or digit string, so `"20"` passes and `15` fails)
 *    → `Invalid notification priority: X`
 * 3. `message` (absent, null, empty or whitespace-only) → `Message is required`
 *
 * Then, with messages naming the field: field types and the {@link NOTIFICATION_LIMITS} lengths,
 * the {@link NOTIFICATION_FIELD_BUDGETS} byte budgets (`detail is 150 KiB (UTF-8), over its budget
 * of 64 KiB`), the whole notification's JSON against `SIZE_BUDGETS.notificationBytes`,
 * and the display time: `display_time`, else `timeout` (seconds, a number or numeric string, ≥ 0);
 * a negative or non-numeric one falls back to `defaults.displayTime` or is rejected, per
 * `defaults.onInvalidDisplayTime`. An empty `id` counts as none. Unknown keys are ignored; input
 * that is not an object is treated as empty. Never throws.
 */
export function validateNotificationInput(
  raw: unknown,
  defaults: NotificationDefaults,
): NotificationValidation {
  const input: Record<string, unknown> =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};

  const rawType = input.type;
  const type = isMissing(rawType) ? DEFAULT_NOTIFICATION_TYPE : NOTIFICATION_TYPES.find((t) => t === rawType);
  if (type === undefined) {
    return { ok: false, error: `Invalid notification type: ${echo(rawType)}`, fields: ['type'] };
  }

  const rawPriority = input.priority;
  const priority = isMissing(rawPriority) ? defaults.priority : parsePriority(rawPriority);
  if (priority === undefined) {
    return { ok: false, error: `Invalid notification priority: ${echo(rawPriority)}`, fields: ['priority'] };
  }

  const rawMessage = input.message;
  if (isMissing(rawMessage) || (typeof rawMessage === 'string' && rawMessage.trim() === '')) {
    return { ok: false, error: 'Message is required', fields: ['message'] };
  }

  const fields = FieldsSchema.safeParse(input);
  if (!fields.success) {
    return {
      ok: false,
      error: fields.error.issues.map((i) => i.message).join('; '),
      fields: fields.error.issues.map((i) => String(i.path[0] ?? '(notification)')),
    };
  }
  const overBudget = (Object.keys(NOTIFICATION_FIELD_BUDGETS) as (keyof typeof NOTIFICATION_FIELD_BUDGETS)[])
    .map((field) => {
      const text = fields.data[field];
      const bytes = typeof text === 'string' ? utf8Bytes(text) : 0;
      const budget = NOTIFICATION_FIELD_BUDGETS[field];
      return bytes > budget ? { field, message: overBudgetMessage(field, bytes, budget) } : undefined;
    })
    .filter((issue) => issue !== undefined);
  if (overBudget.length > 0) {
    return {
      ok: false,
      error: overBudget.map((i) => i.message).join('; '),
      fields: overBudget.map((i) => i.field),
    };
  }

  const displayTimeKey = isMissing(input.display_time) ? 'timeout' : 'display_time';
  const rawDisplayTime = input[displayTimeKey];
  let displayTime = isMissing(rawDisplayTime) ? defaults.displayTime : parseSeconds(rawDisplayTime);
  if (displayTime === undefined) {
    if (defaults.onInvalidDisplayTime === 'reject') {
      return {
        ok: false,
        error: `Invalid notification ${displayTimeKey}: ${echo(rawDisplayTime)} (give seconds as a number ≥ 0)`,
        fields: [displayTimeKey],
      };
    }
    displayTime = defaults.displayTime;
  }

  const { message, title, detail, id, group } = fields.data;
  const value: ValidNotificationInput = {
    type,
    priority,
    message,
    title: title ?? '',
    detail: detail ?? '',
    display_time: displayTime,
    ...(id ? { id } : {}),
    group: group ?? '',
  };
  // Escaping can grow text past its fields' budgets (a quote is two bytes in JSON), so the whole
  // notification, as it is stored and sent, has a budget of its own.
  const bytes = storedNotificationBytes(value);
  if (bytes > SIZE_BUDGETS.notificationBytes) {
    return {
      ok: false,
      error: `${overBudgetMessage('the notification as JSON', bytes, SIZE_BUDGETS.notificationBytes)}: shorten detail or message`,
      fields: ['(notification)'],
    };
  }
  return { ok: true, value };
}

/** A stored notification's fields that the producer does not choose, at their widest. */
const STORED_EXTRA = {
  no: 999_999_999,
  id: '00000000-0000-4000-8000-000000000000',
  timestamp: '2000-01-01T00:00:00.000Z',
  read: false,
};

/**
 * Bytes of the notification once stored (with its number, id, timestamp and read flag), as JSON: what
 * it adds to a query answer and to the state carried over continue-as-new.
 */
export function storedNotificationBytes(input: ValidNotificationInput): number {
  return jsonBytes({ ...STORED_EXTRA, ...input });
}
