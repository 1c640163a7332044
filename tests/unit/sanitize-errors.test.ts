/**
 * The activity boundary for errors: what an activity throws leaves it with its type, message,
 * stack and cause only, credentials masked, and no promise of a retry that will not happen.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DatabasesConfigSchema } from '../../activities/sql/config';
import { SqlConnections } from '../../activities/sql/connections';
import { redactSecrets, secretsOfConfig } from '../../shared/redact-secrets';
import { sanitizeError } from '../../workers/observability/sanitize-errors';

const SECRET = 'Canary0secret9';

function urlError(): Error {
  try {
    new URL(`mysql://user:${SECRET}@127.0.0.1:notaport/db`);
  } catch (err) {
    return err as Error;
  }
  throw new Error('the URL parsed');
}

describe('sanitizeError', () => {
  it('drops the input a URL error carries, keeping its type and code', () => {
    const raw = urlError();
    expect(JSON.stringify({ ...raw })).toContain(SECRET); // Node keeps the URL in `input`
    const safe = sanitizeError(raw, []) as Error & { code?: string };
    expect(safe.name).toBe('TypeError');
    expect(safe.code).toBe('ERR_INVALID_URL');
    expect(Object.keys(safe)).not.toContain('input');
    expect(JSON.stringify({ ...safe, message: safe.message, stack: safe.stack })).not.toContain(SECRET);
  });

  it('masks credentials in messages, stacks and causes, by value and by shape', () => {
    const cause = Object.assign(new Error(`connect to postgres://app:${SECRET}@db:5432/x failed`), {
      config: { headers: { authorization: `Bearer ${SECRET}` } },
    });
    const err = new Error(`request with Authorization: Bearer abcdefgh123 and ?api_key=${SECRET} failed`, {
      cause,
    });
    const safe = sanitizeError(err, [SECRET]) as Error;
    const everything = JSON.stringify({
      m: safe.message,
      s: safe.stack,
      c: (safe.cause as Error).message,
      k: { ...(safe.cause as object) },
    });
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('abcdefgh123');
    expect(safe.message).toBe('request with Authorization: *** and ?api_key=*** failed');
    expect((safe.cause as Error).message).toBe('connect to postgres://***@db:5432/x failed');
  });

  it('keeps an ApplicationFailure’s type, retryability and retry delay', () => {
    const failure = ApplicationFailure.create({
      type: 'SearchRateLimited',
      message: `throttled for key ${SECRET}; retrying in 2 s as asked.`,
      nextRetryDelay: 2000,
    });
    const safe = sanitizeError(failure, [SECRET]) as ApplicationFailure;
    expect(safe).toBeInstanceOf(ApplicationFailure);
    expect([safe.type, safe.nonRetryable, safe.nextRetryDelay]).toEqual(['SearchRateLimited', false, 2000]);
    expect(safe.message).toBe('throttled for key ***; retrying in 2 s as asked.');
  });

  it('says the attempts are over instead of "will retry" on the last attempt and for final errors', () => {
    const transient = ApplicationFailure.retryable(
      'Database connection "a" failed during the statement; will retry',
      'SqlTransientError',
    );
    expect((sanitizeError(transient, []) as Error).message).toContain('will retry');
    expect((sanitizeError(transient, [], { finalAttempt: 5 }) as Error).message).toBe(
      'Database connection "a" failed during the statement; gave up after 5 attempts.',
    );
    const final = ApplicationFailure.nonRetryable('model server unreachable; retrying.', 'ModelUnavailable');
    expect((sanitizeError(final, []) as Error).message).toBe('model server unreachable; not retried.');
  });

  it('leaves cancellation alone', () => {
    const cancelled = new CancelledFailure('cancelled');
    expect(sanitizeError(cancelled, [SECRET])).toBe(cancelled);
  });
});

describe('secretsOfConfig', () => {
  it('finds passwords, keys and the credentials inside URLs', () => {
    const found = secretsOfConfig({
      databases: { a: { engine: 'postgres', url: 'postgres://u:p%40ss@h/db' } },
      email: { accounts: { x: { password: 'mailpw', smtp: { host: 'smtp' } } } },
      models: { openai: { apiKey: 'sk-abc', baseUrl: 'https://api.openai.com/v1' } },
    });
    expect(found).toEqual(
      expect.arrayContaining(['postgres://u:p%40ss@h/db', 'p%40ss', 'p@ss', 'mailpw', 'sk-abc']),
    );
    expect(found).not.toContain('https://api.openai.com/v1');
    expect(redactSecrets('login as u with p@ss failed', found)).toBe('login as u with *** failed');
  });
});

describe('a malformed connection URL', () => {
  it('is a final SqlConfigError naming the connection, never the URL', () => {
    const url = `mysql://user:${SECRET}@127.0.0.1:notaport/db`;
    const parsed = DatabasesConfigSchema.safeParse({ reports: { engine: 'mysql', url } });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).not.toContain(SECRET);
    expect(parsed.error?.issues[0]?.message).toMatch(/^the URL is malformed \(expected mysql:\/\//);

    // A configuration built in code skips the file check; the call still fails at once, for good.
    const config = { ...DatabasesConfigSchema.parse({ reports: { engine: 'mysql', url: 'mysql://h/db' } }) };
    (config.reports as { url: string }).url = url;
    const connections = new SqlConnections(config);
    let thrown: unknown;
    try {
      connections.resolve('reports');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: 'SqlConfigError', nonRetryable: true });
    expect((thrown as Error).message).toMatch(/^Database connection "reports": the URL is malformed/);
    expect((thrown as Error).message).not.toContain(SECRET);
  });

  it('of the wrong scheme is refused too', () => {
    const parsed = DatabasesConfigSchema.safeParse({ a: { engine: 'postgres', url: 'mysql://u:p@h/db' } });
    expect(parsed.error?.issues[0]?.message).toMatch(/scheme must be postgres: or postgresql:/);
  });
});
