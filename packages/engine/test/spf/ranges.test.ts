/**
 * RangeSet against a plain reference: small random address sets (within 0…127 of IPv4, and one
 * range near the top of IPv6) as lists of member addresses, for every operation the pass set uses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RangeSet } from '../../src/spf/ranges.js';

const UNIVERSE = 128;

/** A RangeSet built from CIDR blocks, and the addresses it must hold. */
const blocks = fc.array(fc.tuple(fc.integer({ min: 0, max: UNIVERSE - 1 }), fc.integer({ min: 25, max: 32 })), { maxLength: 6 });

function build(list: [number, number][]): { set: RangeSet; members: Set<number> } {
  let set = RangeSet.EMPTY;
  const members = new Set<number>();
  for (const [network, prefix] of list) {
    set = set.union(RangeSet.cidr(4, BigInt(network), prefix));
    const size = 2 ** (32 - prefix);
    const start = network - (network % size);
    for (let address = start; address < start + size; address++) members.add(address);
  }
  return { set, members };
}

function membersOf(set: RangeSet): Set<number> {
  const out = new Set<number>();
  for (const [start, end] of set.ranges) for (let address = Number(start); address <= Number(end); address++) out.add(address);
  return out;
}

/** Sorted, disjoint and not touching: the invariant every operation keeps. */
function isCanonical(set: RangeSet): boolean {
  return set.ranges.every(([start, end], index) => start <= end && (index === 0 || start > set.ranges[index - 1]![1] + 1n));
}

describe('RangeSet', () => {
  it('union, intersection and difference hold exactly the addresses they should, in canonical form', () => {
    fc.assert(
      fc.property(blocks, blocks, (left, right) => {
        const a = build(left);
        const b = build(right);
        const union = a.set.union(b.set);
        const intersection = a.set.intersect(b.set);
        const difference = a.set.subtract(b.set);
        expect(membersOf(union)).toEqual(new Set([...a.members, ...b.members]));
        expect(membersOf(intersection)).toEqual(new Set([...a.members].filter((x) => b.members.has(x))));
        expect(membersOf(difference)).toEqual(new Set([...a.members].filter((x) => !b.members.has(x))));
        for (const set of [union, intersection, difference]) expect(isCanonical(set)).toBe(true);
        expect(union.size()).toBe(BigInt(membersOf(union).size));
      }),
      { numRuns: 500 },
    );
  });

  it('finds the widest aligned block inside a set', () => {
    fc.assert(
      fc.property(blocks, (list) => {
        const { set, members } = build(list);
        let expected: number | null = null;
        for (let prefix = 25; prefix <= 32 && expected === null; prefix++) {
          const size = 2 ** (32 - prefix);
          for (let start = 0; start < UNIVERSE; start += size) {
            if (Array.from({ length: size }, (_, offset) => start + offset).every((address) => members.has(address))) {
              expected = prefix;
              break;
            }
          }
        }
        expect(set.widestPrefix(4)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('measures ranges of 2^32 addresses and more (the whole of IPv4, IPv6 blocks)', () => {
    expect(RangeSet.full(4).widestPrefix(4)).toBe(0);
    expect(RangeSet.cidr(6, 0x2001_0db8n << 96n, 32).widestPrefix(6)).toBe(32);
    expect(RangeSet.cidr(4, 0n, 1).union(RangeSet.cidr(4, 1n << 31n, 1)).ranges).toEqual([[0n, 0xffff_ffffn]]);
  });
});

// The whole family is a common operand (evaluation starts from every address): those operations
// take a short path, which must give what the merge gives for a full set built another way.
describe('RangeSet: the full family', () => {
  const full4 = RangeSet.full(4);
  const builtFull = RangeSet.cidr(4, 0n, 0); // equal to full4, but not the shared object
  it.each([
    ['empty', RangeSet.EMPTY],
    ['a /24', RangeSet.cidr(4, 0xc0000200n, 24)],
    ['two blocks', RangeSet.cidr(4, 10n, 31).union(RangeSet.cidr(4, 0xffffff00n, 24))],
    ['everything', builtFull],
  ])('%s: union, intersect and subtract with the full set match the general path', (_name, set) => {
    expect(set.union(full4).ranges).toEqual(set.union(builtFull).ranges);
    expect(full4.union(set).ranges).toEqual(builtFull.union(set).ranges);
    expect(set.intersect(full4).ranges).toEqual(set.intersect(builtFull).ranges);
    expect(full4.intersect(set).ranges).toEqual(builtFull.intersect(set).ranges);
    expect(set.subtract(full4).ranges).toEqual(set.subtract(builtFull).ranges);
    expect(full4.subtract(set).ranges).toEqual(builtFull.subtract(set).ranges);
  });
  it('knows the shared full sets', () => {
    expect(full4.isFull).toBe(true);
    expect(RangeSet.full(6).isFull).toBe(true);
    expect(RangeSet.cidr(4, 0n, 1).isFull).toBe(false);
  });
});
