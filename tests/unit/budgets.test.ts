import {
  SIZE_BUDGETS,
  TEMPORAL_LIMITS,
  jsonBytes,
  truncateUtf8,
  utf8Bytes,
  utf8Prefix,
} from '../../shared/temporal-limits';

const SAMPLES = [
  '',
  'plain ascii',
  'é ü ß',
  '红黑树实现的排序字典',
  '🙂 emoji 👍🏽',
  'mixed ✓ 中文 and 😀',
  '\u{10FFFF}',
  'lone \ud800 high',
  'lone \udc00 low',
];

describe('utf8Bytes', () => {
  it.each(SAMPLES)('agrees with Buffer.byteLength for %j', (s) => {
    expect(utf8Bytes(s)).toBe(Buffer.byteLength(s, 'utf8'));
  });

  it('counts JSON escaping: a quote costs two bytes, a CJK character three', () => {
    expect(jsonBytes('"')).toBe(4);
    expect(jsonBytes('字')).toBe(5);
    expect(jsonBytes(undefined)).toBe(0);
  });
});

describe('utf8Prefix', () => {
  it('never cuts inside a code point and never exceeds the budget', () => {
    for (const s of SAMPLES) {
      for (let max = 0; max <= Buffer.byteLength(s) + 1; max += 1) {
        const p = utf8Prefix(s, max);
        expect(Buffer.byteLength(p)).toBeLessThanOrEqual(max);
        expect(s.startsWith(p)).toBe(true);
        // Adding the next code point would go over the budget.
        const next = s.slice(p.length).codePointAt(0);
        if (next !== undefined) {
          expect(Buffer.byteLength(p + String.fromCodePoint(next))).toBeGreaterThan(max);
        }
      }
    }
  });
});

describe('truncateUtf8', () => {
  it('keeps text within budget unchanged', () => {
    expect(truncateUtf8('short', 100)).toEqual({ text: 'short', truncated: false, originalBytes: 5 });
  });

  it('cuts over-budget CJK text to the byte budget and says how much was there', () => {
    const text = '排序字典'.repeat(10_000); // 120,000 bytes
    const out = truncateUtf8(text, 16 * 1024, 'detail');
    expect(out.truncated).toBe(true);
    expect(out.originalBytes).toBe(120_000);
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(16 * 1024);
    expect(out.text).toMatch(/detail truncated: 117\.2 KiB is over the 16 KiB budget/);
  });
});

describe('SIZE_BUDGETS', () => {
  it('stay under the Temporal limits they protect', () => {
    expect(
      SIZE_BUDGETS.notificationStateBytes +
        SIZE_BUDGETS.notificationTombstoneBytes +
        SIZE_BUDGETS.eventsBytes +
        SIZE_BUDGETS.citationsBytes,
    ).toBeLessThan(TEMPORAL_LIMITS.payloadBytes);
    expect(SIZE_BUDGETS.continueAsNewInputBytes).toBeLessThan(TEMPORAL_LIMITS.payloadBytes);
    expect(SIZE_BUDGETS.queryResultBytes).toBeLessThan(TEMPORAL_LIMITS.payloadBytes);
    expect(SIZE_BUDGETS.modelInputBytes).toBeLessThanOrEqual(TEMPORAL_LIMITS.payloadWarnBytes);
    expect(SIZE_BUDGETS.notificationBytes).toBeGreaterThanOrEqual(
      SIZE_BUDGETS.notificationTitleBytes +
        SIZE_BUDGETS.notificationMessageBytes +
        SIZE_BUDGETS.notificationDetailBytes,
    );
    expect(SIZE_BUDGETS.continueAsNewHistoryBytes).toBeLessThan(SIZE_BUDGETS.refuseUpdatesHistoryBytes);
    expect(SIZE_BUDGETS.refuseUpdatesHistoryBytes).toBeLessThan(TEMPORAL_LIMITS.historyBytes / 2);
    expect(SIZE_BUDGETS.continueAsNewHistoryEvents).toBeLessThan(TEMPORAL_LIMITS.historyEvents / 4);
  });
});
