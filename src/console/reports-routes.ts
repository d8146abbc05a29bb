/**
 * The console's report routes: one domain's dashboard (`/console/domains/<domain>/reports`, and its
 * tables as CSV at `…/reports.csv?table=`) and the organisation's (`/console/reports`, `.csv`). Every
 * figure comes from `showReports`, as `reports show --json` does; the window is `?days=` (7, 30, 90
 * or any whole number up to MAX_REPORT_DAYS) or `?from=YYYY-MM-DD&until=YYYY-MM-DD`, and
 * `?untrusted=include` adds the untrusted reports to the chart, marked. Registered by the console
 * plugin (src/console/plugin.ts) with its session and role checks.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normaliseDomainInput, type Resolver } from '@spoof-checker/engine';
import type { ConsoleRole } from '../store/console.js';
import type { Stores } from '../store/types.js';
import { DAY_SECONDS, DEFAULT_REPORT_DAYS, MAX_REPORT_DAYS, reportWindow, showReports, type ShownReports } from '../summaries/summary.js';
import type { SafeHtml } from '../web/html.js';
import { CONSOLE_PATH } from './accounts.js';
import { dashboardCsv, domainReportsPage, ORGANISATION_REPORT_ROWS_PER_PAGE, organisationCsv, organisationReportsPage, REPORT_TABLES, type DashboardWindow, type OrganisationReportRow, type ReportTable } from './reports-view.js';
import type { ConsoleViewer } from './views.js';

/** Domains whose report counts are read at once (a page of `/console/reports`, or its CSV of every domain). */
export const ORGANISATION_COUNTS_AT_ONCE = 25;

/** Who is looking, as the plugin hands it over. */
export interface ReportViewer {
  viewer: ConsoleViewer;
  role: ConsoleRole;
  user: { id: string; email: string };
}

/** The service's report settings, as the API's report routes have them (src/http/routes/reports.ts). */
export interface ReportSettings {
  /** The resolver for the SPF record (the tightening) and the senders' reverse names; without it neither. */
  resolver?: Resolver;
  /** The service's own report domain: a domain elsewhere is shown the record that authorises it. */
  serviceDomain?: string | null;
}

/** What the report routes take from the console plugin. */
export interface ReportRoutesContext {
  stores: Stores;
  now: () => Date;
  settings: ReportSettings;
  /** The signed-in viewer, or null after a redirect to sign in was sent. */
  pageViewer(request: FastifyRequest, reply: FastifyReply): Promise<ReportViewer | null>;
  sendPage(reply: FastifyReply, status: number, body: SafeHtml): FastifyReply;
  /** The console's refusal page: 404 (another organisation's domain too), 400 (a window out of bounds), 403. */
  refuse(code: RefusalCode, details: { message: string; why: string; fix: string }): Error;
  /** The share links' section of a domain's dashboard (./share.ts), or null. */
  sharesSection?(viewer: ReportViewer, domain: string, request: FastifyRequest): Promise<SafeHtml | null>;
}

/** The refusals the report and share routes give. */
export type RefusalCode = 'FORBIDDEN' | 'NOT_FOUND' | 'VALIDATION_FAILED';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What a window out of bounds is told. */
export const WINDOW_FIX = 'Use ?days=7, ?days=30 or ?days=90, or ?from=2026-11-01&until=2026-11-30 (at most 366 days), optionally with &untrusted=include.';

/** A window read from a query, or what was wrong with it. */
export type ParsedWindow = { ok: true; window: DashboardWindow; days: number; now: Date } | { ok: false; message: string };

const invalid = (message: string): ParsedWindow => ({ ok: false, message });

/** The window a query asks for, or what was wrong (the routes answer 400 with it). */
export function parseWindow(query: Record<string, unknown>, now: Date): ParsedWindow {
  const one = (name: string): string | undefined => {
    const v = query[name];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  };
  const untrusted = one('untrusted');
  if (untrusted !== undefined && untrusted !== 'include' && untrusted !== 'exclude') return invalid(`untrusted must be "include" or "exclude", not "${untrusted.slice(0, 40)}".`);
  const includeUntrusted = untrusted === 'include';
  const from = one('from');
  const until = one('until');
  if ((from !== undefined && from !== '') || (until !== undefined && until !== '')) {
    if (!from || !until || !DATE.test(from) || !DATE.test(until)) return invalid('Give both from and until as dates such as 2026-11-01.');
    const start = Date.parse(`${from}T00:00:00Z`);
    const end = Date.parse(`${until}T23:59:59Z`);
    // Date.parse takes 2026-02-30 as 2026-03-02: a date must read back as itself.
    const real = (text: string, at: number) => !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === text;
    if (!real(from, start)) return invalid(`${from} is not a date of the calendar.`);
    if (!real(until, end)) return invalid(`${until} is not a date of the calendar.`);
    if (end < start) return invalid(`until (${until}) is before from (${from}).`);
    const days = Math.round((end + 1000 - start) / (DAY_SECONDS * 1000));
    if (days > MAX_REPORT_DAYS) return invalid(`The window is ${days} days; at most ${MAX_REPORT_DAYS}.`);
    // As `reports show --days N --until DATE`: the N days ending at the end of that UTC day.
    return { ok: true, window: { days, from, until, includeUntrusted }, days, now: new Date(end) };
  }
  const typed = one('days');
  const days = typed === undefined || typed === '' ? DEFAULT_REPORT_DAYS : /^\d{1,3}$/.test(typed) ? Number(typed) : NaN;
  if (!Number.isInteger(days) || days < 1 || days > MAX_REPORT_DAYS) return invalid(`days must be a whole number from 1 to ${MAX_REPORT_DAYS}, not "${String(typed).slice(0, 40)}".`);
  return { ok: true, window: { days, from: null, until: null, includeUntrusted }, days, now };
}

/** The table a CSV request names, or null. */
export function tableOf(query: Record<string, unknown>): ReportTable | null {
  const t = query['table'];
  return typeof t === 'string' && (REPORT_TABLES as readonly string[]).includes(t) ? (t as ReportTable) : null;
}

/** Whether the organisation has the domain: a monitor of it, or reports about it. */
export async function organisationHasDomain(stores: Stores, organizationId: string, typed: string): Promise<string | null> {
  const normalised = normaliseDomainInput(typed);
  if (!normalised.ok) return null;
  const domain = normalised.domain;
  if (await stores.monitors.getByDomain(organizationId, domain)) return domain;
  return (await stores.reports.domains(organizationId)).includes(domain) ? domain : null;
}

/** One domain's reports over the window: the CLI's and the API's own function, with the API's settings. */
export function domainReports(stores: Stores, settings: ReportSettings, organizationId: string, domain: string, days: number, now: Date): Promise<ShownReports> {
  return showReports({ store: stores.reports, organizationId, domain, days, now, ...(settings.resolver ? { resolver: settings.resolver } : {}), serviceDomain: settings.serviceDomain ?? null });
}

/** A CSV download: named, never cached, never sniffed. */
export function sendCsv(reply: FastifyReply, name: string, body: string): FastifyReply {
  return reply.code(200).type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`).send(body);
}

/** A domain's sums over the window (trusted, or every report when the untrusted are included), and its untrusted messages apart. */
type DomainSums = Omit<OrganisationReportRow, 'domain' | 'reports'>;

/**
 * The organisation's report table over the window: every domain's totals from one read of the day
 * totals (`domainDailyTotals`, the same sums `showReports` gives as its `series`), and the report
 * counts of the domains shown (`page`: ORGANISATION_REPORT_ROWS_PER_PAGE of them by name; null: all,
 * for the CSV), ORGANISATION_COUNTS_AT_ONCE at a time. Never the per-source digest.
 */
async function organisationReport(stores: Stores, organizationId: string, days: number, now: Date, includeUntrusted: boolean, page: number | null) {
  const { range, dayRange } = reportWindow(days, now);
  const [domains, totals] = await Promise.all([stores.reports.domains(organizationId), stores.reports.domainDailyTotals(organizationId, dayRange)]);
  const sums = new Map<string, DomainSums>();
  const total = { messages: 0, dmarcPass: 0 };
  for (const t of totals) {
    let sum = sums.get(t.domain);
    if (!sum) sums.set(t.domain, (sum = { messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0, untrustedMessages: 0 }));
    if (!t.trusted) sum.untrustedMessages += t.messages;
    if (!t.trusted && !includeUntrusted) continue;
    sum.messages += t.messages;
    sum.dmarcPass += t.dmarcPass;
    sum.spfAligned += t.spfAligned;
    sum.dkimAligned += t.dkimAligned;
    sum.failing += t.failing;
    total.messages += t.messages;
    total.dmarcPass += t.dmarcPass;
  }
  const pages = Math.max(1, Math.ceil(domains.length / ORGANISATION_REPORT_ROWS_PER_PAGE));
  const shownPage = page === null ? null : Math.min(page, pages);
  const shown = shownPage === null ? domains : domains.slice((shownPage - 1) * ORGANISATION_REPORT_ROWS_PER_PAGE, shownPage * ORGANISATION_REPORT_ROWS_PER_PAGE);
  const rows: OrganisationReportRow[] = [];
  for (let at = 0; at < shown.length; at += ORGANISATION_COUNTS_AT_ONCE) {
    const counts = await Promise.all(shown.slice(at, at + ORGANISATION_COUNTS_AT_ONCE).map((domain) => stores.reports.counts(organizationId, domain, range)));
    counts.forEach((c, i) => {
      const domain = shown[at + i]!;
      // As showReports counts them: aggregate reports less the untrusted ones.
      rows.push({ domain, reports: c.aggregate - c.untrusted, ...(sums.get(domain) ?? { messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0, untrustedMessages: 0 }) });
    });
  }
  return { rows, total, domains: domains.length, page: shownPage ?? 1, pages, dayRange };
}

/** The page a query asks for (`?page=N`, from 1), or null when it is not a page number. */
function pageOf(query: Record<string, unknown>): number | null {
  const typed = query['page'];
  if (typed === undefined || typed === '') return 1;
  return typeof typed === 'string' && /^[1-9][0-9]{0,5}$/.test(typed) ? Number(typed) : null;
}

/** Registers the report routes on the console's instance (before its catch-all). */
export function registerReportRoutes(app: FastifyInstance, context: ReportRoutesContext): void {
  const { stores } = context;
  /** The window of a request, or a 400 saying what was wrong and what to type. */
  const windowOf = (query: Record<string, unknown>) => {
    const parsed = parseWindow(query, context.now());
    if (!parsed.ok) throw context.refuse('VALIDATION_FAILED', { message: parsed.message, why: 'The window of a report dashboard is a number of days or two dates.', fix: WINDOW_FIX });
    return parsed;
  };
  const tableOrRefuse = (query: Record<string, unknown>) => {
    const table = tableOf(query);
    if (!table) throw context.refuse('VALIDATION_FAILED', { message: `table must be one of ${REPORT_TABLES.join(', ')}.`, why: 'Each table of the dashboard downloads on its own.', fix: 'Use the "Download CSV" link beside the table.' });
    return table;
  };
  const config = { config: { public: true }, schema: { hide: true } };
  const noDomain = () => context.refuse('NOT_FOUND', { message: 'This organisation has no reports or monitor for that domain.', why: 'Neither a monitor nor a report of this organisation names it.', fix: 'Pick a domain from the list of reports.' });

  app.get<{ Params: { domain: string }; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains/:domain/reports`, config, async (request, reply) => {
    const signed = await context.pageViewer(request, reply);
    if (!signed) return reply;
    const domain = await organisationHasDomain(stores, signed.viewer.organizationId, request.params.domain);
    if (!domain) throw noDomain();
    const { window, days, now } = windowOf(request.query);
    const shown = await domainReports(stores, context.settings, signed.viewer.organizationId, domain, days, now);
    const shares = context.sharesSection ? await context.sharesSection(signed, domain, request) : null;
    return context.sendPage(reply, 200, domainReportsPage({ viewer: signed.viewer, domain, shown, window, notice: null, shares }));
  });

  app.get<{ Params: { domain: string }; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains/:domain/reports.csv`, config, async (request, reply) => {
    const signed = await context.pageViewer(request, reply);
    if (!signed) return reply;
    const domain = await organisationHasDomain(stores, signed.viewer.organizationId, request.params.domain);
    if (!domain) throw noDomain();
    const table = tableOrRefuse(request.query);
    const { window, days, now } = windowOf(request.query);
    const shown = await domainReports(stores, context.settings, signed.viewer.organizationId, domain, days, now);
    return sendCsv(reply, `${domain}-${table}-${shown.summary.window.from}-${shown.summary.window.to}.csv`, dashboardCsv(shown, table, window.includeUntrusted));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/reports`, config, async (request, reply) => {
    const signed = await context.pageViewer(request, reply);
    if (!signed) return reply;
    const { window, days, now } = windowOf(request.query);
    const page = pageOf(request.query);
    if (page === null) throw context.refuse('VALIDATION_FAILED', { message: 'page must be a whole number from 1.', why: 'The domains are shown a page at a time.', fix: 'Use the Previous and Next links under the table.' });
    const report = await organisationReport(stores, signed.viewer.organizationId, days, now, window.includeUntrusted, page);
    const label = window.from ? `${window.from} to ${window.until}` : `The last ${days} days`;
    return context.sendPage(reply, 200, organisationReportsPage({ viewer: signed.viewer, rows: report.rows, window, windowLabel: label, shownDays: report.dayRange, total: report.total, domains: report.domains, page: report.page, pages: report.pages }));
  });

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/reports.csv`, config, async (request, reply) => {
    const signed = await context.pageViewer(request, reply);
    if (!signed) return reply;
    const { window, days, now } = windowOf(request.query);
    const { rows } = await organisationReport(stores, signed.viewer.organizationId, days, now, window.includeUntrusted, null);
    return sendCsv(reply, `reports-${days}-days.csv`, organisationCsv(rows));
  });
}
