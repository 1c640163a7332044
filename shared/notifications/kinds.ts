/**
 * The notification vocabulary without a schema library: types and priorities. The browser code
 * (web/) imports it as it is, so it stays free of zod.
 */

/** Kinds of notification; a UI picks icon and colour by it. */
export const NOTIFICATION_TYPES = ['info', 'success', 'warning', 'error', 'progress'] as const;

/** One of {@link NOTIFICATION_TYPES}. */
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Type used when a producer gives none. */
export const DEFAULT_NOTIFICATION_TYPE: NotificationType = 'info';

/**
 * Urgency levels. They are numbers, not names, because producers (models, HTTP clients) send them
 * as numbers and UIs sort by them; the prompt documents these exact values and a test keeps it so.
 */
export const NotificationPriority = Object.freeze({ NORMAL: 10, HIGH: 20 } as const);

/** One of the values of {@link NotificationPriority} (`10 | 20`). */
export type NotificationPriority = (typeof NotificationPriority)[keyof typeof NotificationPriority];

/** Every valid priority value, derived from {@link NotificationPriority}, lowest first. */
export const NOTIFICATION_PRIORITIES: readonly NotificationPriority[] = Object.freeze(
  Object.values(NotificationPriority).sort((a, b) => a - b),
);
