import type { Zone, ResourceRecord } from './types.js';
import { canonicalName, canonicalNameProblem, isAtOrBelow, parentName } from '../dns/name.js';
import { MAX_CNAME_CHAIN, type CheckSource, type DnsAnswer, type RecordData, type RecordType, type Resolver, type SoaData } from '../dns/types.js';

export { MAX_CNAME_CHAIN };
/** Negative-answer TTL when a zone has no SOA to take one from (RFC 2308 §5 needs an SOA). */
export const DEFAULT_NEGATIVE_TTL = 300;

interface RRset {
  ttl: number;
  data: RecordData[];
}

/** One zone indexed for answering: built by `buildLoadedZones`. */
export interface LoadedZone {
  origin: string;
  soa: { ttl: number; data: SoaData } | undefined;
  /** name → type → RRset */
  nodes: Map<string, Map<RecordType, RRset>>;
  /** Names that exist only because something lies below them (RFC 4592 §2.2.2 empty non-terminals). */
  emptyNonTerminals: Set<string>;
  /** Whether any owner name is a wildcard; a zone without one needs no RFC 4592 §3.3.1 search. */
  hasWildcards: boolean;
}

/** Where a name falls in the loaded zones, for the DNS server's authority section. */
export interface ZoneLocation {
  origin: string;
  soa: { ttl: number; data: SoaData } | undefined;
}

/**
 * Answers from loaded zones in memory, as a recursive resolver would if those zones were the whole
 * DNS: NXDOMAIN and NODATA told apart, RFC 4592 wildcards, CNAME chains followed across the loaded
 * zones, and a name outside every zone does not exist (NXDOMAIN, as the root would say).
 *
 * Zone cuts are not modelled: an NS record below an apex is data, and a child zone loaded separately
 * is found by the longest matching origin.
 */
export class ZoneResolver implements Resolver {
  /** Answers from zone files, never from the DNS itself: results say `"source": "fixture-zones"`. */
  readonly source: CheckSource = 'fixture-zones';
  private readonly zones: LoadedZone[];
  private readonly byOrigin: Map<string, LoadedZone>;
  /** The most labels any origin has: longer suffixes of a name cannot be an origin, so are not tried. */
  private readonly maxOriginLabels: number;

  constructor(zones: readonly Zone[]) {
    const byOrigin = buildLoadedZones(zones);
    this.byOrigin = byOrigin;
    this.maxOriginLabels = Math.max(0, ...[...byOrigin.keys()].map(labelCount));
    // Longest origin first, for `origins()`.
    this.zones = [...byOrigin.values()].sort((a, b) => b.origin.length - a.origin.length);
  }

  /** The zone that holds `name`, or undefined when it lies outside every loaded zone. */
  locate(name: string): ZoneLocation | undefined {
    const zone = this.zoneFor(suffixesOf(canonicalName(name)));
    return zone ? { origin: zone.origin, soa: zone.soa } : undefined;
  }

  /** The origins of the loaded zones, longest first. */
  origins(): string[] {
    return this.zones.map((zone) => zone.origin);
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return this.resolveSync(name, type);
  }

  /** The same answer as `resolve`, without a promise: for the DNS server and benchmarks. */
  resolveSync<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    // Every zone is in memory: the zone finder never asks for one to be loaded.
    return answerFromZones(name, type, this.findZone) as DnsAnswer<T>;
  }

  /**
   * `resolveSync` for a name its caller has already put in canonical form and found sendable
   * (`canonicalName`, `canonicalNameProblem`): a check's resolver does both for its memo, and
   * doing them again here was a tenth of a warm check's own time.
   */
  resolveCanonicalSync<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> {
    return answerCanonicalFromZones(canonical, type, this.findZone) as DnsAnswer<T>;
  }

  /** `zoneFor` as a finder made once, not a closure per lookup. */
  private readonly findZone: ZoneFinder = (suffixes) => this.zoneFor(suffixes);

  /** The closest enclosing zone: the name itself, then each parent, up to the root (O(labels)). */
  private zoneFor(suffixes: readonly string[]): LoadedZone | undefined {
    // suffixes[i] has (suffixes.length - 1 - i) labels; start at the longest that an origin can be.
    for (let index = Math.max(0, suffixes.length - 1 - this.maxOriginLabels); index < suffixes.length; index++) {
      const zone = this.byOrigin.get(suffixes[index] as string);
      if (zone) return zone;
    }
    return undefined;
  }

}


/**
 * Finds the loaded zone that holds a name, given the name and its parents (`suffixesOf`): the zone,
 * undefined when no zone holds it, or the origin of a zone that holds it but is not in memory yet
 * (its holder must load it and ask again: `ZoneDirectoryResolver`).
 */
export type ZoneFinder = (suffixes: readonly string[]) => LoadedZone | undefined | { load: string };

/** An answer, or the origin of a zone to load before the question can be answered. */
export type ZoneAnswer = DnsAnswer<RecordType> | { kind: 'load'; origin: string };

/**
 * Answers `name`/`type` from the zones `zoneFor` finds, as a recursive resolver would if those zones
 * were the whole DNS: NXDOMAIN and NODATA told apart, RFC 4592 wildcards, CNAME chains followed
 * across zones. When a zone the answer needs is not loaded, says which one (`kind: 'load'`).
 */
export function answerFromZones(name: string, type: RecordType, zoneFor: ZoneFinder): ZoneAnswer {
  const canonical = canonicalName(name);
  const problem = canonicalNameProblem(canonical, name);
  if (problem) return { kind: 'error', reason: 'invalid-name', detail: problem };
  return answerCanonicalFromZones(canonical, type, zoneFor);
}

/** `answerFromZones` for a name already canonical and checked (`canonicalNameProblem`). */
export function answerCanonicalFromZones(canonical: string, type: RecordType, zoneFor: ZoneFinder): ZoneAnswer {
  let current = canonical;
  const cnames: string[] = [];
  for (;;) {
    const suffixes = suffixesOf(current);
    const zone = zoneFor(suffixes);
    if (zone !== undefined && 'load' in zone) return { kind: 'load', origin: zone.load };
    if (!zone) return withCnames({ kind: 'nxdomain' }, cnames);
    const node = nodeAt(zone, suffixes);
    if (node === 'nxdomain') return withCnames({ kind: 'nxdomain', ttl: negativeTtl(zone) }, cnames);
    const rrset = node?.get(type);
    if (rrset) {
      return withCnames({ kind: 'records', records: rrset.data, ttl: rrset.ttl }, cnames);
    }
    const alias = type === 'CNAME' ? undefined : node?.get('CNAME');
    if (!alias) return withCnames({ kind: 'nodata', ttl: negativeTtl(zone) }, cnames);
    const target = alias.data[0] as string;
    // RFC 1034 §3.6.2: follow the alias; a chain that revisits a name or runs too long is an error.
    if (cnames.includes(target) || target === canonical || cnames.length >= MAX_CNAME_CHAIN) {
      return { kind: 'error', reason: 'servfail', detail: `CNAME loop or chain longer than ${MAX_CNAME_CHAIN} at ${current}` };
    }
    cnames.push(target);
    current = target;
  }
}

/** The zones' records indexed for answering, one entry per origin (files of one origin merged). */
export function buildLoadedZones(zones: readonly Zone[]): Map<string, LoadedZone> {
  const byOrigin = new Map<string, LoadedZone>();
  for (const zone of zones) {
    const origin = canonicalName(zone.origin);
    let loaded = byOrigin.get(origin);
    if (!loaded) {
      loaded = { origin, soa: undefined, nodes: new Map(), emptyNonTerminals: new Set(), hasWildcards: false };
      byOrigin.set(origin, loaded);
    }
    for (const record of zone.records) addRecord(loaded, record);
  }
  for (const zone of byOrigin.values()) markEmptyNonTerminals(zone);
  return byOrigin;
}

/**
 * The RRsets at the name (`suffixes[0]`): its own node, an empty node for an empty non-terminal,
 * the wildcard that covers it (RFC 4592 §3.3.1), or 'nxdomain'.
 */
function nodeAt(zone: LoadedZone, suffixes: readonly string[]): Map<RecordType, RRset> | undefined | 'nxdomain' {
  const name = suffixes[0] as string;
  const own = zone.nodes.get(name);
  if (own) return own;
  if (zone.emptyNonTerminals.has(name) || name === zone.origin) return undefined;
  if (!zone.hasWildcards) return 'nxdomain'; // nothing below could match: no search needed
  // RFC 4592 §3.3.1: find the closest encloser, then look for the wildcard directly below it.
  let encloser = name;
  for (let index = 1; index < suffixes.length && encloser !== zone.origin; index++) {
    encloser = suffixes[index] as string;
    if (zone.nodes.has(encloser) || zone.emptyNonTerminals.has(encloser) || encloser === zone.origin) break;
  }
  const wildcard = zone.nodes.get(encloser === '' ? '*' : `*.${encloser}`);
  return wildcard ?? 'nxdomain';
}

/** How many labels a canonical name has (the root has none). */
export function labelCount(canonical: string): number {
  let count = canonical === '' ? 0 : 1;
  for (let index = canonical.indexOf('.'); index !== -1; index = canonical.indexOf('.', index + 1)) count++;
  return count;
}

/**
 * A canonical name and each of its parents, down to the root '': `a.b` → [`a.b`, `b`, '']. Built once
 * per lookup, so the zone search and the closest-encloser search share the same strings (and their
 * cached hashes) instead of slicing the name twice.
 */
export function suffixesOf(canonical: string): string[] {
  const suffixes = [canonical];
  let current = canonical;
  while (current !== '') {
    current = parentName(current);
    suffixes.push(current);
  }
  return suffixes;
}

function addRecord(zone: LoadedZone, record: ResourceRecord): void {
  const name = canonicalName(record.name);
  if (name === '*' || name.startsWith('*.')) zone.hasWildcards = true;
  if (!isAtOrBelow(name, zone.origin)) {
    throw new Error(`record ${record.name} ${record.type} lies outside its zone ${zone.origin || '.'}`);
  }
  if (record.type === 'SOA' && name === zone.origin) {
    zone.soa = { ttl: record.ttl, data: record.data as SoaData };
  }
  let node = zone.nodes.get(name);
  if (!node) {
    node = new Map();
    zone.nodes.set(name, node);
  }
  const rrset = node.get(record.type);
  if (rrset) {
    rrset.data.push(record.data);
    // RFC 2181 §5.2: the TTLs of an RRset should agree; use the smallest if they do not.
    rrset.ttl = Math.min(rrset.ttl, record.ttl);
  } else {
    node.set(record.type, { ttl: record.ttl, data: [record.data] });
  }
}

function markEmptyNonTerminals(zone: LoadedZone): void {
  for (const name of zone.nodes.keys()) {
    let parent = name;
    while (parent !== zone.origin && parent !== '') {
      parent = parentName(parent);
      if (zone.nodes.has(parent)) continue;
      zone.emptyNonTerminals.add(parent);
    }
  }
}

/** RFC 2308 §5: a negative answer lives for the smaller of the SOA's TTL and its MINIMUM field. */
function negativeTtl(zone: LoadedZone): number {
  return zone.soa ? Math.min(zone.soa.ttl, zone.soa.data.minimum) : DEFAULT_NEGATIVE_TTL;
}

function withCnames<A extends DnsAnswer<RecordType>>(answer: A, cnames: string[]): A {
  if (cnames.length === 0) return answer;
  // Set on the fresh answer instead of `{ ...answer, cnames }`, which is slow on Node 20 (see cache.ts).
  (answer as { cnames?: string[] }).cnames = cnames;
  return answer;
}
