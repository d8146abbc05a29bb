/**
 * Reports made for the summaries' tests: a DMARC aggregate report (RFC 7489 Appendix C) of many
 * records, each from its own address, gzipped as a reporter sends it.
 */
import { gzipSync } from 'node:zlib';

/** Options of {@link floodReport}. */
export interface FloodOptions {
  domain: string;
  /** Records, each from its own address (10.x.y.z). */
  records: number;
  /** The period's first second (epoch seconds, UTC); the period is that day. */
  begin: number;
  reportId?: string;
  orgName?: string;
  /** Every record passes aligned DKIM (default: every record fails SPF and DKIM, as a spoofer's would). */
  pass?: boolean;
  /** Messages per record (default 1). */
  count?: number;
  /** Every tenth record carries a failing signature of the domain under selector `s<n>` (default true). */
  signatures?: boolean;
}

/** The XML of a report of `records` records, each from its own address. */
export function floodXml(o: FloodOptions): Buffer {
  const parts: string[] = [];
  const result = o.pass ? 'pass' : 'fail';
  for (let i = 0; i < o.records; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const auth = o.signatures !== false && i % 10 === 0 ? `<auth_results><dkim><domain>${o.domain}</domain><selector>s${i % 50}</selector><result>${result}</result></dkim></auth_results>` : '';
    parts.push(
      `<record><row><source_ip>${ip}</source_ip><count>${o.count ?? 1}</count><policy_evaluated><disposition>none</disposition><dkim>${result}</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>${o.domain}</header_from></identifiers>${auth}</record>`,
    );
  }
  return Buffer.from(
    `<?xml version="1.0"?><feedback><report_metadata><org_name>${o.orgName ?? 'flood.example'}</org_name><email>dmarc@flood.example</email><report_id>${o.reportId ?? 'flood'}</report_id>` +
      `<date_range><begin>${o.begin}</begin><end>${o.begin + 86_399}</end></date_range></report_metadata><policy_published><domain>${o.domain}</domain><p>none</p></policy_published>${parts.join('')}</feedback>`,
  );
}

/** {@link floodXml}, gzipped. */
export function floodReport(o: FloodOptions): Buffer {
  return gzipSync(floodXml(o));
}
