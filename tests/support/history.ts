import type { History } from '../../cli/debug/history';

/** Activity types a run scheduled, in history order (one per model call and per tool call). */
export function scheduledActivityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}
