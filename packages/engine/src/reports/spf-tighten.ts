/**
 * Advice only reports make possible, for the SPF record:
 *
 * - tightening: when the record authorises shared infrastructure (the `spf-shared-infrastructure`
 *   finding: rented cloud space anyone can land in, BreakSPF), the addresses of that space that
 *   actually sent the domain's mail, and the exact record that keeps them and drops the rest;
 * - unused terms: top-level includes and ranges through which no reported mail passed in the window:
 *   candidates to remove, with the DNS lookups each would save (RFC 7208 §4.6.4 counts them).
 *
 * Only terms of the domain's own record are rewritten: a range inside someone else's include is
 * theirs to change.
 */
import { classifySharedInfrastructure } from '../ranges/classify.js';
import { shippedRanges } from '../ranges/snapshot.js';
import type { RangeData } from '../ranges/types.js';
import { parseClientAddress } from '../spf/address.js';
import type { SpfAnalysis } from '../spf/analyze.js';
import { addressIn, epochSecondsOf } from './senders.js';
import type { SenderSummary } from './senders.js';

/** The tightened record. */
export interface SpfTightening {
  /** The record to publish instead. */
  record: string;
  /** The addresses kept: those of the shared space that sent mail in the window. */
  keep: string[];
  /** The terms replaced, as written. */
  drop: string[];
  /** The shared space concerned ("Amazon EC2"). */
  services: string[];
}

/** A term that sent nothing in the window. */
export interface UnusedSpfTerm {
  /** The term as written (`include:_spf.old-esp.example`). */
  term: string;
  /** DNS lookups its removal saves (RFC 7208 §4.6.4; 0 for ip4/ip6). */
  lookupsSaved: number;
}

/**
 * The tightened record when the SPF of the domain authorises shared infrastructure in its own
 * record; null when it does not (or the record is not known). The provider ranges default to the
 * shipped snapshot.
 */
export function spfTighten(spf: SpfAnalysis | null, senders: readonly SenderSummary[], options: { ranges?: RangeData; now?: Date | number } = {}): SpfTightening | null {
  if (spf === null || spf.status !== 'found' || spf.record === null || spf.passSources === null) return null;
  const now = new Date(epochSecondsOf(options.now ?? new Date()) * 1000);
  const report = classifySharedInfrastructure([{ checkedDomain: spf.domain, sources: spf.passSources }], () => options.ranges ?? shippedRanges(), now);
  if (report === null) return null;
  // Terms of the domain's own record: their path from the top is the term itself.
  // Critical exposures only (space anyone can land in); a few fixed addresses (the warning) are likely the owner's own.
  const own = report.exposures.filter((e) => e.severity === 'critical' && e.recordDomain === spf.domain && !e.path.includes(' → '));
  if (own.length === 0) return null;
  const keep = new Map<string, string[]>();
  for (const exposure of own) {
    if (keep.has(exposure.term)) continue;
    const opener = spf.passSources.openers.find((o) => o.term === exposure.path);
    const inside = opener === undefined ? [] : senders.filter((s) => addressIn(s.source, opener.origin)).map((s) => s.source);
    keep.set(exposure.term, sortAddresses(inside));
  }
  const terms = spf.record.trim().split(/\s+/);
  const out: string[] = [];
  const kept = new Set<string>();
  for (const term of terms) {
    const bare = term.replace(/^\+/, '').toLowerCase();
    const match = [...keep.keys()].find((t) => t.replace(/^\+/, '').toLowerCase() === bare);
    if (match === undefined) {
      out.push(term);
      continue;
    }
    for (const ip of keep.get(match)!) {
      if (kept.has(ip)) continue;
      kept.add(ip);
      out.push(`${parseClientAddress(ip)!.version === 4 ? 'ip4' : 'ip6'}:${ip}`);
    }
  }
  return { record: out.join(' '), keep: [...kept], drop: [...keep.keys()], services: [...new Set(own.map((e) => e.label))] };
}

/**
 * The top-level `+` terms (include, a, mx, ip4, ip6) through which none of `senders` passed: candidates
 * to remove once the window is long enough to have seen every stream (monthly senders need 30 days or more).
 */
export function unusedSpfTerms(spf: SpfAnalysis | null, senders: readonly SenderSummary[]): UnusedSpfTerm[] {
  if (spf === null || spf.status !== 'found' || spf.passSources === null || senders.length === 0) return [];
  const openers = spf.passSources.openers;
  const unused: UnusedSpfTerm[] = [];
  for (const node of spf.tree) {
    if (node.kind !== 'mechanism' || node.qualifier !== '+' || !['include', 'a', 'mx', 'ip4', 'ip6'].includes(node.mechanism) || node.flags.macro || node.flags.unreachable) continue;
    const raw = node.raw.replace(/^\+/, '').toLowerCase();
    const mine = openers.filter((o) => o.term.split(' → ')[0]!.replace(/^\+/, '').toLowerCase() === raw);
    const used = mine.some((o) => senders.some((s) => addressIn(s.source, o.set)));
    if (!used) unused.push({ term: node.raw, lookupsSaved: node.lookups });
  }
  return unused;
}

function sortAddresses(list: string[]): string[] {
  const key = (ip: string): [number, bigint] => {
    const a = parseClientAddress(ip)!;
    return a.version === 4 ? [4, BigInt(a.value >>> 0)] : [6, a.words.reduce((n, w) => (n << 32n) | BigInt(w >>> 0), 0n)];
  };
  return [...new Set(list)].sort((x, y) => {
    const [fx, vx] = key(x);
    const [fy, vy] = key(y);
    return fx - fy || (vx < vy ? -1 : vx > vy ? 1 : 0);
  });
}
