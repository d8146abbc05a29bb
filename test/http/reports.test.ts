/**
 * The report routes through app.inject: upload (authenticated, per organisation, a duplicate
 * counted once, a refused file 422 with its reason and no row), the list, rejections, the summary,
 * senders, readiness and TLS of a domain, tenancy (the other organisation sees nothing), TLS-RPT's
 * public HTTPS delivery routed by the policy domain, and the OpenAPI document naming the routes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadZoneDirectory, ZoneResolver } from '@spoof-checker/engine';
import { REPORTS_PATH, TLSRPT_PATH } from '../../src/http/routes/reports.js';
import type { Stores } from '../../src/store/types.js';
import { FIXTURE_ZONES } from '../cli/helpers.js';
import { fixture, GOOGLE_ZIP, OUTLOOK_GZ, REPORT_DOMAIN, REPORT_SOURCES, REPORTS_DIR, TLS_GZ, YAHOO_GZ } from '../ingest/helpers.js';
import { bearerA, bearerB, makeApp, SAMPLE_RESULT } from './helpers.js';

let app: FastifyInstance;
let stores: Stores;
/** The options each spoof check was asked with. */
const checked: { domain: string; options: unknown }[] = [];

beforeAll(async () => {
  const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
  // The clock inside the fixtures' month, so the 30-day window holds their reports whatever today is.
  ({ app, stores } = await makeApp({
    now: () => new Date('2026-11-25T00:00:00.000Z'),
    reports: { resolver, serviceDomain: 'reports.service.example' },
    check: async (domain, options) => {
      checked.push({ domain, options });
      return { ...SAMPLE_RESULT, domain };
    },
  }));
});
afterAll(() => app.close());

const upload = (body: Buffer, contentType: string, headers: Record<string, string> = bearerA) =>
  app.inject({ method: 'POST', url: REPORTS_PATH, headers: { ...headers, 'content-type': contentType, 'x-report-filename': 'dir/../report.bin' }, payload: body });

describe('report routes', () => {
  it('uploads report files for the key’s organisation; the same report again is a duplicate', async () => {
    for (const [name, type] of [[GOOGLE_ZIP, 'application/zip'], [YAHOO_GZ, 'application/gzip'], [OUTLOOK_GZ, 'application/octet-stream'], ['mail.example.net-two-days.zip', 'application/zip']] as const) {
      const response = await upload(fixture(name), type);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().stored).toBeGreaterThan(0);
    }
    const again = await upload(readFileSync(join(REPORT_SOURCES, 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml')), 'text/xml');
    expect(again.json()).toMatchObject({ stored: 0, duplicates: 1 });
    const tls = await upload(fixture(TLS_GZ), 'application/tlsrpt+gzip');
    expect(tls.json()).toMatchObject({ stored: 1, reports: [{ kind: 'tls', domain: REPORT_DOMAIN, outcome: 'stored' }] });
  });

  it('refuses an XXE file and a truncated gzip with 422 REPORT_REFUSED and the reason; nothing is added', async () => {
    const before = await stores.reports.counts('org_a', null, null);
    const xxe = await upload(readFileSync(join(REPORT_SOURCES, 'xxe-file.xml')), 'application/xml');
    expect(xxe.statusCode).toBe(422);
    expect(xxe.json()).toMatchObject({ code: 'REPORT_REFUSED' });
    expect(xxe.json().message).toContain('doctype');
    const truncated = await upload(readFileSync(join(REPORTS_DIR, 'truncated.xml.gz')), 'application/gzip');
    expect(truncated.statusCode).toBe(422);
    expect(truncated.json().message).toContain('truncated');
    expect(await stores.reports.counts('org_a', null, null)).toEqual(before);
    const rejections = await app.inject({ method: 'GET', url: `${REPORTS_PATH}/rejections`, headers: bearerA });
    expect(rejections.json().rejections.map((r: { reason: string }) => r.reason).sort()).toEqual(['doctype', 'truncated']);
  });

  it('the record log of an upload keeps the file’s type and size, never its bytes', async () => {
    const response = await upload(fixture(GOOGLE_ZIP), 'application/zip');
    const log = await app.inject({ method: 'GET', url: `/api/logs/v1/${response.headers['x-log-id']}`, headers: bearerA });
    expect(log.json().request_body).toEqual({ reportFile: `application/zip, ${fixture(GOOGLE_ZIP).length} bytes` });
  });

  it('refuses a body that is not a report file type (415) and an upload without a key (401)', async () => {
    expect((await upload(Buffer.from('x'), 'image/png')).json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect((await app.inject({ method: 'POST', url: REPORTS_PATH, headers: { 'content-type': 'application/zip' }, payload: fixture(GOOGLE_ZIP) })).statusCode).toBe(401);
  });

  it('lists the organisation’s reports newest first, with who reported and whether it was authenticated', async () => {
    const response = await app.inject({ method: 'GET', url: `${REPORTS_PATH}?domain=${REPORT_DOMAIN}&kind=aggregate&limit=2`, headers: bearerA });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.total).toBe(5);
    expect(body.reports).toHaveLength(2);
    expect(body.reports[0]).toMatchObject({ object: 'report', kind: 'aggregate', domain: REPORT_DOMAIN, reporter: 'unauthenticated', authenticated: false, origin: { channel: 'upload' } });
    // The file name is a label (the zip entry's, or the header's base name), never a path.
    expect(body.reports.every((r: { origin: { fileName: string } }) => !r.origin.fileName.includes('/'))).toBe(true);
    expect(body.reports[0].begin >= body.reports[1].begin).toBe(true);
  });

  it('the summary, senders, readiness and TLS of a domain', async () => {
    const summary = (await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}`, headers: bearerA })).json();
    expect(summary).toMatchObject({ domain: REPORT_DOMAIN, days: 30, reports: 5, duplicates: 2, spf: { status: 'found' } });
    expect(summary.spfTighten.record).toMatch(/^v=spf1 /);
    expect(summary.externalDestination).toEqual({ name: `${REPORT_DOMAIN}._report._dmarc.reports.service.example`, value: 'v=DMARC1' });
    const senders = (await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}/senders?days=30`, headers: bearerA })).json();
    expect(senders.senders).toEqual(summary.senders);
    expect(senders.senders[0]).toMatchObject({ source: expect.any(String), messages: expect.any(Number), spfAligned: expect.any(Number), dkimAligned: expect.any(Number), dmarcPass: expect.any(Number), class: expect.any(String) });
    const readiness = (await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}/readiness`, headers: bearerA })).json();
    expect(readiness.readiness).toEqual(summary.readiness);
    expect(readiness.readiness.verdict).toBe('not-ready');
    const tls = (await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}/tls`, headers: bearerA })).json();
    expect(tls.tls).toEqual(summary.tls);
    expect(tls.tls.policies[0]).toMatchObject({ successful: expect.any(Number), failed: expect.any(Number) });
    expect((await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}?days=0`, headers: bearerA })).statusCode).toBe(400);
  });

  it('tenancy: the other organisation sees none of it', async () => {
    const list = (await app.inject({ method: 'GET', url: REPORTS_PATH, headers: bearerB })).json();
    expect(list).toMatchObject({ reports: [], total: 0 });
    expect((await app.inject({ method: 'GET', url: `${REPORTS_PATH}/rejections`, headers: bearerB })).json()).toMatchObject({ rejections: [], total: 0 });
    const summary = (await app.inject({ method: 'GET', url: `${REPORTS_PATH}/domains/${REPORT_DOMAIN}`, headers: bearerB })).json();
    expect(summary).toMatchObject({ reports: 0, messages: 0, senders: [], duplicates: 0, tls: { reports: 0, policies: [] } });
  });

  it('TLS-RPT over HTTPS (RFC 8460 §5.3): public, routed to the organisation that added the policy domain, 404 when none has', async () => {
    const nobody = await app.inject({ method: 'POST', url: TLSRPT_PATH, headers: { 'content-type': 'application/tlsrpt+json' }, payload: readFileSync(join(REPORT_SOURCES, 'google.com!spf-cloud-ec2.example!2026-11-21.json')) });
    expect(nobody.statusCode).toBe(404);
    const now = '2026-11-25T00:00:00.000Z';
    await stores.domains.add({
      id: 'dom_rpt', organizationId: 'org_b', domain: REPORT_DOMAIN, status: 'verified', userVerifiedDomain: true, systemVerified: true, customReturnPath: null, trackingSubdomain: null,
      isClickTrackingEnabled: false, isOpenTrackingEnabled: false, tls: 'opportunistic', isTrackingDomain: false, isSendingEmailEnabled: true, isReceivingEmailEnabled: false,
      verificationFailedReason: null, dnsRecords: [], lastVerifiedAt: null, createdAt: now, updatedAt: now, deletedAt: null,
    });
    const delivered = await app.inject({ method: 'POST', url: TLSRPT_PATH, headers: { 'content-type': 'application/tlsrpt+json' }, payload: readFileSync(join(REPORT_SOURCES, 'google.com!spf-cloud-ec2.example!2026-11-21.json')) });
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect(delivered.json()).toMatchObject({ stored: 1 });
    const [stored] = (await stores.reports.list('org_b', { page: 1, limit: 5, kind: 'tls' })).items;
    expect(stored?.origin).toMatchObject({ channel: 'https', authenticatedDomain: null });
    expect(await stores.reports.counts('org_a', null, null)).toMatchObject({ tls: 1 });
  });

  it('the DKIM selectors seen in the organisation’s reports join those a spoof check probes (after the caller’s)', async () => {
    checked.length = 0;
    await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: bearerA, payload: { domain: `https://${REPORT_DOMAIN}/x`, selectors: ['Mine'] } });
    await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: bearerB, payload: { domain: 'p-reject.example' } });
    expect(checked[0]?.options).toEqual({ selectors: ['mine', 'app2026', 'billing2024', 'esp1'] });
    // Another organisation's reports give nothing (org_b has TLS reports only by now, and none for this domain).
    expect(checked[1]?.options).toBeUndefined();
  });

  it('the OpenAPI document lists every report route', async () => {
    const paths = Object.keys((await app.inject({ method: 'GET', url: '/openapi.json' })).json().paths);
    for (const path of [REPORTS_PATH, `${REPORTS_PATH}/rejections`, `${REPORTS_PATH}/domains/{domain}`, `${REPORTS_PATH}/domains/{domain}/senders`, `${REPORTS_PATH}/domains/{domain}/readiness`, `${REPORTS_PATH}/domains/{domain}/tls`, TLSRPT_PATH]) {
      expect(paths).toContain(path);
    }
  });
});
