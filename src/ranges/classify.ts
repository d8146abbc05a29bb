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
import type { AddressSet, RangeSet } from '../spf/ranges.js';
import { providerSpec, serviceLabel } from './providers.js';
import { isStale, rangesAgeDays } from './snapshot.js';
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
  return {
    severity,
    exposures,
    maybe,
    data: { date: ranges.date, ageDays: rangesAgeDays(ranges, now), stale: isStale(ranges, now), origin: ranges.origin },
  };
}

/** Per `openers` array (kept with a static record's outcome): the exposures already computed for it. */
const memo = new WeakMap<readonly PassOpener[], { data: RangeData; checkedDomain: string; exposures: SharedInfrastructureExposure[] }>();

/** The exposures of one pass set: one per provider service and term, critical ones first, biggest first. */
function exposuresOf(input: ClassifyInput, data: RangeData): SharedInfrastructureExposure[] {
  const openers = input.sources.openers;
  if (openers.length === 0) return [];
  const known = memo.get(openers);
  if (known !== undefined && known.data === data && known.checkedDomain === input.checkedDomain) return known.exposures;
  const found: SharedInfrastructureExposure[] = [];
  for (const opener of openers) {
    for (const category of data.categories) {
      const ipv4Addresses = overlap4(opener.set.v4, category);
      const ipv6Addresses = overlap6(opener.set.v6, category);
      if (ipv4Addresses === 0 && ipv6Addresses === 0n) continue;
      const spec = providerSpec(category.provider);
      const same = found.find((e) => e.provider === category.provider && e.service === category.service && e.path === opener.term);
      if (same) {
        same.ipv4Addresses += ipv4Addresses;
        same.ipv6Addresses += Number(ipv6Addresses);
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
        ipv4Addresses,
        ipv6Addresses: Number(ipv6Addresses),
        severity: 'warning',
        port25: { policy: spec.port25.policy, source: spec.port25.source },
      });
    }
  }
  // Severity per provider service, all terms together: an attacker aims at the union.
  for (const exposure of found) exposure.severity = severityOf(exposure, found);
  // Critical first, then the biggest; on a tie a runner pool or an edge before the cloud it runs in.
  found.sort((a, b) =>
    a.severity !== b.severity ? (a.severity === 'critical' ? -1 : 1) : b.ipv4Addresses - a.ipv4Addresses || b.ipv6Addresses - a.ipv6Addresses || KIND_ORDER[a.kind] - KIND_ORDER[b.kind],
  );
  memo.set(openers, { data, checkedDomain: input.checkedDomain, exposures: found });
  return found;
}

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
  const set = input.sources.maybe;
  if (isEmptySet(set) || set.v4.size() >= OPEN_IPV4_ADDRESSES || set.v6.isFull) return [];
  const out: SharedInfrastructureMaybe[] = [];
  for (const category of data.categories) {
    const ipv4Addresses = overlap4(set.v4, category);
    const ipv6Addresses = overlap6(set.v6, category);
    if (ipv4Addresses === 0 && ipv6Addresses === 0n) continue;
    const spec = providerSpec(category.provider);
    out.push({ checkedDomain: input.checkedDomain, provider: category.provider, providerName: spec.name, service: category.service, label: serviceLabel(category.provider, category.service), ipv4Addresses, ipv6Addresses: Number(ipv6Addresses) });
  }
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
    let low = 0;
    let high = ends.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (ends[mid]! < start) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < starts.length && starts[i]! <= end; i++) {
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
    let low = 0;
    let high = ends.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (ends[mid]! < start) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < starts.length && starts[i]! <= end; i++) {
      const from = start > starts[i]! ? start : starts[i]!;
      const to = end < ends[i]! ? end : ends[i]!;
      total += to - from + 1n;
    }
  }
  return total;
}
