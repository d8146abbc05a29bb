/**
 * The DMARC prerequisite of BIMI (draft-brand-indicators-for-message-identification-14 §7.1,
 * steps 7-9 of -12): a receiver does not process BIMI when, for the author domain or the author's
 * organizational domain, the policy is `p=none`, the record carries `sp=none`, or the policy is
 * quarantine with a `pct` below 100. `t=y` (RFC 9989 §4.7, test mode: receivers apply one level
 * lower) counts as too lax too, as mailauth does. Read from the engine's own discovery
 * (`discoverDmarc`), so the records are the ones the spoof check judged.
 */
import type { DmarcDiscovery } from '../dmarc/discover.js';
import type { DmarcRecord } from '../dmarc/types.js';
import type { BimiDmarc, BimiDmarcRecord, DmarcBlock } from './types.js';

/** RFC 7489 §6.3 `pct`: 100 means the policy applies to every failing message. */
const FULL_PCT = 100;

/** The DMARC side of BIMI, and warnings that do not block (reject with pct below 100). */
export function bimiDmarcEligibility(discovery: DmarcDiscovery): { dmarc: BimiDmarc; warnings: string[] } {
  const domain = discovery.name;
  if (discovery.status === 'temperror') return { dmarc: { eligible: null, records: [], blockedBy: [] }, warnings: [] };
  if (discovery.status === 'none' || discovery.status === 'multiple' || !discovery.record || !discovery.foundAt) {
    const multiple = discovery.status === 'multiple';
    const record = `_dmarc.${domain}`;
    const detail = multiple
      ? `${record} publishes several DMARC records, so none applies; BIMI needs one DMARC policy at quarantine or reject`
      : `no DMARC record applies to ${domain}; BIMI needs a DMARC policy at quarantine or reject`;
    return { dmarc: { eligible: false, records: [], blockedBy: [{ record, reason: multiple ? 'multiple' : 'no-record', detail }] }, warnings: [] };
  }
  const records: BimiDmarcRecord[] = [];
  const blockedBy: DmarcBlock[] = [];
  const warnings: string[] = [];
  const own = discovery.policySource === 'author-domain';
  // The record that applies to the domain: its own p, or (below the organizational domain) the effective sp.
  records.push(judge(discovery.foundAt, discovery.record, own ? 'p' : 'sp', blockedBy, warnings));
  // The organizational domain's own record is judged too (draft §7.1: "or the Author Organizational Domain").
  const org = discovery.organizationalDomain;
  if (org && org !== discovery.policyDomain) {
    const step = discovery.walk.find((candidate) => candidate.domain === org && candidate.outcome === 'record' && candidate.record);
    if (step?.record) records.push(judge(step.name, step.record, 'p', blockedBy, warnings));
  }
  return { dmarc: { eligible: blockedBy.length === 0, records, blockedBy }, warnings };
}

function judge(name: string, record: DmarcRecord, applies: 'p' | 'sp', blockedBy: DmarcBlock[], warnings: string[]): BimiDmarcRecord {
  // A missing or invalid p counts as none (RFC 9989 §4.7; the record is then "as none").
  const p = record.outcome === 'valid' ? record.policy : 'none';
  const sp = record.outcome === 'valid' ? record.subdomainPolicy : 'none';
  const policy = applies === 'p' ? p : sp;
  const pct = record.pct;
  if (policy === 'none' || policy === null) {
    const via = applies === 'sp' ? (record.published.sp === null ? ' (sp is not set, so p applies to subdomains)' : '') : '';
    blockedBy.push({ record: name, reason: applies === 'sp' && record.published.sp === 'none' ? 'sp-none' : 'p-none', detail: `${name} sets ${applies === 'p' ? 'p' : 'sp'}=none${via}; receivers ignore BIMI until the policy is quarantine or reject` });
  } else if (record.published.sp === 'none') {
    // The literal rule: a record that includes sp=none blocks BIMI, even for mail from its own domain.
    blockedBy.push({ record: name, reason: 'sp-none', detail: `${name} includes sp=none; receivers ignore BIMI while a record says sp=none, even for the domain itself` });
  }
  if (policy === 'quarantine' && pct !== null && pct < FULL_PCT) {
    blockedBy.push({ record: name, reason: 'quarantine-pct', detail: `${name} quarantines only pct=${pct}% of failing mail; BIMI needs pct=100 (or no pct) with quarantine` });
  }
  if (policy === 'reject' && pct !== null && pct < FULL_PCT) {
    warnings.push(`${name} rejects only pct=${pct}% of failing mail (the rest is quarantined, RFC 7489 §6.6.4); BIMI allows it, but remove pct= to enforce fully`);
  }
  if (record.testing) {
    blockedBy.push({ record: name, reason: 't-y', detail: `${name} sets t=y (test mode: receivers apply one level lower, RFC 9989 §4.7); BIMI needs it removed` });
  }
  return { name, policy, p: record.published.p, sp: record.published.sp, pct, t: record.testing };
}
