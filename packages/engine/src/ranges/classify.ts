/**
 * Which passing SPF addresses lie in shared infrastructure: each `+` term's share of the pass set
 * (`PassSources`) intersected with every provider service's intervals by binary search, so the cost
 * is a few comparisons per range of the pass set, whatever the size of the data.
 *
 * Severity by how reachable the space is (see docs/shared-infrastructure.md):
 * - a runner pool or an edge (`runner`, `edge`): any passing address is critical, since an attacker
 *   lands anywhere in the pool by starting a job or a function;
 * - rentable compute (`rent`): critical from `CRITICAL_RENTABLE_IPV4` IPv4 addresses, or
 *   `CRITICAL_RENTABLE_IPV6` IPv6 addresses, of one provider service (all terms together); fewer are
 *   likely the owner's own fixed addresses: a warning.
 */
import type { PassOpener, PassSources } from '../spf/pass-set.js';
import { OPEN_IPV4_ADDRESSES } from '../spf/pass-set.js';
import { differenceOf } from '../spf/ranges.js';
import type { AddressSet, RangeSet } from '../spf/ranges.js';
import { MAX_CATEGORIES } from './codec.js';
import { providerSpec, serviceLabel } from './providers.js';
import { RANGES_STALE_AFTER_DAYS, rangesAgeDays } from './snapshot.js';
import type { ExposureSeverity, RangeCategory, RangeData, SharedInfrastructureExposure, SharedInfrastructureMaybe, SharedInfrastructureReport } from './types.js';

/** IPv4 addresses of one rentable service (a /20) from which renting until one lands inside is practical. */
export const CRITICAL_RENTABLE_IPV4 = 4096;
/** IPv6 addresses of one rentable service (a /48) from which the block spans many customers. */
export const CRITICAL_RENTABLE_IPV6 = 2 ** 80;

const KIND_ORDER: Record<SharedInfrastructureExposure['kind'], number> = { runner: 0, edge: 1, rent: 2 };

/** One SPF record's pass set to classify: the domain checked and where its passing addresses come from. */
export interface ClassifyInput {
  /** The name checked, or its organizational domain (relaxed alignment). */
  checkedDomain: string;
  sources: PassSources;
}

/**
 * Classifies the pass sets of `inputs` against `data()`, called only when some address passes (or may
 * pass), so a check with an empty pass set never loads the data. Null when nothing passes.
 */
export function classifySharedInfrastructure(inputs: readonly ClassifyInput[], data: () => RangeData, now: Date): SharedInfrastructureReport | null {
  if (inputs.every((input) => input.sources.openers.length === 0 && isEmptySet(input.sources.maybe))) return null;
  const ranges = data();
  const exposures: SharedInfrastructureExposure[] = [];
  const maybe: SharedInfrastructureMaybe[] = [];
  for (const input of inputs) {
    exposures.push(...exposuresOf(input, ranges));
    maybe.push(...maybeOf(input, ranges));
  }
  const severity: SharedInfrastructureReport['severity'] = exposures.some((e) => e.severity === 'critical') ? 'critical' : exposures.length > 0 ? 'warning' : 'none';
  const ageDays = rangesAgeDays(ranges, now);
  return { severity, exposures, maybe, data: { date: ranges.date, ageDays, stale: ageDays > RANGES_STALE_AFTER_DAYS, origin: ranges.origin } };
}

/**
 * Every category's intervals of one family cut into elementary segments, each with the bitmask of the
 * categories that hold it (a GitHub Actions block inside AzureCloud is one segment with two bits), so
 * one binary search per range of the pass set finds every category it touches.
 */
interface Index {
  v4Starts: Float64Array;
  v4Ends: Float64Array;
  v4Masks: Uint32Array;
  v6Starts: bigint[];
  v6Ends: bigint[];
  v6Masks: number[];
  /** Per term set (`PassOpener.origin`): whether it touches any category. A subset of a set that does not, does not either. */
  touches: WeakMap<AddressSet, boolean>;
}

const indexes = new WeakMap<RangeData, Index>();

/** The index of `data`, built on first use (a few milliseconds for the shipped snapshot). */
function indexOf(data: RangeData): Index {
  let index = indexes.get(data);
  if (index !== undefined) return index;
  if (data.categories.length > MAX_CATEGORIES) throw new Error(`provider data with more than ${MAX_CATEGORIES} categories`);
  const v4 = segments(data.categories.map((c) => Array.from(c.v4Starts, (start, i) => [BigInt(start), BigInt(c.v4Ends[i]!)] as const)));
  const v6 = segments(data.categories.map((c) => c.v6Starts.map((start, i) => [start, c.v6Ends[i]!] as const)));
  index = {
    v4Starts: Float64Array.from(v4.starts, Number),
    v4Ends: Float64Array.from(v4.ends, Number),
    v4Masks: Uint32Array.from(v4.masks),
    v6Starts: v6.starts,
    v6Ends: v6.ends,
    v6Masks: v6.masks,
    touches: new WeakMap(),
  };
  indexes.set(data, index);
  return index;
}

/** The elementary segments of several sorted, merged interval lists (list i sets bit i). */
function segments(lists: readonly (readonly (readonly [bigint, bigint])[])[]): { starts: bigint[]; ends: bigint[]; masks: number[] } {
  const events: [position: bigint, bit: number][] = [];
  lists.forEach((list, i) => {
    for (const [start, end] of list) events.push([start, 1 << i], [end + 1n, 1 << i]);
  });
  events.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const starts: bigint[] = [];
  const ends: bigint[] = [];
  const masks: number[] = [];
  let mask = 0;
  for (let i = 0; i < events.length; ) {
    const position = events[i]![0];
    // Each list's intervals are disjoint, so a bit turns on at a start and off after an end: XOR.
    while (i < events.length && events[i]![0] === position) mask ^= events[i++]![1];
    if (i >= events.length) break;
    const next = events[i]![0];
    if (mask === 0) continue;
    if (masks.length > 0 && masks[masks.length - 1] === mask >>> 0 && ends[ends.length - 1]! + 1n === position) ends[ends.length - 1] = next - 1n;
    else {
      starts.push(position);
      ends.push(next - 1n);
      masks.push(mask >>> 0);
    }
  }
  return { starts, ends, masks };
}

/**
 * Adds to `counts` (per category: IPv4 in `counts[i]`, IPv6 in `counts6[i]`) the addresses of `set`
 * each category holds; true when any. One binary search per range of the set.
 */
function overlapInto(set: AddressSet, index: Index, counts: Float64Array | null, counts6: bigint[] | null): boolean {
  let any = false;
  const starts = index.v4Starts;
  const ends = index.v4Ends;
  if (starts.length > 0) {
    for (const [startBig, endBig] of set.v4.ranges) {
      const start = Number(startBig);
      const end = Number(endBig);
      for (let i = firstEndingAtOrAfter(ends, start); i < starts.length && starts[i]! <= end; i++) {
        any = true;
        if (counts === null) return true;
        const length = Math.min(end, ends[i]!) - Math.max(start, starts[i]!) + 1;
        for (let mask = index.v4Masks[i]!; mask !== 0; mask &= mask - 1) counts[31 - Math.clz32(mask & -mask)]! += length;
      }
    }
  }
  const starts6 = index.v6Starts;
  const ends6 = index.v6Ends;
  if (starts6.length > 0) {
    for (const [start, end] of set.v6.ranges) {
      for (let i = firstEndingAtOrAfter6(ends6, start); i < starts6.length && starts6[i]! <= end; i++) {
        any = true;
        if (counts6 === null) return true;
        const from = start > starts6[i]! ? start : starts6[i]!;
        const to = end < ends6[i]! ? end : ends6[i]!;
        for (let mask = index.v6Masks[i]!; mask !== 0; mask &= mask - 1) {
          const bit = 31 - Math.clz32(mask & -mask);
          counts6[bit] = counts6[bit]! + (to - from + 1n);
        }
      }
    }
  }
  return any;
}

/** Whether a term's whole set touches any category, kept per set object (see `PassOpener.origin`). */
function touches(origin: AddressSet, index: Index): boolean {
  let known = index.touches.get(origin);
  if (known === undefined) index.touches.set(origin, (known = overlapInto(origin, index, null, null)));
  return known;
}

/** Per `openers` array (kept with a static record's outcome): the exposures already computed for it. */
const memo = new WeakMap<readonly PassOpener[], { data: RangeData; checkedDomain: string; exposures: SharedInfrastructureExposure[] }>();

/** The exposures of one pass set: one per provider service and term, critical ones first, biggest first. */
function exposuresOf(input: ClassifyInput, data: RangeData): SharedInfrastructureExposure[] {
  const openers = input.sources.openers;
  if (openers.length === 0) return [];
  const known = memo.get(openers);
  if (known !== undefined && known.data === data && known.checkedDomain === input.checkedDomain) return known.exposures;
  const index = indexOf(data);
  let found: SharedInfrastructureExposure[] | null = null;
  for (const opener of openers) {
    // Most terms name no shared space at all, which is known from the term alone.
    if (!touches(opener.origin, index)) continue;
    const counts = new Float64Array(data.categories.length);
    const counts6 = data.categories.map(() => 0n);
    if (!overlapInto(opener.set, index, counts, counts6)) continue;
    for (let i = 0; i < data.categories.length; i++) {
      if (counts[i] === 0 && counts6[i] === 0n) continue;
      const category = data.categories[i]!;
      const spec = providerSpec(category.provider);
      found ??= [];
      const same = found.find((e) => e.provider === category.provider && e.service === category.service && e.path === opener.term);
      if (same) {
        same.ipv4Addresses += counts[i]!;
        same.ipv6Addresses += Number(counts6[i]);
        continue;
      }
      found.push({
        provider: category.provider,
        providerName: spec.name,
        service: category.service,
        label: serviceLabel(category.provider, category.service),
        kind: category.kind,
        checkedDomain: input.checkedDomain,
        recordDomain: opener.domain,
        term: lastStep(opener.term),
        path: opener.term,
        ipv4Addresses: counts[i]!,
        ipv6Addresses: Number(counts6[i]),
        severity: 'warning',
        port25: { policy: spec.port25.policy, source: spec.port25.source },
      });
    }
  }
  if (found === null) return NO_EXPOSURES;
  // Severity per provider service, all terms together: an attacker aims at the union.
  for (const exposure of found) exposure.severity = severityOf(exposure, found);
  // Critical first, then the biggest; on a tie a runner pool or an edge before the cloud it runs in.
  found.sort((a, b) =>
    a.severity !== b.severity ? (a.severity === 'critical' ? -1 : 1) : b.ipv4Addresses - a.ipv4Addresses || b.ipv6Addresses - a.ipv6Addresses || KIND_ORDER[a.kind] - KIND_ORDER[b.kind],
  );
  // Kept and handed to every later check of the same record: frozen, so no caller can change what the next one reads.
  for (const exposure of found) Object.freeze(Object.freeze(exposure).port25);
  memo.set(openers, { data, checkedDomain: input.checkedDomain, exposures: found });
  return found;
}

const NO_EXPOSURES: SharedInfrastructureExposure[] = [];

function severityOf(exposure: SharedInfrastructureExposure, all: readonly SharedInfrastructureExposure[]): ExposureSeverity {
  if (exposure.kind !== 'rent') return 'critical';
  let ipv4 = 0;
  let ipv6 = 0;
  for (const e of all) {
    if (e.provider !== exposure.provider || e.service !== exposure.service) continue;
    ipv4 += e.ipv4Addresses;
    ipv6 += e.ipv6Addresses;
  }
  return ipv4 >= CRITICAL_RENTABLE_IPV4 || ipv6 >= CRITICAL_RENTABLE_IPV6 ? 'critical' : 'warning';
}

/**
 * Shared space in the maybe set (addresses that pass depending on the message). Not reported when
 * the maybe set is huge: that is a term known only at delivery, which the probes already judge.
 */
function maybeOf(input: ClassifyInput, data: RangeData): SharedInfrastructureMaybe[] {
  if (isEmptySet(input.sources.maybe)) return [];
  const set = differenceOf(input.sources.maybe, input.sources.pass);
  if (isEmptySet(set) || set.v4.size() >= OPEN_IPV4_ADDRESSES || set.v6.isFull) return [];
  const index = indexOf(data);
  const counts = new Float64Array(data.categories.length);
  const counts6 = data.categories.map(() => 0n);
  if (!overlapInto(set, index, counts, counts6)) return [];
  const out: SharedInfrastructureMaybe[] = [];
  data.categories.forEach((category, i) => {
    if (counts[i] === 0 && counts6[i] === 0n) return;
    out.push({
      checkedDomain: input.checkedDomain,
      provider: category.provider,
      providerName: providerSpec(category.provider).name,
      service: category.service,
      label: serviceLabel(category.provider, category.service),
      ipv4Addresses: counts[i]!,
      ipv6Addresses: Number(counts6[i]),
    });
  });
  return out;
}

/** The term a path ends in (`include:a → ip4:x` → `ip4:x`). */
function lastStep(path: string): string {
  const at = path.lastIndexOf(' → ');
  return at === -1 ? path : path.slice(at + 3);
}

function isEmptySet(set: AddressSet): boolean {
  return set.v4.isEmpty && set.v6.isEmpty;
}

/** IPv4 addresses of `set` inside the category: binary search for the first interval ending at or after each range. */
export function overlap4(set: RangeSet, category: RangeCategory): number {
  const starts = category.v4Starts;
  const ends = category.v4Ends;
  if (set.isEmpty || starts.length === 0) return 0;
  let total = 0;
  for (const [startBig, endBig] of set.ranges) {
    const start = Number(startBig);
    const end = Number(endBig);
    for (let i = firstEndingAtOrAfter(ends, start); i < starts.length && starts[i]! <= end; i++) {
      total += Math.min(end, ends[i]!) - Math.max(start, starts[i]!) + 1;
    }
  }
  return total;
}

/** IPv6 addresses of `set` inside the category, the same way with 128-bit bounds. */
export function overlap6(set: RangeSet, category: RangeCategory): bigint {
  const starts = category.v6Starts;
  const ends = category.v6Ends;
  if (set.isEmpty || starts.length === 0) return 0n;
  let total = 0n;
  for (const [start, end] of set.ranges) {
    for (let i = firstEndingAtOrAfter6(ends, start); i < starts.length && starts[i]! <= end; i++) {
      const from = start > starts[i]! ? start : starts[i]!;
      const to = end < ends[i]! ? end : ends[i]!;
      total += to - from + 1n;
    }
  }
  return total;
}

/**
 * The index of the first range whose end is at or after `value` (binary search over the sorted,
 * merged ends): where the ranges that can overlap a span starting at `value` begin. IPv4 bounds.
 */
function firstEndingAtOrAfter(ends: ArrayLike<number>, value: number): number {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ends[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * `firstEndingAtOrAfter` over IPv6 (bigint) bounds. Two functions, each seeing one type: one generic
 * search, seeing both, made `overlap4` plus `overlap6` 1.6 times slower (mixed comparison feedback).
 */
function firstEndingAtOrAfter6(ends: readonly bigint[], value: bigint): number {
  let low = 0;
  let high = ends.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ends[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
