/**
 * Issue 41, "Reports a person reads" and "Share a dashboard": the report dashboards of the console
 * over inject. Every figure of the page and its CSV equals `reports show --json` (the CLI run on the
 * same files); roles (a viewer reads, cannot share); another organisation's domain is 404; untrusted
 * reports apart unless asked; a share link is unguessable, stored hashed, expires, is revoked at once,
 * is noindex and reaches nothing else.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ingestReportFile, unauthenticatedOrigin } from '../../src/ingest/ingest.js';
import { secretHash } from '../../src/console/accounts.js';
import { SHARED_PATH } from '../../src/console/share.js';
import { captureIo } from '../cli/helpers.js';
import { REPORT_SOURCES } from '../ingest/helpers.js';
import { TestClock } from '../monitors/helpers.js';
import { fixture } from '../../packages/engine/test/reports/helpers.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { RecordLog } from '../../src/store/types.js';
import { addMember, Browser, consoleService, ORG_A, ORG_B } from './helpers.js';

const NOW = '2026-11-27T12:00:00.000Z';
const DOMAIN = 'spf-cloud-ec2.example';
const FILES = [
  'google.com!spf-cloud-ec2.example!1795219200!1795305599.zip',
  'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz',
  'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml.gz',
  'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml',
  'src/google.com!spf-cloud-ec2.example!2026-11-21.json',
  'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz',
];
const BASE = `/console/domains/${DOMAIN}/reports`;

/** The CLI's `reports show --json` over the same files, imported into a data directory of its own. */
async function cliJson(days: number, until: string, extra: string[] = []): Promise<Record<string, any>> {
  const data = join(mkdtempSync(join(tmpdir(), 'console-reports-')), 'data');
  for (const file of FILES) {
    const { io } = captureIo();
    const path = file.startsWith('src/') ? `${REPORT_SOURCES}${file.slice(4)}` : join(REPORT_SOURCES, '..', file);
    expect(await main(['reports', 'import', path, '--data', data, '--org', ORG_A.id], io)).toBe(0);
  }
  const { io, stdout } = captureIo();
  expect(await main(['reports', 'show', DOMAIN, '--data', data, '--org', ORG_A.id, '--json', '--days', String(days), '--until', until, ...extra], io)).toBe(0);
  return JSON.parse(stdout()) as Record<string, any>;
}

/** A CSV (RFC 4180, as the dashboard writes it) as rows of fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.trimEnd().split('\r\n')) {
    const fields: string[] = [];
    const re = /("((?:[^"]|"")*)"|[^,]*)(,|$)/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(line)) !== null) {
      fields.push(m[2] !== undefined ? m[2].replace(/""/g, '"') : m[1]!);
      if (m[3] === '') break;
    }
    rows.push(fields);
  }
  return rows;
}

const full = (n: number) => n.toLocaleString('en-US');

describe('report dashboards', () => {
  let service: Awaited<ReturnType<typeof consoleService>>;
  let owner: Browser;
  let admin: Browser;
  let viewer: Browser;
  let outsider: Browser;
  const records: { organizationId: string | null; record: RecordLog }[] = [];

  beforeAll(async () => {
    const stores = createMemoryStores();
    const append = stores.recordLogs.append.bind(stores.recordLogs);
    stores.recordLogs.append = async (organizationId, record) => {
      records.push({ organizationId, record });
      return append(organizationId, record);
    };
    service = await consoleService({ stores, clock: new TestClock(Date.parse(NOW)) });
    const sink = { store: service.stores.reports, organizationsFor: async () => [ORG_A.id], rejectionOrganizations: [ORG_A.id], now: () => new Date(NOW) };
    for (const file of FILES) await ingestReportFile(sink, { bytes: fixture(file), fileName: file.replace(/^src\//, '') }, unauthenticatedOrigin('file', null));
    owner = await addMember(service.app, service.stores, ORG_A.id, 'owner@a.example', 'owner', service.clock);
    admin = await addMember(service.app, service.stores, ORG_A.id, 'admin@a.example', 'admin', service.clock);
    viewer = await addMember(service.app, service.stores, ORG_A.id, 'viewer@a.example', 'viewer', service.clock);
    outsider = await addMember(service.app, service.stores, ORG_B.id, 'owner@b.example', 'owner', service.clock);
  });
  afterAll(() => service.app.close());

  it('every figure of the page and its CSV equals reports show --json for the same window', async () => {
    const json = await cliJson(30, '2026-11-27');
    const page = await viewer.get(`${BASE}?from=2026-10-29&until=2026-11-27`);
    expect(page.statusCode).toBe(200);
    expect(json.messages).toBeGreaterThan(0);
    const trusted = (json.series as any[]).filter((t) => t.trusted);
    const sum = (k: string) => trusted.reduce((n, t) => n + t[k], 0);
    expect(sum('messages')).toBe(json.messages);
    expect(page.body).toContain(`<dd id="messages">${full(json.messages)}</dd>`);
    expect(page.body).toMatch(new RegExp(`id="pass-rate">${((sum('dmarcPass') / json.messages) * 100).toFixed(1)}%`));
    expect(page.body).toContain(`(${full(sum('dmarcPass'))} of ${full(json.messages)} messages)`);
    expect(page.body).toContain(`id="reports-count">${full(json.reports)}`);
    // Senders: every field of every row.
    const senders = parseCsv((await viewer.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=senders`)).body);
    expect(senders[0]).toEqual(['source', 'service', 'class', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'selectors', 'fix']);
    expect(senders.slice(1).map((r) => [r[0], r[2], Number(r[3]), Number(r[4]), Number(r[5]), Number(r[6]), Number(r[7])])).toEqual(
      (json.senders as any[]).map((s) => [s.source, s.class, s.messages, s.dmarcPass, s.spfAligned, s.dkimAligned, s.failing]),
    );
    for (const s of json.senders as any[]) expect(page.body).toContain(`<td><code>${s.source}</code></td>`);
    // The daily table: the trusted series, day by day.
    const daily = parseCsv((await viewer.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=daily`)).body);
    expect(daily.slice(1).map((r) => r.map((f, i) => (i === 0 ? f : Number(f))))).toEqual(trusted.map((t) => [t.day, t.messages, t.dmarcPass, t.spfAligned, t.dkimAligned, t.failing]));
    const blockers = parseCsv((await viewer.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=blockers`)).body);
    expect(blockers.slice(1).map((r) => [r[0], Number(r[2]), r[3]])).toEqual((json.readiness.blockers as any[]).map((b) => [b.source, b.messages, b.fix]));
    const selectors = parseCsv((await viewer.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=selectors`)).body);
    expect(selectors.slice(1).map((r) => r[0])).toEqual(json.selectors);
    const tls = parseCsv((await viewer.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=tls`)).body);
    expect(tls.slice(1).map((r) => [r[0], Number(r[2]), Number(r[3])])).toEqual((json.tls.policies as any[]).map((p) => [p.policy, p.successful, p.failed]));
    expect(json.tls.policies.length).toBeGreaterThan(0);
    // The readiness' words, and the chart with its title, description and role.
    expect(page.body).toContain(json.readiness.summary.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&quot;'));
    expect(page.body).toMatch(/<svg class="chart"[^>]*role="img"[^>]*aria-labelledby="chart-title chart-desc"/);
    expect(page.body).toMatch(/<title id="chart-title">Messages per day for spf-cloud-ec2\.example/);
    expect(page.body).toContain(`<desc id="chart-desc">${full(json.messages)} messages from`);
    // The same window as days=30 up to now: the same figures.
    const byDays = await viewer.get(`${BASE}?days=30`);
    expect(byDays.body).toContain(`<dd id="messages">${full(json.messages)}</dd>`);
  });

  it('the CSV is a download, with a name, and defuses formulas', async () => {
    const response = await viewer.get(`${BASE}.csv?table=senders`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="spf-cloud-ec2\.example-senders-/);
    const { csvField } = await import('../../src/console/reports-view.js');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField(12345)).toBe('12345');
    expect((await viewer.get(`${BASE}.csv?table=nothing`)).statusCode).toBe(400);
  });

  it('a window out of bounds is a 400 that says what to type', async () => {
    for (const query of ['days=0', 'days=367', 'days=abc', 'from=2026-11-01', 'from=2026-11-30&until=2026-11-01', 'from=2025-01-01&until=2026-11-01', 'untrusted=maybe']) {
      const response = await viewer.get(`${BASE}?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.body, query).toContain('?days=7');
    }
    for (const days of [7, 30, 90]) expect((await viewer.get(`${BASE}?days=${days}`)).statusCode).toBe(200);
  });

  it('untrusted reports stay apart unless asked, and are marked', async () => {
    const before = await viewer.get(`${BASE}?days=30`);
    const messages = /<dd id="messages">([\d,]+)<\/dd>/.exec(before.body)![1]!;
    // An untrusted report: the same file handed in by nobody of the organisation, over the public route.
    const sink = { store: service.stores.reports, organizationsFor: async () => [ORG_A.id], rejectionOrganizations: [ORG_A.id], now: () => new Date(NOW) };
    const file = 'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml';
    // Mail that no DKIM or DMARC authenticated: untrusted (src/store/reports.ts isTrustedOrigin).
    await ingestReportFile(sink, { bytes: Buffer.from(fixture(file).toString('utf8').replace(/<report_id>[^<]*<\/report_id>/, '<report_id>forged-1</report_id>')), fileName: 'forged.xml' }, unauthenticatedOrigin('smtp', null));
    const after = await viewer.get(`${BASE}?days=30`);
    const untrusted = /id="untrusted-figures">([\d,]+) report\(s\), ([\d,]+) message/.exec(after.body);
    expect(after.body).toContain(`<dd id="messages">${messages}</dd>`);
    expect(after.body).toContain('class="badge tone-warning">Untrusted</span>');
    expect(untrusted).not.toBeNull();
    expect(Number(untrusted![2]!.replace(/,/g, ''))).toBeGreaterThan(0);
    if (untrusted) {
      const included = await viewer.get(`${BASE}?days=30&untrusted=include`);
      expect(included.body).toContain('id="untrusted-included"');
      const added = Number(messages.replace(/,/g, '')) + Number(untrusted[2]!.replace(/,/g, ''));
      expect(included.body).toContain(`<dd id="messages">${full(added)}</dd>`);
    }
  });

  it('every role reads; another organisation and an anonymous visitor do not', async () => {
    for (const b of [owner, admin, viewer]) {
      expect((await b.get(BASE)).statusCode).toBe(200);
      expect((await b.get('/console/reports')).statusCode).toBe(200);
      expect((await b.get(`${BASE}.csv?table=daily`)).statusCode).toBe(200);
    }
    expect((await outsider.get(BASE)).statusCode).toBe(404);
    expect((await outsider.get(`${BASE}.csv?table=senders`)).statusCode).toBe(404);
    expect((await outsider.get('/console/reports')).body).toContain('id="no-reports"');
    const anonymous = new Browser(service.app);
    const redirected = await anonymous.get(BASE);
    expect(redirected.statusCode).toBe(303);
    expect(redirected.headers.location).toContain('/console/sign-in');
    expect((await anonymous.get(`${BASE}.csv?table=senders`)).statusCode).toBe(303);
  });

  it('the organisation page lists each domain with its totals, linking to its dashboard', async () => {
    const json = await cliJson(30, '2026-11-27');
    const page = await viewer.get('/console/reports?days=30');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<a href="${BASE}?days=30">`);
    expect(page.body).toContain(`<td class="num">${full(json.messages)}</td>`);
    const csv = parseCsv((await viewer.get('/console/reports.csv?days=30')).body);
    const trusted = (json.series as any[]).filter((t) => t.trusted);
    const sum = (k: string) => trusted.reduce((n, t) => n + t[k], 0);
    expect(csv[0]).toEqual(['domain', 'reports', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'untrusted_messages']);
    expect(csv[1]!.slice(0, 7)).toEqual([DOMAIN, String(json.reports), String(json.messages), String(sum('dmarcPass')), String(sum('spfAligned')), String(sum('dkimAligned')), String(sum('failing'))]);
  });

  it('a watched domain links its dashboard, which says plainly when there is nothing yet', async () => {
    await owner.get('/console');
    expect((await owner.post('/console/domains', { domain: 'alpha.example' })).statusCode).toBe(303);
    const domainPage = await viewer.get('/console/domains/alpha.example');
    expect(domainPage.body).toContain('<a href="/console/domains/alpha.example/reports" id="reports-link">');
    const empty = await viewer.get('/console/domains/alpha.example/reports');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('<dd id="messages">0</dd>');
    expect(empty.body).toContain('id="pass-rate">—');
    expect(empty.body).toContain('id="no-senders"');
    expect(empty.body).toContain('<desc id="chart-desc">No messages were reported in this window.</desc>');
    // A domain the organisation neither watches nor has reports of: 404.
    expect((await viewer.get('/console/domains/gamma.example/reports')).statusCode).toBe(404);
  });

  describe('share links', () => {
    it('a viewer cannot make or revoke one; an owner or admin can, and the token is stored hashed', async () => {
      const seen = await viewer.get(BASE);
      expect(seen.body).toContain('id="share-viewer"');
      expect((await viewer.post(`${BASE.replace('/reports', '')}/shares`, { days: '7' })).statusCode).toBe(403);
      await admin.get(BASE);
      const made = await admin.post(`/console/domains/${DOMAIN}/shares`, { days: '7', label: 'The auditor' });
      expect(made.statusCode).toBe(200);
      const url = /id="share-url"[^>]*>([^<]+)<\/textarea>/.exec(made.body)![1]!;
      const token = url.split('/').at(-1)!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const stored = await service.stores.shareLinks!.list(ORG_A.id, DOMAIN);
      expect(stored[0]).toMatchObject({ tokenHash: secretHash(token), label: 'The auditor', revokedAt: null });
      expect(JSON.stringify(stored)).not.toContain(token);
      expect(Date.parse(stored[0]!.expiresAt) - Date.parse(NOW)).toBe(7 * 86_400_000);
      // The record log has the action, with the acting user, never the token.
      const made_ = records.find((c) => c.record.event === 'share_link.created');
      expect(made_).toBeDefined();
      expect(made_!.organizationId).toBe(ORG_A.id);
      expect(made_!.record).toMatchObject({ actor_type: 'user', service: 'console', status_code: 200 });
      const text = JSON.stringify(records);
      expect(text).not.toContain(token);
    });

    it('opens its domain only, without a session, noindex; expires; revoked answers 410 at once', async () => {
      await owner.get(BASE);
      const made = await owner.post(`/console/domains/${DOMAIN}/shares`, { days: '' });
      const url = new URL(/id="share-url"[^>]*>([^<]+)<\/textarea>/.exec(made.body)![1]!);
      const path = url.pathname;
      const stranger = new Browser(service.app);
      const shown = await stranger.get(`${path}?days=30`);
      expect(shown.statusCode).toBe(200);
      expect(shown.headers['x-robots-tag']).toBe('noindex, nofollow');
      // The token never leaves this origin in a Referer (and the page links nowhere else).
      expect(shown.headers['referrer-policy']).toBe('same-origin');
      expect(shown.body).toContain('<meta name="robots" content="noindex">');
      expect(shown.body).toContain(`<h1 id="reports-title">DMARC and TLS reports for`);
      expect(shown.body).not.toContain('/console');
      expect(shown.body).not.toContain('csrf_token');
      expect((await stranger.get(`${path}.csv?table=senders`)).statusCode).toBe(200);
      expect((await stranger.get(`${path}.csv?table=../../console`)).statusCode).toBe(404);
      // The token opens nothing else: no console page, no API.
      expect((await stranger.get('/console/reports')).statusCode).toBe(303);
      expect((await service.app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker/monitors', headers: { authorization: `Bearer ${path.split('/').at(-1)}` } })).statusCode).toBe(401);
      // Unknown and malformed tokens: 404.
      expect((await stranger.get(`${SHARED_PATH}/${'A'.repeat(43)}`)).statusCode).toBe(404);
      expect((await stranger.get(`${SHARED_PATH}/short`)).statusCode).toBe(404);
      // Default life: 30 days; a second past it, 410.
      const link = (await service.stores.shareLinks!.list(ORG_A.id, DOMAIN)).find((l) => l.tokenHash === secretHash(path.split('/').at(-1)!))!;
      expect(Date.parse(link.expiresAt) - Date.parse(NOW)).toBe(30 * 86_400_000);
      // Revoked: 410 at once.
      const revoked = await owner.post(`/console/domains/${DOMAIN}/shares/${link.id}/revoke`, {});
      expect(revoked.statusCode).toBe(303);
      const gone = await stranger.get(path);
      expect(gone.statusCode).toBe(410);
      expect(gone.headers['x-robots-tag']).toBe('noindex, nofollow');
      expect((await stranger.get(`${path}.csv?table=senders`)).statusCode).toBe(410);
      expect((await owner.post(`/console/domains/${DOMAIN}/shares/${link.id}/revoke`, {})).statusCode).toBe(404);
    });

    it('expires: after its days it answers 410', async () => {
      const made = await owner.post(`/console/domains/${DOMAIN}/shares`, { days: '1' });
      const path = new URL(/id="share-url"[^>]*>([^<]+)<\/textarea>/.exec(made.body)![1]!).pathname;
      const stranger = new Browser(service.app);
      expect((await stranger.get(path)).statusCode).toBe(200);
      service.clock.advance(86_400_000 + 1000);
      try {
        expect((await stranger.get(path)).statusCode).toBe(410);
      } finally {
        service.clock.advance(-(86_400_000 + 1000));
      }
      for (const days of ['0', '31', 'x']) expect((await owner.post(`/console/domains/${DOMAIN}/shares`, { days })).statusCode, days).toBe(400);
    });

    it('another organisation can neither share nor revoke this domain', async () => {
      await outsider.get('/console');
      expect((await outsider.post(`/console/domains/${DOMAIN}/shares`, { days: '7' })).statusCode).toBe(404);
      const link = (await service.stores.shareLinks!.list(ORG_A.id, DOMAIN))[0]!;
      expect((await outsider.post(`/console/domains/${DOMAIN}/shares/${link.id}/revoke`, {})).statusCode).toBe(404);
    });
  });

  it('with the service\'s resolver, the SPF tightening and the senders\' services equal reports show --zones', async () => {
    const zones = join(REPORT_SOURCES, '..', '..', 'zones');
    const resolver = new ZoneResolver([parseZone(readFileSync(join(zones, `${DOMAIN}.zone`), 'utf8'))]);
    const withDns = await consoleService({ clock: new TestClock(Date.parse(NOW)), extra: { reports: { resolver } } });
    try {
      const sink = { store: withDns.stores.reports, organizationsFor: async () => [ORG_A.id], rejectionOrganizations: [ORG_A.id], now: () => new Date(NOW) };
      for (const file of FILES) await ingestReportFile(sink, { bytes: fixture(file), fileName: file.replace(/^src\//, '') }, unauthenticatedOrigin('file', null));
      const reader = await addMember(withDns.app, withDns.stores, ORG_A.id, 'dns@a.example', 'viewer', withDns.clock);
      const json = await cliJson(30, '2026-11-27', ['--zones', zones]);
      expect(json.spfTighten).not.toBeNull();
      const page = await reader.get(`${BASE}?from=2026-10-29&until=2026-11-27`);
      expect(page.body).toContain(`<pre id="spf-tighten"><code>`);
      const tightened = /<pre id="spf-tighten"><code>([\s\S]*?)<\/code><\/pre>/.exec(page.body)![1]!.replace(/<[^>]+>/g, '');
      expect(tightened).toBe(json.spfTighten.record);
      const senders = parseCsv((await reader.get(`${BASE}.csv?from=2026-10-29&until=2026-11-27&table=senders`)).body);
      expect(senders.slice(1).map((r) => [r[0], Number(r[3])])).toEqual((json.senders as any[]).map((x) => [x.source, x.messages]));
    } finally {
      await withDns.app.close();
    }
  });
});
