/**
 * The demo's DNSSEC (issue 42 item 3): three demo domains signed (or not) under a demo root whose
 * key is the demo's own trust anchor (fixtures/demo-dnssec/, made by scripts/sign-demo-zones.sh),
 * one per state: secure (with DANE on its MX), bogus (signatures expired; the fix: sign again) and
 * insecure (unsigned, no DS). `serve --demo`, `serve --demo-zones` and `check --demo-zones` validate
 * these three against that anchor, in process (no packet leaves, RFC 4035 §3 answers from the
 * signed files); every other demo domain stays "not-checked" (its zone file carries no signatures),
 * and nothing outside the demo trusts the demo's anchor.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  canonicalName,
  DnssecCache,
  loadSignedZoneDirectory,
  normaliseDomainInput,
  parseTrustAnchors,
  signedZoneQuery,
  type CheckOptions,
} from '@spoof-checker/engine';
import { FIXTURE_ZONES_DIR } from '../fixtures.js';

const ROOT = new URL('../../fixtures/demo-dnssec/', import.meta.url);
/** The demo's signed zones. */
export const DEMO_DNSSEC_ZONES_DIR = fileURLToPath(new URL('zones/', ROOT));
/** The demo's trust anchor: the DS of its root key (not the IANA root's). */
export const DEMO_TRUST_ANCHOR_FILE = fileURLToPath(new URL('root-anchor.ds', ROOT));
/** How the page names the anchor. */
export const DEMO_TRUST_ANCHOR_NAME = "the demo's own root key (fixtures/demo-dnssec/root-anchor.ds), not the IANA root's";

/** The DNSSEC demo domains, what each shows. */
export const DEMO_DNSSEC_DOMAINS: readonly { domain: string; shows: string }[] = [
  { domain: 'dnssec-secure.example', shows: 'DNSSEC secure: signed, with a chain of trust from the demo root; DANE (TLSA) on its MX' },
  { domain: 'dnssec-bogus.example', shows: 'DNSSEC bogus: its signatures expired; the fix is to sign the zone again' },
  { domain: 'dnssec-insecure.example', shows: 'DNSSEC insecure: not signed, and its parent proves it (no DS)' },
];

/** The demo's DNSSEC: which domains it validates, and how. */
export interface DemoDnssec {
  domains: ReadonlySet<string>;
  options: Exclude<CheckOptions['dnssec'], false | string | undefined>;
}

/** Loads the demo's signed zones and anchor (throws naming the file when they cannot be read). */
export async function loadDemoDnssec(): Promise<DemoDnssec> {
  const anchors = parseTrustAnchors(readFileSync(DEMO_TRUST_ANCHOR_FILE, 'utf8'), DEMO_TRUST_ANCHOR_FILE);
  const zones = await loadSignedZoneDirectory(DEMO_DNSSEC_ZONES_DIR);
  return { domains: new Set(DEMO_DNSSEC_DOMAINS.map((d) => d.domain)), options: { query: signedZoneQuery(zones), anchors, cache: new DnssecCache() } };
}

/** Whether `input` (a domain, URL or address) is, or lies below, one of the DNSSEC demo domains. */
export function isDemoDnssecDomain(demo: Pick<DemoDnssec, 'domains'>, input: string): boolean {
  const normalised = normaliseDomainInput(input);
  if (!normalised.ok) return false;
  const name = canonicalName(normalised.domain);
  return [...demo.domains].some((domain) => name === domain || name.endsWith(`.${domain}`));
}

/** Whether a zones directory is the shipped fixture zones (`--demo-zones`, or `--zones` naming them). */
export function isDemoZonesDirectory(dir: string | undefined): boolean {
  return dir !== undefined && resolve(dir) === resolve(FIXTURE_ZONES_DIR);
}
