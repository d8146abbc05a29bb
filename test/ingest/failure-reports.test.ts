/**
 * Failure reports (RFC 6591 in ARF, RFC 5965): table-driven parsing of sample ARF messages written
 * here (full reported message, headers only, folded fields, abuse reports and aggregate reports
 * that are not ours, a report without its feedback part, bounds); storage with the reported
 * message's headers and authentication results only, never its body; local parts hashed unless the
 * organisation turned that off; one copy per organisation; taken from the file path, the SMTP
 * receiver (real, on loopback) and the routes' summary grouped by sending source.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { failureReportsBySource, hashLocalParts, MAX_FIELD_VALUE_CHARS, MAX_HEADER_FIELDS, parseFailureReport, storeFailureReport } from '../../src/ingest/failure-reports.js';
import { importPaths } from '../../src/ingest/files.js';
import { ingestReportMessage } from '../../src/ingest/ingest.js';
import { SmtpReportReceiver } from '../../src/ingest/smtp.js';
import { ReportAddressCheck } from '../../src/ingest/report-address.js';
import { parseZone, ZoneResolver } from '@spoof-checker/engine';
import { createMemoryStores } from '../../src/store/memory.js';
import type { Stores } from '../../src/store/types.js';
import { bearerA, makeApp } from '../http/helpers.js';
import { fixture, GOOGLE_ZIP, reportMessage } from './helpers.js';

const BODY_SECRET = 'THE-BODY-MUST-NEVER-BE-STORED';

/** A failure report as a reporter sends one (RFC 6591 §B.1's shape). */
function arf(options: {
  feedbackType?: string;
  feedback?: string[];
  reported?: 'message' | 'headers' | 'none';
  reportedHeaders?: string[];
  withFeedbackPart?: boolean;
} = {}): Buffer {
  const feedback = [
    `Feedback-Type: ${options.feedbackType ?? 'auth-failure'}`,
    'User-Agent: ExampleReporter/1.0',
    'Version: 1',
    'Original-Mail-From: <alice.smith@example.com>',
    'Original-Rcpt-To: <bob@receiver.example>',
    'Arrival-Date: Mon, 7 Dec 2026 04:00:00 +0000',
    'Source-IP: 192.0.2.55',
    'Reported-Domain: example.com',
    'Authentication-Results: mx.receiver.example; dmarc=fail (p=reject) header.from=example.com;',
    '  spf=fail smtp.mailfrom=alice.smith@example.com; dkim=none',
    'Auth-Failure: dmarc',
    'Identity-Alignment: none',
    'Delivery-Result: reject',
    `DKIM-Canonicalized-Body: ${Buffer.from(BODY_SECRET).toString('base64')}`,
    ...(options.feedback ?? []),
  ].join('\r\n');
  const headers = options.reportedHeaders ?? [
    'From: Alice Smith <alice.smith@example.com>',
    'To: bob@receiver.example',
    'Subject: Quarterly invoice',
    'Message-ID: <msg-1@sender.example>',
    'Date: Mon, 7 Dec 2026 03:59:58 +0000',
  ];
  const reportedPart =
    options.reported === 'none'
      ? []
      : options.reported === 'headers'
        ? ['--ARF', 'Content-Type: text/rfc822-headers', '', ...headers, '']
        : ['--ARF', 'Content-Type: message/rfc822', '', ...headers, '', `${BODY_SECRET} pay to account 12345`, ''];
  return Buffer.from(
    [
      'From: DMARC Reports <ruf@reporter.example>',
      'To: ruf@reports.example',
      'Subject: DMARC failure report for example.com',
      'Message-ID: <arf-1@reporter.example>',
      'Date: Mon, 7 Dec 2026 04:01:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
      '',
      '--ARF',
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'This is an authentication failure report for an email message received from IP 192.0.2.55.',
      '',
      ...(options.withFeedbackPart === false ? [] : ['--ARF', 'Content-Type: message/feedback-report', '', feedback, '']),
      ...reportedPart,
      '--ARF--',
      '',
    ].join('\r\n'),
  );
}

describe('parseFailureReport', () => {
  it.each<[string, Buffer, { kind: string; reason?: string; check?: (json: string, parsed: Record<string, unknown>) => void }]>([
    ['a report with the whole reported message: headers kept, body never', arf(), {
      kind: 'failure',
      check: (json) => {
        expect(json).toContain('Quarterly invoice');
        expect(json).not.toContain(BODY_SECRET);
        expect(json).not.toContain(Buffer.from(BODY_SECRET).toString('base64'));
        expect(json).not.toContain('12345');
      },
    }],
    ['a report with the reported headers only (text/rfc822-headers)', arf({ reported: 'headers' }), { kind: 'failure', check: (json) => expect(json).toContain('msg-1@sender.example') }],
    ['a report without the reported message', arf({ reported: 'none' }), { kind: 'failure', check: (_json, p) => expect(p['headers']).toEqual([]) }],
    ['folded fields are unfolded', arf(), { kind: 'failure', check: (json) => expect(json).toContain('dkim=none') }],
    ['an abuse report is not a failure report', arf({ feedbackType: 'abuse' }), { kind: 'not-failure-report' }],
    ['an aggregate report is not a failure report', reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' }), { kind: 'not-failure-report' }],
    ['a feedback-report without its feedback part is refused', arf({ withFeedbackPart: false }), { kind: 'refused', reason: 'no-feedback-report' }],
    ['too many reported header fields are cut', arf({ reportedHeaders: Array.from({ length: 500 }, (_, i) => `X-Field-${i}: ${i}`) }), { kind: 'failure', check: (_json, p) => expect((p['headers'] as unknown[]).length).toBe(MAX_HEADER_FIELDS) }],
    ['a huge field value is cut', arf({ reportedHeaders: [`Subject: ${'x'.repeat(50_000)}`] }), { kind: 'failure', check: (_json, p) => expect((p['headers'] as { value: string }[])[0]!.value.length).toBe(MAX_FIELD_VALUE_CHARS) }],
    ['not MIME at all', Buffer.from('just some text\r\n'), { kind: 'not-failure-report' }],
    ['"feedback-report" only in the body is not looked at', Buffer.from('Subject: hi\r\nContent-Type: text/plain\r\n\r\nmultipart/report; report-type=feedback-report\r\n'), { kind: 'not-failure-report' }],
  ])('%s', async (_name, raw, expected) => {
    const parsed = await parseFailureReport(raw);
    expect(parsed.kind).toBe(expected.kind);
    if (parsed.kind === 'refused') expect(parsed.reason).toBe(expected.reason);
    if (parsed.kind === 'failure') expected.check?.(JSON.stringify(parsed.report), parsed.report as unknown as Record<string, unknown>);
  });
});

describe('storing failure reports', () => {
  const sinkOf = (stores: Stores, orgs = ['org_a']) => ({ store: stores.failureReports, organizationsFor: async () => orgs, now: () => new Date('2026-12-07T05:00:00.000Z') });

  it('keeps the fields, the authentication results and the headers, local parts hashed; once per organisation', async () => {
    const stores = createMemoryStores();
    const parsed = await parseFailureReport(arf());
    if (parsed.kind !== 'failure') throw new Error('not parsed');
    const outcome = await storeFailureReport(sinkOf(stores, ['org_a', 'org_b']), parsed.report, 'file', false);
    expect(outcome).toMatchObject({ kind: 'stored', domain: 'example.com', organizations: ['org_a', 'org_b'] });
    const [report] = (await stores.failureReports.list('org_a', { page: 1, limit: 10 })).items;
    expect(report).toMatchObject({
      domain: 'example.com',
      sourceIp: '192.0.2.55',
      authFailure: ['dmarc'],
      deliveryResult: 'reject',
      identityAlignment: 'none',
      reporter: { userAgent: 'ExampleReporter/1.0', from: 'ruf@reporter.example', authenticated: false },
      localPartsHashed: true,
    });
    expect(report!.authenticationResults[0]).toContain('dmarc=fail');
    const json = JSON.stringify(report);
    expect(json).not.toContain('alice.smith');
    expect(json).not.toContain('bob@');
    expect(json).not.toContain(BODY_SECRET);
    const from = report!.headers.find((h) => h.name === 'From')!.value;
    expect(from).toMatch(/^Alice Smith <h\.[0-9a-f]{16}@example\.com>$/);
    // The same local part hashes the same within the organisation (senders can be told apart), not across.
    expect(report!.feedback.find((f) => f.name === 'Original-Mail-From')!.value).toContain(from.slice(from.indexOf('<h.') + 1, from.indexOf('@')));
    const [other] = (await stores.failureReports.list('org_b', { page: 1, limit: 10 })).items;
    expect(other!.headers.find((h) => h.name === 'From')!.value).not.toBe(from);
    expect(await storeFailureReport(sinkOf(stores, ['org_a']), parsed.report, 'file', false)).toMatchObject({ kind: 'duplicate' });
  });

  it('keeps local parts in clear when the organisation turned hashing off', async () => {
    const stores = createMemoryStores();
    await stores.failureReports.setSettings('org_a', { hashLocalParts: false });
    const parsed = await parseFailureReport(arf());
    if (parsed.kind !== 'failure') throw new Error('not parsed');
    await storeFailureReport(sinkOf(stores), parsed.report, 'file', false);
    const [report] = (await stores.failureReports.list('org_a', { page: 1, limit: 10 })).items;
    expect(report!.localPartsHashed).toBe(false);
    expect(JSON.stringify(report)).toContain('alice.smith@example.com');
    expect(JSON.stringify(report)).not.toContain(BODY_SECRET);
  });

  it('groups a domain\'s reports by sending source', async () => {
    const stores = createMemoryStores();
    for (const [ip, failure] of [['192.0.2.55', 'dmarc'], ['192.0.2.55', 'spf'], ['198.51.100.7', 'dkim']] as const) {
      const parsed = await parseFailureReport(arf({ feedback: [], reportedHeaders: ['From: x@example.com', `Subject: ${ip} ${failure}`] }));
      if (parsed.kind !== 'failure') throw new Error('not parsed');
      const report = { ...parsed.report, feedback: parsed.report.feedback.map((f) => (f.name === 'Source-IP' ? { ...f, value: ip } : f.name === 'Auth-Failure' ? { ...f, value: failure } : f)) };
      await storeFailureReport(sinkOf(stores), report, 'file', false);
    }
    const summary = await failureReportsBySource(stores.failureReports, 'org_a', 'example.com', '2026-01-01T00:00:00.000Z');
    expect(summary.reports).toBe(3);
    expect(summary.sources.map((s) => [s.sourceIp, s.reports, s.authFailures])).toEqual([
      ['192.0.2.55', 2, { dmarc: 1, spf: 1 }],
      ['198.51.100.7', 1, { dkim: 1 }],
    ]);
    expect(summary.sources[0]!.fromDomains).toEqual(['example.com']);
  });
});

describe('hashLocalParts', () => {
  it.each<[string, RegExp | string]>([
    ['Alice <alice.smith@example.com>', /^Alice <h\.[0-9a-f]{16}@example\.com>$/],
    ['dmarc=fail header.from=example.com; smtp.mailfrom=alice@example.com;', /^dmarc=fail header\.from=example\.com; smtp\.mailfrom=h\.[0-9a-f]{16}@example\.com;$/],
    ['<a@example.com>, b@x.example.', /^<h\.[0-9a-f]{16}@example\.com>, h\.[0-9a-f]{16}@x\.example\.$/],
    ['SRS0=HHH=TT=orig.example=user@forwarder.example', /^SRS0=HHH=TT=orig\.example=h\.[0-9a-f]{16}@forwarder\.example$/],
    ['a@b', 'a@b'],
    ['@example.com', '@example.com'],
    ['x@-bad.example', 'x@-bad.example'],
  ])('%s', (input, expected) => {
    const out = hashLocalParts(input, 'salt');
    if (typeof expected === 'string') expect(out).toBe(expected);
    else expect(out).toMatch(expected);
  });

  it('is linear on hostile text (a generous bound, not a timing)', () => {
    const started = performance.now();
    for (const text of ['a'.repeat(2000), 'a@'.repeat(1000), 'a.'.repeat(1000), `x@${'a-'.repeat(999)}`, `x@${'a.a-'.repeat(499)}`]) {
      for (let i = 0; i < MAX_HEADER_FIELDS; i++) hashLocalParts(text, 'salt');
    }
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('ruf addresses', () => {
  it('an address in the DMARC record\'s ruf is a report address for the SMTP receiver', async () => {
    const zone = '$ORIGIN example.com.\n$TTL 300\n@ IN SOA ns1 host 1 7200 900 1209600 300\n@ IN NS ns1\n_dmarc IN TXT "v=DMARC1; p=reject; rua=mailto:agg@example.com; ruf=mailto:fail@example.com"\n';
    const check = new ReportAddressCheck({ configured: [], resolver: new ZoneResolver([parseZone(zone)]) });
    expect(await check.check('fail@example.com')).toEqual({ kind: 'report-address', via: 'dmarc' });
    expect(await check.check('agg@example.com')).toEqual({ kind: 'report-address', via: 'dmarc' });
    expect(await check.check('other@example.com')).toEqual({ kind: 'not-report-address' });
  });
});

describe('failure reports on the aggregate paths', () => {
  let dir: string | undefined;
  let receiver: SmtpReportReceiver | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await receiver?.stop();
    dir = undefined;
    receiver = undefined;
  });

  it('a message through ingestReportMessage is a failure report, not "no report"; an aggregate one still goes the aggregate way', async () => {
    const stores = createMemoryStores();
    const sink = { store: stores.reports, organizationsFor: async () => ['org_a'], rejectionOrganizations: ['org_a'], failures: stores.failureReports };
    const failure = await ingestReportMessage(sink, arf(), { channel: 'imap' });
    expect(failure).toMatchObject({ noReport: false, failure: { kind: 'stored', domain: 'example.com' } });
    const aggregate = await ingestReportMessage(sink, reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' }), { channel: 'imap' });
    expect(aggregate.reports).toHaveLength(1);
    expect(aggregate.failure).toBeUndefined();
  });

  it('a file of a failure report is taken by the file import', async () => {
    const stores = createMemoryStores();
    dir = await mkdtemp(join(tmpdir(), 'ruf-'));
    await writeFile(join(dir, 'failure.eml'), arf());
    const tally = await importPaths([dir], { sink: { store: stores.reports, organizationsFor: async () => ['org_a'], rejectionOrganizations: ['org_a'], failures: stores.failureReports } });
    expect(tally.noReport).toBe(0);
    expect((await stores.failureReports.list('org_a', { page: 1, limit: 10 })).total).toBe(1);
  });

  it('the SMTP receiver takes a failure report, and the routes summarise it by source', async () => {
    const stores = createMemoryStores();
    await stores.apiKeys.addOrganization({ id: 'org_a', name: 'org_a' });
    receiver = new SmtpReportReceiver({ store: stores.reports, reportAddresses: ['ruf@reports.example'], host: '127.0.0.1', port: 0, failures: stores.failureReports });
    const { port } = await receiver.start();
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    await transport.sendMail({ envelope: { from: 'ruf@reporter.example', to: ['ruf@reports.example'] }, raw: arf() });
    transport.close();
    expect((await stores.failureReports.list('org_a', { page: 1, limit: 10 })).total).toBe(1);

    const made = await makeApp();
    const parsed = await parseFailureReport(arf());
    if (parsed.kind !== 'failure') throw new Error('not parsed');
    await storeFailureReport({ store: made.stores.failureReports, organizationsFor: async () => ['org_a'] }, parsed.report, 'smtp', false);
    const summary = await made.app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker/failure-reports?domain=EXAMPLE.com', headers: bearerA });
    expect(summary.statusCode, summary.body).toBe(200);
    expect(summary.json()).toMatchObject({ object: 'failure_report_summary', domain: 'example.com', reports: 1, sources: [{ sourceIp: '192.0.2.55', reports: 1, authFailures: { dmarc: 1 } }] });
    const id = summary.json().sources[0].latest[0];
    const one = await made.app.inject({ method: 'GET', url: `/api/tools/v1/spoof-checker/failure-reports/${id}`, headers: bearerA });
    expect(one.json()).toMatchObject({ object: 'failure_report', id, localPartsHashed: true });
    expect(one.body).not.toContain(BODY_SECRET);
    const settings = await made.app.inject({ method: 'PATCH', url: '/api/tools/v1/spoof-checker/failure-reports/settings', headers: bearerA, payload: { hashLocalParts: false } });
    expect(settings.json()).toEqual({ object: 'failure_report_settings', hashLocalParts: false });
    const doc = (await made.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/tools/v1/spoof-checker/failure-reports', '/api/tools/v1/spoof-checker/failure-reports/{id}']));
    await made.app.close();
  });
});
