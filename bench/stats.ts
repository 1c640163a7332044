/** Percentile of a sample (nearest rank), in the sample's unit. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** `p50 x ms, p95 y ms (n samples)`. */
export function summary(values: number[], unit = 'ms'): string {
  return `p50 ${percentile(values, 50).toFixed(2)} ${unit}, p95 ${percentile(values, 95).toFixed(2)} ${unit} (n=${values.length})`;
}
