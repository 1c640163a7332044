/**
 * A time in the terminal's local time zone (the process's, so `TZ` is respected), with its offset:
 * `2026-12-02 10:27:30 +05:30`. An unreadable time is returned as it is.
 */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  const offset = -d.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} ${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`
  );
}
