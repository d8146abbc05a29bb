/**
 * The console's pages of issue 41 that reach people and remember: alert channels (`/console/alerts`),
 * a domain's remembered lookalikes and its failure reports. Registered by the console plugin
 * (./plugin.ts) with its own session, token, role and 404 checks handed in; the work is the
 * services' (src/jobs/monitors/alerts.ts `AlertService`, the remembered-lookalike store's `setOurs`,
 * src/ingest/failure-reports.ts `failureReportsBySource`), never a second implementation.
 * Every POST answers with a redirect (Post/Redirect/Get), except a new signed webhook, whose
 * secret is shown once on the page that answers the POST.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normaliseDomainInput } from '@spoof-checker/engine';
import { failureReportsBySource } from '../ingest/failure-reports.js';
import type { AlertChannelRefusal, AlertService } from '../jobs/monitors/alerts.js';
import type { MonitorService } from '../jobs/monitors/monitors.js';
import { ALERT_CHANNEL_KINDS, ALERT_EVENT_KINDS, type AlertChannelKind, type AlertEventKind } from '../store/alerts.js';
import type { ConsoleRole } from '../store/console.js';
import type { Monitor } from '../store/monitors.js';
import type { Stores } from '../store/types.js';
import type { SafeHtml } from '../web/html.js';
import { ALERTS_PATH, alertsPage, testOutcome } from './alerts-view.js';
import { FAILURE_SOURCES_DETAILED, FAILURE_WINDOWS, failuresPage } from './failures-view.js';
import { LOOKALIKES_PER_PAGE, lookalikesPage } from './lookalikes-view.js';
import { domainPath, doneNotices, type ConsoleViewer, type Notice } from './views.js';
import { CONSOLE_PATH } from './accounts.js';

type Form = Record<string, string | string[]>;
interface Who {
  viewer: ConsoleViewer;
  role: ConsoleRole;
}

/** What the console plugin hands these pages: its checks and answers. */
export interface PeoplePagesKit {
  stores: Stores;
  monitors: MonitorService | undefined;
  now: () => Date;
  /** The signed-in viewer of a page, or null when a redirect was sent. */
  viewer(request: FastifyRequest, reply: FastifyReply): Promise<Who | null>;
  /** The actor of a POST: token first, then role (403 otherwise). */
  actor(request: FastifyRequest, need: 'any' | 'manage' | 'own'): Promise<Who>;
  /** The organisation's monitor of a domain, or a 404 refusal. */
  monitorOf(who: Who, domain: string): Promise<Monitor>;
  send(reply: FastifyReply, status: number, body: SafeHtml): FastifyReply;
  seeOther(reply: FastifyReply, location: string): FastifyReply;
  /** A 404 refusal through the catalogue. */
  notFound(details: { message: string; why: string; fix: string }): Error;
  audit(resource: string, verb: string, past: string, idParam?: string): object;
}

const field = (body: unknown, name: string): string => {
  const value = (body as Form | undefined)?.[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? '') : '';
};
const fields = (body: unknown, name: string): string[] => {
  const value = (body as Form | undefined)?.[name];
  return typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
};
/** One item a line (or comma): the textareas of recipients and domains. */
const lines = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

function refusalText(refused: AlertChannelRefusal): string {
  switch (refused.kind) {
    case 'invalid':
      return `This channel cannot be used: ${refused.message}.`;
    case 'url-refused':
      return `This URL cannot be used: ${refused.message}.`;
    case 'email-not-configured':
      return 'Email channels need a mail relay: the operator starts the service with --alert-smtp URL and --alert-from ADDRESS.';
    case 'too-many-channels':
      return `This organisation already has ${refused.max} channels, the most it may have: remove one first.`;
  }
}

/** Reads the notice an action of these pages left in the query (`?done=...`). */
const doneOf = doneNotices({
  channel_added: { tone: 'success', text: 'The channel was added.' },
  channel_saved: { tone: 'success', text: 'The rules were saved.' },
  channel_removed: { tone: 'success', text: 'The channel was removed: nothing more is sent to it.' },
  ours: { tone: 'success', text: 'The name is marked ours: it is never alerted.' },
  not_ours: { tone: 'success', text: 'The name is no longer marked ours.' },
  hashing: { tone: 'success', text: 'The setting was saved: it applies to reports received from now on.' },
});
const schema = { hide: true };
const page = { public: true };

/** Registers the alerts, lookalikes and failure-report pages on the console plugin's instance. */
export function registerPeoplePages(app: FastifyInstance, kit: PeoplePagesKit): void {
  const alerts = (): AlertService | undefined => kit.monitors?.alerts;
  const noChannel = () => kit.notFound({ message: 'No such alert channel.', why: 'This organisation has no channel with that id.', fix: 'Pick a channel from the list.' });

  // ---- alerts ------------------------------------------------------------------------------

  async function renderAlerts(reply: FastifyReply, who: Who, status: number, notice: Notice | null, tested: string | null, form?: { kind: string; name: string; recipients: string; domains: string }) {
    const service = alerts();
    const channels = service ? await service.store.listChannels(who.viewer.organizationId) : null;
    return kit.send(reply, status, alertsPage({ viewer: who.viewer, channels, emailConfigured: service?.emailConfigured ?? false, tested, notice, ...(form ? { form } : {}) }));
  }

  app.get<{ Querystring: Record<string, unknown> }>(ALERTS_PATH, { config: page, schema }, async (request, reply) => {
    const who = await kit.viewer(request, reply);
    if (!who) return reply;
    const service = alerts();
    // After "Send a test" (Post/Redirect/Get): the outcome the service kept on the channel.
    const tested = typeof request.query['tested'] === 'string' ? request.query['tested'] : null;
    let notice = doneOf(request.query);
    if (tested !== null && service) {
      const channel = await service.store.getChannel(who.viewer.organizationId, tested);
      if (channel?.lastTest) notice = { ...testOutcome(channel.lastTest), text: `Test of "${channel.name}": ${testOutcome(channel.lastTest).text}` };
    }
    const wait = typeof request.query['wait'] === 'string' && /^[0-9]{1,3}$/.test(request.query['wait']) ? Number(request.query['wait']) : null;
    if (wait !== null) notice = { tone: 'warning', text: `A test was sent moments ago: wait ${wait} second(s) before the next.` };
    return renderAlerts(reply, who, 200, notice, tested);
  });

  app.post(ALERTS_PATH, { config: kit.audit('alert_channel', 'create', 'created'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'manage');
    const service = alerts();
    if (!service) throw noChannel();
    const kind = field(request.body, 'kind');
    const form = { kind, name: field(request.body, 'name').slice(0, 200), recipients: field(request.body, 'recipients').slice(0, 4000), domains: field(request.body, 'domains').slice(0, 30_000) };
    if (!(ALERT_CHANNEL_KINDS as readonly string[]).includes(kind)) return renderAlerts(reply, who, 400, { tone: 'critical', text: 'Choose webhook, Slack, Teams or email.' }, null, form);
    const events = fields(request.body, 'events').filter((e): e is AlertEventKind => (ALERT_EVENT_KINDS as readonly string[]).includes(e));
    if (events.length === 0) return renderAlerts(reply, who, 400, { tone: 'critical', text: 'Tick at least one kind of event.' }, null, form);
    const url = field(request.body, 'url').trim();
    const created = await service.create(who.viewer.organizationId, {
      name: form.name,
      kind: kind as AlertChannelKind,
      ...(kind === 'email' ? { recipients: lines(form.recipients) } : { url }),
      events,
      domains: lines(form.domains),
    });
    if ('kind' in created) return renderAlerts(reply, who, created.kind === 'too-many-channels' ? 409 : 400, { tone: 'critical', text: refusalText(created) }, null, form);
    request.auditResourceId = created.channel.id;
    // A signed webhook's secret: shown on this answer only, never again.
    if (created.secret !== null) return renderAlerts(reply, who, 200, { tone: 'success', text: `The channel "${created.channel.name}" was added. Copy its signing secret now: it is not shown again.`, secret: created.secret, secretLabel: 'Webhook signing secret (shown once)' }, null);
    return kit.seeOther(reply, `${ALERTS_PATH}?done=channel_added`);
  });

  app.post<{ Params: { id: string } }>(`${ALERTS_PATH}/:id/rules`, { config: kit.audit('alert_channel', 'update', 'updated', 'id'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'manage');
    const service = alerts();
    if (!service) throw noChannel();
    const events = fields(request.body, 'events').filter((e): e is AlertEventKind => (ALERT_EVENT_KINDS as readonly string[]).includes(e));
    if (events.length === 0) return renderAlerts(reply, who, 400, { tone: 'critical', text: 'Tick at least one kind of event (or remove the channel).' }, null);
    const updated = await service.update(who.viewer.organizationId, request.params.id, { events, domains: lines(field(request.body, 'domains').slice(0, 30_000)), enabled: field(request.body, 'enabled') === 'yes' });
    if (updated === undefined) throw noChannel();
    if ('kind' in updated && !('organizationId' in updated)) return renderAlerts(reply, who, 400, { tone: 'critical', text: refusalText(updated) }, null);
    return kit.seeOther(reply, `${ALERTS_PATH}?done=channel_saved`);
  });

  app.post<{ Params: { id: string } }>(`${ALERTS_PATH}/:id/remove`, { config: kit.audit('alert_channel', 'delete', 'deleted', 'id'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'manage');
    const service = alerts();
    if (!service || !(await service.store.deleteChannel(who.viewer.organizationId, request.params.id))) throw noChannel();
    return kit.seeOther(reply, `${ALERTS_PATH}?done=channel_removed`);
  });

  app.post<{ Params: { id: string } }>(`${ALERTS_PATH}/:id/test`, { config: kit.audit('alert_channel', 'test', 'tested', 'id'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'manage');
    const service = alerts();
    if (!service) throw noChannel();
    const outcome = await service.sendTest(who.viewer.organizationId, request.params.id);
    if (outcome === undefined) throw noChannel();
    if ('retryAfterSeconds' in outcome) return kit.seeOther(reply, `${ALERTS_PATH}?wait=${outcome.retryAfterSeconds}`);
    return kit.seeOther(reply, `${ALERTS_PATH}?tested=${encodeURIComponent(request.params.id)}`);
  });

  // ---- lookalikes --------------------------------------------------------------------------

  app.get<{ Params: { domain: string }; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains/:domain/lookalikes`, { config: page, schema }, async (request, reply) => {
    const who = await kit.viewer(request, reply);
    if (!who) return reply;
    const monitor = await kit.monitorOf(who, request.params.domain);
    const store = kit.monitors?.lookalikes;
    const listed = store ? await store.list(who.viewer.organizationId, monitor.id, { page: 1, limit: LOOKALIKES_PER_PAGE }) : null;
    return kit.send(reply, 200, lookalikesPage({ viewer: who.viewer, monitor, entries: listed?.items ?? null, total: listed?.total ?? 0, notice: doneOf(request.query) }));
  });

  app.post<{ Params: { domain: string } }>(`${CONSOLE_PATH}/domains/:domain/lookalikes/ours`, { config: kit.audit('monitor', 'mark_lookalike', 'marked_lookalike', 'domain'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'manage');
    const monitor = await kit.monitorOf(who, request.params.domain);
    const store = kit.monitors?.lookalikes;
    const name = normaliseDomainInput(field(request.body, 'name'));
    const ours = field(request.body, 'ours') === 'yes';
    const updated = store && name.ok ? await store.setOurs(who.viewer.organizationId, monitor.id, name.domain, ours) : undefined;
    if (!updated) throw kit.notFound({ message: 'This domain does not remember that lookalike.', why: 'The name is not among the lookalikes its searches found.', fix: 'Pick a name from the list.' });
    return kit.seeOther(reply, `${domainPath(monitor.domain)}/lookalikes?done=${ours ? 'ours' : 'not_ours'}`);
  });

  // ---- failure reports ---------------------------------------------------------------------

  app.get<{ Params: { domain: string }; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains/:domain/failures`, { config: page, schema }, async (request, reply) => {
    const who = await kit.viewer(request, reply);
    if (!who) return reply;
    const monitor = await kit.monitorOf(who, request.params.domain);
    const asked = Number(request.query['days']);
    const days = (FAILURE_WINDOWS as readonly number[]).includes(asked) ? asked : 30;
    const org = who.viewer.organizationId;
    const since = new Date(kit.now().getTime() - days * 86_400_000).toISOString();
    const [summary, settings] = await Promise.all([failureReportsBySource(kit.stores.failureReports, org, monitor.domain, since), kit.stores.failureReports.settings(org)]);
    const newestIds = summary.sources.slice(0, FAILURE_SOURCES_DETAILED).flatMap((s) => s.latest.slice(0, 1));
    const newest = new Map((await Promise.all(newestIds.map((id) => kit.stores.failureReports.get(org, id)))).filter((r) => r !== undefined).map((r) => [r.id, r] as const));
    return kit.send(reply, 200, failuresPage({ viewer: who.viewer, monitor, days, summary, hashLocalParts: settings.hashLocalParts, newest, notice: doneOf(request.query) }));
  });

  app.post(`${CONSOLE_PATH}/failure-reports/hashing`, { config: kit.audit('failure_report_settings', 'update', 'updated'), schema }, async (request, reply) => {
    const who = await kit.actor(request, 'own');
    await kit.stores.failureReports.setSettings(who.viewer.organizationId, { hashLocalParts: field(request.body, 'hash') === 'yes' });
    const back = normaliseDomainInput(field(request.body, 'back'));
    if (back.ok && (await kit.stores.monitors.getByDomain(who.viewer.organizationId, back.domain))) return kit.seeOther(reply, `${domainPath(back.domain)}/failures?done=hashing`);
    return kit.seeOther(reply, `${CONSOLE_PATH}?done=saved`);
  });
}
