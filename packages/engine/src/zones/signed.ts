/**
 * Signed zones served as an authoritative server serves them (RFC 4035 §3): with the DO bit, every
 * RRset goes out with its RRSIGs; DNSKEY at the apex; DS answered from the parent's side of a cut
 * (§3.1.4.1); referrals carry the DS and its RRSIG, or the NSEC/NSEC3 proving there is none
 * (§3.1.4); NXDOMAIN, NODATA and wildcard answers carry their NSEC (§3.1.3) or NSEC3 proofs
 * (RFC 5155 §7.2). Authoritative data never gets AD (§3.1.6: a server copies CD and sets AD only
 * for data it validated).
 *
 * The zones are read from signed files (`ldns-signzone` output) by `loadSignedZoneDirectory` and
 * handed to `startDnsServer({ signedZones })`. Names outside them fall through to the server's
 * ordinary zones.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  compareNames,
  groupRRsets,
  isSubdomain,
  parentOf,
  type RawRecord,
  type RawRRset,
  splitLabels,
  TYPE,
} from '../dns/canonical.js';
import { base32hexEncode } from '../dns/canonical.js';
import { parseSignedZone, type SignedZoneFile } from './signed-zonefile.js';
import { nsec3Hash } from '../dnssec/verify.js';

/** The file names `loadSignedZoneDirectory` reads: signed zones and unsigned zones served beside them. */
export const SIGNED_ZONE_SUFFIXES: readonly string[] = ['.signed', '.zone'];
/** Zone files read at most, so a folder of junk cannot exhaust memory. */
export const MAX_SIGNED_ZONE_FILES = 1000;

/** One answer from the signed zones: the sections and whether it is authoritative. */
export interface SignedAnswer {
  rcode: 0 | 3;
  authoritative: boolean;
  answer: RawRecord[];
  authority: RawRecord[];
}

interface Nsec3Params {
  salt: Buffer;
  iterations: number;
}

/** One zone's data, indexed for answering. */
class SignedZone {
  readonly origin: string;
  /** owner → type → RRset (RRSIG and NSEC3 kept apart). */
  private readonly nodes = new Map<string, Map<number, RawRRset>>();
  /** owner → type covered → RRSIG records. */
  private readonly sigs = new Map<string, Map<number, RawRecord[]>>();
  /** Every name that exists, empty non-terminals included (RFC 4592 §2.2.2). */
  private readonly existing = new Set<string>();
  /** Delegation points below the apex (NS and not the apex). */
  private readonly cuts = new Set<string>();
  /** NSEC owners in canonical order (RFC 4034 §6.1). */
  private readonly nsecOwners: string[] = [];
  /** NSEC3: hash label → its record; sorted hash labels; the parameters. */
  private readonly nsec3 = new Map<string, RawRRset>();
  private readonly nsec3Hashes: string[] = [];
  private nsec3Params: Nsec3Params | undefined;

  constructor(file: SignedZoneFile) {
    this.origin = file.origin;
    const records = file.records.filter((r) => isSubdomain(r.name, this.origin));
    for (const record of records) {
      if (record.type === TYPE.RRSIG) {
        const covered = record.rdata.readUInt16BE(0);
        const byType = this.sigs.get(record.name) ?? new Map<number, RawRecord[]>();
        byType.set(covered, [...(byType.get(covered) ?? []), record]);
        this.sigs.set(record.name, byType);
      }
    }
    for (const set of groupRRsets(records)) {
      if (set.type === TYPE.RRSIG) continue;
      if (set.type === TYPE.NSEC3) {
        const label = splitLabels(set.name)[0] as string;
        this.nsec3.set(label, set);
        const rdata = set.rdatas[0] as Buffer;
        if (!this.nsec3Params) {
          const saltLength = rdata[4] as number;
          this.nsec3Params = { iterations: rdata.readUInt16BE(2), salt: rdata.subarray(5, 5 + saltLength) };
        }
        continue;
      }
      const node = this.nodes.get(set.name) ?? new Map<number, RawRRset>();
      node.set(set.type, set);
      this.nodes.set(set.name, node);
      if (set.type === TYPE.NS && set.name !== this.origin) this.cuts.add(set.name);
      if (set.type === TYPE.NSEC) this.nsecOwners.push(set.name);
      for (let name = set.name; isSubdomain(name, this.origin); name = parentOf(name)) {
        this.existing.add(name);
        if (name === this.origin) break;
      }
    }
    this.nsecOwners.sort(compareNames);
    this.nsec3Hashes.push(...[...this.nsec3.keys()].sort());
  }

  /** The answer to (qname, qtype) from this zone. */
  answer(qname: string, qtype: number, dnssecOk: boolean): SignedAnswer {
    const out: SignedAnswer = { rcode: 0, authoritative: true, answer: [], authority: [] };
    // RFC 4035 §3.1.4, RFC 1034 §4.3.2 step 3b: a cut between the apex and qname makes a referral
    // (DS at the cut itself is the parent's data, §3.1.4.1).
    const below = splitLabels(qname).length - splitLabels(this.origin).length;
    const labels = splitLabels(qname);
    for (let depth = 1; depth <= below; depth++) {
      const name = labels.slice(below - depth).join('.');
      if (this.cuts.has(name) && !(name === qname && qtype === TYPE.DS)) return this.referral(name, dnssecOk);
    }
    const node = this.nodes.get(qname);
    if (node) {
      const set = node.get(qtype) ?? (qtype !== TYPE.CNAME ? node.get(TYPE.CNAME) : undefined);
      if (set) {
        this.addSet(out.answer, set, dnssecOk);
        return out;
      }
      return this.nodata(qname, dnssecOk, out);
    }
    if (this.existing.has(qname)) return this.nodata(qname, dnssecOk, out); // empty non-terminal
    const encloser = this.closestEncloser(qname);
    const wildcard = `*.${encloser}`;
    const wild = this.nodes.get(wildcard);
    if (wild) {
      // RFC 4592 §3.3.1, RFC 4035 §3.1.3.3: the wildcard's data under qname, with its own RRSIG
      // (Labels field unchanged) and the proof that qname itself does not exist.
      const set = wild.get(qtype) ?? (qtype !== TYPE.CNAME ? wild.get(TYPE.CNAME) : undefined);
      if (set) {
        this.addSet(out.answer, set, dnssecOk, qname);
        if (dnssecOk) this.addNoName(out.authority, qname, encloser, false);
        return out;
      }
      // RFC 4035 §3.1.3.4: wildcard NODATA.
      this.addSoa(out.authority, dnssecOk);
      if (dnssecOk) {
        this.addNoName(out.authority, qname, encloser, false);
        this.addNodataProof(out.authority, wildcard);
      }
      return out;
    }
    out.rcode = 3;
    this.addSoa(out.authority, dnssecOk);
    if (dnssecOk) this.addNoName(out.authority, qname, encloser, true);
    return out;
  }

  private referral(cut: string, dnssecOk: boolean): SignedAnswer {
    const out: SignedAnswer = { rcode: 0, authoritative: false, answer: [], authority: [] };
    const node = this.nodes.get(cut) as Map<number, RawRRset>;
    this.addSet(out.authority, node.get(TYPE.NS) as RawRRset, false);
    const ds = node.get(TYPE.DS);
    if (ds) this.addSet(out.authority, ds, dnssecOk);
    else if (dnssecOk) this.addNodataProof(out.authority, cut); // RFC 4035 §3.1.4: the NSEC/NSEC3 without DS
    return out;
  }

  private nodata(qname: string, dnssecOk: boolean, out: SignedAnswer): SignedAnswer {
    this.addSoa(out.authority, dnssecOk);
    if (dnssecOk) this.addNodataProof(out.authority, qname);
    return out;
  }

  /** The longest existing ancestor of a name that does not exist. */
  private closestEncloser(qname: string): string {
    let name = parentOf(qname);
    while (!this.existing.has(name) && name !== this.origin && name !== '') name = parentOf(name);
    return this.existing.has(name) ? name : this.origin;
  }

  /** NSEC at the name (RFC 4035 §3.1.3.2), or NSEC3 matching it, or (opt-out, ENT) the closest-encloser proof. */
  private addNodataProof(into: RawRecord[], name: string): void {
    if (this.nsec3Params) {
      const match = this.nsec3Match(name);
      if (match) return this.addSet(into, match, true);
      // RFC 5155 §7.2.4: no NSEC3 of its own (an opt-out delegation): the closest encloser proof.
      return this.addClosestEncloserProof(into, name);
    }
    const own = this.nodes.get(name)?.get(TYPE.NSEC);
    if (own) return this.addSet(into, own, true);
    this.addSet(into, this.nsecCovering(name), true); // an empty non-terminal: the NSEC that covers it
  }

  /** Proof that `qname` does not exist (and, for NXDOMAIN, that no wildcard answers instead). */
  private addNoName(into: RawRecord[], qname: string, encloser: string, wildcardToo: boolean): void {
    if (this.nsec3Params) {
      // RFC 5155 §7.2.2 (name error), §7.2.6 (wildcard answer: the next closer name covered).
      this.addClosestEncloserProof(into, qname, encloser, !wildcardToo);
      if (wildcardToo) this.addSet(into, this.nsec3Cover(`*.${encloser}`), true);
      return;
    }
    // RFC 4035 §3.1.3.2: the NSEC covering qname, and the one covering the wildcard.
    this.addSet(into, this.nsecCovering(qname), true);
    if (wildcardToo) this.addSet(into, this.nsecCovering(`*.${encloser}`), true);
  }

  /** RFC 5155 §7.2.1: the NSEC3 matching the closest (provable) encloser and the one covering the next closer name. */
  private addClosestEncloserProof(into: RawRecord[], qname: string, encloser?: string, coverOnly = false): void {
    let next = qname;
    let ce = encloser ?? parentOf(qname);
    // The closest provable encloser: the nearest ancestor with an NSEC3 of its own.
    for (let guard = 0; guard < 128; guard++) {
      if (this.nsec3Match(ce) || ce === this.origin) break;
      next = ce;
      ce = parentOf(ce);
    }
    while (parentOf(next) !== ce && next !== '') next = parentOf(next);
    if (!coverOnly) this.addSet(into, this.nsec3Match(ce) as RawRRset, true);
    this.addSet(into, this.nsec3Cover(next), true);
  }

  private nsec3Label(name: string): string {
    const params = this.nsec3Params as Nsec3Params;
    return base32hexEncode(nsec3Hash(name, params.salt, params.iterations));
  }

  private nsec3Match(name: string): RawRRset | undefined {
    return this.nsec3.get(this.nsec3Label(name));
  }

  /** The NSEC3 whose hash range holds the name's hash (the last one wraps around). */
  private nsec3Cover(name: string): RawRRset {
    const hash = this.nsec3Label(name);
    const hashes = this.nsec3Hashes;
    return this.nsec3.get(hashes[lastBefore(hashes, (held) => held < hash)] as string) as RawRRset;
  }

  /** The NSEC whose owner is the greatest one before the name in canonical order (RFC 4034 §6.1). */
  private nsecCovering(name: string): RawRRset {
    const owners = this.nsecOwners;
    return this.nodes.get(owners[lastBefore(owners, (owner) => compareNames(owner, name) <= 0)] as string)?.get(TYPE.NSEC) as RawRRset;
  }

  private addSoa(into: RawRecord[], dnssecOk: boolean): void {
    const soa = this.nodes.get(this.origin)?.get(TYPE.SOA);
    if (soa) this.addSet(into, soa, dnssecOk);
  }

  /** Adds an RRset (under `owner` when it is a wildcard's) and, with DO, its RRSIGs (RFC 4035 §3.1.1). */
  private addSet(into: RawRecord[], set: RawRRset | undefined, withSigs: boolean, owner = set?.name): void {
    if (!set || owner === undefined) return;
    if (into.some((r) => r.name === owner && r.type === set.type)) return; // one copy of each proof
    for (const rdata of set.rdatas) into.push({ name: owner, type: set.type, class: set.class, ttl: set.ttl, rdata });
    if (!withSigs) return;
    for (const sig of this.sigs.get(set.name)?.get(set.type) ?? []) into.push({ ...sig, name: owner });
  }
}

/**
 * The index of the last item of `sorted` for which `before` holds (it holds for a prefix: a binary
 * search), or the last index when it holds for none: a chain of NSEC or NSEC3 spans wraps round
 * from the last to the first (RFC 4034 §4.1.1, RFC 5155 §3.1.7).
 */
function lastBefore<T>(sorted: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (before(sorted[mid] as T)) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** A set of signed zones, answering for the deepest zone that holds a name. */
export class SignedZoneSet {
  private readonly zones = new Map<string, SignedZone>();

  constructor(files: readonly SignedZoneFile[]) {
    for (const file of files) this.zones.set(file.origin, new SignedZone(file));
  }

  /** The origins held. */
  origins(): string[] {
    return [...this.zones.keys()];
  }

  /** The deepest zone at or above `name` (strictly above with `above`). */
  private zoneOf(name: string, above = false): SignedZone | undefined {
    let current: string | undefined = above ? (name === '' ? undefined : parentOf(name)) : name;
    while (current !== undefined) {
      const zone = this.zones.get(current);
      if (zone) return zone;
      current = current === '' ? undefined : parentOf(current);
    }
    return undefined;
  }

  /**
   * The answer to (qname, qtype), or undefined when no signed zone holds the name. DS at a zone's
   * apex is answered from the parent zone when it is held too (RFC 4035 §3.1.4.1).
   */
  answer(qname: string, qtype: number, dnssecOk: boolean): SignedAnswer | undefined {
    let zone = this.zoneOf(qname);
    if (!zone) return undefined;
    if (qtype === TYPE.DS && zone.origin === qname) zone = this.zoneOf(qname, true) ?? zone;
    return zone.answer(qname, qtype, dnssecOk);
  }
}

/** Reads every `*.signed` and `*.zone` file of a folder (not its subfolders) into a `SignedZoneSet`. */
export async function loadSignedZoneDirectory(dir: string): Promise<SignedZoneSet> {
  const names = (await readdir(dir)).filter((n) => SIGNED_ZONE_SUFFIXES.some((s) => n.endsWith(s))).sort();
  if (names.length > MAX_SIGNED_ZONE_FILES) throw new Error(`${dir} holds ${names.length} zone files; at most ${MAX_SIGNED_ZONE_FILES} are read`);
  const files = await Promise.all(names.map(async (n) => parseSignedZone(await readFile(join(dir, n), 'utf8'), { file: join(dir, n) })));
  return new SignedZoneSet(files);
}
