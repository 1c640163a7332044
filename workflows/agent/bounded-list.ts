import { jsonBytes } from '../../shared/temporal-limits';

/**
 * A list that keeps its newest items within a count and a byte budget (the JSON size of what it
 * holds): pushing past either drops the oldest. Sizes are measured once per item, so a push costs
 * the size of the new item only.
 */
export class BoundedList<T> {
  private readonly items: T[];
  private readonly sizes: number[];
  private bytes: number;

  constructor(
    private readonly maxCount: number,
    private readonly maxBytes: number,
    initial: readonly T[] = [],
  ) {
    this.items = [...initial];
    this.sizes = this.items.map((item) => jsonBytes(item) + 1);
    this.bytes = this.sizes.reduce((a, b) => a + b, 0);
    this.trim(maxBytes);
  }

  /** Appends an item and drops the oldest beyond the bounds. */
  push(item: T): void {
    const size = jsonBytes(item) + 1;
    this.items.push(item);
    this.sizes.push(size);
    this.bytes += size;
    this.trim(this.maxBytes);
  }

  /** Drops the oldest items until at most `maxBytes` (and the count bound) remain; the newest always stays. */
  trim(maxBytes: number): void {
    let drop = 0;
    while (
      drop < this.items.length - 1 &&
      (this.items.length - drop > this.maxCount || this.bytes > maxBytes)
    ) {
      this.bytes -= this.sizes[drop] as number;
      drop += 1;
    }
    if (drop) {
      this.items.splice(0, drop);
      this.sizes.splice(0, drop);
    }
  }

  /** The items, oldest first (read-only view). */
  get all(): readonly T[] {
    return this.items;
  }

  /** How many items it holds. */
  get length(): number {
    return this.items.length;
  }
}
