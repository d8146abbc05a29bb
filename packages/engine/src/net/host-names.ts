/**
 * Host names as TLS compares them (RFC 6125 DNS-ID rules, as RFC 8461 §3.3 and §4.2 apply them):
 * after case and trailing-dot normalisation, a wildcard only as the whole left-most label, covering
 * exactly one label: `*.example.com` matches `mail.example.com`, but neither `example.com` nor
 * `a.b.example.com`. Matching is whole-name, never a substring. The MTA-STS mx patterns
 * (../transport/mx-pattern.ts) follow the same rule.
 */

/** Lower case, no trailing dot. */
export function normaliseHost(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** True when `pattern` (`host` or `*.domain`) covers `host` under the one-label wildcard rule. */
export function matchesOneLabelPattern(pattern: string, host: string): boolean {
  const p = normaliseHost(pattern);
  const h = normaliseHost(host);
  if (p === '' || h === '') return false;
  if (!p.startsWith('*.')) return p === h;
  const suffix = p.slice(1); // ".example.com"
  if (suffix.length < 2 || !h.endsWith(suffix)) return false;
  const label = h.slice(0, h.length - suffix.length);
  return label !== '' && !label.includes('.') && !label.includes('*');
}

/**
 * RFC 8461 §3.3 / §4.2: is the certificate valid for `host`? Only subjectAltName DNS-IDs count
 * (the subject's CN does not); a wildcard covers exactly one left-most label.
 */
export function certificateNameMatches(sanDnsNames: readonly string[], host: string): boolean {
  return sanDnsNames.some((name) => matchesOneLabelPattern(name, host));
}
