/**
 * The wire form's content digest (src/ingest/parse-files.ts `wireForm`) is put together from pieces:
 * it must be sha256 of `JSON.stringify(report)` whatever the values hold (issue 38 item 10: duplicate
 * detection reads it), including values the parser does not make today.
 */
import { describe, expect, it } from 'vitest';
import { parseAggregateReport, type AggregateRecord, type AggregateReport } from '@spoof-checker/engine';
import { contentDigest, formStored, storedFormFromWire, wireForm } from '../../src/ingest/parse-files.js';
import { parsedFileFromWire } from '../../src/ingest/parse-pool.js';
import type { WireParsedFile } from '../../src/ingest/parse-worker.js';

const REPORT = `<?xml version="1.0"?>
<feedback><report_metadata><org_name>Org</org_name><email>a@org.example</email><report_id>r1</report_id>
  <date_range><begin>1795132800</begin><end>1795219199</end></date_range></report_metadata>
 <policy_published><domain>org.example</domain><p>reject</p></policy_published>
 <record><row><source_ip>192.0.2.1</source_ip><count>3</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
  <identifiers><header_from>org.example</header_from><envelope_from>org.example</envelope_from></identifiers>
  <auth_results><spf><domain>org.example</domain><result>pass</result></spf></auth_results></record>
</feedback>`;

function report(): AggregateReport {
  const parsed = parseAggregateReport(REPORT);
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.report;
}

/** The report with its one record changed by `change`. */
function withRecord(change: (record: AggregateRecord) => void): AggregateReport {
  const r = report();
  const record = { ...r.records[0]! };
  change(record);
  return { ...r, records: [record, { ...r.records[0]! }] };
}

const hostile = (s: string) => `${s} "\\ \u2028 \ud800 \u0000 ,"envelopeFrom":"x","headerFrom":`;
const cases: { name: string; report: AggregateReport }[] = [
  { name: 'no records', report: { ...report(), records: [] } },
  { name: 'a count of -0', report: withRecord((r) => (r.count = -0)) },
  { name: 'a count past 2^53', report: withRecord((r) => (r.count = 2 ** 60)) },
  { name: 'a count of 1e21', report: withRecord((r) => (r.count = 1e21)) },
  { name: 'a fractional count', report: withRecord((r) => (r.count = 0.1 + 0.2)) },
  { name: 'a count NaN', report: withRecord((r) => (r.count = Number.NaN)) },
  { name: 'dkimResult undefined', report: withRecord((r) => ((r as Partial<AggregateRecord>).dkimResult = undefined)) },
  { name: 'dkimResult and spfResult undefined', report: withRecord((r) => ((r as Partial<AggregateRecord>).dkimResult = (r as Partial<AggregateRecord>).spfResult = undefined)) },
  { name: 'envelopeFrom undefined', report: withRecord((r) => ((r as Partial<AggregateRecord>).envelopeFrom = undefined)) },
  { name: 'sourceIp undefined', report: withRecord((r) => ((r as Partial<AggregateRecord>).sourceIp = undefined)) },
  { name: 'strings JSON escapes and key text', report: withRecord((r) => ((r.sourceIp = hostile('ip')), (r.headerFrom = hostile('from')), (r.disposition = hostile('d')), (r.envelopeFrom = hostile('e')), (r.dkimResult = hostile('k')))) },
  { name: 'an extra record key', report: withRecord((r) => ((r as AggregateRecord & { extra: string }).extra = 'x')) },
  { name: 'a head value undefined', report: { ...report(), version: undefined as unknown as null } },
  { name: 'a head string with escapes', report: { ...report(), reporter: { ...report().reporter, orgName: hostile('org') } } },
];

describe('the wire form of reports the parser does not make today', () => {
  it.each(cases)('$name: its content digest is that of JSON.stringify(report)', ({ report }) => {
    expect(wireForm(report).contentDigest).toBe(contentDigest(report));
  });

  it.each(cases.filter((c) => !/undefined|NaN/.test(c.name)))('$name: its stored form is formStored\'s', ({ report }) => {
    expect(storedFormFromWire(wireForm(report).stored)).toEqual(formStored(report).stored);
  });
});

describe("a parser's answer that is not a wire form is refused, never thrown (it is read in the IPC listener)", () => {
  const good = () => wireForm(report());
  const document = (outcome: unknown) => ({ name: 'r.xml', kind: 'aggregate', outcome });
  const cases: { name: string; file: unknown; refused: 'file' | 'document' }[] = [
    { name: 'no file', file: undefined, refused: 'file' },
    { name: 'a file of text', file: 'text', refused: 'file' },
    { name: 'documents not a list', file: { ok: true, documents: 'x' }, refused: 'file' },
    { name: 'a document that is null', file: { ok: true, documents: [null] }, refused: 'file' },
    { name: 'a refusal without its reason', file: { ok: false }, refused: 'file' },
    { name: 'a document without an outcome', file: { ok: true, documents: [{ name: 'r.xml', kind: 'aggregate' }] }, refused: 'document' },
    { name: 'a whole report missing', file: { ok: true, documents: [document({ ok: true, stored: null, warnings: [], contentDigest: 'x' })] }, refused: 'document' },
    { name: 'a whole report with a record that is null', file: { ok: true, documents: [document({ ok: true, report: { ...report(), records: [null] }, stored: null, warnings: [], contentDigest: 'x' })] }, refused: 'document' },
    { name: 'a stored form that is not one', file: { ok: true, documents: [document({ ok: true, report: good().report, stored: { document: 1 }, warnings: [], contentDigest: 'x' })] }, refused: 'document' },
  ];

  it.each(cases)('$name', ({ file, refused }) => {
    const parsed = parsedFileFromWire(file as WireParsedFile);
    if (refused === 'file') expect(parsed).toMatchObject({ ok: false, reason: 'parse-failed' });
    else expect(parsed).toMatchObject({ ok: true, documents: [{ outcome: { ok: false, reason: 'parse-failed' } }] });
  });

  it('a good answer is taken', () => {
    const { report: head, stored, contentDigest: digest } = good();
    const parsed = parsedFileFromWire({ ok: true, documents: [{ name: 'r.xml', kind: 'aggregate', outcome: { ok: true, report: head, stored, warnings: [], contentDigest: digest } }] });
    expect(parsed).toMatchObject({ ok: true, documents: [{ outcome: { ok: true, contentDigest: digest, stored: { records: [{ sourceIp: '192.0.2.1' }] } } }] });
  });
});
