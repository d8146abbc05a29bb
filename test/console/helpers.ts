/**
 * Shared set-up of the console tests: the whole service (API, page and console, from
 * src/service/compose.ts) over memory or SQL stores, two organisations, fixture zones for a few
 * domains, monitors with an in-process scheduler, and a cookie-keeping client over `inject` that
 * sends forms as a browser does (Origin, the session's token).
 */
import { digestReports, type AggregateReport } from '@spoof-checker/engine';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { fixture } from '../../packages/engine/test/reports/helpers.js';
import { invite, secretHash } from '../../src/console/accounts.js';
import { ingestReportFile, unauthenticatedOrigin } from '../../src/ingest/ingest.js';
import { withLatestResults } from '../../src/jobs/monitors/latest-results.js';
import { buildApp, type AppOptions } from '../../src/service/compose.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { ConsoleRole } from '../../src/store/console.js';
import type { Monitor } from '../../src/store/monitors.js';
import type { NewReport } from '../../src/store/reports.js';
import type { Stores } from '../../src/store/types.js';
import { monitorService, TestClock } from '../monitors/helpers.js';

/** The organisations every console test has. */
export const ORG_A = { id: 'org_a', name: 'Acme Corp' };
export const ORG_B = { id: 'org_b', name: 'Bravo Ltd' };
/** A password the rules accept. */
export const GOOD_PASSWORD = 'correct horse battery staple';

/** A zone for `domain` with `dmarc` as its DMARC record (or none). */
export function zoneFor(domain: string, dmarc: string | null): string {
  return `$ORIGIN ${domain}.
$TTL 300
@ IN SOA ns1 hostmaster 1 3600 600 86400 1
@ IN NS ns1
@ IN MX 10 mx1
@ IN TXT "v=spf1 ip4:198.51.100.24/29 -all"
${dmarc === null ? '' : `_dmarc IN TXT "${dmarc}"`}
mx1 IN A 198.51.100.25
ns1 IN A 198.51.100.53
`;
}

/** The domains the fixture resolver answers for. */
export const DOMAINS: Record<string, string | null> = {
  'alpha.example': 'v=DMARC1; p=reject',
  'beta.example': null,
  'gamma.example': 'v=DMARC1; p=none',
  'other.example': 'v=DMARC1; p=quarantine',
};

/** The whole service with the console, over `stores` (memory by default). */
export async function consoleService(options: { stores?: Stores; publicUrl?: string; clock?: TestClock; extra?: Partial<AppOptions> } = {}) {
  const stores = options.stores ?? createMemoryStores();
  await stores.apiKeys.addOrganization(ORG_A);
  await stores.apiKeys.addOrganization(ORG_B);
  // The zones as they are now: a test changes a domain's DMARC record with `setDmarc`.
  const dmarcs = { ...DOMAINS };
  let resolver = new ZoneResolver(Object.entries(dmarcs).map(([d, dmarc]) => parseZone(zoneFor(d, dmarc))));
  const setDmarc = (domain: string, dmarc: string | null) => {
    dmarcs[domain] = dmarc;
    resolver = new ZoneResolver(Object.entries(dmarcs).map(([d, value]) => parseZone(zoneFor(d, value))));
  };
  const clock = options.clock ?? new TestClock(Date.parse('2026-03-01T12:00:00.000Z'));
  const check = (domain: string) => checkDomain(domain, { resolver });
  const monitors = monitorService({ store: stores.monitors, check: withLatestResults(check, stores.console, { now: clock.now }), clock });
  const app = await buildApp({
    stores,
    check: (domain) => check(domain),
    monitors: monitors.service,
    rateLimits: false,
    now: clock.now,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...options.extra,
  });
  return { app, stores, clock, monitors, setDmarc };
}

/** The report fixtures of the dashboards (the gmx.net one arrives untrusted, to show that section). */
const DASHBOARD_REPORT_FILES = ['google.com!spf-cloud-ec2.example!1795219200!1795305599.zip', 'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz', 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml.gz', 'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml', 'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz'];
/** The domain the dashboard fixtures report on. */
export const DASHBOARD_DOMAIN = 'spf-cloud-ec2.example';
/** The window the dashboard fixtures fall in, as a query. */
export const DASHBOARD_WINDOW = '?from=2026-10-29&until=2026-11-27';
/** The token of the open shared link to DASHBOARD_DOMAIN's reports. */
export const SHARE_TOKEN = 'S'.repeat(43);

/** Reports of DASHBOARD_DOMAIN for ORG_A's report dashboards, and an open shared link (SHARE_TOKEN) to them. */
export async function seedDashboards(stores: Stores): Promise<void> {
  const sink = { store: stores.reports, organizationsFor: async () => [ORG_A.id], rejectionOrganizations: [ORG_A.id], now: () => new Date('2026-11-27T12:00:00Z') };
  for (const file of DASHBOARD_REPORT_FILES) await ingestReportFile(sink, { bytes: fixture(file), fileName: file.replace(/^src\//, '') }, unauthenticatedOrigin(file.startsWith('src/gmx') ? 'smtp' : 'file', null));
  await stores.shareLinks!.create({ id: 'shr_axe', tokenHash: secretHash(SHARE_TOKEN), organizationId: ORG_A.id, domain: DASHBOARD_DOMAIN, label: 'axe', createdAt: '2026-03-01T00:00:00.000Z', createdBy: 'cli', expiresAt: '2026-12-31T00:00:00.000Z', revokedAt: null });
}

/** The moment the overview's report fixtures (`monitorOf`, `dayReport`) are made for, unless told. */
export const OVERVIEW_NOW = '2026-11-27T12:00:00.000Z';

/** ORG_A's `i`th monitor of `domain`, checked (protected) an hour before `now`. */
export function monitorOf(i: number, domain: string, now: string = OVERVIEW_NOW): Monitor {
  const at = new Date(Date.parse(now) - 3_600_000).toISOString();
  return {
    id: `mon_${String(i).padStart(8, '0')}`,
    organizationId: ORG_A.id,
    domain,
    intervalMinutes: 1440,
    webhookUrl: null,
    checks: [],
    sealedSecret: 'x',
    machine: { confirmed: null, candidate: null, consecutiveFailures: 0 },
    lastResult: { checkedAt: at, outcome: 'checked', verdict: 'protected', inboxOutcome: 'rejected', transportVerdict: null, digest: 'd'.repeat(64), reason: null },
    nextRunAt: new Date(Date.parse(at) + 86_400_000).toISOString(),
    leaseUntil: null,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * A trusted report of ORG_A's `domain` for the day before `now`: `pass` of `messages` pass DMARC (DKIM
 * aligned, from 192.0.2.1), the others fail it from 203.0.113.9 with nothing authenticating them
 * (unauthorised unless the domain's SPF record lets that address pass); received at `receivedAt`.
 */
export function dayReport(id: string, domain: string, messages: number, pass: number, receivedAt: string, now: string = OVERVIEW_NOW): NewReport {
  const begin = Date.parse(now) / 1000 - 86_400;
  const records = [
    { sourceIp: '192.0.2.1', count: pass, headerFrom: domain, disposition: 'none', dkimResult: 'pass', spfResult: 'pass', envelopeFrom: null, envelopeTo: null, auth: { dkim: [{ domain, selector: 's1', result: 'pass' }], spf: [] }, reasons: [] },
    { sourceIp: '203.0.113.9', count: messages - pass, headerFrom: domain, disposition: 'none', dkimResult: 'fail', spfResult: 'fail', envelopeFrom: null, envelopeTo: null, auth: { dkim: [], spf: [] }, reasons: [] },
  ];
  const aggregate = { kind: 'aggregate', dateRange: { begin, end: begin + 86_399 }, policyPublished: { domain }, records } as unknown as AggregateReport;
  return {
    id,
    organizationId: ORG_A.id,
    kind: 'aggregate',
    identity: `google.com|${id}|${begin}`,
    domain,
    begin,
    end: begin + 86_399,
    reporter: 'google.com',
    orgName: 'google.com',
    reportId: id,
    origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: 'google.com', dkim: 'pass', spf: 'pass', dmarc: 'pass', receivedAt },
    document: '{}',
    records: records.map((r) => ({ sourceIp: r.sourceIp, count: r.count, headerFrom: domain, disposition: 'none', dkimAligned: r.dkimResult === 'pass', spfAligned: false, detail: '{}' })),
    trusted: true,
    digest: digestReports([aggregate], domain).senders,
  };
}

/** A member with a password, made through the invitation (the CLI's path). */
export async function addMember(app: FastifyInstance, stores: Stores, organizationId: string, email: string, role: ConsoleRole, clock: TestClock): Promise<Browser> {
  const invited = await invite(stores.console, { organizationId, email, role, invitedBy: 'cli', now: clock.now() });
  if (invited.kind !== 'invited') throw new Error(invited.message);
  const browser = new Browser(app);
  const accept = await browser.get(invited.path);
  if (accept.statusCode !== 200) throw new Error(`invitation page answered ${accept.statusCode}`);
  const existing: Record<string, string> = /id="confirm"/.test(accept.body) ? { password: GOOD_PASSWORD, confirm: GOOD_PASSWORD } : { password: GOOD_PASSWORD };
  const done = await browser.post(invited.path, existing, { token: false });
  if (done.statusCode !== 303) throw new Error(`accepting answered ${done.statusCode}: ${done.body.slice(0, 500)}`);
  return browser;
}

/** A client over inject that keeps cookies and sends forms as a browser does. */
export class Browser {
  cookies = new Map<string, string>();
  /** The last page's form token. */
  token = '';
  constructor(
    readonly app: FastifyInstance,
    readonly origin = 'http://localhost',
  ) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(response: LightMyRequestResponse): void {
    const set = response.headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = /name="csrf_token" value="([^"]+)"/.exec(response.body);
    if (token) this.token = token[1]!;
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: 'GET', url, headers: this.cookies.size ? { cookie: this.cookieHeader } : {} });
    this.#keep(response);
    return response;
  }

  /** POSTs a form; `token: false` leaves the session's token out, `origin` overrides the Origin header (null: none). */
  async post(url: string, form: Record<string, string | string[]>, options: { token?: boolean | string; origin?: string | null } = {}): Promise<LightMyRequestResponse> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
    if (options.token !== false) params.set('csrf_token', typeof options.token === 'string' ? options.token : this.token);
    const origin = options.origin === undefined ? this.origin : options.origin;
    const response = await this.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin !== null ? { origin } : {}), ...(this.cookies.size ? { cookie: this.cookieHeader } : {}) },
      payload: params.toString(),
    });
    this.#keep(response);
    return response;
  }

  /** Signs in with email and password; the response. */
  async signIn(email: string, password = GOOD_PASSWORD): Promise<LightMyRequestResponse> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password }, { token: false });
  }
}
