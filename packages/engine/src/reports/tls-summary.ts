/**
 * SMTP TLS reports summarised (RFC 8460 §4): per policy (type and domain: `sts` and `tlsa` results
 * kept apart) the successful and failed sessions, the failure types (the IANA "STARTTLS Validation
 * Result Types": `starttls-not-supported`, `certificate-expired`, `validation-failure`,
 * `sts-policy-fetch-error`…) overall and per MX, and for an MTA-STS policy the answer to "is it safe
 * to move from `mode: testing` to `mode: enforce`?" (RFC 8461 §5: in enforce mode a sender refuses
 * to deliver over a connection that fails validation, so every such failure would be lost mail).
 */
import type { TlsReport } from './types.js';

/**
 * Failure types that mean the sender could not get or use the policy: in enforce mode it then
 * delivers as without a policy (RFC 8461 §5.1), so no mail is lost, but the policy protects nothing.
 */
export const POLICY_FETCH_FAILURES: readonly string[] = ['sts-policy-fetch-error', 'sts-policy-invalid', 'sts-webpki-invalid'];

/** Sessions per failure type. */
export interface TlsFailureCount {
  resultType: string;
  sessions: number;
}

/** One policy (type and domain) over the window. */
export interface TlsPolicySummary {
  /** `<type> <domain>`, e.g. `sts example.com`. */
  policy: string;
  policyType: string;
  policyDomain: string;
  /** The MTA-STS `mode` the senders saw (`testing`, `enforce`, `none`); null when not an STS policy or not given. */
  mode: string | null;
  mxHosts: string[];
  successful: number;
  /** Failed sessions, from the reports' summaries. */
  failed: number;
  /** Failed sessions per failure type, from the failure details (types are non-exclusive, RFC 8460 §4.3), most first. */
  failures: TlsFailureCount[];
  /** Failures per receiving MX (`(not given)` when the reporter named none). */
  byMx: { mx: string; failures: TlsFailureCount[] }[];
  /** The organisations that reported it. */
  reporters: string[];
  /** For an MTA-STS policy: is moving to (or staying at) `mode: enforce` safe? */
  enforce: { safe: boolean; answer: string } | null;
}

/** The TLS reports of a window, summarised. */
export interface TlsSummary {
  /** TLS reports counted. */
  reports: number;
  policies: TlsPolicySummary[];
}

const NOT_GIVEN = '(not given)';

/** Summarises TLS reports per policy and MX. */
export function tlsSummary(reports: readonly TlsReport[]): TlsSummary {
  const byPolicy = new Map<string, { type: string; domain: string; mode: string | null; mx: Set<string>; successful: number; failed: number; failures: Map<string, number>; byMx: Map<string, Map<string, number>>; reporters: Set<string> }>();
  for (const report of reports) {
    for (const result of report.policies) {
      const key = `${result.policy.type} ${result.policy.domain}`;
      let p = byPolicy.get(key);
      if (p === undefined) {
        p = { type: result.policy.type, domain: result.policy.domain, mode: null, mx: new Set(), successful: 0, failed: 0, failures: new Map(), byMx: new Map(), reporters: new Set() };
        byPolicy.set(key, p);
      }
      if (result.policy.type === 'sts') {
        const mode = result.policy.strings.map((s) => /^\s*mode\s*:\s*(\S+)/i.exec(s)?.[1]?.toLowerCase()).find((m) => m !== undefined);
        // The least strict mode any sender saw, so a change in progress is not reported as done.
        if (mode !== undefined && (p.mode === null || rank(mode) < rank(p.mode))) p.mode = mode;
      }
      for (const mx of result.policy.mxHosts) p.mx.add(mx);
      p.successful += result.summary.successful;
      p.failed += result.summary.failed;
      if (report.organizationName !== '') p.reporters.add(report.organizationName);
      for (const detail of result.failureDetails) {
        p.failures.set(detail.resultType, (p.failures.get(detail.resultType) ?? 0) + detail.failedSessionCount);
        const mx = detail.receivingMxHostname ?? NOT_GIVEN;
        const perMx = p.byMx.get(mx) ?? new Map<string, number>();
        perMx.set(detail.resultType, (perMx.get(detail.resultType) ?? 0) + detail.failedSessionCount);
        p.byMx.set(mx, perMx);
      }
    }
  }
  const policies: TlsPolicySummary[] = [...byPolicy.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([policy, p]) => {
      const failures = counts(p.failures);
      const byMx = [...p.byMx.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([mx, m]) => ({ mx, failures: counts(m) }));
      return {
        policy,
        policyType: p.type,
        policyDomain: p.domain,
        mode: p.mode,
        mxHosts: [...p.mx].sort(),
        successful: p.successful,
        failed: p.failed,
        failures,
        byMx,
        reporters: [...p.reporters].sort(),
        enforce: p.type === 'sts' ? enforceAnswer(p.successful, p.failed, byMx, p.reporters.size, p.mode) : null,
      };
    });
  return { reports: reports.length, policies };
}

function rank(mode: string): number {
  return mode === 'none' ? 0 : mode === 'testing' ? 1 : mode === 'enforce' ? 2 : 3;
}

function counts(map: Map<string, number>): TlsFailureCount[] {
  return [...map.entries()].map(([resultType, sessions]) => ({ resultType, sessions })).sort((a, b) => b.sessions - a.sessions || (a.resultType < b.resultType ? -1 : 1));
}

function enforceAnswer(successful: number, failed: number, byMx: { mx: string; failures: TlsFailureCount[] }[], reporters: number, mode: string | null): { safe: boolean; answer: string } {
  if (successful + failed === 0) return { safe: false, answer: 'no sessions reported yet: nothing to judge by' };
  const blocking: string[] = [];
  const fetching: string[] = [];
  let blockingSessions = 0;
  for (const { mx, failures } of byMx) {
    for (const f of failures) {
      const where = mx === NOT_GIVEN ? '' : ` on ${mx}`;
      if (POLICY_FETCH_FAILURES.includes(f.resultType)) fetching.push(`${f.resultType} ×${f.sessions}`);
      else {
        blocking.push(`${f.resultType}${where} ×${f.sessions}`);
        blockingSessions += f.sessions;
      }
    }
  }
  // Failed sessions the reporters gave no details for count against enforcement too.
  const undetailed = Math.max(0, failed - blockingSessions - byMx.reduce((sum, m) => sum + m.failures.filter((f) => POLICY_FETCH_FAILURES.includes(f.resultType)).reduce((s, f) => s + f.sessions, 0), 0));
  const policyNote = fetching.length > 0 ? `; also, senders could not fetch or use the policy (${fetching.join(', ')}): fix the policy host, or the policy protects nothing` : '';
  if (blocking.length === 0 && undetailed === 0) {
    return { safe: true, answer: `${mode === 'enforce' ? 'enforcing is safe' : 'ready'}: all ${successful} sessions from ${reporters} ${reporters === 1 ? 'reporter' : 'reporters'} validated${policyNote}` };
  }
  const lost = blockingSessions + undetailed;
  return {
    safe: false,
    answer: `${lost} ${lost === 1 ? 'session' : 'sessions'} ${mode === 'enforce' ? 'failed validation, so their mail was not delivered' : 'would have been refused under enforce'} (${[...blocking, ...(undetailed > 0 ? [`${undetailed} without details`] : [])].join(', ')}): fix these first${policyNote}`,
  };
}
