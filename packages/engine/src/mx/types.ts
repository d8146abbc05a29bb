/**
 * MX analysis: where a domain receives mail. An enrichment: the spoofing verdict does not rest on it.
 *
 * The MX record (RFC 1035 §3.3.9):
 *
 *   MX RDATA   = PREFERENCE EXCHANGE
 *   PREFERENCE = 16-bit unsigned integer; lower values are preferred (RFC 5321 §5.1)
 *   EXCHANGE   = <domain-name> of a host willing to act as a mail exchange
 *
 * Rules applied here:
 * - RFC 7505 §3: a null MX is a single MX with preference 0 and EXCHANGE "." (the root): the domain
 *   accepts no mail. A domain publishing a null MX MUST NOT publish any other MX.
 * - RFC 5321 §5.1: EXCHANGE is a host name resolved to A/AAAA; it must not be an IP address literal.
 *   With no MX at all, senders fall back to the domain's own A/AAAA (the "implicit MX").
 * - RFC 2181 §10.3: EXCHANGE must not be an alias (CNAME).
 */
import type { FailedQuery } from '../errors.js';
import type { DnsErrorReason } from '../dns/types.js';
import type { Finding } from '../findings.js';

/** The address lookups behind one MX host, done to catch hosts that do not resolve. */
export interface MxHostAddresses {
  /**
   * - `resolved`: at least one A or AAAA record.
   * - `unresolvable`: both lookups answered, with no address (NXDOMAIN or NODATA).
   * - `temperror`: no address found and at least one lookup failed, so we cannot tell.
   */
  status: 'resolved' | 'unresolvable' | 'temperror';
  ipv4: string[];
  ipv6: string[];
  /** Set for `unresolvable`: NXDOMAIN when the host name does not exist at all. */
  absence?: 'nxdomain' | 'nodata';
  /** The lookups that failed (also possible when the other family resolved). */
  failures: { type: 'A' | 'AAAA'; reason: DnsErrorReason; detail?: string }[];
  /** The last alias followed when the host name is a CNAME (RFC 2181 §10.3 forbids it), else null. */
  cnameTarget: string | null;
}

/** One MX record, analysed. */
export interface MxHost {
  preference: number;
  /** Absolute, lower case, no trailing dot; '' is the root (a null MX). */
  exchange: string;
  /** The mail service this host belongs to (see `MX_PROVIDERS`), or null. */
  provider: string | null;
  /** Present when the host's addresses were looked up; absent for the root, IP literals and hosts past the limit. */
  addresses?: MxHostAddresses;
  /** What is wrong with this record, in plain words; empty when nothing is. */
  problems: string[];
}

/**
 * - `found`: at least one MX record names a mail host (a null MX mixed in is a finding).
 * - `null-mx`: a null MX (RFC 7505): the domain says it accepts no mail.
 * - `none`: no MX records (NXDOMAIN or NODATA).
 * - `temperror`: the MX lookup failed; we cannot tell.
 */
export type MxStatus = 'found' | 'null-mx' | 'none' | 'temperror';

/** Everything `lookupMx` learned. */
export interface MxAnalysis {
  domain: string;
  status: MxStatus;
  /** Sorted by preference, then name. Includes a null MX record when one is published. */
  hosts: MxHost[];
  /**
   * The provider of the most preferred hosts. When hosts sharing the lowest preference belong to
   * different providers, their names are joined with " + " in host order; hosts with no recognised
   * provider are skipped. Null when none of the most preferred hosts is recognised.
   */
  provider: string | null;
  /** Every recognised provider, in host order, once each (a backup MX elsewhere shows up here). */
  providers: string[];
  /** Set for `none`: NXDOMAIN means the domain itself does not exist. */
  absence?: 'nxdomain' | 'nodata';
  /** Set for `temperror`: the lookup that failed. */
  failedQuery?: FailedQuery & { type: 'MX' };
  findings: Finding[];
}

/** Options of `lookupMx`. */
export interface MxLookupOptions {
  /** Look up A/AAAA of the MX hosts to find ones that do not resolve or are aliases (default true). */
  resolveHosts?: boolean;
}
