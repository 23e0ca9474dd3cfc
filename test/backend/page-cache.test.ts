// The pages of GET /pets kept between writes: bounded by what they hold, not only by their count.
import test from 'ava';
import { PageCache } from '../../backend/src/pets/page-cache.ts';

const page = (size: number) => 'x'.repeat(size);

test('the cache drops its pages before it would hold more than its size, and never keeps one larger than it', async (t) => {
  const cache = new PageCache<string>((value) => value.length, 1000, 100);
  let loads = 0;
  const get = (key: string, size: number) => cache.getOrLoad(key, async () => (loads++, page(size)));
  await get('a', 400);
  await get('b', 400);
  await get('a', 400);
  await get('b', 400);
  t.is(loads, 2, 'both kept: 800 of 1000');
  await get('c', 400); // 1200 > 1000: the others go
  await get('c', 400);
  t.is(loads, 3);
  await get('a', 400);
  t.is(loads, 4, 'a was dropped');
  await get('huge', 1001);
  await get('huge', 1001);
  t.is(loads, 6, 'a page larger than the cache is never kept');
});

test('the cache drops its pages at its page count too', async (t) => {
  const cache = new PageCache<string>((value) => value.length, 1_000_000, 2);
  let loads = 0;
  const get = (key: string) => cache.getOrLoad(key, async () => (loads++, page(1)));
  await get('a');
  await get('b');
  await get('c');
  await get('c');
  await get('a');
  t.is(loads, 4);
});
