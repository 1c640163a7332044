import { checkSql, MAX_SQL_LENGTH, REFUSAL_CODES } from '../../activities/sql/guard';
import type { GuardVerdict, SqlDialect } from '../../activities/sql/guard';
import type { AllowedCase, RefusedCase } from '../../testkit/sql-corpus';
import { SQL_CORPUS } from '../../testkit/sql-corpus';

const DIALECTS: SqlDialect[] = ['postgres', 'mysql'];

/** Narrows a verdict to a refusal, failing the test with the verdict when it was allowed. */
function expectRefused(verdict: GuardVerdict): Extract<GuardVerdict, { allowed: false }> {
  if (verdict.allowed) throw new Error(`expected a refusal, got ${JSON.stringify(verdict)}`);
  return verdict;
}

const label = (c: RefusedCase | AllowedCase): string =>
  `${c.name} [${c.allowWrites ? 'writable' : 'read-only'}]`;

describe.each(DIALECTS)('SQL guard, %s', (dialect) => {
  const corpus = SQL_CORPUS[dialect];

  it('has at least 40 hostile statements', () => {
    expect(corpus.hostile.length).toBeGreaterThanOrEqual(40);
  });

  describe('refuses every hostile statement with its code and a reason', () => {
    it.each(corpus.hostile.map((c) => [label(c), c] as const))('%s', async (_name, c) => {
      const verdict = expectRefused(await checkSql({ dialect, sql: c.sql, allowWrites: c.allowWrites }));
      expect(verdict.code).toBe(c.code);
      // A reason the model can act on: why, and what to do instead.
      expect(verdict.reason.length).toBeGreaterThanOrEqual(40);
      expect(verdict.reason).toMatch(/\.$/);
    });
  });

  describe('refuses them whatever the connection mode, unless only the mode was wrong', () => {
    const modeIndependent = corpus.hostile.filter((c) => c.code !== 'write_not_allowed');
    it.each(modeIndependent.map((c) => [label(c), c] as const))('%s, mode flipped', async (_name, c) => {
      const verdict = await checkSql({ dialect, sql: c.sql, allowWrites: !c.allowWrites });
      expect(verdict.allowed).toBe(false);
    });
  });

  describe('allows legitimate reads as read, on read-only and writable connections', () => {
    it.each(corpus.reads.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      for (const allowWrites of [false, true]) {
        const verdict = await checkSql({ dialect, sql: c.sql, allowWrites });
        expect(verdict).toEqual({ allowed: true, kind: 'read', statementType: c.statementType });
      }
    });
  });

  describe('allows legitimate writes as write on a writable connection only', () => {
    it.each(corpus.writes.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      expect(await checkSql({ dialect, sql: c.sql, allowWrites: true })).toEqual({
        allowed: true,
        kind: 'write',
        statementType: c.statementType,
      });
      const readOnly = expectRefused(await checkSql({ dialect, sql: c.sql, allowWrites: false }));
      expect(readOnly.code).toBe('write_not_allowed');
    });
  });

  it('names every statement it found when refusing stacked statements', async () => {
    const verdict = expectRefused(
      await checkSql({ dialect, sql: 'SELECT 1; DROP TABLE customers', allowWrites: true }),
    );
    expect(verdict.code).toBe('multiple_statements');
    expect(verdict.reason).toContain('2 statements');
    expect(verdict.reason).toMatch(/SELECT, DROP/);
  });

  it("passes the parser's message on when the text does not parse", async () => {
    const verdict = expectRefused(await checkSql({ dialect, sql: 'SELECT FROM WHERE', allowWrites: false }));
    expect(verdict.code).toBe('parse_error');
    expect(verdict.reason).toMatch(
      dialect === 'postgres' ? /syntax error at or near "WHERE"/ : /Expected .* but "W" found/,
    );
  });

  it('fails closed, without throwing, on pathologically nested expressions', async () => {
    const sql = `SELECT ${'NOT '.repeat(6000)}true`;
    const verdict = expectRefused(await checkSql({ dialect, sql, allowWrites: false }));
    expect(['parse_error', 'unsupported_syntax']).toContain(verdict.code);
  });

  it('returns a verdict, never throws, for arbitrary text', async () => {
    // Deterministic pseudo-random strings built from the characters that matter to SQL lexers.
    const alphabet = [
      "'",
      '"',
      '`',
      '$',
      '-',
      '#',
      '/',
      '*',
      '!',
      ';',
      '\\',
      '\r',
      '\n',
      ' ',
      'a',
      '1',
      '(',
      ')',
      'SELECT ',
      'DROP ',
    ];
    let seed = 42;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 300; i += 1) {
      const length = 1 + (next() % 24);
      const sql = Array.from({ length }, () => alphabet[next() % alphabet.length]).join('');
      const verdict = await checkSql({ dialect, sql, allowWrites: next() % 2 === 0 });
      expect(typeof verdict.allowed).toBe('boolean');
      if (verdict.allowed) expect(verdict.statementType).toMatch(/^[A-Z]/);
    }
  });
});

describe('SQL guard, across dialects', () => {
  it('uses every refusal code in at least one corpus, so none is dead', () => {
    const used = new Set(DIALECTS.flatMap((d) => SQL_CORPUS[d].hostile.map((c) => c.code)));
    expect(REFUSAL_CODES.filter((code) => !used.has(code))).toEqual([]);
  });

  it('accepts a statement of exactly the maximum length', async () => {
    const sql = `SELECT 1${' '.repeat(MAX_SQL_LENGTH - 'SELECT 1'.length)}`;
    expect(sql).toHaveLength(MAX_SQL_LENGTH);
    expect(await checkSql({ dialect: 'postgres', sql, allowWrites: false })).toMatchObject({ allowed: true });
  });

  it('judges EXPLAIN by whether it executes: plain EXPLAIN of a write is a read', async () => {
    const sql = 'EXPLAIN UPDATE products SET price = 0 WHERE id = 1';
    expect(await checkSql({ dialect: 'postgres', sql, allowWrites: false })).toEqual({
      allowed: true,
      kind: 'read',
      statementType: 'EXPLAIN UPDATE',
    });
    const analyzed = expectRefused(
      await checkSql({
        dialect: 'postgres',
        sql: sql.replace('EXPLAIN', 'EXPLAIN ANALYZE'),
        allowWrites: false,
      }),
    );
    expect(analyzed.code).toBe('write_not_allowed');
  });

  it('still applies the other rules inside a plain EXPLAIN', async () => {
    const verdict = expectRefused(
      await checkSql({ dialect: 'postgres', sql: 'EXPLAIN DELETE FROM orders', allowWrites: false }),
    );
    expect(verdict.code).toBe('missing_where');
  });

  it('rejects an unknown dialect loudly, as the configuration bug it is', async () => {
    const dialect = 'oracle' as SqlDialect;
    await expect(checkSql({ dialect, sql: 'SELECT 1', allowWrites: false })).rejects.toThrow(TypeError);
  });
});
