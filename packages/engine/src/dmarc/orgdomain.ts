import { getDomain } from 'tldts';
import { labelsOf } from '../dns/name.js';
import type { PsdFlag } from './types.js';

/** RFC 9989 §4.10: a DNS tree walk makes at most eight queries. */
export const TREE_WALK_MAX_QUERIES = 8;
/** RFC 9989 §4.10 step 4: a name of eight or more labels is cut straight to its rightmost seven. */
export const TREE_WALK_SHORTCUT_LABELS = TREE_WALK_MAX_QUERIES - 1;

// RFC 7489 §3.2 defines the Organizational Domain from the public suffix list. We use only the list's
// ICANN section: DMARC organizational domains follow registration boundaries, and private-section
// entries (github.io, blogspot.com, ...) are operators' own delegations, which RFC 9989 lets them
// express with psd=y instead. tldts leaves private suffixes out by default; we say so explicitly.
const PSL_OPTIONS = {
  allowIcannDomains: true,
  allowPrivateDomains: false,
  extractHostname: false,
  validateHostname: false,
  detectIp: false,
  mixedInputs: false,
} as const;

/**
 * The RFC 7489 §3.2 organizational domain of `name`: the public suffix plus one label, from the ICANN
 * section of the public suffix list (tldts). A name that is itself a public suffix is its own.
 */
export function pslOrganizationalDomain(name: string): string {
  const known = organizationalDomains.get(name);
  if (known !== undefined) return known;
  const organizational = getDomain(name, PSL_OPTIONS) ?? name;
  // The list is compiled in, so an answer never goes stale; the memo is only bounded.
  if (organizationalDomains.size >= ORG_DOMAIN_MEMO_ENTRIES) organizationalDomains.clear();
  organizationalDomains.set(name, organizational);
  return organizational;
}

/**
 * Names whose organizational domain is remembered. A check asks for the same few names four or five
 * times (existence, the DMARC walk, report destinations), and a public suffix list lookup costs
 * about a microsecond; past this many names the memo starts again.
 */
export const ORG_DOMAIN_MEMO_ENTRIES = 10_000;
const organizationalDomains = new Map<string, string>();

/**
 * The names an RFC 9989 §4.10 DNS tree walk starting at `start` queries (without the `_dmarc.`
 * prefix), in order: the start, then one label less each time, except that a name of eight or more
 * labels jumps straight to its rightmost seven. Never more than `TREE_WALK_MAX_QUERIES` names.
 */
export function treeWalkTargets(start: string): string[] {
  let labels = labelsOf(start);
  if (labels.length === 0) return [];
  const targets = [start];
  while (labels.length > 1 && targets.length < TREE_WALK_MAX_QUERIES) {
    // RFC 9989 §4.10 step 4: x >= 8 → keep the rightmost 7 labels; otherwise drop the left-most one.
    labels = labels.length >= TREE_WALK_MAX_QUERIES ? labels.slice(-TREE_WALK_SHORTCUT_LABELS) : labels.slice(1);
    targets.push(labels.join('.'));
  }
  return targets;
}

/** A name where the walk found exactly one DMARC record, and that record's `psd` flag. */
export interface WalkRecord {
  domain: string;
  psd: PsdFlag;
}

/**
 * RFC 9989 §4.10.2: the organizational domain of `start`, chosen from the single DMARC records the tree
 * walk found, given longest name first (walk order):
 * 1. a record with psd=n marks its own name;
 * 2. a record with psd=y, other than at `start`, makes the name one label below it the answer;
 * 3. otherwise the name with the fewest labels that has a record;
 * and `start` itself when the walk found no record.
 */
export function selectOrganizationalDomain(start: string, found: readonly WalkRecord[]): string {
  for (const { domain, psd } of found) {
    if (psd === 'n') return domain; // RFC 9989 §4.10.2 rule 1
    if (psd === 'y' && domain !== start) return oneLabelBelow(start, domain); // rule 2
  }
  return found.at(-1)?.domain ?? start; // rule 3, then the fallback
}

/** The ancestor of `start` (or `start` itself) with one label more than `ancestor`. */
export function oneLabelBelow(start: string, ancestor: string): string {
  const keep = labelsOf(ancestor).length + 1;
  return labelsOf(start).slice(-keep).join('.');
}
