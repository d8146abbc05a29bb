/**
 * AnswerLru: the (name, type) store behind CachingResolver. Each row runs a sequence of operations on
 * a fresh store and says what must be held afterwards, and why.
 */
import { describe, expect, it } from 'vitest';
import { AnswerLru } from '../../src/dns/answer-lru.js';
import type { RecordType } from '../../src/dns/types.js';

type Op = ['set', string, RecordType, number] | ['get', string, RecordType] | ['delete', string, RecordType] | ['clear'];

interface Row {
  reason: string;
  max: number;
  ops: Op[];
  /** What `get` answers afterwards (read in this order, so reads also refresh recency). */
  held: [string, RecordType, number | undefined][];
  size: number;
}

const ROWS: Row[] = [
  { reason: 'a stored value is found under its name and type', max: 4, ops: [['set', 'a.example', 'TXT', 1]], held: [['a.example', 'TXT', 1]], size: 1 },
  {
    reason: 'names and types are kept apart',
    max: 4,
    ops: [['set', 'a.example', 'TXT', 1], ['set', 'a.example', 'MX', 2], ['set', 'b.example', 'TXT', 3]],
    held: [['a.example', 'TXT', 1], ['a.example', 'MX', 2], ['b.example', 'TXT', 3], ['b.example', 'MX', undefined]],
    size: 3,
  },
  {
    reason: 'a second set replaces the value without adding an entry',
    max: 4,
    ops: [['set', 'a.example', 'A', 1], ['set', 'a.example', 'A', 2]],
    held: [['a.example', 'A', 2]],
    size: 1,
  },
  {
    reason: 'when full, the least recently set entry goes',
    max: 2,
    ops: [['set', 'a.example', 'A', 1], ['set', 'b.example', 'A', 2], ['set', 'c.example', 'A', 3]],
    held: [['a.example', 'A', undefined], ['b.example', 'A', 2], ['c.example', 'A', 3]],
    size: 2,
  },
  {
    reason: 'a get makes an entry the most recently used, so the other one goes',
    max: 2,
    ops: [['set', 'a.example', 'A', 1], ['set', 'b.example', 'A', 2], ['get', 'a.example', 'A'], ['set', 'c.example', 'A', 3]],
    held: [['a.example', 'A', 1], ['b.example', 'A', undefined], ['c.example', 'A', 3]],
    size: 2,
  },
  {
    reason: 'eviction counts (name, type) entries, not names',
    max: 2,
    ops: [['set', 'a.example', 'A', 1], ['set', 'a.example', 'AAAA', 2], ['set', 'a.example', 'MX', 3]],
    held: [['a.example', 'A', undefined], ['a.example', 'AAAA', 2], ['a.example', 'MX', 3]],
    size: 2,
  },
  {
    reason: 'delete forgets one entry and leaves the name’s others',
    max: 4,
    ops: [['set', 'a.example', 'A', 1], ['set', 'a.example', 'MX', 2], ['delete', 'a.example', 'A']],
    held: [['a.example', 'A', undefined], ['a.example', 'MX', 2]],
    size: 1,
  },
  {
    reason: 'a name whose last entry was deleted can be stored again',
    max: 4,
    ops: [['set', 'a.example', 'A', 1], ['delete', 'a.example', 'A'], ['set', 'a.example', 'A', 5]],
    held: [['a.example', 'A', 5]],
    size: 1,
  },
  {
    reason: 'deleting what is not there changes nothing',
    max: 4,
    ops: [['set', 'a.example', 'A', 1], ['delete', 'b.example', 'A'], ['delete', 'a.example', 'MX']],
    held: [['a.example', 'A', 1]],
    size: 1,
  },
  {
    reason: 'clear forgets everything, and the store works afterwards',
    max: 2,
    ops: [['set', 'a.example', 'A', 1], ['set', 'b.example', 'A', 2], ['clear'], ['set', 'c.example', 'A', 3]],
    held: [['a.example', 'A', undefined], ['b.example', 'A', undefined], ['c.example', 'A', 3]],
    size: 1,
  },
  {
    reason: 'a deleted oldest entry is not evicted twice: the next oldest goes when full',
    max: 2,
    ops: [['set', 'a.example', 'A', 1], ['set', 'b.example', 'A', 2], ['delete', 'a.example', 'A'], ['set', 'c.example', 'A', 3], ['set', 'd.example', 'A', 4]],
    held: [['b.example', 'A', undefined], ['c.example', 'A', 3], ['d.example', 'A', 4]],
    size: 2,
  },
];

describe('AnswerLru', () => {
  it.each(ROWS)('$reason', ({ max, ops, held, size }) => {
    const store = new AnswerLru<number>(max);
    for (const op of ops) {
      if (op[0] === 'set') store.set(op[1], op[2], op[3]);
      else if (op[0] === 'get') store.get(op[1], op[2]);
      else if (op[0] === 'delete') store.delete(op[1], op[2]);
      else store.clear();
    }
    expect(store.size).toBe(size);
    expect(held.map(([name, type]) => store.get(name, type))).toEqual(held.map(([, , value]) => value));
  });

  it('stays at its bound over many distinct entries, keeping the most recent', () => {
    const store = new AnswerLru<number>(100);
    for (let index = 0; index < 1000; index++) store.set(`n${index}.example`, index % 2 === 0 ? 'A' : 'TXT', index);
    expect(store.size).toBe(100);
    expect(store.get('n999.example', 'TXT')).toBe(999);
    expect(store.get('n899.example', 'TXT')).toBeUndefined();
    expect(store.get('n900.example', 'A')).toBe(900);
  });

  it('keeps an entry that is read at least once in every three quarters of a cache of stores', () => {
    const store = new AnswerLru<number>(100);
    store.set('hot.example', 'TXT', 1);
    store.set('cold.example', 'TXT', 2);
    for (let index = 0; index < 10_000; index++) {
      store.set(`n${index}.example`, 'A', index);
      if (index % 75 === 0) store.get('hot.example', 'TXT');
    }
    expect(store.get('hot.example', 'TXT')).toBe(1);
    expect(store.get('cold.example', 'TXT')).toBeUndefined();
    expect(store.size).toBe(100);
  });

  it('leaves an entry read while still among the newest quarter in its place (lazy recency)', () => {
    // 8 entries: a read moves an entry only when 2 or more stores came after its last move.
    const store = new AnswerLru<string>(8);
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const name of names) store.set(`${name}.example`, 'A', name);
    expect(store.get('g.example', 'A')).toBe('g'); // one store after g: it keeps its place
    expect(store.get('b.example', 'A')).toBe('b'); // six stores after b: it becomes the newest
    for (const name of ['i', 'j', 'k', 'l', 'm', 'n', 'o']) store.set(`${name}.example`, 'A', name);
    // Oldest first, the order was a c d e f g h b i … o: the seven oldest are gone.
    expect(['b', 'g', 'h', 'o'].map((name) => store.get(`${name}.example`, 'A'))).toEqual(['b', undefined, undefined, 'o']);
  });
});
