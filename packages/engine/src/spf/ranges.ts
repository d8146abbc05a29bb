/**
 * Sets of IP addresses as sorted, disjoint, non-adjacent inclusive ranges of integers: IPv4 as
 * 0 … 2^32-1 and IPv6 as 0 … 2^128-1, both held as bigint so one implementation serves both
 * families. SPF records name a few dozen ranges at most, so every operation is a linear merge.
 */

/** Bits in an address of each family (RFC 791, RFC 4291). */
export const FAMILY_BITS = { 4: 32, 6: 128 } as const;

/** An address family. */
export type Family = 4 | 6;

type Range = readonly [start: bigint, end: bigint];

/** An immutable set of addresses of one family. */
export class RangeSet {
  /** The empty set. */
  static readonly EMPTY = new RangeSet([]);

  private constructor(
    /** Sorted, disjoint, non-adjacent, inclusive. */
    readonly ranges: readonly Range[],
  ) {}

  /** Every address of a family. */
  static full(family: Family): RangeSet {
    return family === 4 ? FULL_4 : FULL_6;
  }

  /** The block `network/prefix` of a family; host bits of `network` are ignored (RFC 4632 §3.1). */
  static cidr(family: Family, network: bigint, prefix: number): RangeSet {
    const hostBits = BigInt(FAMILY_BITS[family] - prefix);
    const start = (network >> hostBits) << hostBits;
    return new RangeSet([[start, start + (1n << hostBits) - 1n]]);
  }

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** True for the set of every address of a family (`RangeSet.full`). */
  get isFull(): boolean {
    return this === FULL_4 || this === FULL_6;
  }

  /** How many addresses the set holds. */
  size(): bigint {
    if (this.count !== undefined) return this.count;
    let total = 0n;
    for (const [start, end] of this.ranges) total += end - start + 1n;
    this.count = total;
    return total;
  }

  /** True when `value` is in the set. */
  has(value: bigint): boolean {
    for (const [start, end] of this.ranges) {
      if (value < start) return false;
      if (value <= end) return true;
    }
    return false;
  }

  union(other: RangeSet): RangeSet {
    if (other.isEmpty || this.isFull) return this;
    if (this.isEmpty || other.isFull) return other;
    // Both lists are sorted: merge them in one pass, joining ranges that overlap or touch.
    const a = this.ranges;
    const b = other.ranges;
    const merged: [bigint, bigint][] = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      const next = j >= b.length || (i < a.length && a[i]![0] <= b[j]![0]) ? a[i++]! : b[j++]!;
      const last = merged[merged.length - 1];
      if (last !== undefined && next[0] <= last[1] + 1n) {
        if (next[1] > last[1]) last[1] = next[1];
      } else {
        merged.push([next[0], next[1]]);
      }
    }
    return new RangeSet(merged);
  }

  intersect(other: RangeSet): RangeSet {
    if (this.isEmpty || other.isEmpty) return RangeSet.EMPTY;
    // The evaluation starts from every address, so one side is often the whole family.
    if (other.isFull) return this;
    if (this.isFull) return other;
    const out: Range[] = [];
    let i = 0;
    let j = 0;
    while (i < this.ranges.length && j < other.ranges.length) {
      const a = this.ranges[i]!;
      const b = other.ranges[j]!;
      const start = a[0] > b[0] ? a[0] : b[0];
      const end = a[1] < b[1] ? a[1] : b[1];
      if (start <= end) out.push([start, end]);
      if (a[1] < b[1]) i++;
      else j++;
    }
    return out.length === 0 ? RangeSet.EMPTY : new RangeSet(out);
  }

  subtract(other: RangeSet): RangeSet {
    if (this.isEmpty || other.isEmpty) return this;
    if (other.isFull) return RangeSet.EMPTY;
    const out: Range[] = [];
    let j = 0;
    for (const [rangeStart, end] of this.ranges) {
      let start = rangeStart;
      while (j < other.ranges.length && other.ranges[j]![1] < start) j++;
      let k = j;
      while (k < other.ranges.length && other.ranges[k]![0] <= end && start <= end) {
        const [cutStart, cutEnd] = other.ranges[k]!;
        if (cutStart > start) out.push([start, cutStart - 1n]);
        start = cutEnd + 1n;
        k++;
      }
      if (start <= end) out.push([start, end]);
    }
    return out.length === 0 ? RangeSet.EMPTY : new RangeSet(out);
  }

  /**
   * The shortest prefix length p such that the set holds a whole aligned block `x/p` (the widest
   * CIDR block inside it); null for the empty set.
   */
  widestPrefix(family: Family): number | null {
    if (this.widest !== undefined) return this.widest;
    const bits = FAMILY_BITS[family];
    let best: number | null = null;
    for (const [start, end] of this.ranges) {
      // A range of 2^k to 2^(k+1)-1 addresses holds an aligned block of 2^k or of 2^(k-1): try those two.
      const k = floorLog2(end - start + 1n);
      for (let blockBits = k; blockBits >= Math.max(0, k - 1); blockBits--) {
        const prefix = bits - blockBits;
        if (best !== null && prefix >= best) break;
        const size = 1n << BigInt(blockBits);
        const aligned = ((start + size - 1n) >> BigInt(blockBits)) << BigInt(blockBits);
        if (aligned + size - 1n <= end) {
          best = prefix;
          break;
        }
      }
    }
    this.widest = best;
    return best;
  }

  /** `widestPrefix`, computed once (the set is immutable). */
  private widest: number | null | undefined;

  /** `size`, computed once. */
  private count: bigint | undefined;

  /** The first address at or after `from` that is not in the set and not past `limit`, else null. */
  firstOutside(from: bigint, limit: bigint): bigint | null {
    let candidate = from;
    for (const [start, end] of this.ranges) {
      if (end < candidate) continue;
      if (start > candidate) break;
      candidate = end + 1n;
    }
    return candidate <= limit ? candidate : null;
  }
}

const FULL_4 = RangeSet.cidr(4, 0n, 0);
const FULL_6 = RangeSet.cidr(6, 0n, 0);

/** Addresses of both families. */
export interface AddressSet {
  v4: RangeSet;
  v6: RangeSet;
}

/** The empty address set. */
export const NO_ADDRESSES: AddressSet = Object.freeze({ v4: RangeSet.EMPTY, v6: RangeSet.EMPTY });
/** Every IPv4 and IPv6 address. */
export const ALL_ADDRESSES: AddressSet = Object.freeze({ v4: FULL_4, v6: FULL_6 });

/** a ∪ b, family by family. */
export function unionOf(a: AddressSet, b: AddressSet): AddressSet {
  if (a === NO_ADDRESSES) return b;
  if (b === NO_ADDRESSES) return a;
  return { v4: a.v4.union(b.v4), v6: a.v6.union(b.v6) };
}

/** a ∩ b, family by family. */
export function intersectionOf(a: AddressSet, b: AddressSet): AddressSet {
  if (a === NO_ADDRESSES || b === NO_ADDRESSES) return NO_ADDRESSES;
  if (b === ALL_ADDRESSES) return a;
  if (a === ALL_ADDRESSES) return b;
  return { v4: a.v4.intersect(b.v4), v6: a.v6.intersect(b.v6) };
}

/** a − b, family by family. */
export function differenceOf(a: AddressSet, b: AddressSet): AddressSet {
  if (a === NO_ADDRESSES || b === NO_ADDRESSES) return a;
  if (b === ALL_ADDRESSES) return NO_ADDRESSES;
  return { v4: a.v4.subtract(b.v4), v6: a.v6.subtract(b.v6) };
}

/** True when the set holds no address of either family. */
export function isEmptySet(a: AddressSet): boolean {
  return a.v4.isEmpty && a.v6.isEmpty;
}

/** The four 32-bit words of an IPv6 address as one 128-bit integer. */
export function ip6ToBigInt(words: readonly [number, number, number, number]): bigint {
  return (BigInt(words[0]) << 96n) | (BigInt(words[1]) << 64n) | (BigInt(words[2]) << 32n) | BigInt(words[3]);
}

/** A 128-bit integer as the four 32-bit words `formatIp6` takes. */
export function bigIntToIp6Words(value: bigint): [number, number, number, number] {
  const mask = 0xffffffffn;
  return [Number((value >> 96n) & mask), Number((value >> 64n) & mask), Number((value >> 32n) & mask), Number(value & mask)];
}

/** ⌊log2 n⌋ for n ≥ 1: with Math.clz32 below 2^32 (every IPv4 range but the whole space), else from the binary digits. */
function floorLog2(n: bigint): number {
  return n <= 0xffffffffn ? 31 - Math.clz32(Number(n)) : n.toString(2).length - 1;
}
