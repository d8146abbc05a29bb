/**
 * DMARC aggregate reports parsed: the fixtures of each reporter's shape, the deviations real
 * reporters send (table-driven), and refusals that leave no rows.
 */
import { describe, expect, it } from 'vitest';
import { MAX_HEADER_ELEMENTS, MAX_REPEATED_ELEMENTS, parseAggregateReport } from '../../src/reports/parse-aggregate.js';
import { reportIdentity } from '../../src/reports/identity.js';
import { unpackReportFile } from '../../src/reports/unpack.js';
import type { AggregateReport } from '../../src/reports/types.js';
import { fixture } from './helpers.js';

function parse(xml: string | Uint8Array): AggregateReport {
  const outcome = parseAggregateReport(xml);
  if (!outcome.ok) throw new Error(`${outcome.reason}: ${outcome.detail}`);
  return outcome.report;
}

const messages = (report: AggregateReport) => report.records.reduce((sum, r) => sum + r.count, 0);

describe('the fixtures, one per reporter shape', () => {
  it.each([
    ['src/google.com!spf-cloud-ec2.example!1795219200!1795305599.xml', { schema: '7489', orgName: 'google.com', reportId: '16839423185062874412', begin: 1795219200, end: 1795305599, records: 4, messages: 1212 }],
    ['src/protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml', { schema: '7489', orgName: 'Outlook.com', reportId: '3b1f0e2a4c8d4e6f9a7b5c3d1e0f2a4b', begin: 1795219200, end: 1795305600, records: 6, messages: 848 }],
    ['src/yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml', { schema: '7489', orgName: 'Yahoo', reportId: '1795219362.441927', begin: 1795132800, end: 1795219199, records: 1, messages: 100 }],
    ['src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml', { schema: '9990', orgName: 'GMX', reportId: 'b7e1c2d4a9f3@gmx.net', begin: 1795305600, end: 1795391999, records: 1, messages: 3 }],
  ])('%s', (file, expected) => {
    const report = parse(fixture(file));
    expect({
      schema: report.schema,
      orgName: report.reporter.orgName,
      reportId: report.reportId,
      begin: report.dateRange.begin,
      end: report.dateRange.end,
      records: report.records.length,
      messages: messages(report),
    }).toEqual(expected);
    expect(report.policyPublished.domain).toBe('spf-cloud-ec2.example');
  });

  it('reads a Microsoft record whole: envelope_to, envelope_from, IPv6 in canonical form, scope', () => {
    const report = parse(fixture('src/protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml'));
    expect(report.records[3]).toEqual({
      sourceIp: '2001:db8:e5::10',
      count: 3,
      disposition: 'none',
      dkimResult: 'pass',
      spfResult: 'pass',
      headerFrom: 'spf-cloud-ec2.example',
      envelopeFrom: 'bounce.spf-cloud-ec2.example',
      envelopeTo: 'outlook.com',
      auth: { dkim: [{ domain: 'spf-cloud-ec2.example', selector: 'esp1', result: 'pass', humanResult: null }], spf: [{ domain: 'bounce.spf-cloud-ec2.example', scope: 'mfrom', result: 'pass', humanResult: null }] },
      reasons: [],
    });
  });

  it('reads the RFC 9990 fields: namespace, generator, np, testing, discovery_method, disposition pass, human_result, extensions skipped', () => {
    const report = parse(fixture('src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml'));
    expect(report.namespace).toBe('urn:ietf:params:xml:ns:dmarc-2.0');
    expect(report.reporter.generator).toBe('GMX DMARC 2.3');
    expect(report.policyPublished).toMatchObject({ np: 'reject', testing: 'n', discoveryMethod: 'treewalk', pct: null });
    expect(report.records[0]!.disposition).toBe('pass');
    expect(report.records[0]!.auth.spf[0]!.humanResult).toBe('sender 198.51.100.130 permitted');
  });

  it('reads the Google ARC override and the empty selector', () => {
    const report = parse(fixture('src/google.com!spf-cloud-ec2.example!1795219200!1795305599.xml'));
    const forwarded = report.records.find((r) => r.sourceIp === '209.85.220.41')!;
    expect(forwarded.reasons).toEqual([{ type: 'local_policy', comment: 'arc=pass as[2].d=google.com as[2].s=arc-20240605 remote-ip[2]=198.51.100.130' }]);
    expect(forwarded.auth.dkim[0]!.selector).toBeNull();
    expect(forwarded.envelopeFrom).toBeNull();
  });

  it('the same report compressed or not has one identity; another day of the same id does not', () => {
    const raw = parse(fixture('src/google.com!spf-cloud-ec2.example!1795219200!1795305599.xml'));
    const unpacked = unpackReportFile(fixture('google.com!spf-cloud-ec2.example!1795219200!1795305599.zip'));
    const zipped = parse(unpacked.ok ? unpacked.documents[0]!.bytes : new Uint8Array());
    expect(reportIdentity(zipped)).toBe(reportIdentity(raw));
    const nextDay = { ...raw, dateRange: { begin: raw.dateRange.begin + 86400, end: raw.dateRange.end + 86400 } };
    expect(reportIdentity(nextDay)).not.toBe(reportIdentity(raw));
    expect(reportIdentity(raw, { reporter: 'google.com' })).not.toBe(reportIdentity(raw));
    expect(reportIdentity(raw)).toMatch(/^[0-9a-f]{64}$/);
  });
});

/** A minimal report around `records` (and optional header pieces). */
function report({ records = RECORD, metadata = METADATA, policy = POLICY, root = '<feedback>' } = {}): string {
  return `<?xml version="1.0"?>${root}${metadata}${policy}${records}</feedback>`;
}
const METADATA = '<report_metadata><org_name>r.example</org_name><email>d@r.example</email><report_id>id-1</report_id><date_range><begin>1795219200</begin><end>1795305599</end></date_range></report_metadata>';
const POLICY = '<policy_published><domain>example.com</domain><p>none</p></policy_published>';
const RECORD = record();
function record({ ip = '192.0.2.1', count = '7', evaluated = '<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf>', identifiers = '<identifiers><header_from>example.com</header_from></identifiers>', auth = '' } = {}): string {
  return `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated>${evaluated}</policy_evaluated></row>${identifiers}<auth_results>${auth}</auth_results></record>`;
}

describe('deviations real reporters send, tolerated', () => {
  it.each([
    ['mixed-case words', record({ evaluated: '<disposition>None</disposition><dkim>PASS</dkim><spf>Fail</spf>' }), (r: AggregateReport) => [r.records[0]!.disposition, r.records[0]!.dkimResult, r.records[0]!.spfResult], ['none', 'pass', 'fail']],
    ['whitespace around values', record({ ip: '\n  192.0.2.1 \n', count: ' 7 ' }), (r: AggregateReport) => [r.records[0]!.sourceIp, r.records[0]!.count], ['192.0.2.1', 7]],
    ['IPv6 upper case, and IPv4-mapped', record({ ip: '2001:DB8::A' }) + record({ ip: '::ffff:192.0.2.9' }), (r: AggregateReport) => r.records.map((x) => x.sourceIp), ['2001:db8::a', '192.0.2.9']],
    ['identities instead of identifiers', record({ identifiers: '<identities><header_from>Example.COM</header_from></identities>' }), (r: AggregateReport) => r.records[0]!.headerFrom, 'example.com'],
    [
      'several dkim and spf results, no selector, no scope, hardfail',
      record({ auth: '<dkim><domain>example.com</domain><result>fail</result></dkim><dkim><domain>list.example</domain><selector>s</selector><result>pass</result></dkim><spf><domain>example.com</domain><result>hardfail</result></spf><spf><scope>helo</scope><result>pass</result></spf>' }),
      (r: AggregateReport) => r.records[0]!.auth,
      {
        dkim: [
          { domain: 'example.com', selector: null, result: 'fail', humanResult: null },
          { domain: 'list.example', selector: 's', result: 'pass', humanResult: null },
        ],
        spf: [
          { domain: 'example.com', scope: 'mfrom', result: 'fail', humanResult: null },
          { domain: null, scope: 'helo', result: 'pass', humanResult: null },
        ],
      },
    ],
    ['several reasons, one empty, one text only', record({ evaluated: '<disposition>none</disposition><dkim>fail</dkim><spf>fail</spf><reason><type>Mailing_List</type></reason><reason><type></type><comment></comment></reason><reason>looks forwarded</reason>' }), (r: AggregateReport) => r.records[0]!.reasons, [{ type: 'mailing_list', comment: null }, { type: '', comment: null }, { type: 'other', comment: 'looks forwarded' }]],
    ['unknown extra elements anywhere', record().replace('<row>', '<row><extra>1</extra>'), (r: AggregateReport) => r.records.length, 1],
    ['a 20-digit report id and a selector of digits stay strings', record({ auth: '<dkim><domain>example.com</domain><selector>20230601</selector><result>pass</result></dkim>' }), (r: AggregateReport) => r.records[0]!.auth.dkim[0]!.selector, '20230601'],
  ])('%s', (_, records, pick, expected) => {
    expect(pick(parse(report({ records })))).toEqual(expected);
  });

  it('a record with a bad address, count or header_from is dropped with a warning; the report is kept', () => {
    const outcome = parseAggregateReport(report({ records: record() + record({ ip: 'not-an-ip' }) + record({ count: '-3' }) + record({ identifiers: '' }) }));
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.report.records.length).toBe(1);
    expect(outcome.warnings.join('\n')).toMatch(/record 2: <source_ip> "not-an-ip"[\s\S]*record 3: <count>[\s\S]*record 4: no <header_from>/);
  });

  it('a missing policy_evaluated result is never a pass', () => {
    const r = parse(report({ records: record({ evaluated: '<disposition>none</disposition>' }) }));
    expect([r.records[0]!.dkimResult, r.records[0]!.spfResult]).toEqual(['fail', 'fail']);
  });

  it('a UTF-16 report with a BOM, through unpack and parse', () => {
    const text = fixture('src/yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml').toString('utf8').replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const unpacked = unpackReportFile(bytes);
    expect(unpacked.ok && unpacked.documents[0]!.kind).toBe('aggregate');
    const outcome = parseAggregateReport(bytes);
    expect(outcome.ok && [outcome.report.reporter.orgName, outcome.report.records[0]!.count]).toEqual(['Yahoo', 100]);
  });

  it('a stray unclosed <xs:schema> tag (parsedmarc#18) is removed with a warning', () => {
    const outcome = parseAggregateReport(report({ root: '<feedback><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">' }));
    expect(outcome.ok && outcome.report.records.length).toBe(1);
    expect(outcome.ok && outcome.warnings).toContain('a stray <xs:schema> tag was removed');
  });

  it('begin written 1538204542.0, an empty org_name, no version', () => {
    const outcome = parseAggregateReport(report({ metadata: METADATA.replace('1795219200', '1795219200.0').replace('r.example</org_name>', '</org_name>') }));
    expect(outcome.ok && [outcome.report.dateRange.begin, outcome.report.reporter.orgName, outcome.report.version]).toEqual([1795219200, '', null]);
    expect(outcome.ok && outcome.warnings).toContain('<org_name> is empty or missing');
  });
});

describe('refused whole, with a reason and no rows', () => {
  it.each([
    ['an external entity', fixture('src/xxe-file.xml'), 'doctype'],
    ['billion laughs', fixture('src/billion-laughs.xml'), 'doctype'],
    ['a truncated report', report().slice(0, -40), 'malformed'],
    ['another root element', '<html><body/></html>', 'not-a-report'],
    ['no report_metadata', report({ metadata: '' }), 'missing-field'],
    ['no report_id', report({ metadata: METADATA.replace('<report_id>id-1</report_id>', '') }), 'missing-field'],
    ['no date_range', report({ metadata: METADATA.replace(/<date_range>.*<\/date_range>/, '') }), 'missing-field'],
    ['a date that is not epoch seconds', report({ metadata: METADATA.replace('1795219200', '2026-11-21') }), 'invalid-field'],
    ['a range that ends before it begins', report({ metadata: METADATA.replace('1795305599', '1795000000') }), 'invalid-field'],
    ['no policy domain', report({ policy: '<policy_published><p>none</p></policy_published>' }), 'missing-field'],
    ['an undefined entity', report({ records: record({ ip: '&ip;' }) }), 'entity'],
  ])('%s', (_, input, reason) => {
    const outcome = parseAggregateReport(input);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.reason).toBe(reason);
    expect(JSON.stringify(outcome)).not.toMatch(/root:|records/);
  });

  it('a period that ends in the future, when now is given', () => {
    expect(parseAggregateReport(report(), { now: new Date('2026-11-20T00:00:00Z') })).toMatchObject({ ok: false, reason: 'invalid-field' });
    expect(parseAggregateReport(report(), { now: new Date('2026-11-27T00:00:00Z') }).ok).toBe(true);
  });

  it('every truncation of a real report is refused: a cut file never adds rows', () => {
    const full = fixture('src/protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml').toString('utf8');
    const end = full.lastIndexOf('</feedback>');
    for (let cut = 0; cut < end; cut += 7) {
      const outcome = parseAggregateReport(full.slice(0, cut));
      expect(outcome.ok, `cut at ${cut}`).toBe(false);
    }
  });

  it('more records than the cap', () => {
    const outcome = parseAggregateReport(report({ records: record().repeat(11) }), { maxRecords: 10 });
    expect(outcome).toMatchObject({ ok: false, reason: 'too-many-records' });
  });
});

describe('elements a report does not hold are not kept (issue 38 item 5)', () => {
  const head = '<feedback><report_metadata><org_name>x</org_name><email>a@x.example</email><report_id>r</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range>';
  const policy = '<policy_published><domain>example.com</domain><p>none</p></policy_published>';
  const record = '<record><row><source_ip>192.0.2.1</source_ip><count>2</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>example.com</header_from></identifiers></record>';

  it('100,000 unknown elements beside the records leave the report as it is', () => {
    const outcome = parseAggregateReport(`${head}</report_metadata>${policy}${'<junk/>'.repeat(100_000)}${record}</feedback>`);
    expect(outcome.ok && outcome.report.records).toHaveLength(1);
  });

  it('a known element repeated past MAX_REPEATED_ELEMENTS is dropped with a warning; the report is read', () => {
    const outcome = parseAggregateReport(`${head}${'<error>e</error>'.repeat(MAX_HEADER_ELEMENTS + 10)}</report_metadata>${policy}${record}</feedback>`);
    expect(outcome.ok).toBe(true);
    expect(outcome.ok && outcome.report.errors).toHaveLength(MAX_REPEATED_ELEMENTS);
    expect(outcome.ok && outcome.warnings.join()).toMatch(/elements over the caps/);
  });
});
