/**
 * The console's pages at scale (`npx tsx bench/console.ts [--domains N] [--requests R] [--quick | --smoke] [--spf-latency-ms L]`):
 * (`--quick`: 1,000 domains, 40 requests per page; `--smoke`: 50 domains, 3 requests: bench/smoke.ts)
 * an organisation with N monitored domains (default 1,000, the per-organisation cap), each with its
 * latest check and confirmed state (what a monitor keeps) and its latest full result (what the
 * console's domain page shows), on SQLite (the store's default) and on PostgreSQL (a throw-away
 * server, test/setup/postgres.ts). A signed-in owner asks for `/console` (every domain at a
 * glance, the worst first) and for domain pages, R times each, through the whole service
 * (src/service/compose.ts, `inject`: routing, the session's reads, the store's rows, rendering).
 *
 * Every domain also has DMARC aggregate reports (REPORT_DAYS days, three sources a day: its own mail,
 * a mail service failing alignment on every third domain, a forger), so the overview's 7-day pass rate
 * and readiness are read as they are for a real organisation: one read of every domain's day totals,
 * and the senders of a domain with failing mail classed once per change (the first view, `coldMs`).
 *
 * Reported (one JSON line at the end): per store, the 50th and 95th percentile of each page's time
 * in milliseconds, and whether they meet issue 40's targets (overview ≤ 50 ms, domain page ≤ 30 ms
 * at the 95th percentile); and the overview right after a report arrived (`overviewAfterReport`: the
 * day totals of the domains whose reports arrived since are read again). The overview reads the monitors' rows in one query (the latest state is
 * kept per monitor, never a check per view).
 *
 * `--spf-latency-ms L`: the service has a report resolver that answers every question after L ms (every
 * domain's SPF record lets its own mail pass, not the forger), so the overview's readiness reads the SPF
 * record of each domain that is ready without it and has a failing unauthorised sender (two in three),
 * OVERVIEW_SPF_AT_ONCE at a time, waiting OVERVIEW_SPF_WAIT_MS in all per view. Reported as `spf`: the
 * first view's time and its rows still checking SPF, and the views (and time) until none is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { checkDomain } from '../packages/engine/src/check.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import type { DnsAnswer, RecordType, Resolver } from '../packages/engine/src/dns/types.js';
import { OVERVIEW_SPF_AT_ONCE, OVERVIEW_SPF_WAIT_MS } from '../src/console/overview.js';
import { loadZoneDirectory } from '../packages/engine/src/zones/load.js';
import { secretHash } from '../src/console/accounts.js';
import { newSessionId, sessionCookieName, SESSION_ABSOLUTE_MS } from '../src/console/sessions.js';
import { buildApp } from '../src/service/compose.js';
import type { SenderDigestEntry } from '../packages/engine/src/reports/senders.js';
import type { Monitor, MonitorSnapshot } from '../src/store/monitors.js';
import type { NewReport } from '../src/store/reports.js';
import { openPostgresStores } from '../src/store/postgres.js';
import { openSqliteStores } from '../src/store/sqlite.js';
import type { Stores } from '../src/store/types.js';
import { startPostgres } from '../test/setup/postgres.js';
import { SMOKE, smokeOr } from './smoke.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Issue 40's targets at the 95th percentile. */
export const OVERVIEW_P95_TARGET_MS = 50;
export const DOMAIN_P95_TARGET_MS = 30;

const { values } = parseArgs({ options: { domains: { type: 'string' }, requests: { type: 'string' }, quick: { type: 'boolean' }, smoke: { type: 'boolean' }, 'spf-latency-ms': { type: 'string' } }, strict: true });
const DOMAINS = Number(values.domains ?? smokeOr(50, 1_000));
const REQUESTS = Number(values.requests ?? smokeOr(3, values.quick ? 40 : 200));
const ORG = 'org_bench';
/** The report resolver's delay per answer (`--spf-latency-ms`); undefined: the service has no report resolver. */
const SPF_LATENCY_MS = values['spf-latency-ms'] === undefined ? undefined : Number(values['spf-latency-ms']);
/** The views asked at most, after the first, for every SPF verdict to arrive (`--spf-latency-ms`). */
const SPF_SETTLE_VIEWS = 200;

/** A resolver answering every question after `ms`: TXT with an SPF record that lets the domains' own mail pass (198.51.100.25), nothing else. */
function slowResolver(ms: number): Resolver {
  return {
    resolve: <T extends RecordType>(_name: string, type: T) =>
      new Promise<DnsAnswer<T>>((resolve) =>
        setTimeout(() => resolve((type === 'TXT' ? { kind: 'records', records: [['v=spf1 ip4:198.51.100.25 -all']], ttl: 300 } : { kind: 'nodata', ttl: 300 }) as DnsAnswer<T>), ms),
      ),
  };
}
const say = (line: string) => process.stderr.write(`${line}\n`);

/** The percentile `p` (0–100) of `values`, nearest rank. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const VERDICTS = ['spoofable', 'partially_protected', 'protected'] as const;
/** Days of reports each domain has (the overview reads the last 7). */
const REPORT_DAYS = 3;

/** One source's digest entry of a day. */
function entry(day: string, source: string, messages: number, pass: number, extra: Partial<SenderDigestEntry> = {}): SenderDigestEntry {
  return {
    day, source, messages, spfAligned: pass, dkimAligned: pass, dmarcPass: pass, failing: messages - pass, forwardedFailing: 0,
    selectors: [], dkimDomains: [], spfDomains: [], verified: [], ownFailed: [], ownFailedNoSelector: false, broken: [], brokenNoSelector: 0,
    unalignedDkimPass: null, unalignedSpfPass: null, ownSpfFailed: null, ...extra,
  };
}

/** Domain `i`'s report of the day `daysAgo` before now: its own mail, a forger, and on every third domain a mail service signing as itself. */
function reportOf(i: number, domain: string, daysAgo: number, now: number): NewReport {
  const dayStart = Math.floor(now / 86_400_000 - daysAgo) * 86_400;
  const day = new Date(dayStart * 1000).toISOString().slice(0, 10);
  const digest = [entry(day, '198.51.100.25', 1000 + i, 1000 + i), entry(day, '203.0.113.66', 12, 0)];
  if (i % 3 === 0) digest.push(entry(day, '198.51.100.200', 200, 0, { dkimDomains: ['esp-mail.example'], unalignedDkimPass: 'esp-mail.example' }));
  const id = `rep_${i}_${daysAgo}`;
  return {
    id, organizationId: ORG, kind: 'aggregate', identity: `bench|${id}`, domain, begin: dayStart, end: dayStart + 86_399, reporter: 'bench.example', orgName: 'bench', reportId: id,
    origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: new Date(now).toISOString() },
    document: '{}',
    records: digest.map((e) => ({ sourceIp: e.source, count: e.messages, headerFrom: domain, disposition: 'none', dkimAligned: e.dkimAligned > 0, spfAligned: e.spfAligned > 0, detail: '{}' })),
    trusted: true,
    digest,
  };
}

/** The organisation's N monitors (each with a latest check and a confirmed state) and their latest results. */
async function fill(stores: Stores, resultJson: string): Promise<void> {
  await stores.apiKeys.addOrganization({ id: ORG, name: 'Bench Org' });
  const now = Date.now();
  for (let i = 0; i < DOMAINS; i++) {
    const domain = `domain-${String(i).padStart(5, '0')}.example`;
    const verdict = VERDICTS[i % 3]!;
    const at = new Date(now - i * 60_000).toISOString();
    const snapshot: MonitorSnapshot = {
      kind: 'checked',
      verdict,
      inboxOutcome: verdict === 'protected' ? 'rejected' : 'delivered',
      dmarc: { status: 'found', record: verdict === 'spoofable' ? null : `v=DMARC1; p=${verdict === 'protected' ? 'reject' : 'none'}; rua=mailto:d@${domain}` },
      spf: { status: 'found', record: 'v=spf1 include:_spf.google.com -all' },
      dkim: { status: 'found', keys: ['google:valid'] },
      mx: { status: 'found', hosts: [`mx1.${domain}`, `mx2.${domain}`] },
      findings: ['dmarc-protected', 'spf-valid'],
      transport: { verdict: 'opportunistic' },
      lookalikes: [`${domain.replace('domain', 'd0main')} critical`, `${domain.replace('.example', '.examp1e')} high`],
      dnssec: { status: 'insecure', expiring: false },
    };
    const monitor: Monitor = {
      id: `mon_${String(i).padStart(8, '0')}`,
      organizationId: ORG,
      domain,
      intervalMinutes: 1440,
      webhookUrl: null,
      checks: ['transport', 'lookalikes'],
      sealedSecret: 'x',
      machine: { confirmed: { digest: 'd'.repeat(64), snapshot, since: at }, candidate: null, consecutiveFailures: 0 },
      lastResult: { checkedAt: at, outcome: 'checked', verdict, inboxOutcome: snapshot.inboxOutcome, transportVerdict: 'opportunistic', digest: 'd'.repeat(64), reason: null },
      nextRunAt: new Date(now + 86_400_000).toISOString(),
      leaseUntil: null,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    await stores.monitors.create(monitor);
    await stores.console.putLatestResult({ domain, checkedAt: at, result: resultJson.replaceAll('p-reject.example', domain) });
    for (let d = 1; d <= REPORT_DAYS; d++) await stores.reports.add(reportOf(i, domain, d, now));
  }
}

/** A signed-in owner's cookie. */
async function signIn(stores: Stores): Promise<string> {
  await stores.console.createUser({ id: 'usr_bench', email: 'owner@bench.example', passwordHash: null, totpSecret: null, totpLastStep: 0, recoveryCodes: [], createdAt: new Date().toISOString() });
  await stores.console.putMembership({ userId: 'usr_bench', organizationId: ORG, role: 'owner', createdAt: new Date().toISOString() });
  const id = newSessionId();
  const now = new Date();
  await stores.console.createSession({ idHash: secretHash(id), userId: 'usr_bench', organizationId: ORG, createdAt: now.toISOString(), lastSeenAt: now.toISOString(), expiresAt: new Date(now.getTime() + SESSION_ABSOLUTE_MS).toISOString(), pendingSecondFactor: false });
  return `${sessionCookieName(false)}=${id}`;
}

interface PageFigures {
  p50: number;
  p95: number;
  target: number;
  met: boolean;
  /** This process's CPU time per request (user + system), mean: what a request costs whatever else the machine runs. */
  cpuMs: number;
}

/** The first view with a slow report resolver (`--spf-latency-ms`): its time, its rows still checking SPF, and the views until none is. */
interface SpfFigures {
  latencyMs: number;
  waitMs: number;
  atOnce: number;
  firstViewMs: number;
  firstViewChecking: number;
  /** Views after the first until no row was checking SPF (null: more than SPF_SETTLE_VIEWS), and the time they took in all. */
  viewsToSettle: number | null;
  settleMs: number;
  /** The slowest of those views. */
  slowestViewMs: number;
}

async function measure(name: string, stores: Stores, resultJson: string): Promise<{ overview: PageFigures & { coldMs: number; coldCpuMs: number }; domain: PageFigures; overviewAfterReport: PageFigures; spf?: SpfFigures }> {
  say(`${name}: ${DOMAINS} domains…`);
  await fill(stores, resultJson);
  const cookie = await signIn(stores);
  const app = await buildApp({ stores, check: async () => JSON.parse(resultJson), rateLimits: false, ...(SPF_LATENCY_MS === undefined ? {} : { reports: { resolver: slowResolver(SPF_LATENCY_MS) } }) });
  try {
    const cpu = { overview: 0, domain: 0, changed: 0, cold: 0 };
    let checking = 0;
    const get = async (url: string, page?: keyof typeof cpu) => {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const response = await app.inject({ method: 'GET', url, headers: { cookie } });
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpuBefore);
      if (page) cpu[page] += (used.user + used.system) / 1000;
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
      // The rows checking SPF, every page's (the overview says how many above its table).
      checking = Number(/<span id="readiness-pending-count">(\d+)<\/span>/.exec(response.body)?.[1] ?? 0);
      return ms;
    };
    const round = (ms: number) => Math.round(ms * 100) / 100;
    // The first view: every domain's senders with failing mail are classed (then remembered until a report changes them).
    const coldMs = round(await get('/console', 'cold'));
    const coldCpuMs = round(cpu.cold);
    let spf: SpfFigures | undefined;
    if (SPF_LATENCY_MS !== undefined) {
      const firstViewChecking = checking;
      let views = 0;
      let settleMs = 0;
      let slowest = 0;
      while (checking > 0 && views < SPF_SETTLE_VIEWS) {
        const ms = await get('/console');
        views++;
        settleMs += ms;
        slowest = Math.max(slowest, ms);
      }
      spf = { latencyMs: SPF_LATENCY_MS, waitMs: OVERVIEW_SPF_WAIT_MS, atOnce: OVERVIEW_SPF_AT_ONCE, firstViewMs: coldMs, firstViewChecking, viewsToSettle: checking === 0 ? views : null, settleMs: round(settleMs), slowestViewMs: round(slowest) };
      say(`${name}: SPF answers after ${SPF_LATENCY_MS} ms: first view ${coldMs} ms, ${firstViewChecking} rows checking SPF; ${views} more views (${spf.settleMs} ms in all, slowest ${spf.slowestViewMs} ms) until none`);
    }
    // Warm up (the first request compiles the routes' code paths and fills the statement caches).
    for (let i = 0; i < Math.min(5, REQUESTS); i++) {
      await get('/console');
      await get('/console/domains/domain-00000.example');
    }
    const overview: number[] = [];
    const domain: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      overview.push(await get('/console', 'overview'));
      domain.push(await get(`/console/domains/domain-${String((i * 7919) % DOMAINS).padStart(5, '0')}.example`, 'domain'));
    }
    // The overview after a report arrived (as reports do, all day): the day totals of the domain whose
    // report arrived are read again (ReportStore.arrivals) and its readiness worked out again.
    const changed: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const d = (i * 7919) % DOMAINS;
      const fresh = reportOf(d, `domain-${String(d).padStart(5, '0')}.example`, 1, Date.now());
      await stores.reports.add({ ...fresh, id: `rep_new_${i}`, identity: `bench|rep_new_${i}`, reportId: `rep_new_${i}` });
      changed.push(await get('/console', 'changed'));
    }
    const figures = (values: number[], target: number, cpuMs: number): PageFigures => {
      const p95 = percentile(values, 95);
      return { p50: Math.round(percentile(values, 50) * 100) / 100, p95: Math.round(p95 * 100) / 100, target, met: p95 <= target, cpuMs: Math.round((cpuMs / values.length) * 100) / 100 };
    };
    const result = {
      overview: { ...figures(overview, OVERVIEW_P95_TARGET_MS, cpu.overview), coldMs, coldCpuMs },
      domain: figures(domain, DOMAIN_P95_TARGET_MS, cpu.domain),
      overviewAfterReport: figures(changed, OVERVIEW_P95_TARGET_MS, cpu.changed),
      ...(spf ? { spf } : {}),
    };
    say(
      `${name}: /console first view ${result.overview.coldMs} ms (CPU ${result.overview.coldCpuMs} ms); p50 ${result.overview.p50} ms, p95 ${result.overview.p95} ms (target ${OVERVIEW_P95_TARGET_MS}), CPU ${result.overview.cpuMs} ms/request; ` +
        `after a report p50 ${result.overviewAfterReport.p50} ms, p95 ${result.overviewAfterReport.p95} ms, CPU ${result.overviewAfterReport.cpuMs} ms/request; ` +
        `domain page p50 ${result.domain.p50} ms, p95 ${result.domain.p95} ms (target ${DOMAIN_P95_TARGET_MS}), CPU ${result.domain.cpuMs} ms/request`,
    );
    return result;
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const resolver = new ZoneResolver(await loadZoneDirectory(join(ROOT, 'fixtures/zones')));
  const resultJson = JSON.stringify(await checkDomain('p-reject.example', { resolver }));
  const dir = await mkdtemp(join(tmpdir(), 'bench-console-'));
  const report: Record<string, unknown> = { domains: DOMAINS, requests: REQUESTS, mode: SMOKE ? 'smoke' : values.quick ? 'quick' : 'full' };
  try {
    const { stores: sqlite } = await openSqliteStores(dir, { pruneAutomatically: false });
    try {
      report['sqlite'] = await measure('SQLite', sqlite, resultJson);
    } finally {
      await sqlite.close();
    }
    let server: Awaited<ReturnType<typeof startPostgres>> | undefined;
    try {
      server = await startPostgres();
      const { stores: postgres } = await openPostgresStores(server.url, { pruneAutomatically: false });
      try {
        report['postgres'] = await measure('PostgreSQL', postgres, resultJson);
      } finally {
        await postgres.close();
      }
    } catch (error) {
      report['postgres'] = null;
      report['postgresError'] = error instanceof Error ? error.message : String(error);
      say(`PostgreSQL not measured: ${String(report['postgresError'])}`);
    } finally {
      await server?.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
