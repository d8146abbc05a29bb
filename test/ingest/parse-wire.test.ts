/**
 * The parser process's wire form (src/ingest/parse-files.ts `wireForm`, `storedFormFromWire`): made in
 * one pass as the report is parsed, it must give the storing process what `formStored` and
 * `contentDigest` give (the same rows, digest, document, and the same content digest, so duplicate
 * detection is unchanged: issue 38 item 10), and a wire form that is not one refuses its document.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAggregateReport, parseTlsReport, unpackReportFile, type AggregateReport, type TlsReport } from '@spoof-checker/engine';
import { contentDigest, formStored, storedFormFromWire, wireForm, type StoredWire } from '../../src/ingest/parse-files.js';
import { ReportParserPool } from '../../src/ingest/parse-pool.js';
import { fixture, REPORTS_DIR, YAHOO_GZ } from './helpers.js';

/** Every report of every fixture file the engine parses (both schemas, zip, gzip, TLS-RPT). */
function fixtureReports(): { name: string; report: AggregateReport | TlsReport }[] {
  const out: { name: string; report: AggregateReport | TlsReport }[] = [];
  for (const name of readdirSync(REPORTS_DIR).filter((n) => n !== 'src')) {
    const unpacked = unpackReportFile(fixture(name), { filename: name });
    if (!unpacked.ok) continue;
    for (const document of unpacked.documents) {
      const parsed = document.kind === 'aggregate' ? parseAggregateReport(document.bytes) : parseTlsReport(document.bytes);
      if (parsed.ok) out.push({ name: `${name}/${document.name}`, report: parsed.report });
    }
  }
  return out;
}

/** A report whose strings hold what JSON escapes, and the key text the digest's text is put together around. */
const ODD_REPORT = `<?xml version="1.0"?>
<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0"><version>2.0</version>
 <report_metadata><org_name>Odd "quoted" \\ Org</org_name><email>a@odd.example</email><report_id>&lt;id,"envelopeFrom":1&gt;</report_id>
  <date_range><begin>1795132800</begin><end>1795219199</end></date_range></report_metadata>
 <policy_published><domain>Odd.Example.</domain><p>reject</p><testing>n</testing></policy_published>
 <record><row><source_ip>2001:DB8::1</source_ip><count>3</count><policy_evaluated><disposition>reject</disposition><dkim>fail</dkim><spf>fail</spf>
   <reason><type>local_policy</type><comment>,"envelopeFrom":"x" and ,"headerFrom": and &#x1F600; and tab&#9;</comment></reason></policy_evaluated></row>
  <identifiers><header_from>odd.example</header_from></identifiers>
  <auth_results><dkim><domain>odd.example</domain><selector>s1</selector><result>fail</result><human_result>"},{"</human_result></dkim><spf><domain>odd.example</domain><result>hardfail</result></spf></auth_results></record>
 <record><row><source_ip>::ffff:192.0.2.7</source_ip><count>1</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
  <identifiers><header_from>odd.example</header_from><envelope_from>,"envelopeFrom":</envelope_from><envelope_to>to.example</envelope_to></identifiers>
  <auth_results><spf><domain>odd.example</domain><scope>helo</scope><result>pass</result></spf></auth_results></record>
</feedback>`;

function oddReport(): AggregateReport {
  const parsed = parseAggregateReport(ODD_REPORT);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.report;
}

describe('the wire form', () => {
  const cases = [...fixtureReports(), { name: 'odd strings, IPv6, reasons, no envelope', report: oddReport() }];

  it('covers both kinds', () => {
    expect(cases.some((c) => c.report.kind === 'aggregate')).toBe(true);
    expect(cases.some((c) => c.report.kind === 'tls')).toBe(true);
    expect(cases.length).toBeGreaterThan(4);
  });

  it.each(cases)('$name: the stored form and the content digest are those formStored and contentDigest make', ({ report }) => {
    const wire = wireForm(report);
    const formed = formStored(report);
    expect(wire.report).toEqual(formed.report);
    expect(storedFormFromWire(wire.stored)).toEqual(formed.stored);
    // Duplicate detection reads this digest: the same value as the text of the whole report gives.
    expect(wire.contentDigest).toBe(contentDigest(report));
  });

  it('a record of another shape (keys in another order) still has the digest of its JSON text', () => {
    const report = oddReport();
    const [first, ...rest] = report.records;
    const { sourceIp, ...others } = first!;
    const reordered: AggregateReport = { ...report, records: [{ ...others, sourceIp } as typeof first & object, ...rest] };
    expect(wireForm(reordered).contentDigest).toBe(contentDigest(reordered));
    // …and a report whose records are not its last key.
    const { records, ...head } = report;
    const recordsFirst = { records, ...head } as AggregateReport;
    expect(wireForm(recordsFirst).contentDigest).toBe(contentDigest(recordsFirst));
    expect(contentDigest(recordsFirst)).not.toBe(contentDigest(report));
  });
});

describe('a wire form that is not one refuses its document', () => {
  const good = (): StoredWire => wireForm(oddReport()).stored;
  const cases: { name: string; wire: unknown }[] = [
    { name: 'not an object', wire: 'text' },
    { name: 'null', wire: null },
    { name: 'the document not text', wire: { ...good(), document: 1 } },
    { name: 'a column missing', wire: { ...good(), detail: undefined } },
    { name: 'a column not a list', wire: { ...good(), count: 'many' } },
    { name: 'columns of different lengths', wire: { ...good(), sourceIp: ['192.0.2.1'] } },
    { name: 'a count that is text', wire: { ...good(), count: ['3', '1'] } },
    { name: 'an alignment that is not a boolean', wire: { ...good(), dkimAligned: [1, 0] } },
    { name: 'a detail that is not text', wire: { ...good(), detail: [{}, {}] } },
    { name: 'the digest not JSON', wire: { ...good(), digest: 'not json' } },
    { name: 'the digest not a list', wire: { ...good(), digest: '{}' } },
    { name: 'a digest entry without its counts', wire: { ...good(), digest: JSON.stringify([{ day: '2026-11-19', source: '192.0.2.7' }]) } },
    { name: 'the digest not text', wire: { ...good(), digest: [] } },
    { name: 'a digest entry whose list is not a list', wire: { ...good(), digest: JSON.stringify([{ ...(JSON.parse(good().digest) as object[])[0], selectors: 'x' }]) } },
    { name: 'a digest entry whose count is text', wire: { ...good(), digest: JSON.stringify([{ ...(JSON.parse(good().digest) as object[])[0], messages: '4' }]) } },
  ];

  it('the good one is taken', () => {
    expect(storedFormFromWire(good())?.records).toHaveLength(2);
  });

  it.each(cases)('$name', ({ wire }) => {
    expect(storedFormFromWire(wire)).toBeUndefined();
  });
});

describe("the parser processes' CPU", () => {
  it('each reply says the CPU its process spent; the pool adds them up', async () => {
    const pool = new ReportParserPool({ workers: 1 });
    try {
      const files = [{ bytes: fixture(YAHOO_GZ), fileName: YAHOO_GZ }];
      await pool.parse(files);
      await pool.parse(files);
      expect(pool.counters.replies).toBe(2);
      expect(Number.isFinite(pool.counters.cpuMicros)).toBe(true);
      expect(pool.counters.cpuMicros).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
