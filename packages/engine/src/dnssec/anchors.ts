/**
 * Trust anchors: the IANA root KSKs (KSK-2017, tag 20326, and KSK-2024, tag 38696, as published in
 * https://data.iana.org/root-anchors/root-anchors.xml, RFC 7958) and a reader of anchor files in
 * DS or DNSKEY presentation form (`--trust-anchor FILE`, for labs and private roots).
 */
import { readFile } from 'node:fs/promises';
import { TYPE } from '../dns/canonical.js';
import { parseSignedZone, SignedZoneSyntaxError } from '../zones/signed-zonefile.js';
import type { TrustAnchor } from './types.js';

/** RFC 7958: the root zone's trust anchors as DS records (SHA-256), both KSKs currently published. */
export const IANA_ROOT_ANCHOR_DS: readonly string[] = [
  '. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D', // KSK-2017
  '. IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16', // KSK-2024
];

/** Reads anchors from DS and/or DNSKEY records in presentation form (one zone file's syntax, no SOA needed). */
export function parseTrustAnchors(text: string, file = '<trust anchor>'): TrustAnchor[] {
  // The zone-file reader wants an SOA to name the zone; anchors have none, so give it one.
  const zone = parseSignedZone(`. 0 IN SOA a. b. 0 0 0 0 0\n${text}`, { file });
  const byZone = new Map<string, TrustAnchor>();
  for (const record of zone.records.slice(1)) {
    if (record.type !== TYPE.DS && record.type !== TYPE.DNSKEY) {
      throw new SignedZoneSyntaxError(`${file}: a trust anchor file holds DS or DNSKEY records only`);
    }
    const anchor = byZone.get(record.name) ?? { zone: record.name, ds: [], dnskeys: [] };
    (record.type === TYPE.DS ? anchor.ds : anchor.dnskeys).push(record.rdata);
    byZone.set(record.name, anchor);
  }
  if (byZone.size === 0) throw new SignedZoneSyntaxError(`${file}: no DS or DNSKEY record`);
  return [...byZone.values()];
}

/** The IANA root anchors, parsed. */
export function ianaRootAnchors(): TrustAnchor[] {
  return parseTrustAnchors(IANA_ROOT_ANCHOR_DS.join('\n'), 'IANA root anchors');
}

/** Reads a trust anchor file; throws an `Error` that names the file and what is wrong. */
export async function loadTrustAnchorFile(path: string): Promise<TrustAnchor[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the trust anchor file ${path}: ${(error as Error).message}`);
  }
  return parseTrustAnchors(text, path);
}
