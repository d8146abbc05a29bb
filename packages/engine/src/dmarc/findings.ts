import type { DnsErrorReason } from '../dns/types.js';
import { describeAnswer } from '../dns/types.js';
import type { Finding } from '../findings.js';
import type { DmarcRecord, DmarcWarning, PolicyProblem, ReportUriProblem } from './types.js';

/**
 * The finding ids this module emits. They are an API: once published an id keeps its meaning.
 * Verdict-level ids (`dmarc-missing`, `dmarc-p-none`, ...) belong to the verdict, not here.
 */
export const DMARC_FINDING_IDS = [
  'dmarc-multiple',
  'dmarc-no-rua',
  'dmarc-legacy-tag',
  'dmarc-pct-partial',
  'dmarc-testing',
  'dmarc-invalid-policy',
  'dmarc-syntax',
  'dmarc-unknown-tag',
  'dmarc-sp-on-subdomain',
  'dmarc-org-domain-mismatch',
  'dmarc-report-destination-unverified',
  'dmarc-report-destination-unchecked',
  'dmarc-temperror',
] as const;

/** One of the ids in `DMARC_FINDING_IDS`. */
export type DmarcFindingId = (typeof DMARC_FINDING_IDS)[number];

function finding(id: DmarcFindingId, severity: Finding['severity'], title: string, detail: string): Finding {
  return { id, severity, title, detail };
}

const URI_PROBLEM_TEXT: Record<ReportUriProblem, string> = {
  empty: 'it is empty',
  'no-scheme': 'it has no scheme such as "mailto:"',
  'bad-character': 'it contains a space or a character a URI may not hold unencoded',
  'bad-percent-encoding': 'it has a "%" that is not followed by two hex digits',
  'bad-size-suffix': 'it has a "!" that is neither percent-encoded nor a valid size suffix such as !10m',
  'bad-mailto-address': 'the mailto address has no valid domain after the "@"',
};

/**
 * Turns a record's parse warnings (and the record itself) into findings: one finding per id, each
 * listing every problem of its kind. `location` is the DNS name the record was read from.
 */
export function recordFindings(record: DmarcRecord, warnings: readonly DmarcWarning[], location: string): Finding[] {
  const findings: Finding[] = [];
  const syntax: string[] = [];
  const unknown: string[] = [];
  const legacy: string[] = [];
  for (const warning of warnings) {
    switch (warning.code) {
      case 'duplicate-tag':
        syntax.push(`the tag "${warning.tag}" appears more than once, so receivers discard it (RFC 6376 §3.2)`);
        break;
      case 'invalid-value':
        syntax.push(
          `"${warning.tag}=${warning.value}" is not a valid value` +
            (warning.fallback === null ? ', so it is ignored' : `, so receivers use the default ${warning.tag}=${warning.fallback}`),
        );
        break;
      case 'malformed-tag':
        syntax.push(`"${warning.text}" is not a tag=value pair, so it is ignored`);
        break;
      case 'invalid-uri':
        syntax.push(`the ${warning.tag} entry "${warning.uri}" is not a valid report address because ${URI_PROBLEM_TEXT[warning.problem]}`);
        break;
      case 'unsupported-scheme':
        syntax.push(`the ${warning.tag} entry "${warning.uri}" uses "${warning.scheme}:", which receivers need not support; only mailto: is required`);
        break;
      case 'policy-not-second':
        syntax.push('p is not the first tag after v; RFC 9989 allows any order, but strict RFC 7489 parsers reject the record');
        break;
      case 'fo-without-ruf':
        syntax.push('fo has no effect because there is no ruf tag');
        break;
      case 'unknown-tag':
        unknown.push(warning.tag);
        break;
      case 'legacy-tag':
        legacy.push(`${warning.tag}=${warning.value}`);
        break;
      case 'size-suffix':
        legacy.push(`the size limit ${warning.suffix} on ${warning.tag}` + (warning.outOfRange ? ' (too large: RFC 7489 receivers reject that address)' : ''));
        break;
      case 'unusable-policy':
        findings.push(invalidPolicyFinding(warning.problems, warning.outcome, location));
        break;
    }
  }
  if (syntax.length > 0) {
    findings.push(finding('dmarc-syntax', 'warning', 'DMARC record has syntax errors', `Your DMARC record at ${location} has problems: ${syntax.join('; ')}.`));
  }
  if (unknown.length > 0) {
    findings.push(
      finding(
        'dmarc-unknown-tag',
        'info',
        'DMARC record has unknown tags',
        `Your DMARC record at ${location} contains ${unknown.map((tag) => `"${tag}"`).join(', ')}, which DMARC does not define. Receivers ignore unknown tags (RFC 9989 §4.7); check for a typo.`,
      ),
    );
  }
  if (legacy.length > 0) {
    findings.push(
      finding(
        'dmarc-legacy-tag',
        'info',
        'DMARC record uses tags RFC 9989 removed',
        `Your DMARC record at ${location} uses ${legacy.join(', ')}. RFC 9989 (DMARCbis) dropped pct, rf, ri and report size limits; receivers that follow it ignore them, while older RFC 7489 receivers still read them. You can remove them.`,
      ),
    );
  }
  if (record.outcome !== 'no-dmarc' && record.rua.length === 0) {
    findings.push(
      finding(
        'dmarc-no-rua',
        'info',
        'No DMARC aggregate reports',
        `Your DMARC record at ${location} has no valid rua address, so receivers send you no aggregate reports. Without them you cannot see who sends mail as your domain, which you need before moving safely to p=reject. Add rua=mailto:<a mailbox you read>.`,
      ),
    );
  }
  if (record.testing && record.outcome === 'valid') {
    findings.push(
      finding(
        'dmarc-testing',
        'warning',
        'DMARC policy is in test mode (t=y)',
        `Your DMARC record at ${location} has t=y, so receivers that follow RFC 9989 apply one level less than you ask: quarantine instead of reject, none instead of quarantine. Remove t=y once your reports show that your own mail passes.`,
      ),
    );
  }
  if (record.pct !== null && record.pct < 100 && record.outcome === 'valid' && hasEnforcement(record)) {
    findings.push(
      finding(
        'dmarc-pct-partial',
        'warning',
        `DMARC policy applies to ${record.pct}% of failing mail`,
        `Your DMARC record at ${location} has pct=${record.pct}. Receivers that follow RFC 7489 apply ` +
          (record.pct === 0 ? 'your policy to none of the failing mail: all of it gets' : `your policy to only ${record.pct}% of failing mail and to the rest`) +
          ' the next lower policy (quarantine instead of reject, none instead of quarantine). RFC 9989 removed pct, so newer receivers ignore it. Remove pct, or use t=y while testing.',
      ),
    );
  }
  return findings;
}

function hasEnforcement(record: DmarcRecord): boolean {
  return [record.policy, record.subdomainPolicy, record.nonExistentSubdomainPolicy].some((policy) => policy !== null && policy !== 'none');
}

function invalidPolicyFinding(problems: readonly PolicyProblem[], outcome: 'as-none' | 'no-dmarc', location: string): Finding {
  const reasons = problems.map((problem) => {
    if (problem.problem === 'missing') return 'it has no p tag';
    if (problem.problem === 'duplicated') return `${problem.tag} appears more than once`;
    return `"${problem.tag}=${problem.value}" is not none, quarantine or reject`;
  });
  const npOnly = problems.every((problem) => problem.tag === 'np');
  const consequence =
    outcome === 'as-none'
      ? 'Because it has a valid rua address, receivers treat it as p=none: they send reports but do not block forged mail'
      : 'Because it also has no valid rua address, receivers apply no DMARC to your mail at all';
  return finding(
    'dmarc-invalid-policy',
    'critical',
    outcome === 'as-none' ? 'DMARC policy is unusable: treated as p=none' : 'DMARC policy is unusable: no DMARC applied',
    `Your DMARC record at ${location} cannot be used as published: ${reasons.join('; ')}. ${consequence} (RFC 9989 §4.10.1, RFC 7489 §6.6.3).` +
      (npOnly ? ' Receivers that still follow RFC 7489 ignore np and use p and sp.' : '') +
      ' Set p to none, quarantine or reject, and sp and np likewise if you use them.',
  );
}

/** The finding for several DMARC records at one name (RFC 7489 §6.6.3 step 5, RFC 9989 §4.10 step 2). */
export function multipleRecordsFinding(location: string, count: number, fallback: string | null): Finding {
  return finding(
    'dmarc-multiple',
    'critical',
    'Multiple DMARC records',
    `${location} publishes ${count} DMARC records. Receivers discard them all (RFC 7489 §6.6.3, RFC 9989 §4.10), so none of your policies apply. Keep exactly one TXT record starting with v=DMARC1 there.` +
      (fallback ? ` Receivers that follow RFC 9989 may fall back to the record at ${fallback}; older ones apply no DMARC.` : ''),
  );
}

/** The finding for a discovery or existence query that failed: not the same as "no record". */
export function temperrorFinding(name: string, type: string, reason: DnsErrorReason, detail: string | undefined, consequence: string): Finding {
  return finding(
    'dmarc-temperror',
    'warning',
    'DMARC lookup failed',
    `The ${type} lookup for ${name} failed: ${describeAnswer({ kind: 'error', reason, ...(detail ? { detail } : {}) })}. ${consequence}`,
  );
}

/**
 * The finding for sp/np published in a record whose subdomains take their policy from elsewhere.
 * `ignoredBy` says which receivers ignore them: all (the tree walk and the public suffix list both find
 * another organizational domain), only RFC 9989 ones (the tree walk does), or only RFC 7489 ones (the
 * public suffix list does). `organizationalDomain` is where those receivers look instead.
 */
export function spOnSubdomainFinding(location: string, tags: string, ignoredBy: 'all' | 'rfc9989' | 'rfc7489', organizationalDomain: string): Finding {
  if (ignoredBy === 'rfc7489') {
    return finding(
      'dmarc-sp-on-subdomain',
      'info',
      'Subdomain policy in a subdomain record is ignored by older receivers',
      `Your DMARC record at ${location} sets ${tags}. Receivers that follow RFC 9989 apply it to names below, because the DNS tree walk makes this name its own organizational domain, but receivers that still follow RFC 7489 look for the policy of those names at _dmarc.${organizationalDomain} (public suffix list) and ignore it. To cover them too, publish a record with sp at _dmarc.${organizationalDomain}, or a record at each subdomain you use.`,
    );
  }
  const who = ignoredBy === 'all' ? 'receivers' : 'receivers that follow RFC 9989';
  return finding(
    'dmarc-sp-on-subdomain',
    'info',
    'Subdomain policy in a subdomain record has no effect',
    `Your DMARC record at ${location} sets ${tags}, but ${who} take the policy for names below it from the record of your organizational domain (${organizationalDomain}), so these tags have no effect there (RFC 9989 §4.7, §4.10.1). Set sp and np on _dmarc.${organizationalDomain}, or add psd=n here to make this name its own organizational domain for receivers that follow RFC 9989.`,
  );
}

/** The finding for a tree-walk organizational domain that differs from the public-suffix-list one. */
export function orgDomainMismatchFinding(name: string, walk: string, psl: string): Finding {
  return finding(
    'dmarc-org-domain-mismatch',
    'info',
    'Receivers may disagree on your organizational domain',
    `For ${name}, receivers that follow RFC 9989 (DNS tree walk) find the organizational domain ${walk}, while receivers that still follow RFC 7489 (public suffix list) find ${psl}. They can look for your policy in different places and judge alignment differently. Publishing a DMARC record at the exact name you send from avoids the difference (RFC 9989 §C.3).`,
  );
}

/** The finding for an external report destination that has not authorised reports. */
export function destinationUnverifiedFinding(tags: string, destination: string, recordName: string, note?: string): Finding {
  return finding(
    'dmarc-report-destination-unverified',
    'warning',
    `Report destination ${destination} has not accepted your reports`,
    `Your ${tags} sends reports to ${destination}, a different organization, but there is no TXT record starting with v=DMARC1 at ${recordName}, so receivers drop those reports (RFC 7489 §7.1).` +
      (note ? ` ${note}` : '') +
      ` Ask the operator of ${destination} to publish: ${recordName} TXT "v=DMARC1;"`,
  );
}

/** The finding for an authorization check that could not be made because of a DNS failure. */
export function destinationUncheckedFinding(destination: string, recordName: string, reason: DnsErrorReason, detail: string | undefined): Finding {
  return finding(
    'dmarc-report-destination-unchecked',
    'info',
    `Could not check report destination ${destination}`,
    `We could not tell whether ${destination} accepts your DMARC reports: the TXT lookup for ${recordName} failed (${describeAnswer({ kind: 'error', reason, ...(detail ? { detail } : {}) })}). This is not the same as a missing authorization; check again later.`,
  );
}

/** A finding for a TXT record at `_dmarc` that looks like DMARC but is not (so receivers ignore it). */
export function lookalikeFinding(location: string, raw: string, reason: string): Finding {
  return finding(
    'dmarc-syntax',
    'warning',
    'A DMARC-like record is ignored',
    `${location} has the TXT record "${raw.length > 80 ? `${raw.slice(0, 77)}...` : raw}", which receivers ignore because ${reason}. A DMARC record must start exactly with v=DMARC1 followed by ";" (RFC 9989 §4.7).`,
  );
}
