/**
 * MX pattern matching (RFC 8461 §4.1) and certificate name matching (RFC 8461 §3.3 and §4.2, by
 * RFC 6125 DNS-ID rules). Both compare after case and trailing-dot normalisation, and both allow a
 * wildcard only as the whole left-most label, covering exactly one label: `*.example.com` matches
 * `mail.example.com`, but neither `example.com` nor `a.b.example.com`. Matching is whole-name,
 * never a substring: `mail.example.com` does not match `mail.example.com.evil.net`.
 */

export { certificateNameMatches, matchesOneLabelPattern, normaliseHost } from '../net/host-names.js';
import { matchesOneLabelPattern } from '../net/host-names.js';

/** RFC 8461 §4.1: does any mx pattern of the policy cover this MX host? */
export function mxCovered(patterns: readonly string[], host: string): boolean {
  return patterns.some((pattern) => matchesOneLabelPattern(pattern, host));
}
