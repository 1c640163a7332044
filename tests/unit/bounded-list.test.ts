import { BoundedList } from '../../workflows/agent/bounded-list';

test('keeps the newest items within the count bound', () => {
  const list = new BoundedList<number>(3, 1_000_000);
  for (let i = 1; i <= 10; i++) list.push(i);
  expect(list.all).toEqual([8, 9, 10]);
});

test('keeps the newest items within the byte bound, measured as JSON', () => {
  const list = new BoundedList<string>(1000, 100);
  for (let i = 0; i < 10; i++) list.push('x'.repeat(20)); // 22 bytes of JSON + 1 each
  expect(list.length).toBe(4);
  expect(JSON.stringify(list.all).length).toBeLessThanOrEqual(100);
});

test('the newest item always stays, even alone over the budget; trim can shrink further', () => {
  const list = new BoundedList<string>(10, 50, ['a', 'b']);
  list.push('y'.repeat(500));
  expect(list.all).toEqual(['y'.repeat(500)]);
  const small = new BoundedList<number>(10, 1000, [1, 2, 3, 4, 5]);
  small.trim(4);
  expect(small.all).toEqual([4, 5]);
});
