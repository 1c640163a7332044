/**
 * The safe character set of run ids and inbox users, at every door that takes them (the agent
 * input, notification targets), and the escaping that keeps control characters off terminals.
 */
import { checkTarget } from '../../client/notification-client';
import { AgentInputSchema } from '../../shared/agent';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { inboxUserProblem, printable, runIdProblem } from '../../shared/identifiers';

const HOSTILE = [
  ['NUL', 'run\u0000x'],
  ['ESC', 'run\u001b[31mred'],
  ['right-to-left override', 'run\u202egnp.exe'],
  ['right-to-left mark', 'run\u200fx'],
  ['zero-width space', 'ru\u200bn'],
  ['space', 'my run'],
  ['slash', 'a/b'],
  ['non-ASCII letter', 'rün'],
  ['leading dot', '.hidden'],
] as const;

describe('run ids', () => {
  it.each(['agent-0b6f1c2e', 'inbox:alice', 'nightly.report_2026-11-30', 'a@b+c=d', 'X'])(
    'accepts %s',
    (id) => expect(runIdProblem(id)).toBeNull(),
  );

  it.each(HOSTILE)('refuses a %s, naming the allowed characters without echoing it raw', (_, id) => {
    const problem = runIdProblem(id);
    expect(problem).toMatch(/may contain only ASCII letters, digits and/);
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(problem).not.toMatch(/[\u0000-\u001f\u200b-\u200f\u202a-\u202e]/);
  });

  it('refuses an empty id and one over the budget', () => {
    expect(runIdProblem('')).toMatch(/must not be empty/);
    expect(runIdProblem('a'.repeat(SIZE_BUDGETS.runIdBytes))).toBeNull();
    expect(runIdProblem('a'.repeat(SIZE_BUDGETS.runIdBytes + 1))).toMatch(/at most 256 characters/);
  });
});

describe('inbox users', () => {
  it('accepts plain names and e-mail-like ones', () => {
    expect(inboxUserProblem('alice')).toBeNull();
    expect(inboxUserProblem('ops+oncall@example.com')).toBeNull();
  });

  it.each(HOSTILE)('refuses a %s', (_, user) => {
    expect(inboxUserProblem(user)).toMatch(/may contain only/);
  });

  it('refuses a colon, so inbox:a:b cannot pose as another id', () => {
    expect(inboxUserProblem('a:b')).toMatch(/may contain only/);
  });

  it('is checked in the agent input', () => {
    const base = { task: 't', model: { provider: 'scripted', script: 'demo' } };
    expect(AgentInputSchema.safeParse({ ...base, notify: { user: 'alice' } }).success).toBe(true);
    const bad = AgentInputSchema.safeParse({ ...base, notify: { user: 'al\u001bice' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/inbox user "al\\u001bice" may contain only/);
  });
});

describe('notification targets', () => {
  it('takes run ids and inbox users of the safe set', () => {
    expect(checkTarget(' inbox:alice ')).toEqual({ ok: true, target: 'inbox:alice' });
    expect(checkTarget('agent-1234')).toEqual({ ok: true, target: 'agent-1234' });
  });

  it.each(HOSTILE.filter(([name]) => name !== 'space'))('refuses a %s in either kind', (_, bad) => {
    expect(checkTarget(bad)).toMatchObject({ ok: false, error: expect.stringMatching(/^target: run id/) });
    expect(checkTarget(`inbox:${bad}`)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^target: inbox user/),
    });
  });
});

describe('printable', () => {
  it('writes control and bidi characters as visible escapes', () => {
    expect(printable('a\u001b[2Jb\u0000c\u202ed')).toBe('a\\u001b[2Jb\\u0000c\\u202ed');
    expect(printable('line 1\nline 2\ttab')).toBe('line 1\\u000aline 2\\u0009tab');
    expect(printable('line 1\nline 2\ttab', true)).toBe('line 1\nline 2\ttab');
    expect(printable('plain 中文 ✓')).toBe('plain 中文 ✓');
  });
});
