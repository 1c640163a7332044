/**
 * The chaos script's notification accounting (bench/chaos/checks.ts): every accepted notification is
 * kept or covered by the eviction count, and the notifications a workflow raises itself (an approval
 * request) take part of that count without being lost or extra copies of anything.
 */
import type { NotificationAccount } from '../../bench/chaos/checks';
import { accountList } from '../../bench/chaos/checks';

const base: NotificationAccount = {
  target: 'run',
  accepted: 0,
  kept: 0,
  evicted: 0,
  lost: 0,
  duplicates: 0,
  others: 0,
};
const flood = Array.from({ length: 13 }, (_, i) => `f${i}`);
const list = (ids: string[], evicted: number) => ({
  notifications: ids.map((id) => ({ id })),
  count: ids.length,
  evicted,
});

test('a held run whose own approval request the flood evicted: nothing lost, nothing duplicated', () => {
  // Created in order: n1 (notify_user), the run's approval request, then 13 flood notifications;
  // the byte capacity evicted the three oldest.
  const account = accountList(base, list(flood.slice(1), 3), ['n1', ...flood], flood, ['approval:run:g1']);
  expect(account).toMatchObject({ kept: 12, evicted: 3, lost: 0, duplicates: 0, others: 0 });
});

test('the eviction count does not cover an accepted notification when the own one took its place', () => {
  // f0 is gone, but the count of 2 is the run's approval request and n1: f0 was lost.
  const account = accountList(base, list(flood.slice(1), 2), ['n1', ...flood], [], ['approval:run:g1']);
  expect(account).toMatchObject({ lost: 1, duplicates: 0 });
});

test('a notification created twice is a duplicate, the own ones notwithstanding', () => {
  const account = accountList(base, list(flood.slice(1), 4), ['n1', ...flood], flood, ['approval:run:g1']);
  expect(account).toMatchObject({ lost: 0, duplicates: 1 });
});

test('an approval request evicted by the flood and created again when decided is no duplicate', () => {
  // Created: n1, the request, 13 flood; 3 evicted (n1, the request, f0); then "Approved" re-created it.
  const ids = [...flood.slice(1), 'approval:run:g1'];
  const twice = ['approval:run:g1', 'approval:run:g1'];
  expect(accountList(base, list(ids, 3), ['n1', ...flood], flood, twice)).toMatchObject({
    lost: 0,
    duplicates: 0,
  });
  // Listed once, the second creation would count as an extra copy.
  expect(accountList(base, list(ids, 3), ['n1', ...flood], flood, ['approval:run:g1']).duplicates).toBe(1);
});

test('an own notification still in the list is neither accepted nor another producer’s', () => {
  const account = accountList(base, list(['approval:run:g1', ...flood], 0), flood, flood, [
    'approval:run:g1',
  ]);
  expect(account).toMatchObject({ kept: 13, lost: 0, duplicates: 0, others: 0 });
});

test('a notify_user call that failed for good may have reached the list: gone or kept, no loss, no copy', () => {
  // n2's call gave up after reaching this target; the flood then evicted n1 and n2.
  const evictedIt = accountList(base, list(flood, 2), ['n1', ...flood], flood, [], ['n2']);
  expect(evictedIt).toMatchObject({ kept: 13, lost: 0, duplicates: 0, others: 0 });
  // Without knowing of n2, its eviction reads as an extra copy of something.
  expect(accountList(base, list(flood, 2), ['n1', ...flood], flood).duplicates).toBe(1);
  // It never arrived: n1's eviction alone, still nothing lost.
  expect(accountList(base, list(flood, 1), ['n1', ...flood], flood, [], ['n2'])).toMatchObject({
    lost: 0,
    duplicates: 0,
  });
  // Kept: neither another producer's item nor a copy.
  const keptIt = accountList(base, list(['n2', ...flood], 1), ['n1', ...flood], flood, [], ['n2']);
  expect(keptIt).toMatchObject({ others: 0, duplicates: 0, maybeKept: 1 });
});

test('an unsure id does not hide a real copy or a real loss', () => {
  // Kept once, evicted count 2 while only n1 could have gone: one copy.
  expect(accountList(base, list(['n2', ...flood], 2), ['n1', ...flood], flood, [], ['n2']).duplicates).toBe(
    1,
  );
  // n1 and f0 gone with an eviction count of 1: one of them was lost, n2 being gone explains nothing.
  expect(accountList(base, list(flood.slice(1), 1), ['n1', ...flood], flood, [], ['n2']).lost).toBe(1);
});
