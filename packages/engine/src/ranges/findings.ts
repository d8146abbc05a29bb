/**
 * The findings a shared-infrastructure report gives, and the facts the verdict's next step needs.
 * Ids are an API: `spf-shared-infrastructure` (critical: anyone who rents or starts something there
 * passes SPF) and `spf-shared-infrastructure-fixed` (warning: a few addresses, likely the owner's own).
 */
import type { Finding } from '../findings.js';
import { describePort25, providerSpec } from './providers.js';
import type { SharedInfrastructureExposure, SharedInfrastructureReport } from './types.js';

/** Finding id: passing addresses in a block an attacker can land in (critical). */
export const SHARED_INFRASTRUCTURE_FINDING = 'spf-shared-infrastructure';
/** Finding id: a few passing addresses in rentable space, likely the owner's own (warning). */
export const SHARED_INFRASTRUCTURE_FIXED_FINDING = 'spf-shared-infrastructure-fixed';

const ATTACK: Record<SharedInfrastructureExposure['kind'], string> = {
  rent: 'rents a server or a fixed address there',
  runner: 'starts a hosted CI job there (it gets an address anywhere in the pool)',
  edge: 'relays through that edge (its exits are shared by every customer)',
};

/** The findings of a report: at most one critical and one warning, each naming every provider with counts. */
export function sharedInfrastructureFindings(report: SharedInfrastructureReport, displayDomain: string): Finding[] {
  const findings: Finding[] = [];
  const critical = report.exposures.filter((e) => e.severity === 'critical');
  const warning = report.exposures.filter((e) => e.severity === 'warning');
  // Plain words for whoever reads the result (a visitor of the page too): how old the data is, never a command to run.
  const staleNote = report.data.stale ? ` (The provider data is ${report.data.ageDays} days old, dated ${report.data.date}: newer published ranges may differ.)` : '';
  if (critical.length > 0) {
    const names = providerNames(critical);
    findings.push({
      id: SHARED_INFRASTRUCTURE_FINDING,
      severity: 'critical',
      title: `SPF Lets Rented Servers Pass (${names})`,
      detail:
        `${whose(critical[0]!, displayDomain)} lets shared infrastructure pass: ${critical.map(describeExposure).join('; ')}. ` +
        `Anyone who ${[...new Set(critical.map((e) => ATTACK[e.kind]))].join(', or ')} sends mail that passes SPF, aligned with ${displayDomain}, so DMARC passes too and the mail is delivered (BreakSPF). ` +
        `${port25Sentence(critical)}${staleNote}`,
    });
  }
  if (warning.length > 0) {
    findings.push({
      id: SHARED_INFRASTRUCTURE_FIXED_FINDING,
      severity: 'warning',
      title: `SPF Lists Cloud Addresses (${providerNames(warning)})`,
      detail:
        `${whose(warning[0]!, displayDomain)} lets a few addresses of shared infrastructure pass: ${warning.map(describeExposure).join('; ')}. ` +
        (warning.every((e) => e.recordDomain === e.checkedDomain)
          ? 'They are likely your own fixed addresses: keep them only while they are yours.'
          : 'They are likely fixed addresses of whoever publishes the included record: keep that include only while they are theirs and you use them.') +
        ' Once released, an address goes back to the pool and the next customer who gets it can send as you.' +
        staleNote,
    });
  }
  return findings;
}

/** "Amazon Web Services EC2 and GitHub actions". */
function providerNames(exposures: readonly SharedInfrastructureExposure[]): string {
  const names = [...new Set(exposures.map((e) => e.label))];
  return names.length <= 2 ? names.join(' and ') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function whose(exposure: SharedInfrastructureExposure, displayDomain: string): string {
  return exposure.checkedDomain === displayDomain || exposure.checkedDomain === displayDomain.toLowerCase()
    ? 'Your SPF record'
    : `The SPF record of ${exposure.checkedDomain} (which counts for ${displayDomain} under relaxed SPF alignment)`;
}

/** "65,536 IPv4 addresses of Amazon Web Services EC2 through 'ip4:3.224.0.0/16'". */
function describeExposure(e: SharedInfrastructureExposure): string {
  const counts = [e.ipv4Addresses > 0 ? `${e.ipv4Addresses.toLocaleString('en-US')} IPv4` : null, e.ipv6Addresses > 0 ? `${formatIpv6Count(e.ipv6Addresses)} IPv6` : null].filter((c) => c !== null);
  const where = e.path === e.term ? `'${e.term}'` : `'${e.path.split(' → ')[0]}' (${e.recordDomain}'s '${e.term}')`;
  return `${counts.join(' and ')} addresses of ${e.label} through ${where}`;
}

/** An IPv6 count as a power of two when it is one ("2^80"), else in full below 2^53. */
export function formatIpv6Count(count: number): string {
  const log = Math.log2(count);
  if (count > 2 ** 20 && Number.isInteger(log)) return `2^${log}`;
  return count > Number.MAX_SAFE_INTEGER ? `about 2^${Math.round(log)}` : count.toLocaleString('en-US');
}

function port25Sentence(exposures: readonly SharedInfrastructureExposure[]): string {
  const providers = [...new Set(exposures.map((e) => e.provider))];
  const parts = providers.map((id) => {
    const spec = providerSpec(id);
    return `at ${spec.name}, ${describePort25(spec.port25.policy)} (${spec.port25.source})`;
  });
  return `Port 25: ${parts.join('; ')}. That is friction for an attacker, not protection: the addresses pass SPF all the same.`;
}

/** What the verdict's next step needs: the record to change, the terms to replace, what to use instead. */
export interface SharedInfrastructureFix {
  /** The domain whose record to change (the name checked, or its organizational domain). */
  domain: string;
  /** Its own terms that authorise the space, as written, in order (`ip4:3.224.0.0/16`). */
  terms: string[];
  /** Included records that authorise it: the include as written, the record's domain and terms, and whether the record is at or below `domain` (the owner's own). */
  included: { via: string; recordDomain: string; terms: string[]; own: boolean }[];
  /** What to use instead: each provider's mail-service include, then the exact addresses. */
  instead: string[];
}

/** The fix for the critical exposures of a report; null without any. */
export function sharedInfrastructureFix(report: SharedInfrastructureReport): SharedInfrastructureFix | null {
  const critical = report.exposures.filter((e) => e.severity === 'critical');
  if (critical.length === 0) return null;
  const domain = critical[0]!.checkedDomain;
  const mine = critical.filter((e) => e.checkedDomain === domain);
  const terms = [...new Set(mine.filter((e) => e.path === e.term).map((e) => e.term))];
  const included: SharedInfrastructureFix['included'] = [];
  for (const e of mine) {
    if (e.path === e.term) continue;
    const via = e.path.split(' → ')[0]!;
    let entry = included.find((i) => i.via === via && i.recordDomain === e.recordDomain);
    if (entry === undefined) included.push((entry = { via, recordDomain: e.recordDomain, terms: [], own: e.recordDomain === domain || e.recordDomain.endsWith(`.${domain}`) }));
    if (!entry.terms.includes(e.term)) entry.terms.push(e.term);
  }
  // Each provider's mail service include, then (for mail from your own servers) the exact addresses.
  const services = [...new Set(mine.map((e) => providerSpec(e.provider).mailService).filter((m) => m !== null))];
  const instead = [
    ...services.map((m) => `'${m.include}' if you send through ${m.name}`),
    `only the exact addresses of your own servers there (ip4:a.b.c.d${mine.some((e) => e.ipv6Addresses > 0) ? ', ip6:…/128' : ''}, nothing wider)`,
  ];
  return { domain, terms, included, instead };
}
