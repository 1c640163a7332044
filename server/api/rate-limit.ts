/**
 * A per-key token bucket: the HTTP API's limit on changes per target, so one noisy producer cannot
 * flood an inbox or a run (each change is history the workflow must carry until it continues as
 * new). In memory, per API process.
 */

/** A burst of `burst` changes, refilled at `perSecond`. */
export interface RateLimit {
  burst: number;
  perSecond: number;
}

/** A rate limiter over many keys. */
export interface RateLimiter {
  readonly limit: RateLimit;
  /** Takes one token for `key`: 0 when allowed, else the milliseconds until one is available. */
  take(key: string): number;
}

/** Buckets kept at most; full buckets are forgotten first (they hold no information). */
const MAX_KEYS = 10_000;

/** A token-bucket limiter; `now` is injectable for tests. */
export function createRateLimiter(limit: RateLimit, now: () => number = () => Date.now()): RateLimiter {
  if (!(limit.burst >= 1) || !(limit.perSecond > 0)) {
    throw new RangeError(`rate limit needs burst ≥ 1 and perSecond > 0, got ${JSON.stringify(limit)}`);
  }
  const buckets = new Map<string, { tokens: number; at: number }>();
  const refill = (b: { tokens: number; at: number }, t: number) => {
    b.tokens = Math.min(limit.burst, b.tokens + ((t - b.at) / 1000) * limit.perSecond);
    b.at = t;
  };
  return {
    limit,
    take(key) {
      const t = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= MAX_KEYS) {
          for (const [k, b] of buckets) {
            refill(b, t);
            if (b.tokens >= limit.burst) buckets.delete(k);
          }
        }
        bucket = { tokens: limit.burst, at: t };
        buckets.set(key, bucket);
      }
      refill(bucket, t);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.ceil(((1 - bucket.tokens) / limit.perSecond) * 1000);
    },
  };
}
