import { z } from 'zod';
import {
  AGENT_TOOL_NOTIFICATION_DEFAULTS,
  API_NOTIFICATION_DEFAULTS,
  DEFAULT_MAX_NOTIFICATIONS,
  DEFAULT_MAX_UPDATES,
  MarkReadInputSchema,
  NOTIFICATION_LIMITS,
  NOTIFICATION_PRIORITIES,
  NOTIFICATION_TYPES,
  NotificationInputSchema,
  NotificationPriority,
  NotificationSchema,
  validateNotificationInput,
} from '../../shared/notifications/schema';
import type { Notification, ValidNotificationInput } from '../../shared/notifications/schema';
import {
  NotificationStateSchema,
  add,
  clear,
  createNotificationState,
  currentUpdate,
  markRead,
} from '../../shared/notifications/state';
import { history, since } from '../../shared/notifications/reads';
import type { NotificationContext, NotificationState } from '../../shared/notifications/state';
import { unreadCount } from '../../shared/notifications/reads';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';

const T0 = '2026-11-30T10:00:00.000Z';

/** A deterministic context: ids `id-1`, `id-2`, … and a clock that moves one second per call of `now`. */
function makeCtx(prefix = 'id'): NotificationContext & { ids: string[]; tick: () => void } {
  let n = 0;
  let seconds = 0;
  const ids: string[] = [];
  return {
    get now() {
      return new Date(Date.parse(T0) + seconds * 1000).toISOString();
    },
    newId: () => {
      const id = `${prefix}-${++n}`;
      ids.push(id);
      return id;
    },
    ids,
    tick: () => {
      seconds += 1;
    },
  };
}

/** Validates with the agent tool's defaults and fails the test if invalid. */
function valid(
  raw: Record<string, unknown>,
  defaults = AGENT_TOOL_NOTIFICATION_DEFAULTS,
): ValidNotificationInput {
  const result = validateNotificationInput(raw, defaults);
  if (!result.ok) throw new Error(`expected valid input, got: ${result.error}`);
  return result.value;
}

/** The error message for raw input, failing the test if it validates. */
function errorOf(raw: unknown, defaults = AGENT_TOOL_NOTIFICATION_DEFAULTS): string {
  const result = validateNotificationInput(raw, defaults);
  if (result.ok) throw new Error(`expected invalid input, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** Adds notifications with the given messages (and optional ids) in order. */
function addAll(
  state: NotificationState,
  ctx: NotificationContext,
  items: Array<string | Record<string, unknown>>,
): NotificationState {
  return items.reduce<NotificationState>(
    (s, item) => add(s, valid(typeof item === 'string' ? { message: item } : item), ctx).state,
    state,
  );
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const messages = (s: { notifications: readonly Notification[] }) => s.notifications.map((n) => n.message);
const nos = (s: { notifications: readonly Notification[] }) => s.notifications.map((n) => n.no);

describe('notification constants', () => {
  it('has the five contract types, in order', () => {
    expect(NOTIFICATION_TYPES).toEqual(['info', 'success', 'warning', 'error', 'progress']);
  });

  it('has NORMAL 10 and HIGH 20, and derives the list of values from them', () => {
    expect(NotificationPriority).toEqual({ NORMAL: 10, HIGH: 20 });
    expect(NOTIFICATION_PRIORITIES).toEqual([NotificationPriority.NORMAL, NotificationPriority.HIGH]);
    expect(Object.isFrozen(NotificationPriority)).toBe(true);
  });

  it('defaults the agent tool to HIGH and 30 s, the API to NORMAL and 3 s, capacity to 100', () => {
    expect(AGENT_TOOL_NOTIFICATION_DEFAULTS).toMatchObject({ priority: 20, displayTime: 30 });
    expect(API_NOTIFICATION_DEFAULTS).toMatchObject({ priority: 10, displayTime: 3 });
    expect(DEFAULT_MAX_NOTIFICATIONS).toBe(100);
  });

  it('exposes the same type and priority enums in the JSON Schema the model sees', () => {
    const schema = z.toJSONSchema(NotificationInputSchema, { io: 'input' }) as {
      properties: Record<string, { enum?: unknown[] }>;
      required: string[];
    };
    expect(schema.properties.type?.enum).toEqual([...NOTIFICATION_TYPES]);
    expect(schema.properties.priority?.enum).toEqual([...NOTIFICATION_PRIORITIES]);
    expect(schema.required).toEqual(['message']);
  });
});

describe('validateNotificationInput: the contract checks', () => {
  it('applies the agent tool defaults to a message-only input', () => {
    expect(validateNotificationInput({ message: 'hi' }, AGENT_TOOL_NOTIFICATION_DEFAULTS)).toEqual({
      ok: true,
      value: {
        type: 'info',
        priority: 20,
        message: 'hi',
        title: '',
        detail: '',
        display_time: 30,
        group: '',
      },
    });
  });

  it('applies the API defaults to a message-only input', () => {
    expect(valid({ message: 'hi' }, API_NOTIFICATION_DEFAULTS)).toMatchObject({
      priority: 10,
      display_time: 3,
    });
  });

  it('checks type first: bad type, bad priority and empty message give the type error', () => {
    expect(errorOf({ type: 'critical', priority: 15, message: '' })).toBe(
      'Invalid notification type: critical',
    );
  });

  it('checks priority second: bad priority and missing message give the priority error', () => {
    expect(errorOf({ type: 'warning', priority: 15 })).toBe('Invalid notification priority: 15');
  });

  it('checks message third, before any field type or length check', () => {
    expect(errorOf({ message: '', title: 42, detail: 'x'.repeat(60_000) })).toBe('Message is required');
  });

  it('checks the contract before field types: a bad type wins over a non-string title', () => {
    expect(errorOf({ type: 'bogus', message: 'm', title: 42 })).toBe('Invalid notification type: bogus');
  });

  it.each([
    ['missing', {}],
    ['null', { message: null }],
    ['empty', { message: '' }],
    ['whitespace only', { message: ' \n\t ' }],
  ])('requires a message (%s)', (_label, raw) => {
    expect(errorOf(raw)).toBe('Message is required');
  });

  it.each([undefined, null, 'just text', 42, ['message']])('treats non-object input %p as empty', (raw) => {
    expect(errorOf(raw)).toBe('Message is required');
  });

  it.each(NOTIFICATION_TYPES.map((t) => [t]))('accepts type %s', (type) => {
    expect(valid({ message: 'm', type }).type).toBe(type);
  });

  it('defaults a null type to info', () => {
    expect(valid({ message: 'm', type: null }).type).toBe('info');
  });

  it.each([
    ['INFO', 'Invalid notification type: INFO'],
    ['Info', 'Invalid notification type: Info'],
    [' info', 'Invalid notification type:  info'],
    ['', 'Invalid notification type: '],
    [5, 'Invalid notification type: 5'],
    [true, 'Invalid notification type: true'],
    [{ kind: 'info' }, 'Invalid notification type: {"kind":"info"}'],
  ])('rejects type %p (case-sensitive, no trimming)', (type, error) => {
    expect(errorOf({ message: 'm', type })).toBe(error);
  });

  it('shortens a huge rejected value in the error', () => {
    const error = errorOf({ message: 'm', type: 'x'.repeat(5000) });
    expect(error).toBe(`Invalid notification type: ${'x'.repeat(200)}…`);
  });

  it.each(NOTIFICATION_PRIORITIES.map((p) => [p]))('accepts priority %d as a number and as a string', (p) => {
    expect(valid({ message: 'm', priority: p }).priority).toBe(p);
    expect(valid({ message: 'm', priority: String(p) }).priority).toBe(p);
    expect(valid({ message: 'm', priority: ` ${p} ` }).priority).toBe(p);
  });

  it('returns a numeric priority for a numeric-string input', () => {
    expect(typeof valid({ message: 'm', priority: '10' }).priority).toBe('number');
  });

  it('defaults a null priority to the producer default', () => {
    expect(valid({ message: 'm', priority: null }).priority).toBe(NotificationPriority.HIGH);
    expect(valid({ message: 'm', priority: null }, API_NOTIFICATION_DEFAULTS).priority).toBe(
      NotificationPriority.NORMAL,
    );
  });

  it.each([
    [15, 'Invalid notification priority: 15'],
    ['15', 'Invalid notification priority: 15'],
    [0, 'Invalid notification priority: 0'],
    [-10, 'Invalid notification priority: -10'],
    [20.5, 'Invalid notification priority: 20.5'],
    ['20.0', 'Invalid notification priority: 20.0'],
    ['high', 'Invalid notification priority: high'],
    ['HIGH', 'Invalid notification priority: HIGH'],
    ['', 'Invalid notification priority: '],
    [true, 'Invalid notification priority: true'],
    [[20], 'Invalid notification priority: [20]'],
  ])('rejects priority %p', (priority, error) => {
    expect(errorOf({ message: 'm', priority })).toBe(error);
  });
});

describe('validateNotificationInput: field checks after the contract', () => {
  it('keeps every given field', () => {
    expect(
      valid({
        message: 'm',
        title: 't',
        detail: '<b>d</b>',
        type: 'progress',
        priority: 10,
        timeout: 5,
        id: 'job-1',
        group: 'g',
      }),
    ).toEqual({
      type: 'progress',
      priority: 10,
      message: 'm',
      title: 't',
      detail: '<b>d</b>',
      display_time: 5,
      id: 'job-1',
      group: 'g',
    });
  });

  it('ignores unknown keys', () => {
    expect(valid({ message: 'm', colour: 'red' })).not.toHaveProperty('colour');
  });

  it.each([
    [{ message: 5 }, 'message must be a string'],
    [{ message: 'm', title: 5 }, 'title must be a string'],
    [{ message: 'm', detail: {} }, 'detail must be a string'],
    [{ message: 'm', id: 7 }, 'id must be a string'],
    [{ message: 'm', group: false }, 'group must be a string'],
  ])('rejects a wrong field type %p', (raw, error) => {
    expect(errorOf(raw)).toBe(error);
  });

  it.each([
    ['title', NOTIFICATION_LIMITS.title, 200],
    ['message', NOTIFICATION_LIMITS.message, 10_000],
    ['detail', NOTIFICATION_LIMITS.detail, 50_000],
    ['id', NOTIFICATION_LIMITS.id, 200],
    ['group', NOTIFICATION_LIMITS.group, 200],
  ])('limits %s to %d characters', (field, limit, expected) => {
    expect(limit).toBe(expected);
    const at = { message: 'm', [field]: 'x'.repeat(limit) };
    expect(validateNotificationInput(at, AGENT_TOOL_NOTIFICATION_DEFAULTS).ok).toBe(true);
    const over = { message: 'm', [field]: 'x'.repeat(limit + 1) };
    expect(errorOf(over)).toBe(`${field} must be at most ${limit} characters`);
  });

  it('reports every failing field at once', () => {
    expect(errorOf({ message: 'm', title: 1, group: 2 })).toBe(
      'title must be a string; group must be a string',
    );
  });

  it('treats null optional fields as absent', () => {
    expect(valid({ message: 'm', title: null, detail: null, id: null, group: null })).toEqual(
      valid({ message: 'm' }),
    );
  });

  it('treats an empty id as none, so one is generated', () => {
    expect(valid({ message: 'm', id: '' })).not.toHaveProperty('id');
  });
});

describe('validateNotificationInput: display time', () => {
  it.each([
    [{ timeout: 10 }, 10],
    [{ timeout: '12' }, 12],
    [{ timeout: 0 }, 0],
    [{ timeout: 2.5 }, 2.5],
    [{ display_time: 7 }, 7],
    [{ display_time: 7, timeout: 9 }, 7],
    [{ display_time: null, timeout: 9 }, 9],
    [{ timeout: null }, 30],
  ])('agent tool: %p → %d s', (raw, seconds) => {
    expect(valid({ message: 'm', ...raw }).display_time).toBe(seconds);
  });

  it.each([
    [{ timeout: -1 }, 'Invalid notification timeout: -1 (give seconds as a number ≥ 0)'],
    [{ timeout: 'soon' }, 'Invalid notification timeout: soon (give seconds as a number ≥ 0)'],
    [{ display_time: '-3' }, 'Invalid notification display_time: -3 (give seconds as a number ≥ 0)'],
  ])('agent tool: rejects %p so the model can correct it', (raw, error) => {
    expect(errorOf({ message: 'm', ...raw })).toBe(error);
  });

  it.each([
    [{}, 3],
    [{ display_time: 8 }, 8],
    [{ display_time: '8' }, 8],
    [{ display_time: 0 }, 0],
    [{ display_time: -1 }, 3],
    [{ display_time: -0.5 }, 3],
    [{ display_time: 'abc' }, 3],
    [{ display_time: '' }, 3],
    [{ display_time: Number.NaN }, 3],
    [{ display_time: Number.POSITIVE_INFINITY }, 3],
    [{ display_time: true }, 3],
    [{ display_time: null }, 3],
    [{ timeout: -5 }, 3],
  ])('API: %p → %d s (negative or non-numeric falls back to 3 s)', (raw, seconds) => {
    expect(valid({ message: 'm', ...raw }, API_NOTIFICATION_DEFAULTS).display_time).toBe(seconds);
  });
});

describe('MarkReadInputSchema and NotificationSchema', () => {
  it.each([[{ ids: ['a', 'b'] }], [{ ids: [] }], [{ all: true }], [{ ids: ['a'], all: false }]])(
    'accepts %p',
    (payload) => {
      expect(MarkReadInputSchema.safeParse(payload).success).toBe(true);
    },
  );

  it.each([
    [{}],
    [{ all: false }],
    [{ ids: ['a'], all: true }],
    [{ ids: [''] }],
    [{ ids: 'a' }],
    [{ all: true, x: 1 }],
  ])('rejects %p', (payload) => {
    expect(MarkReadInputSchema.safeParse(payload).success).toBe(false);
  });

  it('describes a stored notification, rejecting unknown priorities', () => {
    const ctx = makeCtx();
    const { notification } = add(createNotificationState({ guid: 'g' }), valid({ message: 'm' }), ctx);
    expect(NotificationSchema.parse(notification)).toEqual(notification);
    expect(NotificationSchema.safeParse({ ...notification, priority: 15 }).success).toBe(false);
    expect(NotificationSchema.safeParse({ ...notification, timestamp: 'yesterday' }).success).toBe(false);
  });
});

describe('createNotificationState', () => {
  it('starts empty with default capacities', () => {
    expect(createNotificationState({ guid: 'g' })).toEqual({
      notifications: [],
      updates: [],
      updatesBase: 0,
      evicted: 0,
      guid: 'g',
      max: DEFAULT_MAX_NOTIFICATIONS,
      maxUpdates: DEFAULT_MAX_UPDATES,
    });
  });

  it.each([[{ max: 0 }], [{ max: 1.5 }], [{ max: -1 }], [{ maxUpdates: 0 }], [{ maxUpdates: Number.NaN }]])(
    'refuses %p',
    (options) => {
      expect(() => createNotificationState({ guid: 'g', ...options })).toThrow(RangeError);
    },
  );
});

describe('add', () => {
  it('creates a notification numbered from 0, with a generated id, unread, stamped with ctx.now', () => {
    const ctx = makeCtx();
    const { state, notification, created } = add(
      createNotificationState({ guid: 'g' }),
      valid({ message: 'hello', title: 'T', detail: '<i>d</i>', type: 'warning', priority: 10, group: 'g1' }),
      ctx,
    );
    const expected: Notification = {
      no: 0,
      id: 'id-1',
      type: 'warning',
      priority: 10,
      title: 'T',
      message: 'hello',
      detail: '<i>d</i>',
      timestamp: T0,
      display_time: 30,
      read: false,
      group: 'g1',
    };
    expect(created).toBe(true);
    expect(notification).toEqual(expected);
    expect(state.notifications).toEqual([expected]);
    expect(state.updates).toEqual([0]);
    expect(currentUpdate(state)).toBe(1);
  });

  it('numbers new notifications 0..n-1 in arrival order', () => {
    const state = addAll(createNotificationState({ guid: 'g' }), makeCtx(), ['a', 'b', 'c']);
    expect(nos(state)).toEqual([0, 1, 2]);
    expect(messages(state)).toEqual(['a', 'b', 'c']);
    expect(state.updates).toEqual([0, 1, 2]);
  });

  it('uses a given id for a new notification without calling newId', () => {
    const ctx = makeCtx();
    const { notification } = add(
      createNotificationState({ guid: 'g' }),
      valid({ message: 'm', id: 'mine' }),
      ctx,
    );
    expect(notification.id).toBe('mine');
    expect(ctx.ids).toEqual([]);
  });

  it('updates an existing id in place: replaces fields, resets read, keeps no and position', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g' }), ctx, [
      { message: 'first', id: 'job' },
      'second',
    ]);
    state = markRead(state, { all: true }).state;
    expect(state.notifications.every((n) => n.read)).toBe(true);
    ctx.tick();

    const result = add(
      state,
      valid({
        id: 'job',
        message: '50%',
        title: 'Import',
        detail: '<p>rows</p>',
        type: 'progress',
        priority: 10,
        timeout: 9,
        group: 'imports',
      }),
      ctx,
    );

    expect(result.created).toBe(false);
    expect(result.notification).toEqual({
      no: 0,
      id: 'job',
      type: 'progress',
      priority: 10,
      title: 'Import',
      message: '50%',
      detail: '<p>rows</p>',
      timestamp: '2026-11-30T10:00:01.000Z',
      display_time: 9,
      read: false,
      group: 'imports',
    });
    expect(result.state.notifications).toHaveLength(2);
    expect(result.state.notifications[0]).toEqual(result.notification);
    expect(result.state.notifications[1]).toEqual(state.notifications[1]);
    expect(result.state.updates).toEqual([...state.updates, 0]);
    expect(ctx.ids).toEqual(['id-1']);
  });

  it('replaces omitted fields with their defaults when updating in place', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g' }), ctx, [
      { id: 'p', message: 'a', title: 'T', detail: 'D', group: 'G', type: 'error', priority: 10, timeout: 5 },
    ]);
    state = add(state, valid({ id: 'p', message: 'b' }), ctx).state;
    expect(state.notifications[0]).toMatchObject({
      title: '',
      detail: '',
      group: '',
      type: 'info',
      priority: 20,
      display_time: 30,
    });
  });

  it('keeps one item per id however often a progress notification is re-sent', () => {
    const ctx = makeCtx();
    let state = createNotificationState({ guid: 'g' });
    for (let i = 1; i <= 10; i++) {
      state = add(state, valid({ id: 'p', type: 'progress', message: `${i * 10}%` }), ctx).state;
    }
    expect(messages(state)).toEqual(['100%']);
    expect(state.updates).toEqual(Array(10).fill(0));
  });

  it('evicts the oldest beyond max and renumbers the rest 0..n-1', () => {
    const ctx = makeCtx();
    const state = addAll(createNotificationState({ guid: 'g', max: 3 }), ctx, ['a', 'b', 'c', 'd', 'e']);
    expect(messages(state)).toEqual(['c', 'd', 'e']);
    expect(nos(state)).toEqual([0, 1, 2]);
    expect(state.evicted).toBe(2);
    expect(state.updates).toEqual([0, 1, 2, 3, 4]);
  });

  it('returns the new notification with its number after eviction', () => {
    const ctx = makeCtx();
    const state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, ['a', 'b']);
    const { notification, state: next } = add(state, valid({ message: 'c' }), ctx);
    expect(notification.no).toBe(1);
    expect(next.notifications[1]).toEqual(notification);
  });

  it('evicts by creation order, even an item just updated in place', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, [
      { id: 'p', message: '1%' },
      'b',
    ]);
    state = add(state, valid({ id: 'p', message: '2%' }), ctx).state;
    state = add(state, valid({ message: 'c' }), ctx).state;
    expect(messages(state)).toEqual(['b', 'c']);
  });

  it('keeps the newest 100 by default', () => {
    const ctx = makeCtx();
    const state = addAll(
      createNotificationState({ guid: 'g' }),
      ctx,
      Array.from({ length: 101 }, (_, i) => `m${i}`),
    );
    expect(state.notifications).toHaveLength(100);
    expect(state.notifications[0]).toMatchObject({ no: 0, message: 'm1', id: 'id-2' });
    expect(state.notifications[99]).toMatchObject({ no: 99, message: 'm100' });
  });

  it('works with a capacity of one', () => {
    const state = addAll(createNotificationState({ guid: 'g', max: 1 }), makeCtx(), ['a', 'b', 'c']);
    expect(state.notifications).toEqual([expect.objectContaining({ no: 0, message: 'c' })]);
    expect(state.evicted).toBe(2);
  });

  it('treats an evicted id as new when it is sent again', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, [
      { id: 'p', message: 'old' },
      'b',
      'c',
    ]);
    const result = add(state, valid({ id: 'p', message: 'new' }), ctx);
    state = result.state;
    expect(result.created).toBe(true);
    expect(messages(state)).toEqual(['c', 'new']);
  });
});

describe('a producer sending an evicted notification again', () => {
  const full = (ctx: NotificationContext) =>
    addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, [
      { id: 'p', message: 'once', title: 'T', group: 'g1' },
      'b',
      'c',
    ]);

  it('changes nothing when the content is the same (a retry): no second copy', () => {
    const ctx = makeCtx();
    const state = full(ctx);
    expect(state.tombstones?.map(([id]) => id)).toEqual(['p']);
    const retry = add(state, valid({ id: 'p', message: 'once', title: 'T', group: 'g1' }), ctx);
    expect(retry).toMatchObject({ created: false, kept: false, notification: { id: 'p', no: -1 } });
    expect(retry.state).toBe(state);
    expect(messages(retry.state)).toEqual(['b', 'c']);
    expect(retry.state.evicted).toBe(1);
  });

  it('creates it again when anything a producer sends differs', () => {
    for (const change of [{ message: 'twice' }, { title: 'U' }, { group: 'g2' }, { type: 'error' }]) {
      const ctx = makeCtx();
      const again = add(
        full(ctx),
        valid({ id: 'p', message: 'once', title: 'T', group: 'g1', ...change }),
        ctx,
      );
      expect(again.created).toBe(true);
      expect(again.state.notifications.map((n) => n.id)).toEqual(['id-2', 'p']);
      expect(again.state.evicted).toBe(2);
    }
  });

  it('tells a long field of the same length but other text apart', () => {
    const ctx = makeCtx();
    let state = createNotificationState({ guid: 'g', max: 1 });
    state = add(state, valid({ id: 'd', message: 'm', detail: 'a'.repeat(5000) }), ctx).state;
    state = add(state, valid({ message: 'next' }), ctx).state;
    expect(add(state, valid({ id: 'd', message: 'm', detail: 'a'.repeat(5000) }), ctx).created).toBe(false);
    expect(add(state, valid({ id: 'd', message: 'm', detail: 'b'.repeat(5000) }), ctx).created).toBe(true);
    expect(add(state, valid({ id: 'd', message: 'm', detail: 'a'.repeat(4999) }), ctx).created).toBe(true);
  });

  it('keeps the newest tombstones within their count and byte budgets, carried as valid state', () => {
    const ctx = makeCtx();
    const total = SIZE_BUDGETS.notificationTombstones + 50;
    let state = createNotificationState({ guid: 'g', max: 1 });
    for (let i = 0; i < total; i++) state = add(state, valid({ id: `t${i}`, message: `m${i}` }), ctx).state;
    const tombstones = state.tombstones ?? [];
    expect(tombstones).toHaveLength(SIZE_BUDGETS.notificationTombstones);
    expect(tombstones.at(-1)?.[0]).toBe(`t${total - 2}`);
    expect(NotificationStateSchema.safeParse(JSON.parse(JSON.stringify(state))).success).toBe(true);
    // Long ids: the byte budget binds before the count.
    let wide = createNotificationState({ guid: 'g', max: 1 });
    const longId = (i: number) => `${'通'.repeat(80)}-${i}`;
    for (let i = 0; i < 400; i++) wide = add(wide, valid({ id: longId(i), message: 'x' }), ctx).state;
    const kept = wide.tombstones ?? [];
    expect(kept.length).toBeLessThan(399);
    expect(kept.at(-1)?.[0]).toBe(longId(398));
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(
      SIZE_BUDGETS.notificationTombstoneBytes,
    );
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeGreaterThan(
      SIZE_BUDGETS.notificationTombstoneBytes - 400,
    );
  });

  it('forgets them on clear', () => {
    const ctx = makeCtx();
    expect(clear(full(ctx), { newId: () => 'g2' }).tombstones).toBeUndefined();
  });
});

describe('markRead and unreadCount', () => {
  const setup = () => addAll(createNotificationState({ guid: 'g' }), makeCtx(), ['a', 'b', 'c']);

  it('marks the given ids and ignores unknown ones', () => {
    const state = setup();
    const { state: next, marked } = markRead(state, { ids: ['id-3', 'nope', 'id-1'] });
    expect(marked).toEqual(['id-1', 'id-3']);
    expect(next.notifications.map((n) => n.read)).toEqual([true, false, true]);
    expect(unreadCount(next)).toBe(1);
    expect(next.updates).toEqual([0, 1, 2, 0, 2]);
  });

  it('marks all', () => {
    const state = markRead(setup(), { ids: ['id-2'] }).state;
    const { state: next, marked } = markRead(state, { all: true });
    expect(marked).toEqual(['id-1', 'id-3']);
    expect(unreadCount(next)).toBe(0);
    expect(next.updates).toEqual([0, 1, 2, 1, 0, 2]);
  });

  it('changes nothing, and returns the same state, when nothing becomes read', () => {
    const state = markRead(setup(), { all: true }).state;
    for (const input of [{ all: true }, { ids: ['id-1'] }, { ids: ['unknown'] }, { ids: [] }]) {
      const result = markRead(state, input);
      expect(result.marked).toEqual([]);
      expect(result.state).toBe(state);
    }
  });

  it('marks nothing when given an empty id list (not all)', () => {
    expect(markRead(setup(), { ids: [] }).marked).toEqual([]);
  });

  it('counts unread items, and re-counts an item updated in place', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g' }), ctx, [{ id: 'p', message: 'x' }, 'y']);
    expect(unreadCount(state)).toBe(2);
    state = markRead(state, { all: true }).state;
    expect(unreadCount(state)).toBe(0);
    state = add(state, valid({ id: 'p', message: 'x2' }), ctx).state;
    expect(unreadCount(state)).toBe(1);
  });
});

describe('clear, guid and history', () => {
  it('empties the list, takes a new guid from newId, restarts the log, keeps capacities', () => {
    const ctx = makeCtx();
    const state = addAll(createNotificationState({ guid: 'g0', max: 2, maxUpdates: 3 }), ctx, [
      'a',
      'b',
      'c',
      'd',
    ]);
    const cleared = clear(state, { newId: () => 'g1' });
    expect(cleared).toEqual(createNotificationState({ guid: 'g1', max: 2, maxUpdates: 3 }));
    expect(currentUpdate(cleared)).toBe(0);
  });

  it('changes the guid on every clear, even of an empty list, and on nothing else', () => {
    const ctx = makeCtx();
    let state = createNotificationState({ guid: 'g0', max: 2 });
    state = addAll(state, ctx, [{ id: 'p', message: 'a' }, 'b', 'c']);
    state = add(state, valid({ id: 'p', message: 'again' }), ctx).state;
    state = markRead(state, { all: true }).state;
    expect(state.guid).toBe('g0');
    const once = clear(state, ctx);
    const twice = clear(once, ctx);
    expect(once.guid).not.toBe('g0');
    expect(twice.guid).not.toBe(once.guid);
  });

  it('numbers from 0 again after a clear', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, ['a', 'b', 'c']);
    state = addAll(clear(state, ctx), ctx, ['d']);
    expect(state.notifications[0]?.no).toBe(0);
    expect(state.updates).toEqual([0]);
    expect(state.evicted).toBe(0);
  });

  it('returns all notifications, the guid, the count, the log and the current update number', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, ['a', 'b', 'c']);
    state = markRead(state, { ids: ['id-3'] }).state;
    expect(history(state)).toEqual({
      notifications: state.notifications,
      guid: 'g',
      count: 2,
      updates: [0, 1, 2, 2],
      update: 4,
      evicted: 1,
    });
    expect(history(createNotificationState({ guid: 'e' }))).toEqual({
      notifications: [],
      guid: 'e',
      count: 0,
      updates: [],
      update: 0,
      evicted: 0,
    });
  });
});

describe('since: incremental sync', () => {
  it('returns everything from update 0 and nothing from the current update', () => {
    const state = addAll(createNotificationState({ guid: 'g' }), makeCtx(), ['a', 'b']);
    expect(since(state, 0, 'g')).toEqual({
      guid: 'g',
      update: 2,
      count: 2,
      evicted: 0,
      reset: false,
      notifications: state.notifications,
    });
    expect(since(state, 2, 'g')).toEqual({
      guid: 'g',
      update: 2,
      count: 2,
      evicted: 0,
      reset: false,
      notifications: [],
    });
  });

  it('returns only what changed after K, each item once, oldest first, with current values', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g' }), ctx, [{ id: 'p', message: '0%' }, 'b', 'c']);
    const k = currentUpdate(state);
    state = add(state, valid({ id: 'p', message: '50%' }), ctx).state;
    state = markRead(state, { ids: ['id-2'] }).state;
    state = add(state, valid({ id: 'p', message: '100%' }), ctx).state;
    const changes = since(state, k, 'g');
    expect(changes.reset).toBe(false);
    expect(changes.notifications.map((n) => [n.no, n.message, n.read])).toEqual([
      [0, '100%', false],
      [2, 'c', true],
    ]);
    expect(changes.update).toBe(k + 3);
  });

  it('works across eviction: reports survivors with their new numbers, skips evicted items', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 3 }), ctx, ['a', 'b', 'c']);
    const k = currentUpdate(state);
    state = addAll(state, ctx, ['d', 'e']);
    state = markRead(state, { ids: ['id-3'] }).state; // c, now no 0
    const changes = since(state, k, 'g');
    expect(changes.count).toBe(3);
    expect(changes.evicted).toBe(2);
    expect(changes.notifications.map((n) => [n.no, n.message])).toEqual([
      [0, 'c'],
      [1, 'd'],
      [2, 'e'],
    ]);
    expect(since(state, k + 2, 'g').notifications.map((n) => n.message)).toEqual(['c']);
  });

  it('does not report items created and evicted after K', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2 }), ctx, ['a', 'b']);
    const k = currentUpdate(state);
    state = addAll(state, ctx, ['c', 'd', 'e', 'f']);
    expect(messages(since(state, k, 'g'))).toEqual(['e', 'f']);
    expect(since(state, k, 'g').reset).toBe(false);
  });

  it('reports an evicted id that is sent again as a new item at the end, not in its old place', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 3 }), ctx, [
      { id: 'p', message: 'p1' },
      'b',
      'c',
    ]);
    const k = currentUpdate(state);
    state = addAll(state, ctx, ['d', { id: 'p', message: 'p2' }]);
    const changes = since(state, k, 'g');
    expect(changes.evicted).toBe(2);
    expect(changes.notifications.map((n) => [n.no, n.id, n.message])).toEqual([
      [1, 'id-3', 'd'],
      [2, 'p', 'p2'],
    ]);
  });

  it('forces a reset with the full list after a clear (guid changed)', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 5 }), ctx, ['a', 'b', 'c']);
    const k = currentUpdate(state);
    state = addAll(clear(state, { newId: () => 'g2' }), ctx, ['x', 'y', 'z', 'w']);
    expect(currentUpdate(state)).toBeGreaterThan(k);
    const changes = since(state, k, 'g');
    expect(changes).toEqual({
      guid: 'g2',
      update: 4,
      count: 4,
      evicted: 0,
      reset: true,
      notifications: state.notifications,
    });
  });

  it('forces a reset for an update number the list never reached (a clear, without a guid)', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g' }), ctx, ['a', 'b', 'c']);
    state = addAll(clear(state, ctx), ctx, ['x']);
    const changes = since(state, 3);
    expect(changes.reset).toBe(true);
    expect(messages(changes)).toEqual(['x']);
  });

  it.each([-1, 1.5, Number.NaN])('forces a reset for an invalid update number %p', (k) => {
    const state = addAll(createNotificationState({ guid: 'g' }), makeCtx(), ['a', 'b']);
    expect(since(state, k, 'g')).toMatchObject({ reset: true, notifications: state.notifications });
  });

  it('keeps only maxUpdates log entries and resets clients older than the kept log', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', maxUpdates: 3 }), ctx, ['a', 'b', 'c', 'd', 'e']);
    expect(state.updates).toEqual([2, 3, 4]);
    expect(state.updatesBase).toBe(2);
    expect(currentUpdate(state)).toBe(5);
    expect(since(state, 1, 'g')).toMatchObject({ reset: true, notifications: state.notifications });
    const atBase = since(state, 2, 'g');
    expect(atBase.reset).toBe(false);
    expect(messages(atBase)).toEqual(['c', 'd', 'e']);
    expect(messages(since(state, 4, 'g'))).toEqual(['e']);
    state = markRead(state, { ids: ['id-1', 'id-2'] }).state;
    expect(state.updates).toEqual([4, 0, 1]);
    expect(state.updatesBase).toBe(4);
  });

  it('keeps a client in sync through random adds, updates, reads, evictions, compactions and clears', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const ctx = makeCtx();
    let state = createNotificationState({ guid: 'g0', max: 5, maxUpdates: 12 });
    const client = { guid: state.guid, update: 0, evicted: 0, items: [] as Notification[] };
    let resets = 0;
    let diffs = 0;

    const sync = () => {
      const changes = since(state, client.update, client.guid);
      if (changes.reset) {
        resets++;
        client.items = [...changes.notifications];
      } else {
        diffs++;
        client.items = client.items.slice(changes.evicted - client.evicted).map((n, no) => ({ ...n, no }));
        for (const n of changes.notifications) {
          if (n.no < client.items.length) client.items[n.no] = n;
          else client.items.push(n);
        }
        expect(client.items).toHaveLength(changes.count);
      }
      client.guid = changes.guid;
      client.update = changes.update;
      client.evicted = changes.evicted;
      expect(client.items).toEqual(state.notifications);
    };

    for (let step = 0; step < 2000; step++) {
      const r = random();
      ctx.tick();
      if (r < 0.45) state = add(state, valid({ message: `m${step}` }), ctx).state;
      else if (r < 0.7) {
        const id = `p${Math.floor(random() * 4)}`;
        state = add(state, valid({ id, type: 'progress', message: `${id} at ${step}` }), ctx).state;
      } else if (r < 0.85) {
        const ids = state.notifications.filter(() => random() < 0.3).map((n) => n.id);
        state = markRead(state, { ids }).state;
      } else if (r < 0.88) state = markRead(state, { all: true }).state;
      else if (r < 0.9) state = clear(state, ctx);
      else sync();
      if (random() < 0.05) state = JSON.parse(JSON.stringify(state)) as NotificationState;
    }
    sync();
    expect(diffs).toBeGreaterThan(50);
    expect(resets).toBeGreaterThan(5);
  });
});

describe('purity and serialisation', () => {
  const build = () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 3, maxUpdates: 5 }), ctx, [
      { id: 'p', message: 'a' },
      'b',
      'c',
    ]);
    state = markRead(state, { ids: ['id-1'] }).state;
    return { state, ctx };
  };

  it('never mutates its input state (deep-frozen) or the validated input', () => {
    const { state, ctx } = build();
    const before = JSON.stringify(state);
    deepFreeze(state);
    const input = deepFreeze(valid({ message: 'z' }));
    expect(() => {
      add(state, input, ctx);
      add(state, valid({ id: 'p', message: 'again' }), ctx);
      markRead(state, { all: true });
      markRead(state, { ids: ['p'] });
      clear(state, ctx);
      history(state);
      since(state, 0, 'g');
    }).not.toThrow();
    expect(JSON.stringify(state)).toBe(before);
    expect(input).toEqual(valid({ message: 'z' }));
  });

  it('round-trips through JSON unchanged and behaves the same afterwards', () => {
    const { state } = build();
    const copy = JSON.parse(JSON.stringify(state)) as NotificationState;
    expect(copy).toEqual(state);
    const ctxA = makeCtx('n');
    const ctxB = makeCtx('n');
    const a = add(
      add(state, valid({ message: 'x' }), ctxA).state,
      valid({ id: 'p', message: 'y' }),
      ctxA,
    ).state;
    const b = add(
      add(copy, valid({ message: 'x' }), ctxB).state,
      valid({ id: 'p', message: 'y' }),
      ctxB,
    ).state;
    expect(b).toEqual(a);
    expect(since(copy, 1, 'g')).toEqual(since(state, 1, 'g'));
  });

  it('contains nothing JSON would drop (no undefined, functions or class instances)', () => {
    const { state } = build();
    const walk = (value: unknown): void => {
      expect(['string', 'number', 'boolean', 'object']).toContain(typeof value);
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === 'object') {
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
        Object.values(value).forEach(walk);
      }
    };
    walk(state);
  });

  it('is deterministic: the same operations and context give the same state', () => {
    expect(build().state).toEqual(build().state);
  });
});

describe('NotificationStateSchema (validating carried state)', () => {
  it('accepts a state produced by the operations', () => {
    const ctx = makeCtx();
    let state = addAll(createNotificationState({ guid: 'g', max: 2, maxUpdates: 3 }), ctx, [
      'a',
      'b',
      'c',
      'd',
    ]);
    state = markRead(state, { all: true }).state;
    expect(NotificationStateSchema.parse(JSON.parse(JSON.stringify(state)))).toEqual(state);
  });

  const good = () =>
    addAll(createNotificationState({ guid: 'g', max: 3, maxUpdates: 4 }), makeCtx(), ['a', 'b']);

  it.each([
    [
      'numbers out of order',
      (s: NotificationState) => ({ ...s, notifications: [...s.notifications].reverse() }),
    ],
    [
      'duplicate ids',
      (s: NotificationState) => ({
        ...s,
        notifications: s.notifications.map((n) => ({ ...n, id: 'same' })),
      }),
    ],
    ['more items than max', (s: NotificationState) => ({ ...s, max: 1 })],
    ['a longer log than maxUpdates', (s: NotificationState) => ({ ...s, updates: [0, 1, 0, 1, 0] })],
    ['a log entry for an item never created', (s: NotificationState) => ({ ...s, updates: [0, 2] })],
    ['a missing guid', (s: NotificationState) => ({ ...s, guid: '' })],
  ])('rejects %s', (_label, corrupt) => {
    expect(NotificationStateSchema.safeParse(good()).success).toBe(true);
    expect(NotificationStateSchema.safeParse(corrupt(good())).success).toBe(false);
  });
});
