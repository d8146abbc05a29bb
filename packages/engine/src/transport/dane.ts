/**
 * DANE for SMTP in the transport check (RFC 7672 §2): only where the MX RRset is DNSSEC-secure and
 * so are the MX host's address records; TLSA at `_25._tcp.<host>`, secure only; each address's
 * chain as sent after STARTTLS matched against the usable records (`dane/match.ts`). Per address
 * `match | mismatch | no-usable-tlsa | not-applicable`; per MX the TLSA state; for the domain
 * `valid | partial | broken | none`.
 */
import { classifyAddress } from '../net/address-guard.js';
import { chainAsSent } from '../dane/handshake.js';
import { formatTlsa, isUsable, matchTlsa, parseTlsaRdata, rolloverScheme } from '../dane/match.js';
import type { DaneOutcome, RolloverScheme, TlsaRecord } from '../dane/types.js';
import type { CheckDnssecOptions } from '../dnssec/check.js';
import { Validator, weakest } from '../dnssec/validate.js';
import type { DnssecStatus } from '../dnssec/types.js';
import { TYPE } from '../dns/canonical.js';
import type { Finding } from '../findings.js';
import { createHash, X509Certificate } from 'node:crypto';

/** `transport.dane` (RFC 7672): every MX valid, some valid and none broken, some broken, or none usable. */
export type DaneVerdict = 'valid' | 'partial' | 'broken' | 'none';

/** `transport.mx[].tlsa`. */
export interface MxTlsa {
  /** secure (with records or proven absent), insecure, bogus, indeterminate, or not-applicable (MX or addresses not secure). */
  status: DnssecStatus | 'none' | 'not-applicable';
  /** The records, as `usage selector matching hex`. */
  records: string[];
  /** Whether some record is usable for SMTP (usage 2 or 3, known selector and matching type). */
  usable: boolean;
  /** RFC 7671 §8.1 as internet.nl reads it. */
  rollover: RolloverScheme;
}

/** What DANE found for one MX host. */
export interface MxDane {
  tlsa: MxTlsa;
  /** By address. */
  addresses: Map<string, { dane: DaneOutcome; detail: string; presentedTlsa: string | null }>;
}

/** DANE over every MX host probed. */
export interface DomainDane {
  dane: DaneVerdict;
  mx: Map<string, MxDane>;
  findings: Finding[];
}

/**
 * DANE for `domain`'s MX `hosts` (each with the addresses the probe used), through `dnssec`'s
 * query and anchors. Connects only to addresses the guard allows (or any, with `allowPrivateAddresses`).
 */
export async function checkDane(
  domain: string,
  hosts: readonly { host: string; addresses: readonly string[] }[],
  dnssec: CheckDnssecOptions,
  connect: { port: number; allowPrivateAddresses: boolean; timeoutMs?: number | undefined; now: () => Date },
): Promise<DomainDane> {
  const query = dnssec.cache ? dnssec.cache.share(dnssec.query) : dnssec.query; // questions in flight shared (DnssecCache.share)
  const validator = new Validator({ query, anchors: dnssec.anchors, cache: dnssec.cache, ...(dnssec.now ? { now: dnssec.now } : {}) });
  const mxState = await validator.validate(domain, TYPE.MX);
  const result: DomainDane = { dane: 'none', mx: new Map(), findings: [] };
  const notApplicable = (): MxDane => ({ tlsa: { status: 'not-applicable', records: [], usable: false, rollover: 'none' }, addresses: new Map() });
  if (mxState.status !== 'secure') {
    for (const { host, addresses } of hosts) {
      const entry = notApplicable();
      for (const address of addresses) entry.addresses.set(address, { dane: 'not-applicable', detail: `the MX records of ${domain} are ${mxState.status}, not DNSSEC-secure: DANE does not apply (RFC 7672 §2.2)`, presentedTlsa: null });
      result.mx.set(host, entry);
    }
    return result;
  }
  let valid = 0;
  let broken = 0;
  for (const { host, addresses } of hosts) {
    // RFC 7672 §2.2.2: the host's addresses must be secure too (after any CNAME, weakest link).
    const [a, aaaa] = await Promise.all([validator.validate(host, TYPE.A), validator.validate(host, TYPE.AAAA)]);
    const addressState = weakest([a, aaaa]) as { status: DnssecStatus };
    if (addressState.status !== 'secure') {
      const entry = notApplicable();
      for (const address of addresses) entry.addresses.set(address, { dane: 'not-applicable', detail: `the addresses of ${host} are ${addressState.status}, not DNSSEC-secure: DANE does not apply (RFC 7672 §2.2.2)`, presentedTlsa: null });
      result.mx.set(host, entry);
      continue;
    }
    // RFC 7672 §2.2.3: when the host is a secure CNAME, the TLSA base domain is the final target;
    // without TLSA there, the original name's are used. Both names count for DANE-TA name checks.
    const target = [a, aaaa].find((r) => r.answer === 'records')?.links.at(-1)?.name ?? host;
    let base = target;
    let tlsaName = `_25._tcp.${target}`;
    let tlsaResult = await validator.validate(tlsaName, TYPE.TLSA);
    if (target !== host && tlsaResult.status === 'secure' && tlsaResult.answer !== 'records') {
      base = host;
      tlsaName = `_25._tcp.${host}`;
      tlsaResult = await validator.validate(tlsaName, TYPE.TLSA);
    }
    const referenceNames = base === host ? [host] : [base, host];
    const records: TlsaRecord[] = tlsaResult.answer === 'records' && tlsaResult.rrset ? tlsaResult.rrset.rdatas.map(parseTlsaRdata).filter((r): r is TlsaRecord => r !== undefined) : [];
    const usable = records.some(isUsable);
    const tlsa: MxTlsa = {
      status: tlsaResult.status === 'secure' && records.length === 0 ? 'none' : tlsaResult.status,
      records: records.map(formatTlsa),
      usable: tlsaResult.status === 'secure' && usable,
      rollover: rolloverScheme(records),
    };
    const entry: MxDane = { tlsa, addresses: new Map() };
    result.mx.set(host, entry);
    if (tlsaResult.status === 'bogus') {
      // RFC 7672 §2.2: DANE senders defer mail to an MX whose TLSA lookup fails validation.
      broken++;
      for (const address of addresses) entry.addresses.set(address, { dane: 'mismatch', detail: `the TLSA records at ${tlsaName} are bogus (${tlsaResult.reason.text}); DANE senders defer mail to this MX`, presentedTlsa: null });
      result.findings.push({ id: 'dane-tlsa-bogus', severity: 'critical', title: `The TLSA records of ${host} fail DNSSEC validation`, detail: `${tlsaResult.reason.text} Senders that use DANE hold mail for ${host} until this is fixed: re-sign the zone, or fix the DS at the registrar.` });
      continue;
    }
    if (tlsaResult.status !== 'secure' || records.length === 0) {
      for (const address of addresses) entry.addresses.set(address, { dane: 'not-applicable', detail: records.length === 0 ? `no TLSA records at ${tlsaName}` : `the TLSA records at ${tlsaName} are ${tlsaResult.status}, not secure: they are ignored (RFC 7672 §2.2)`, presentedTlsa: null });
      continue;
    }
    let allMatch = usable;
    for (const address of addresses) {
      if (!connect.allowPrivateAddresses && classifyAddress(address) !== 'public') {
        entry.addresses.set(address, { dane: 'not-applicable', detail: `${address} is not a public address; the probe does not connect there`, presentedTlsa: null });
        allMatch = false;
        continue;
      }
      if (!usable) {
        entry.addresses.set(address, { dane: 'no-usable-tlsa', detail: 'only unusable TLSA records (PKIX usages 0/1, or unknown selectors or matching types): DANE senders require TLS without authenticating it', presentedTlsa: null });
        continue;
      }
      const sent = await chainAsSent(address, connect.port, base, { ...(connect.timeoutMs ? { timeoutMs: connect.timeoutMs } : {}) });
      if (!sent.ok) {
        // RFC 7672 §2.2: with usable TLSA, a server without STARTTLS (or a failed handshake) gets no mail from DANE senders.
        const unreachable = sent.stage === 'connect';
        entry.addresses.set(address, { dane: unreachable ? 'not-applicable' : 'mismatch', detail: unreachable ? `${address} could not be reached: ${sent.detail}` : `DANE requires STARTTLS and a handshake: ${sent.detail}`, presentedTlsa: null });
        allMatch = false;
        if (!unreachable) broken++;
        continue;
      }
      const matched = matchTlsa(records, sent.chain, referenceNames, connect.now());
      const leaf = new X509Certificate(sent.chain[0] as Buffer);
      const presented = `3 1 1 ${createHash('sha256').update(leaf.publicKey.export({ type: 'spki', format: 'der' })).digest('hex')}`;
      entry.addresses.set(address, { dane: matched.outcome, detail: matched.detail, presentedTlsa: presented });
      if (matched.outcome !== 'match') {
        allMatch = false;
        broken++;
        result.findings.push({
          id: 'dane-mismatch',
          severity: 'critical',
          title: `No TLSA record of ${host} matches the certificate it presents`,
          detail: `${address}: ${matched.detail}. Senders that use DANE refuse to deliver to ${host}. Publish the TLSA record of the certificate now served, beside the current ones until every cache has it:\n  ${tlsaName}. IN TLSA ${presented}`,
        });
      }
    }
    if (allMatch && addresses.length > 0) valid++;
    if (usable && tlsa.rollover === 'none') {
      result.findings.push({ id: 'dane-no-rollover', severity: 'info', title: `The TLSA records of ${host} are not rollover-safe`, detail: `Publish the next key's record beside the current one ("3 1 1" twice), or the issuing CA's ("2 1 1") beside the "3 1 1" (RFC 7671 §8.1), so a certificate change does not stop DANE senders.` });
    }
  }
  result.dane = broken > 0 ? 'broken' : valid > 0 && valid === hosts.length ? 'valid' : valid > 0 ? 'partial' : 'none';
  return result;
}
