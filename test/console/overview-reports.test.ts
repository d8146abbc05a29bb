/**
 * Issue 40/43: the overview's 7-day DMARC pass rate and readiness come from one read of every
 * domain's day totals (`ReportStore.domainDailyTotals`), never a summary per domain, and equal what
 * each domain's report page (`showReports` over the same 7 days) shows: on memory and SQLite, a
 * domain that is ready, one that is not (a legitimate sender fails), one without reports (a dash), and
 * after a new report changes a domain's figures (the remembered readiness follows it). After a report,
 * only the day totals of the domains whose reports arrived since are read again (`ReportStore.arrivals`),
 * every domain's when a report arrived out of order, and the figures equal a fresh read either way.
 * With the service's report resolver, readiness takes the SPF record in as the report page does: a
 * failing source the record lets pass is a legitimate sender to fix first. A view waits for the SPF
 * analyses OVERVIEW_SPF_WAIT_MS in all: a resolver that has not answered leaves the row `checking-spf`
 * (served, neither verdict) and a later view shows the verdict; a resolver that fails (SERVFAIL)
 * leaves it `spf-unreadable`, never ready.
 */
import type { DnsAnswer, RecordType, Resolver } from '@spoof-checker/engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { overviewRows, OVERVIEW_REPORT_DAYS, OVERVIEW_SPF_AT_ONCE, OVERVIEW_SPF_MEMO_MS } from '../../src/console/overview.js';
import { domainReports, type ReportSettings } from '../../src/console/reports-routes.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { ingestReportFile, unauthenticatedOrigin } from '../../src/ingest/ingest.js';
import { demoReportFiles, seedDemoReports } from '../../src/service/demo-reports.js';
import type { ReportStore } from '../../src/store/reports.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { Stores } from '../../src/store/types.js';
import { memoryBackend, sqliteBackend, type Backend, type OpenedBackend } from '../store/backends.js';
import { TestClock } from '../monitors/helpers.js';
import { addMember, consoleService, dayReport, monitorOf, ORG_A, type Browser } from './helpers.js';

const NOW = '2026-11-27T12:00:00.000Z';
const WATCHED = ['p-reject.example', 'p-none.example', 'alpha.example'];

/** What the domain's report page shows for the overview's window: the trusted pass rate and the readiness verdict. */
async function reportPageFigures(stores: Stores, domain: string, now: Date, settings: ReportSettings = {}) {
  const shown = await domainReports(stores, settings, ORG_A.id, domain, OVERVIEW_REPORT_DAYS, now);
  const trusted = shown.summary.series.filter((d) => d.trusted);
  const messages = trusted.reduce((n, d) => n + d.messages, 0);
  if (messages === 0) return { passRate: null, readiness: null };
  return { passRate: trusted.reduce((n, d) => n + d.dmarcPass, 0) / messages, readiness: shown.summary.readiness.verdict };
}

describe.each<Backend>([memoryBackend, sqliteBackend])('the overview\u2019s report figures equal the report pages: $name', (backend) => {
  let opened: OpenedBackend;
  let service: Awaited<ReturnType<typeof consoleService>>;
  let owner: Browser;
  const now = new Date(NOW);

  beforeAll(async () => {
    await backend.setup();
    opened = await backend.open();
    service = await consoleService({ stores: opened.stores, clock: new TestClock(Date.parse(NOW)) });
    for (const [i, domain] of WATCHED.entries()) await service.stores.monitors.create(monitorOf(i, domain));
    await seedDemoReports(service.stores.reports, ORG_A.id, now);
    owner = await addMember(service.app, service.stores, ORG_A.id, 'owner@a.example', 'owner', service.clock);
  });
  afterAll(async () => {
    await service.app.close();
    await opened.dispose();
    await backend.teardown();
  });

  it('pass rate and readiness per domain equal showReports over the same 7 days; no reports, a dash', async () => {
    const rows = await overviewRows(service.stores.monitors, service.stores.reports, ORG_A.id, now);
    const byDomain = new Map(rows.map((r) => [r.domain, r]));
    for (const domain of WATCHED) {
      const row = byDomain.get(domain)!;
      expect({ domain, passRate: row.passRate, readiness: row.readiness }).toEqual({ domain, ...(await reportPageFigures(service.stores, domain, now)) });
    }
    expect(byDomain.get('p-reject.example')).toMatchObject({ passRate: 1, readiness: 'ready' });
    expect(byDomain.get('p-none.example')?.readiness).toBe('not-ready');
    expect(byDomain.get('p-none.example')?.passRate).toBeCloseTo(900 / 1243, 10);
    expect(byDomain.get('alpha.example')).toMatchObject({ passRate: null, readiness: null });
    // The page draws them.
    const page = await owner.get('/console');
    expect(page.statusCode).toBe(200);
    const rowHtml = (domain: string) => page.body.slice(page.body.indexOf(`<tr data-domain="${domain}">`), page.body.indexOf('</tr>', page.body.indexOf(`<tr data-domain="${domain}">`)));
    expect(rowHtml('p-reject.example')).toContain('<td>Ready</td>');
    expect(rowHtml('p-none.example')).toContain('<td>Not yet</td>');
  });

  it('rows follow the monitors: a run\u2019s new state, a removed monitor, an added one (nothing stale is remembered)', async () => {
    const rowsOf = async () => new Map((await overviewRows(service.stores.monitors, service.stores.reports, ORG_A.id, now)).map((r) => [r.domain, r]));
    const before = await rowsOf();
    expect(before.get('alpha.example')).toMatchObject({ verdict: 'protected', outcome: 'checked' });
    // The same view again: the same rows (the remembered ones are copies: the figures set on one view do not leak).
    expect(await rowsOf()).toEqual(before);
    const alpha = (await service.stores.monitors.getByDomain(ORG_A.id, 'alpha.example'))!;
    const at = '2026-11-27T11:30:00.000Z';
    const committed = await service.stores.monitors.commitRun({
      monitorId: alpha.id,
      runId: 'run-alpha',
      expectedVersion: alpha.version,
      machine: alpha.machine,
      lastResult: { checkedAt: at, outcome: 'checked', verdict: 'spoofable', inboxOutcome: 'delivered', transportVerdict: null, digest: 'e'.repeat(64), reason: null },
      at,
      entries: [],
      deliveries: [],
    });
    expect(committed).toBe('committed');
    expect((await rowsOf()).get('alpha.example')).toMatchObject({ verdict: 'spoofable', checkedAt: at });
    await service.stores.monitors.delete(ORG_A.id, alpha.id);
    expect((await rowsOf()).has('alpha.example')).toBe(false);
    await service.stores.monitors.create({ ...monitorOf(9, 'beta.example'), id: 'mon_beta' });
    await service.stores.monitors.create({ ...monitorOf(8, 'alpha.example'), id: 'mon_alpha_again' });
    const after = await rowsOf();
    expect([...after.keys()].sort()).toEqual(['alpha.example', 'beta.example', 'p-none.example', 'p-reject.example']);
    expect(after.get('alpha.example')).toMatchObject({ monitorId: 'mon_alpha_again', verdict: 'protected' });
  });

  it('a new report that changes a domain\u2019s figures changes its readiness (nothing stale is remembered)', async () => {
    // p-reject.example gains a failing legitimate sender the day before (a mail service signing as itself).
    const day = new Date(now.getTime() - 2 * 86_400_000);
    const file = demoReportFiles(new Date(day.getTime() + 86_400_000)).find((f) => f.name.includes('!p-none.example!'))!;
    const text = file.text.replaceAll('p-none.example', 'p-reject.example').replace(/demo-p-none-/g, 'extra-p-reject-');
    const sink = { store: service.stores.reports, organizationsFor: async () => [ORG_A.id], rejectionOrganizations: [ORG_A.id], now: () => now };
    const tally = await ingestReportFile(sink, { bytes: Buffer.from(text, 'utf8'), fileName: file.name.replaceAll('p-none.example', 'p-reject.example') }, unauthenticatedOrigin('file', null));
    expect(tally.rejected).toEqual([]);
    const rows = await overviewRows(service.stores.monitors, service.stores.reports, ORG_A.id, now);
    const row = rows.find((r) => r.domain === 'p-reject.example')!;
    expect({ passRate: row.passRate, readiness: row.readiness }).toEqual(await reportPageFigures(service.stores, 'p-reject.example', now));
    expect(row.readiness).toBe('not-ready');
  });
});


describe.each<Backend>([memoryBackend, sqliteBackend])('the overview after a report reads only the domains whose reports arrived since: $name', (backend) => {
  let opened: OpenedBackend;
  const now = new Date(NOW);
  const DOMAINS = ['a.example', 'b.example', 'c.example'];
  afterEach(async () => {
    await opened.dispose();
    await backend.teardown();
  });

  it('one domain changed, its totals alone read; a report arriving out of order, every domain read; the figures equal a fresh read', async () => {
    await backend.setup();
    opened = await backend.open();
    const { stores } = opened;
    for (const [i, domain] of DOMAINS.entries()) {
      await stores.monitors.create(monitorOf(i, domain));
      expect(await stores.reports.add(dayReport(`r-${domain}`, domain, 100, 90, `2026-11-27T10:0${i}:00.000Z`))).toBe('stored');
    }
    // The totals read, as `only` (undefined: every domain).
    const reads: (readonly string[] | undefined)[] = [];
    /** The store seen through another object (the overview remembers per object), its methods bound to it. */
    const view = (watch: boolean) =>
      new Proxy(stores.reports, {
        get(target, p) {
          if (watch && p === 'domainDailyTotals') return (o: string, d: never, only?: readonly string[]) => (reads.push(only), target.domainDailyTotals(o, d, only));
          const value = Reflect.get(target, p, target) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }) as ReportStore;
    const watched = view(true);
    const passRates = async (reports: ReportStore) => Object.fromEntries((await overviewRows(stores.monitors, reports, ORG_A.id, now)).map((r) => [r.domain, r.passRate]));
    // A reader remembering nothing (its own memo): what the figures are.
    const fresh = () => passRates(view(false));
    expect(await passRates(watched)).toEqual({ 'a.example': 0.9, 'b.example': 0.9, 'c.example': 0.9 });
    expect(reads).toEqual([undefined]);
    // Nothing arrived: nothing read.
    await passRates(watched);
    expect(reads).toEqual([undefined]);
    // A report of b.example, after the latest: its totals alone.
    expect(await stores.reports.add(dayReport('r-b-2', 'b.example', 100, 50, '2026-11-27T11:00:00.000Z'))).toBe('stored');
    expect(await passRates(watched)).toEqual({ 'a.example': 0.9, 'b.example': 0.7, 'c.example': 0.9 });
    expect(reads).toEqual([undefined, ['b.example']]);
    expect(await passRates(watched)).toEqual(await fresh());
    // A report of c.example stamped before the latest (committed late): which domains changed cannot be told, every one is read.
    expect(await stores.reports.add(dayReport('r-c-2', 'c.example', 100, 10, '2026-11-27T10:30:00.000Z'))).toBe('stored');
    expect(await passRates(watched)).toEqual({ 'a.example': 0.9, 'b.example': 0.7, 'c.example': 0.5 });
    expect(reads).toEqual([undefined, ['b.example'], undefined]);
    expect(await passRates(watched)).toEqual(await fresh());
  });
});

describe('the overview\u2019s readiness takes the SPF record in, as the report page does with the same resolver', () => {
  it('a failing source the SPF record lets pass makes the domain not ready; without a resolver, or when the record does not name it, ready', async () => {
    const stores = createMemoryStores();
    const now = new Date(NOW);
    const zone = (domain: string, spf: string) =>
      new ZoneResolver([parseZone(`$ORIGIN ${domain}.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "${spf}"\n`, { file: domain })]);
    for (const [i, domain] of ['named.example', 'other.example'].entries()) {
      await stores.monitors.create(monitorOf(i, domain));
      // 203.0.113.9 fails DMARC with nothing authenticating it: unauthorised unless the SPF record lets it pass.
      expect(await stores.reports.add(dayReport(`r-${domain}`, domain, 100, 90, `2026-11-27T10:0${i}:00.000Z`))).toBe('stored');
    }
    const readinessBy = async (resolver?: ZoneResolver) => Object.fromEntries((await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, resolver)).map((r) => [r.domain, r.readiness]));
    expect(await readinessBy()).toEqual({ 'named.example': 'ready', 'other.example': 'ready' });
    for (const [domain, record, verdict] of [
      ['named.example', 'v=spf1 ip4:203.0.113.9 -all', 'not-ready'],
      ['other.example', 'v=spf1 ip4:192.0.2.1 -all', 'ready'],
    ] as const) {
      const resolver = zone(domain, record);
      expect((await readinessBy(resolver))[domain]).toBe(verdict);
      expect((await reportPageFigures(stores, domain, now, { resolver })).readiness).toBe(verdict);
    }
    // Without the resolver again: the record takes no part, as on the report page without one.
    expect(await readinessBy()).toEqual({ 'named.example': 'ready', 'other.example': 'ready' });
  });
});

describe('the overview never waits on the SPF record longer than its budget', () => {
  const now = new Date(NOW);
  const zone = (domain: string, spf: string) =>
    new ZoneResolver([parseZone(`$ORIGIN ${domain}.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "${spf}"\n`, { file: domain })]);
  /** A resolver whose answers (the zone's) are held until `release()`; `asked` counts the questions. */
  function heldResolver(inner: Resolver) {
    let released!: Promise<void>;
    const held = {
      asked: 0,
      release: () => {},
      /** Holds the answers again, until the next `release()`. */
      hold: () => {
        released = new Promise<void>((resolve) => (held.release = resolve));
      },
      resolve: async <T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> => {
        held.asked++;
        await released;
        return inner.resolve(name, type);
      },
    };
    held.hold();
    return held;
  }
  /** named.example's record lets its failing source pass (not ready); without the record it would be ready. */
  async function seeded(stores: Stores) {
    await stores.monitors.create(monitorOf(0, 'named.example'));
    expect(await stores.reports.add(dayReport('r-named', 'named.example', 100, 90, '2026-11-27T10:00:00.000Z'))).toBe('stored');
  }
  const named = zone('named.example', 'v=spf1 ip4:203.0.113.9 -all');

  it('an unanswered analysis: the page is served, the row checking SPF; once answered, a later view shows the verdict', async () => {
    const stores = createMemoryStores();
    await seeded(stores);
    const resolver = heldResolver(named);
    const rows = await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, resolver);
    // Served while the answer is held: the analysis began, and the row is neither verdict.
    expect(resolver.asked).toBeGreaterThan(0);
    expect(rows.find((r) => r.domain === 'named.example')?.readiness).toBe('checking-spf');
    // A view while it is still held: still pending (the same analysis, not asked again).
    const asked = resolver.asked;
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, resolver))[0]?.readiness).toBe('checking-spf');
    expect(resolver.asked).toBe(asked);
    resolver.release();
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, resolver))[0]?.readiness).toBe('not-ready');
    expect((await reportPageFigures(stores, 'named.example', now, { resolver: named })).readiness).toBe('not-ready');
    // OVERVIEW_SPF_MEMO_MS later the record is read again: while that answer is held, the verdict judged
    // with the previous analysis is shown (not pending); once answered, judged with the new one.
    resolver.hold();
    const later = new Date(now.getTime() + OVERVIEW_SPF_MEMO_MS + 1);
    const askedBefore = resolver.asked;
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, later, resolver))[0]?.readiness).toBe('not-ready');
    expect(resolver.asked).toBeGreaterThan(askedBefore);
    resolver.release();
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, later, resolver))[0]?.readiness).toBe('not-ready');
  });

  it('the console page draws the pending row in words while the answer is held, and the verdict after', async () => {
    const held = heldResolver(named);
    const service = await consoleService({ clock: new TestClock(Date.parse(NOW)), extra: { reports: { resolver: held } } });
    try {
      await seeded(service.stores);
      const owner = await addMember(service.app, service.stores, ORG_A.id, 'owner@a.example', 'owner', service.clock);
      const cell = (body: string) => {
        const at = body.indexOf('<tr data-domain="named.example">');
        const row = body.slice(at, body.indexOf('</tr>', at));
        return row.slice(row.lastIndexOf('<td', row.lastIndexOf('<td') - 1));
      };
      const before = await owner.get('/console?sort=readiness');
      expect(before.statusCode).toBe(200);
      expect(cell(before.body)).toContain('<td data-readiness="checking-spf">Checking SPF…</td>');
      expect(before.body).toContain('<p id="readiness-pending" role="status"><span id="readiness-pending-count">1</span> domain: ');
      held.release();
      const after = await owner.get('/console');
      expect(cell(after.body)).toContain('<td>Not yet</td>');
      expect(after.body).not.toContain('readiness-pending');
    } finally {
      await service.app.close();
    }
  });

  it('a resolver that fails (SERVFAIL): the page is served, the row unknown rather than ready', async () => {
    const stores = createMemoryStores();
    await seeded(stores);
    const failing: Resolver = { resolve: async () => ({ kind: 'error', reason: 'servfail' }) };
    const rows = await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, failing);
    expect(rows[0]?.readiness).toBe('spf-unreadable');
    // Failing again: still no verdict; a resolver that answers gives it.
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, failing))[0]?.readiness).toBe('spf-unreadable');
    expect((await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, named))[0]?.readiness).toBe('not-ready');
  });

  it('many unanswered domains: OVERVIEW_SPF_AT_ONCE analyses asked at once, every row pending, none ready; released, every verdict', async () => {
    const stores = createMemoryStores();
    const domains = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    for (const [i, domain] of domains.entries()) {
      await stores.monitors.create(monitorOf(i, domain));
      expect(await stores.reports.add(dayReport(`r-${domain}`, domain, 100, 90, `2026-11-27T10:00:${String(i).padStart(2, '0')}.000Z`))).toBe('stored');
    }
    const inner = new ZoneResolver(domains.map((d) => parseZone(`$ORIGIN ${d}.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "v=spf1 ip4:203.0.113.9 -all"\n`, { file: d })));
    const resolver = heldResolver(inner);
    const readinessOf = async () => (await overviewRows(stores.monitors, stores.reports, ORG_A.id, now, resolver)).map((r) => r.readiness);
    expect(await readinessOf()).toEqual(domains.map(() => 'checking-spf'));
    // The others wait their turn (each analysis asks the domain's TXT first).
    expect(resolver.asked).toBe(OVERVIEW_SPF_AT_ONCE);
    resolver.release();
    expect(await readinessOf()).toEqual(domains.map(() => 'not-ready'));
  });
});
