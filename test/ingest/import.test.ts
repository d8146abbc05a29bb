/**
 * `spoof-checker reports import` end to end on SQLite: report files of several reporters (zip, gzip,
 * plain XML, namespaced 2.0, TLS-RPT JSON), messages with the report attached (base64, single-part
 * body, forwarded inside another message), an mbox, standard input; a duplicate counted once, a
 * truncated file and an XXE file refused with their reason and no row, and the other organisation
 * seeing nothing.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeSpf, loadZoneDirectory, parseAggregateReport, parseTlsReport, shippedRanges, summariseReports, unpackReportFile, ZoneResolver } from '@spoof-checker/engine';
import { main } from '../../src/cli/main.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { captureIo, FIXTURE_ZONES } from '../cli/helpers.js';
import { createTestDatabase } from '../setup/require-services.js';
import { openPostgresStores } from '../../src/store/postgres.js';
import { fixture, forwardedMessage, GOOGLE_ZIP, mbox, noReportMessage, OUTLOOK_GZ, REPORT_DOMAIN, REPORT_SOURCES, REPORTS_DIR, reportMessage, singlePartMessage, TLS_GZ, YAHOO_GZ } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'reports-import-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function run(args: string[], stdin = '') {
  const { io, stdout, stderr } = captureIo(stdin);
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

async function storeCounts(data: string, org: string) {
  const { stores } = await openSqliteStores(data, { pruneAutomatically: false });
  try {
    return {
      counts: await stores.reports.counts(org, null, null),
      list: await stores.reports.list(org, { page: 1, limit: 100 }),
      rejections: await stores.reports.rejections(org, { page: 1, limit: 100 }),
    };
  } finally {
    await stores.close();
  }
}

describe('reports import', () => {
  const data = join(work, 'data');
  const inbox = join(work, 'inbox');

  beforeAll(() => {
    mkdirSync(inbox);
    for (const name of [GOOGLE_ZIP, YAHOO_GZ, OUTLOOK_GZ, TLS_GZ, 'mail.example.net-two-days.zip', 'mimecast-trailing-crlf.xml.gz']) copyFileSync(join(REPORTS_DIR, name), join(inbox, name));
    copyFileSync(join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml'), join(inbox, 'gmx.xml'));
  });

  it('imports a directory of report files of several reporters, schemas and containers', async () => {
    const result = await run(['reports', 'import', inbox, '--data', data]);
    // mimecast-trailing-crlf.xml.gz is Yahoo's report again (gzip with a trailing CRLF): a duplicate.
    expect(result.err).toMatch(/7 input\(s\): 7 report\(s\) stored, 1 duplicate\(s\), 0 refused/);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/stored .*gmx\.xml: aggregate report .* for spf-cloud-ec2\.example/);
    expect(result.out).toMatch(/stored .*json\.gz: TLS report .* for spf-cloud-ec2\.example/);
    const { counts, list } = await storeCounts(data, 'default');
    expect(counts).toMatchObject({ aggregate: 6, tls: 1, duplicates: 1 });
    // Nothing was authenticated: files carry no message.
    expect(list.items.every((r) => r.reporter === 'unauthenticated' && r.origin.channel === 'file')).toBe(true);
  });

  it('a report imported again is a duplicate: counted once, no row added', async () => {
    const again = await run(['reports', 'import', join(inbox, YAHOO_GZ), '--data', data]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^duplicate .*yahoo/m);
    // The same report, uncompressed: other bytes, same report.
    const plain = await run(['reports', 'import', join(REPORT_SOURCES, 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml'), '--data', data]);
    expect(plain.out).toMatch(/^duplicate /m);
    const { counts } = await storeCounts(data, 'default');
    expect(counts).toMatchObject({ aggregate: 6, duplicates: 3 });
  });

  it('a truncated gzip and an XXE file are refused with their reason, and add no row', async () => {
    const before = (await storeCounts(data, 'default')).counts;
    const truncated = await run(['reports', 'import', join(REPORTS_DIR, 'truncated.xml.gz'), '--data', data]);
    expect(truncated.code).toBe(1);
    expect(truncated.out).toMatch(/^refused .*truncated\.xml\.gz.*: truncated: /m);
    const xxe = await run(['reports', 'import', join(REPORT_SOURCES, 'xxe-file.xml'), join(REPORT_SOURCES, 'billion-laughs.xml'), '--data', data]);
    expect(xxe.code).toBe(1);
    expect(xxe.out).toMatch(/^refused .*xxe-file\.xml.*: doctype: /m);
    expect(xxe.out).toMatch(/^refused .*billion-laughs\.xml.*: doctype: /m);
    expect(xxe.out).not.toContain('root:');
    const after = await storeCounts(data, 'default');
    expect(after.counts).toEqual(before);
    expect(after.rejections.items.map((r) => r.reason).sort()).toEqual(['doctype', 'doctype', 'truncated']);
  });

  it('messages: a base64 attachment, a single-part gzip body, a forwarded message, a message without a report, in .eml, .mbox and on stdin', async () => {
    const own = join(work, 'messages');
    const ownData = join(work, 'data-messages');
    mkdirSync(own);
    const google = reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' });
    writeFileSync(join(own, 'google.eml'), google);
    writeFileSync(join(own, 'mimecast.eml'), singlePartMessage(fixture('mimecast-trailing-crlf.xml.gz'), 'report.xml.gz'));
    writeFileSync(join(own, 'forwarded.eml'), forwardedMessage(reportMessage({ from: 'dmarc@yahoo.com', attachment: fixture(YAHOO_GZ), fileName: YAHOO_GZ, contentType: 'application/gzip' })));
    writeFileSync(join(own, 'box.mbox'), mbox([noReportMessage(), reportMessage({ from: 'dmarcreport@microsoft.com', attachment: fixture(OUTLOOK_GZ), fileName: OUTLOOK_GZ, contentType: 'application/gzip' }), google]));
    const result = await run(['reports', 'import', own, '--data', ownData]);
    // box.mbox: no report, Outlook, Google; forwarded.eml: Yahoo; google.eml: Google again; mimecast.eml: Yahoo again.
    expect(result.err).toMatch(/6 input\(s\): 3 report\(s\) stored, 2 duplicate\(s\), 0 refused, 1 message\(s\) without a report/);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^no report .*box\.mbox#1/m);
    const stdin = await run(['reports', 'import', '-', '--data', ownData, '--org', 'stdin-org'], google.toString('latin1'));
    expect(stdin.out).toMatch(/^stored +-: aggregate report 16839423185062874412 for spf-cloud-ec2\.example \(4 records, \d+ messages\)/m);
    const { list } = await storeCounts(ownData, 'default');
    const fromMail = list.items.find((r) => r.orgName === 'google.com');
    expect(fromMail?.origin).toMatchObject({ channel: 'file', sender: 'noreply-dmarc-support@google.com', messageId: '<r1@google.com>', authenticatedDomain: null });
  });

  it('a report of a period in the future is refused (future-date), not stored', async () => {
    const future = Math.floor(Date.now() / 1000) + 10 * 86_400;
    const xml = readFileSync(join(REPORT_SOURCES, 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml'), 'utf8')
      .replace(/<begin>[\d.]+<\/begin>/, `<begin>${future}</begin>`)
      .replace(/<end>[\d.]+<\/end>/, `<end>${future + 86_399}</end>`)
      .replace(/<report_id>[^<]+<\/report_id>/, '<report_id>from-the-future</report_id>');
    const file = join(work, 'future.xml');
    writeFileSync(file, xml);
    const result = await run(['reports', 'import', file, '--data', data]);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/^refused .*future\.xml.*: future-date: /m);
  });

  it('tenancy: another organisation sees nothing of what one imported', async () => {
    const { counts, list, rejections } = await storeCounts(data, 'other-org');
    expect(counts).toEqual({ aggregate: 0, tls: 0, unauthenticated: 0, untrusted: 0, duplicates: 0, messages: 0 });
    expect(list.total).toBe(0);
    expect(rejections.total).toBe(0);
    expect((await storeCounts(data, 'default')).list.items.every((r) => r.domain === REPORT_DOMAIN)).toBe(true);
  });

  it('usage errors exit 2 and say what to do', async () => {
    expect((await run(['reports', 'import', '--data', data])).code).toBe(2);
    const both = await run(['reports', 'import', inbox, '--data', data, '--database', 'postgresql://x@127.0.0.1/db']);
    expect(both.code).toBe(2);
    expect(both.err).toContain('give --data or --database, not both');
    expect((await run(['reports', 'import', inbox, '--data', data, '--org', 'bad org'])).err).toContain('--org must be an organisation id');
  });
});

/** The end of the window of the show tests (the fixtures' reports end on 2026-11-23). */
const UNTIL = '2026-11-25';

describe('reports show', () => {
  const data = join(work, 'data-show');
  const html = join(work, 'report.html');
  const names = [GOOGLE_ZIP, YAHOO_GZ, OUTLOOK_GZ, TLS_GZ, 'mail.example.net-two-days.zip'];

  beforeAll(async () => {
    const result = await run(['reports', 'import', ...names.map((n) => join(REPORTS_DIR, n)), join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml'), join(REPORT_SOURCES, 'google.com!spf-cloud-ec2.example!2026-11-21.json'), '--data', data]);
    expect(result.code).toBe(0);
  });

  it('--json gives what the engine computes from the same reports parsed directly: senders, readiness, SPF tightening, TLS', async () => {
    // The fixtures are dated 2026-11-19 to 2026-11-23: the window is pinned, whatever today is.
    const now = new Date(`${UNTIL}T23:59:59Z`);
    const shown = await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--zones', FIXTURE_ZONES, '--json', '--until', UNTIL]);
    expect(shown.code).toBe(0);
    const summary = JSON.parse(shown.out);
    // The reference: the engine over the parsed files, no store in between.
    const aggregate = [];
    const tls = [];
    for (const name of [...names.map((n) => join(REPORTS_DIR, n)), join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml'), join(REPORT_SOURCES, 'google.com!spf-cloud-ec2.example!2026-11-21.json')]) {
      const unpacked = unpackReportFile(readFileSync(name));
      if (!unpacked.ok) throw new Error(unpacked.detail);
      for (const doc of unpacked.documents) {
        const parsed = doc.kind === 'aggregate' ? parseAggregateReport(doc.bytes) : parseTlsReport(doc.bytes);
        if (!parsed.ok) throw new Error(parsed.detail);
        if (parsed.report.kind === 'aggregate') aggregate.push(parsed.report);
        else tls.push(parsed.report);
      }
    }
    const spf = await analyzeSpf(REPORT_DOMAIN, new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES)));
    const expected = summariseReports({ domain: REPORT_DOMAIN, days: 30, now, aggregate, tls, spf, ranges: shippedRanges() });
    expect(summary.reports).toBe(aggregate.length);
    expect(summary.messages).toBe(expected.messages);
    expect(summary.senders.map((s: { source: string; messages: number; dmarcPass: number; class: string }) => [s.source, s.messages, s.dmarcPass, s.class])).toEqual(
      expected.senders.map((s) => [s.source, s.messages, s.dmarcPass, s.class]),
    );
    expect(summary.readiness).toEqual(expected.readiness);
    expect(summary.spfTighten).toEqual(expected.spfTighten);
    expect(summary.spfTighten.record).toMatch(/^v=spf1 /);
    expect(summary.tls).toEqual(expected.tls);
    expect(summary.selectors).toEqual(expected.selectors);
    // With DNS, every sender's reverse name was asked (the fixture zones have no PTR records: none).
    expect(summary.senders.every((s: { reverseName: { status: string } | null }) => s.reverseName !== null && ['none', 'found', 'error', 'skipped'].includes(s.reverseName.status))).toBe(true);
    expect(summary).toMatchObject({ domain: REPORT_DOMAIN, days: 30, duplicates: 0, unauthenticatedReports: aggregate.length, spf: { status: 'found' } });
  });

  it('prints the answer in words and writes one self-contained page with the daily chart', async () => {
    const shown = await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--zones', FIXTURE_ZONES, '--html', html, '--until', UNTIL]);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(/^Enforcement: /m);
    expect(shown.out).toMatch(/^SPF tightening: keep /m);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<svg');
    expect(page).toMatch(/<rect class="pass"/);
    expect(page).toMatch(/<rect class="fail"/);
    // Self-contained: nothing loaded from elsewhere, no script.
    expect(page).not.toMatch(/<script|src=|href=|@import|url\(/i);
  });

  it('without DNS there is no tightening, and the text says how to get it; another organisation has no reports', async () => {
    const shown = await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--json', '--until', UNTIL]);
    const summary = JSON.parse(shown.out);
    expect(summary.spfTighten).toBeNull();
    expect(summary.spf).toEqual({ status: 'not-looked-up', record: null });
    const other = JSON.parse((await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--json', '--org', 'someone-else', '--until', UNTIL])).out);
    expect(other).toMatchObject({ reports: 0, messages: 0, senders: [], duplicates: 0 });
  });
});

describe('reports import and show on PostgreSQL (--database)', () => {
  it('imports, counts a duplicate once, refuses a truncated file, and shows the same summary as on SQLite', async () => {
    const database = await createTestDatabase('reports_cli');
    try {
      const names = [GOOGLE_ZIP, YAHOO_GZ, OUTLOOK_GZ, TLS_GZ, 'truncated.xml.gz'].map((n) => join(REPORTS_DIR, n));
      const first = await run(['reports', 'import', ...names, '--database', database.url]);
      expect(first.err).toMatch(/5 input\(s\): 4 report\(s\) stored, 0 duplicate\(s\), 1 refused/);
      const again = await run(['reports', 'import', join(REPORTS_DIR, YAHOO_GZ), '--database', database.url]);
      expect(again.out).toMatch(/^duplicate /m);
      const { stores } = await openPostgresStores(database.url, { pruneAutomatically: false, poolSize: 2 });
      try {
        expect(await stores.reports.counts('default', null, null)).toMatchObject({ aggregate: 3, tls: 1, duplicates: 1 });
        expect((await stores.reports.rejections('default', { page: 1, limit: 10 })).items.map((r) => r.reason)).toEqual(['truncated']);
      } finally {
        await stores.close();
      }
      const shown = JSON.parse((await run(['reports', 'show', REPORT_DOMAIN, '--database', database.url, '--zones', FIXTURE_ZONES, '--json', '--until', UNTIL])).out);
      const sqliteData = join(work, 'data-pg-compare');
      await run(['reports', 'import', ...names, '--data', sqliteData]);
      const onSqlite = JSON.parse((await run(['reports', 'show', REPORT_DOMAIN, '--data', sqliteData, '--zones', FIXTURE_ZONES, '--json', '--until', UNTIL])).out);
      expect({ ...shown, duplicates: 0 }).toEqual(onSqlite);
    } finally {
      await database.drop();
    }
  });
});
