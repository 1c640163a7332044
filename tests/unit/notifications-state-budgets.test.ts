import { SIZE_BUDGETS, jsonBytes } from '../../shared/temporal-limits';
import {
  API_NOTIFICATION_DEFAULTS,
  NOTIFICATION_FIELD_BUDGETS,
  storedNotificationBytes,
  validateNotificationInput,
} from '../../shared/notifications/schema';
import type { ValidNotificationInput } from '../../shared/notifications/schema';
import {
  NotificationStateSchema,
  add,
  markRead,
  createNotificationState,
} from '../../shared/notifications/state';
import { NotificationSizes, notificationsBytes } from '../../shared/notifications/sizes';
import type { NotificationState } from '../../shared/notifications/state';

let ids = 0;
const ctx = { now: '2026-11-30T10:00:00.000Z', newId: () => `id-${++ids}` };

function validOf(raw: Record<string, unknown>): ValidNotificationInput {
  const r = validateNotificationInput(raw, API_NOTIFICATION_DEFAULTS);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

/** The largest notification the validator accepts: every field at (or near) its byte budget. */
function largest(tag: string): ValidNotificationInput {
  return validOf({
    // 2-byte characters: the message's byte budget binds before its character limit.
    message: `${tag} ${'é'.repeat((SIZE_BUDGETS.notificationMessageBytes - tag.length - 1) >> 1)}`,
    // 3-byte characters: the detail's byte budget binds long before its character limit.
    detail: '界'.repeat(Math.floor(SIZE_BUDGETS.notificationDetailBytes / 3)),
    title: 't'.repeat(200),
  });
}

describe('notification byte budgets', () => {
  it('refuses a field over its byte budget, naming the field, its size and the budget', () => {
    // 50,000 CJK characters: inside the 50,000-character limit, 146.5 KiB of UTF-8.
    const r = validateNotificationInput(
      { message: 'm', detail: '界'.repeat(50_000) },
      API_NOTIFICATION_DEFAULTS,
    );
    expect(r).toEqual({
      ok: false,
      error: 'detail is 146.5 KiB (UTF-8), over its budget of 64 KiB',
      fields: ['detail'],
    });
  });

  it.each(['message', 'detail', 'id', 'group'] as const)('measures %s in bytes, not characters', (field) => {
    const budget = NOTIFICATION_FIELD_BUDGETS[field];
    // 4-byte characters (one surrogate pair each): within the character limit, just over the budget.
    const over = '😀'.repeat(Math.floor(budget / 4) + 1);
    const r = validateNotificationInput({ message: 'm', [field]: over }, API_NOTIFICATION_DEFAULTS);
    expect(r).toMatchObject({ ok: false, fields: [field] });
    if (!r.ok) expect(r.error).toMatch(new RegExp(`^${field} is .* \\(UTF-8\\), over its budget of `));
    const at = '😀'.repeat(Math.floor(budget / 4));
    expect(validateNotificationInput({ message: 'm', [field]: at }, API_NOTIFICATION_DEFAULTS).ok).toBe(true);
  });

  it('refuses a notification whose JSON, escapes included, is over the whole budget', () => {
    // Each quote is one byte of text but two in JSON.
    const quotes = '"'.repeat(50_000);
    const r = validateNotificationInput({ message: 'm', detail: quotes }, API_NOTIFICATION_DEFAULTS);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.fields).toEqual(['(notification)']);
      expect(r.error).toMatch(/^the notification as JSON is 97\.\d KiB \(UTF-8\), over its budget of 96 KiB/);
    }
  });

  it('accepts the largest notification and counts it as stored', () => {
    const n = largest('a');
    expect(storedNotificationBytes(n)).toBeLessThanOrEqual(SIZE_BUDGETS.notificationBytes);
    const { state } = add(createNotificationState({ guid: 'g' }), n, ctx);
    expect(jsonBytes(state.notifications[0])).toBeLessThanOrEqual(storedNotificationBytes(n));
  });
});

describe('byte capacity: oldest first, every created notification kept or counted', () => {
  it('keeps exactly the newest notifications that fit, and counts the rest as evicted', () => {
    let state: NotificationState = createNotificationState({ guid: 'g' });
    const total = 40;
    for (let i = 0; i < total; i++) state = add(state, largest(`n${i}`), ctx).state;
    const bytes = notificationsBytes(state.notifications);
    expect(bytes).toBeLessThanOrEqual(SIZE_BUDGETS.notificationStateBytes);
    // Holding one more (the next older) would not fit: the kept ones are the most the budget allows.
    const kept = state.notifications.length;
    expect(kept).toBeGreaterThan(5);
    expect(kept).toBeLessThan(total);
    const oneMore = jsonBytes(
      add(createNotificationState({ guid: 'x' }), largest(`n${total - kept - 1}`), ctx).state
        .notifications[0],
    );
    expect(bytes + oneMore + 1).toBeGreaterThan(SIZE_BUDGETS.notificationStateBytes);
    expect(state.evicted + kept).toBe(total);
    expect(state.notifications.map((n) => n.message.split(' ')[0])).toEqual(
      Array.from({ length: kept }, (_, i) => `n${total - kept + i}`),
    );
    expect(state.notifications.map((n) => n.no)).toEqual(Array.from({ length: kept }, (_, i) => i));
    expect(NotificationStateSchema.safeParse(state).success).toBe(true);
    // The carried state (what continue-as-new sends) stays under the payload budget.
    expect(jsonBytes(state)).toBeLessThan(SIZE_BUDGETS.continueAsNewInputBytes);
  });

  it('honours a smaller byte capacity and refuses one a notification cannot fit in', () => {
    let state = createNotificationState({ guid: 'g', maxBytes: SIZE_BUDGETS.notificationBytes });
    for (let i = 0; i < 3; i++) state = add(state, largest(`s${i}`), ctx).state;
    expect(state.notifications).toHaveLength(1);
    expect(state.evicted).toBe(2);
    expect(() => createNotificationState({ guid: 'g', maxBytes: 1000 })).toThrow(
      /maxBytes must be an integer/,
    );
  });

  it('an in-place update that grows an item evicts the oldest items first', () => {
    let state = createNotificationState({ guid: 'g', maxBytes: 2 * SIZE_BUDGETS.notificationBytes });
    state = add(state, validOf({ message: 'old', id: 'old' }), ctx).state;
    state = add(state, { ...largest('big1'), id: 'big1' }, ctx).state;
    state = add(state, validOf({ message: 'p', id: 'progress' }), ctx).state;
    state = add(state, { ...largest('big2'), id: 'big2' }, ctx).state;
    const r = add(state, { ...largest('grown'), id: 'progress' }, ctx);
    expect(r).toMatchObject({ kept: true, created: false });
    expect(r.state.notifications.map((n) => n.id)).toEqual(['progress', 'big2']);
    expect(r.state.evicted).toBe(2);
    expect(r.notification.no).toBe(0);
  });

  it('counts the changed item as evicted when it is the oldest and no longer fits', () => {
    let state = createNotificationState({ guid: 'g', maxBytes: SIZE_BUDGETS.notificationBytes });
    state = add(state, validOf({ message: 'p', id: 'progress' }), ctx).state;
    state = add(state, { ...largest('big'), id: 'big' }, ctx).state;
    const r = add(state, { ...largest('grown'), id: 'progress' }, ctx);
    expect(r.kept).toBe(false);
    expect(r.state.notifications.map((n) => n.id)).toEqual(['big']);
    expect(r.state.evicted).toBe(1);
  });

  it('refuses a carried state over its byte capacity', () => {
    const state = createNotificationState({ guid: 'g', maxBytes: SIZE_BUDGETS.notificationBytes });
    const n = add(state, largest('a'), ctx).state.notifications[0]!;
    const overfull = { ...state, notifications: [n, { ...n, id: 'b', no: 1 }] };
    const parsed = NotificationStateSchema.safeParse(overfull);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message).join('; ')).toMatch(
      /bytes of notifications, maxBytes is/,
    );
  });

  it('evicts the same with a size cache as without, through growth, in-place updates, marks read and renumbering', () => {
    const sizes = new NotificationSizes();
    let plain = createNotificationState({ guid: 'g', maxBytes: 3 * SIZE_BUDGETS.notificationBytes });
    let cached = plain;
    const step = (input: ValidNotificationInput) => {
      plain = add(plain, input, ctx).state;
      cached = add(cached, input, { ...ctx, sizes }).state;
      expect(cached).toEqual(plain);
    };
    for (let i = 0; i < 40; i += 1) {
      // Sizes vary (and numbers pass 9, so `no` changes width); every fifth one rewrites an older id.
      const id = i % 5 === 4 ? `n${i - 3}` : `n${i}`;
      step({ ...validOf({ message: `m${i} ${'界'.repeat((i * 997) % 5000)}` }), id });
      if (i % 7 === 0) {
        plain = markRead(plain, { all: true }).state;
        cached = markRead(cached, { all: true }).state;
      }
      step({ ...largest(`big${i}`), id: `big${i % 3}` });
    }
    expect(plain.evicted).toBeGreaterThan(0);
    expect(notificationsBytes(cached.notifications)).toBeLessThanOrEqual(3 * SIZE_BUDGETS.notificationBytes);
  });

  it('buries the same tombstones with a size cache as without, through the count and byte budgets and a carried state', () => {
    const longId = (i: number) => `${'通'.repeat(i % 3 === 0 ? 80 : 2)}-${i}`;
    let plain = createNotificationState({ guid: 'g', max: 2 });
    let cached = plain;
    let sizes = new NotificationSizes();
    for (let i = 0; i < SIZE_BUDGETS.notificationTombstones + 600; i++) {
      const input = { ...validOf({ message: `m${i}` }), id: longId(i) };
      plain = add(plain, input, ctx).state;
      cached = add(cached, input, { ...ctx, sizes }).state;
      // A continue-as-new: the carried state meets a new cache.
      if (i % 500 === 0) sizes = new NotificationSizes();
      if (i % 97 === 0) expect(cached).toEqual(plain);
    }
    expect(cached).toEqual(plain);
    const kept = cached.tombstones ?? [];
    expect(kept.length).toBeGreaterThan(100);
    expect(kept.length).toBeLessThan(SIZE_BUDGETS.notificationTombstones);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(
      SIZE_BUDGETS.notificationTombstoneBytes,
    );
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeGreaterThan(
      SIZE_BUDGETS.notificationTombstoneBytes - 400,
    );
  });

  it('adds to a full list in time proportional to the new notification, not the list', () => {
    // Inputs made (and validated) before the clock starts: only the adds are timed.
    const inputs = Array.from({ length: 60 }, (_, i) => ({ ...largest(`f${i}`), id: `f${i}` }));
    // CPU time of this process, not wall time: other processes on a busy machine (parallel test
    // files) stretch a fill's wall time by whatever share of the cores they take.
    const cpuMs = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
    const fill = (ctxOf: (i: number) => Parameters<typeof add>[2]) => {
      let state = createNotificationState({ guid: 'g' });
      const started = cpuMs();
      inputs.forEach((input, i) => {
        state = add(state, input, ctxOf(i)).state;
      });
      return cpuMs() - started;
    };
    // The best of five fills each, so a collection in one fill does not decide.
    const best = (ctxOf: () => Parameters<typeof fill>[0]) =>
      Math.min(...Array.from({ length: 5 }, () => fill(ctxOf())));
    const without = best(() => () => ctx);
    const withCache = best(() => {
      const sizes = new NotificationSizes();
      return () => ({ ...ctx, sizes });
    });
    // The whole list is ~1 MiB: measuring it on every add costs several times what the cache does.
    expect(withCache * 2).toBeLessThan(without);
  });
});
