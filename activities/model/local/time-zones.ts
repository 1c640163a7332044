/**
 * A small model's time zone checked against the places of the IANA database the task names.
 * Qwen2.5-Coder-0.5B writes a zone near the right one ("What time is it in Chicago?" →
 * `America/New_York`) and breaks names apart (`Europe/ Athens`, refused, then `UTC`). So a zone is
 * written without spaces, and when the task names the place of exactly one zone while the model's
 * zone names a place the task does not, that zone is taken instead. A task that names no zone's
 * place ("in Japan", "in UTC"), or several, keeps the model's zone as it is.
 */

/** The IANA zones this runtime knows, by their place in lower case: "new york" → America/New_York. */
let placesCache: Map<string, string> | undefined;

function zonePlaces(): Map<string, string> {
  if (!placesCache) {
    placesCache = new Map();
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      const place = placeOf(zone);
      if (place && !placesCache.has(place)) placesCache.set(place, zone);
    }
  }
  return placesCache;
}

/** The place a zone names: its last part, underscores as spaces, lower case ("America/New_York" → "new york"). */
function placeOf(zone: string): string {
  return (zone.split('/').pop() ?? '').replace(/_/g, ' ').toLowerCase().trim();
}

/** Text in lower case without accents ("São Paulo" → "sao paulo"), hyphens as spaces. */
function plain(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').replace(/-/g, ' ').toLowerCase();
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the text names the place as whole words. */
function names(text: string, place: string): boolean {
  return place !== '' && new RegExp(`(^|[^\\p{L}])${escape(place)}($|[^\\p{L}])`, 'u').test(text);
}

/** The zones whose place the task names. */
export function zonesNamedBy(task: string): string[] {
  const text = plain(task);
  return [...zonePlaces()].filter(([place]) => names(text, place)).map(([, zone]) => zone);
}

/** The zone the run should ask for, given the model's zone and the task (see the module's comment). */
export function mendedTimeZone(zone: string, task: string): string {
  const compact = zone.replace(/\s+/g, '');
  const text = plain(task);
  if (names(text, plain(placeOf(compact)))) return compact;
  const named = zonesNamedBy(task);
  return named.length === 1 ? (named[0] as string) : compact;
}
