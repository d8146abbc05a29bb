/**
 * The transport verdict and its findings: a pure function of what the lookups, the policy fetch
 * and the probes found (no I/O). Rules:
 *
 * - `broken`: MTA-STS in enforce mode (RFC 8461 §5) with an MX no pattern covers (§4.1) or an MX
 *   address failing STARTTLS or its certificate (§4.2): compliant senders refuse to deliver there.
 * - `enforced`: enforce mode, every MX covered, no address failing, at least one address `ok`.
 * - `at-risk`: otherwise, when some MX address offers no TLS (`no-starttls`, `tls-failed`).
 * - `untested`: otherwise, when no MX address could be probed (each `unreachable` or
 *   `refused-private`, or no MX host with an address): nothing is known of TLS.
 * - `opportunistic`: otherwise (TLS offered but not required: no policy, testing, none).
 * - `no-mail`: before all of these, a null MX (RFC 7505): the domain accepts no mail; its one
 *   finding says so, and nothing is suggested to publish (no MTA-STS policy, no TLS-RPT record).
 *
 * Addresses that could not be probed (`unreachable`, `refused-private`) count neither for nor
 * against; a finding says so.
 */
import type { Finding } from '../findings.js';
import { matchesOneLabelPattern } from './mx-pattern.js';
import { type ProbeOutcome, type ProbeResult, type StsPolicy, type TransportResult, type TransportVerdict } from './types.js';

/** RFC 8461 §3.2 expects max_age "on the order of weeks or greater"; below a day is flagged. */
export const SHORT_MAX_AGE_SECONDS = 86_400;
/** The max_age suggested in a policy to publish: one week. */
export const SUGGESTED_MAX_AGE_SECONDS = 604_800;

/** Outcomes that make a compliant sender refuse an MX under enforce (RFC 8461 §4.2, §5). */
const ENFORCE_FAILURES: ReadonlySet<ProbeOutcome> = new Set(['no-starttls', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch']);
/** Outcomes where a probe learnt nothing about TLS (no connection was made, or allowed). */
const UNTESTED: ReadonlySet<ProbeOutcome> = new Set(['unreachable', 'refused-private']);
/** Outcomes where the MX offers no usable TLS at all. */
const NO_TLS: ReadonlySet<ProbeOutcome> = new Set(['no-starttls', 'tls-failed']);

/** One MX host with everything found about it. */
export interface MxFacts {
  host: string;
  preference: number;
  covered: boolean | null;
  probes: ProbeResult[];
  /** Why the host has no probes, when it has none (no address, DNS failure, over a cap). */
  unprobed: string | null;
}

/** What `judgeTransport` decides from. */
export interface TransportFacts {
  domain: string;
  mtaSts: TransportResult['mtaSts'];
  /** The parsed policy when status is enforce/testing/none. */
  policy: StsPolicy | null;
  tlsRpt: TransportResult['tlsRpt'];
  tlsRptProblem: string | null;
  mx: MxFacts[];
  /** 'none' with no implicit host, 'null-mx', or 'temperror' with its text; null when MX hosts were found. */
  mxProblem: { kind: 'null-mx' | 'none' | 'temperror'; detail: string } | null;
  /** Notes on what was left out (caps). */
  notes: string[];
  /** When the check ran (for the id suggested in a record to publish). */
  now: Date;
}

/** The verdict and the findings, most serious first. */
export function judgeTransport(facts: TransportFacts): { verdict: TransportVerdict; findings: Finding[] } {
  const { domain, mtaSts, policy } = facts;
  // RFC 7505 §3: a null MX says the domain accepts no mail. There is no transport to protect: that
  // one finding, and no policy or reporting record to publish for a domain nobody may send to.
  if (facts.mxProblem?.kind === 'null-mx') {
    return { verdict: 'no-mail', findings: [{ id: 'transport-null-mx', severity: 'info', title: 'Domain Accepts No Mail', detail: facts.mxProblem.detail }] };
  }
  const enforce = mtaSts.status === 'enforce';
  const probes = facts.mx.flatMap((mx) => mx.probes.map((probe) => ({ mx, probe })));
  const uncovered = policy && mtaSts.status !== 'none' ? facts.mx.filter((mx) => mx.covered === false) : [];
  const failing = probes.filter(({ probe }) => ENFORCE_FAILURES.has(probe.outcome));
  const ok = probes.filter(({ probe }) => probe.outcome === 'ok');
  let verdict: TransportVerdict;
  if (enforce && (uncovered.length > 0 || failing.length > 0)) verdict = 'broken';
  else if (enforce && ok.length > 0 && facts.mx.length > 0) verdict = 'enforced';
  else if (probes.some(({ probe }) => NO_TLS.has(probe.outcome))) verdict = 'at-risk';
  else if (probes.every(({ probe }) => UNTESTED.has(probe.outcome))) verdict = 'untested';
  else verdict = 'opportunistic';

  const findings: Finding[] = [];
  const mxList = facts.mx.map((mx) => mx.host);
  const policyLines = (mode: 'testing' | 'enforce'): string =>
    // Only the MX hosts the DNS named: with none known, the line says so rather than invent a host.
    [`version: STSv1`, `mode: ${mode}`, ...(mxList.length > 0 ? mxList.map((host) => `mx: ${host}`) : [`mx: <each MX host of ${domain}>`]), `max_age: ${SUGGESTED_MAX_AGE_SECONDS}`].join('\n');
  const newId = `a new id (for example ${compactDate(facts.now)})`;

  // MTA-STS itself.
  switch (mtaSts.status) {
    case 'absent':
      findings.push({
        id: 'mta-sts-absent',
        severity: 'warning',
        title: 'No MTA-STS Policy',
        detail: `Nothing is published at _mta-sts.${domain}, so senders deliver to your MX hosts over TLS only if it happens to work: an attacker on the path can strip STARTTLS or impersonate an MX. Next step: serve this policy as text/plain at https://mta-sts.${domain}/.well-known/mta-sts.txt:\n${indent(policyLines('testing'))}\nthen publish this record:\n  _mta-sts.${domain} TXT "v=STSv1; id=${compactDate(facts.now)}"\nSwitch mode to enforce (and change the id) once TLS reports show no failures.`,
      });
      break;
    case 'invalid':
      findings.push({
        id: 'mta-sts-invalid',
        severity: 'warning',
        title: 'MTA-STS Published but Not Usable',
        detail: `${capitalise(mtaSts.problems.join('; '))}. Senders act as if ${domain} had no MTA-STS policy. Next step: fix this so that exactly one _mta-sts.${domain} TXT record "v=STSv1; id=…" is published and https://mta-sts.${domain}/.well-known/mta-sts.txt answers 200 with a text/plain policy and a certificate valid for mta-sts.${domain}.`,
      });
      break;
    case 'testing':
      findings.push({
        id: 'mta-sts-testing',
        severity: 'info',
        title: 'MTA-STS in Testing Mode',
        detail: `The policy is in testing mode: senders report failures (with TLS-RPT) but still deliver without TLS when it fails, so it does not protect mail yet. Next step: when reports show no failures, serve:\n${indent(policyLines('enforce'))}\nand publish _mta-sts.${domain} TXT "v=STSv1; id=…" with ${newId}.`,
      });
      break;
    case 'none':
      findings.push({
        id: 'mta-sts-none',
        severity: 'info',
        title: 'MTA-STS Mode Is None',
        detail: `The policy's mode is none: senders treat ${domain} as having no policy (RFC 8461 §5). This is how a policy is withdrawn; to protect mail, serve a testing or enforce policy and change the id.`,
      });
      break;
    case 'enforce':
      if (verdict === 'enforced') {
        findings.push({
          id: 'mta-sts-enforced',
          severity: 'success',
          title: 'MTA-STS Enforced',
          detail: `The policy is in enforce mode and every MX host is covered and offers a valid certificate: compliant senders deliver to ${domain} only over authenticated TLS.`,
        });
      }
      break;
  }
  if (policy && policy.maxAge < SHORT_MAX_AGE_SECONDS && mtaSts.status !== 'none') {
    findings.push({
      id: 'mta-sts-max-age-short',
      severity: 'info',
      title: 'MTA-STS max_age Is Short',
      detail: `max_age is ${policy.maxAge} seconds; senders forget the policy that soon, and an attacker who blocks the policy fetch then meets no policy. RFC 8461 §3.2 expects weeks: use max_age: ${SUGGESTED_MAX_AGE_SECONDS} or more.`,
    });
  }
  // MX coverage (RFC 8461 §4.1).
  for (const mx of uncovered) {
    findings.push({
      id: 'mta-sts-mx-not-covered',
      severity: enforce ? 'critical' : 'warning',
      title: enforce ? 'MX Not in the Enforced Policy: Mail Is Refused' : 'MX Not in the MTA-STS Policy',
      detail: `${mx.host} matches no mx line of the policy (${policy?.mx.join(', ') || 'none'}); a "*." pattern covers exactly one label. ${enforce ? 'Compliant senders refuse to deliver to it.' : 'In enforce mode, compliant senders would refuse to deliver to it.'} Next step: add this line to the policy, then publish a new id in _mta-sts.${domain}:\n  mx: ${mx.host}`,
    });
  }
  if (policy && mtaSts.status !== 'none' && facts.mx.length > 0) {
    const unused = policy.mx.filter((pattern) => !facts.mx.some((mx) => mx.covered !== null && matchesOneLabelPattern(pattern, mx.host)));
    if (unused.length > 0) {
      findings.push({
        id: 'mta-sts-pattern-unused',
        severity: 'info',
        title: 'Policy mx Lines That Match No MX',
        detail: `${unused.join(', ')} match${unused.length === 1 ? 'es' : ''} none of the current MX hosts (${mxList.join(', ')}). Harmless, but often left over from a migration: remove them from the policy when they are no longer used.`,
      });
    }
  }
  // The probes (RFC 3207, RFC 8461 §4.2).
  for (const { mx, probe } of probes) {
    if (probe.outcome === 'ok') continue;
    findings.push(probeFinding(mx.host, probe, enforce));
  }
  for (const mx of facts.mx) {
    if (mx.unprobed !== null) findings.push({ id: 'mx-not-probed', severity: 'info', title: 'MX Host Not Probed', detail: `${mx.host}: ${mx.unprobed}.` });
  }
  if (facts.mxProblem) {
    findings.push({
      id: facts.mxProblem.kind === 'temperror' ? 'transport-mx-temperror' : 'transport-no-mx',
      severity: 'info',
      title: facts.mxProblem.kind === 'temperror' ? 'MX Lookup Failed' : 'No Mail Hosts',
      detail: facts.mxProblem.detail,
    });
  }
  if (verdict === 'untested') {
    findings.push({
      id: 'transport-untested',
      severity: 'info',
      title: 'Transport Not Tested',
      detail: `No MX address of ${domain} could be probed (${probes.length === 0 ? 'there was none to probe' : 'each one is not public or did not answer'}), so whether mail sent to it is protected in transit is not known. It is not a sign of TLS, nor of its absence.`,
    });
  }
  for (const note of facts.notes) findings.push({ id: 'transport-limited', severity: 'info', title: 'Not Every Address Was Probed', detail: note });
  if (ok.length > 0 && failing.length === 0 && mtaSts.status !== 'enforce' && verdict === 'opportunistic') {
    findings.push({
      id: 'mx-starttls-ok',
      severity: 'success',
      title: 'Every Probed MX Offers Valid TLS',
      detail: `Each MX address probed offers STARTTLS with a trusted certificate for its name, so an enforce policy would not lose mail.`,
    });
  }

  // TLS-RPT (RFC 8460).
  if (facts.tlsRpt.status === 'absent') {
    findings.push({
      id: 'tlsrpt-absent',
      severity: 'info',
      title: 'No TLS Reporting',
      detail: `Nothing is published at _smtp._tls.${domain}, so you never hear when senders fail to deliver over TLS. Next step: publish this record (with a mailbox you read):\n  _smtp._tls.${domain} TXT "v=TLSRPTv1; rua=mailto:tls-reports@${domain}"`,
    });
  } else if (facts.tlsRpt.status === 'invalid') {
    findings.push({
      id: 'tlsrpt-invalid',
      severity: 'warning',
      title: 'TLS Reporting Record Not Usable',
      detail: `${capitalise(facts.tlsRptProblem ?? 'the record is not valid')}. Senders send no TLS reports. Next step: publish exactly one record such as:\n  _smtp._tls.${domain} TXT "v=TLSRPTv1; rua=mailto:tls-reports@${domain}"`,
    });
  } else if (mtaSts.status === 'absent' || mtaSts.status === 'invalid') {
    findings.push({
      id: 'tlsrpt-without-policy',
      severity: 'info',
      title: 'TLS Reports Without a Policy',
      detail: 'TLS reporting is set up but no MTA-STS policy is in force: reports show failures, but nothing makes senders require TLS.',
    });
  }
  const rank = { critical: 0, warning: 1, info: 2, success: 3 } as const;
  findings.sort((x, y) => rank[x.severity] - rank[y.severity]);
  return { verdict, findings };
}

/** The finding for an address that did not pass. */
function probeFinding(host: string, probe: ProbeResult, enforce: boolean): Finding {
  const where = `${host} (${probe.address})`;
  const lost = enforce ? ' Under the enforce policy, compliant senders refuse to deliver to it: mail is being lost.' : '';
  const later = enforce ? '' : ' Fix it before switching MTA-STS to enforce, or mail will be refused.';
  switch (probe.outcome) {
    case 'no-starttls':
      return { id: 'mx-no-starttls', severity: enforce ? 'critical' : 'warning', title: 'MX Offers No STARTTLS', detail: `${where}: ${probe.detail}. Mail to it travels in clear text.${lost} Next step: enable STARTTLS on ${host} with a certificate valid for ${host}.` };
    case 'tls-failed':
      return { id: 'mx-tls-failed', severity: enforce ? 'critical' : 'warning', title: 'MX TLS Handshake Fails', detail: `${where}: ${probe.detail}. Senders fall back to clear text or cannot deliver.${lost} Next step: fix the TLS set-up of ${host} (TLS 1.2 or later, a complete certificate chain).` };
    case 'cert-expired':
      return { id: 'mx-cert-expired', severity: enforce ? 'critical' : 'warning', title: 'MX Certificate Expired', detail: `${where}: ${probe.detail}.${lost}${later} Next step: renew the certificate of ${host}.` };
    case 'cert-untrusted':
      return { id: 'mx-cert-untrusted', severity: enforce ? 'critical' : 'warning', title: 'MX Certificate Not Trusted', detail: `${where}: ${probe.detail}.${lost}${later} Next step: install on ${host} a certificate from a public certificate authority, with its intermediate certificates.` };
    case 'cert-name-mismatch':
      return { id: 'mx-cert-name-mismatch', severity: enforce ? 'critical' : 'warning', title: 'MX Certificate for Another Name', detail: `${where}: ${probe.detail}.${lost}${later} Next step: install a certificate whose subjectAltName includes ${host}.` };
    case 'refused-private':
      return { id: 'mx-refused-private', severity: 'warning', title: 'MX Address Not Public', detail: `${where}: ${probe.detail}, so its TLS was not tested. Senders on the internet cannot deliver there either: publish the public address of ${host}.` };
    case 'unreachable':
      return { id: 'mx-unreachable', severity: 'info', title: 'MX Not Reachable From Here', detail: `${where}: ${probe.detail}. Port 25 may be blocked from this checker, or the host is down; its TLS could not be tested.` };
    case 'ok':
      return { id: 'mx-starttls-ok', severity: 'success', title: 'MX Offers Valid TLS', detail: `${where}: ${probe.detail}.` };
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A policy id suggestion: the digits of a UTC date and time (RFC 8461 §3.1 allows 1–32 alphanumerics). */
function compactDate(now: Date): string {
  return now.toISOString().replace(/\D/g, '').slice(0, 14);
}
