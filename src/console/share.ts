/**
 * Sharing one domain's report dashboard with someone who has no account (a consultant, an
 * auditor): an owner or admin makes a read-only link at `/shared/reports/<token>`. The token is 32
 * random bytes (unguessable), only its SHA-256 is stored (src/store/share-links.ts), it expires
 * (SHARE_LINK_DEFAULT_DAYS, shorter on request) and a revoked link answers 410 at once (every visit
 * reads the store). The page is `noindex` (header and meta), sends a Referer to this origin only, and reaches nothing
 * else: only its domain's dashboard and that dashboard's CSV tables, never a console page or the API.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ShareLink } from '../store/share-links.js';
import type { Stores } from '../store/types.js';
import { html, type SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { CONSOLE_PATH, secretHash } from './accounts.js';
import { dashboardCsv, dashboardBody, figure } from './reports-view.js';
import { domainReports, organisationHasDomain, parseWindow, sendCsv, tableOf, WINDOW_FIX, type RefusalCode, type ReportSettings, type ReportViewer } from './reports-routes.js';
import { FORM_TOKEN_FIELD } from './sessions.js';
import { domainPath, ROLE_CAN, when } from './views.js';

/** Where shared dashboards are served: outside `/console` (no session is read there). */
export const SHARED_PATH = '/shared/reports';
/** A link's life when none is asked for. */
export const SHARE_LINK_DEFAULT_DAYS = 30;
/** The longest life a link may have. */
export const SHARE_LINK_MAX_DAYS = 30;
/** Bytes of randomness in a token (256 bits). */
export const SHARE_TOKEN_BYTES = 32;
/** Longest note on a link. */
export const MAX_SHARE_LABEL_LENGTH = 100;
/** Links listed on a dashboard (the newest). */
export const SHARE_LINKS_SHOWN = 50;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What the share routes take from the console plugin. */
export interface ShareContext {
  stores: Stores;
  now: () => Date;
  settings: ReportSettings;
  /** A state-changing request: the session's token, then the role (403 otherwise). */
  actor(request: FastifyRequest, need: 'any' | 'manage' | 'own'): Promise<ReportViewer>;
  sendPage(reply: FastifyReply, status: number, body: SafeHtml): FastifyReply;
  refuse(code: RefusalCode, details: { message: string; why: string; fix: string }): Error;
  expectedOrigin(request: FastifyRequest): string;
}

const formField = (request: FastifyRequest, name: string): string => {
  const v = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
};

/** Whether a link opens now: `open`, or why not. */
export function linkState(link: ShareLink | undefined, now: Date): 'open' | 'unknown' | 'revoked' | 'expired' {
  if (!link) return 'unknown';
  if (link.revokedAt !== null) return 'revoked';
  return link.expiresAt <= now.toISOString() ? 'expired' : 'open';
}

/** The page a shared link shows when it does not open (404 unknown, 410 revoked or expired). */
function closedPage(state: 'unknown' | 'revoked' | 'expired'): SafeHtml {
  const text = { unknown: 'There is no shared dashboard at this address.', revoked: 'This shared dashboard was withdrawn by the organisation that shared it.', expired: 'This shared dashboard has expired.' }[state];
  return page({ title: 'Shared dashboard unavailable', description: text, noindex: true, nav: html``, body: html`<h1>Shared dashboard unavailable</h1><p id="share-closed">${text}</p><p>Ask the person who sent you the link for a new one.</p>` });
}

/**
 * Registers the share routes and gives the dashboard's "Share" section. Without a share-link store
 * (a host's own stores) nothing is registered and the section is not shown.
 */
export function shareRoutes(app: FastifyInstance, context: ShareContext): { sharesSection?: (viewer: ReportViewer, domain: string, request: FastifyRequest) => Promise<SafeHtml | null> } {
  const links = context.stores.shareLinks;
  if (!links) return {};
  const audit = (verb: string, past: string, idParam?: string) => ({ config: { public: true, audit: { service: 'console', resource: 'share_link', verb, past, ...(idParam ? { idParam } : {}) } }, schema: { hide: true } });
  const windowOf = (query: Record<string, unknown>) => {
    const parsed = parseWindow(query, context.now());
    if (!parsed.ok) throw context.refuse('VALIDATION_FAILED', { message: parsed.message, why: 'The window of a report dashboard is a number of days or two dates.', fix: WINDOW_FIX });
    return parsed;
  };
  const publicConfig = { config: { public: true }, schema: { hide: true } };
  const noDomain = () => context.refuse('NOT_FOUND', { message: 'This organisation has no reports or monitor for that domain.', why: 'Neither a monitor nor a report of this organisation names it.', fix: 'Pick a domain from the list of reports.' });

  async function section(signed: ReportViewer, domain: string, _request: FastifyRequest, made: { url: string; expiresAt: string } | null = null): Promise<SafeHtml | null> {
    if (!links) return null;
    const manage = ROLE_CAN.manage(signed.role);
    const all = (await links.list(signed.viewer.organizationId, domain)).slice(0, SHARE_LINKS_SHOWN);
    const at = context.now();
    const base = `${domainPath(domain)}/shares`;
    const token = html`<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${signed.viewer.token}">`;
    return html`<section aria-labelledby="share-title" class="card" id="share"><h2 id="share-title">Share this dashboard</h2>
<p>A read-only link to this domain's reports for someone without an account. It shows this page and its CSV tables only, expires, and stops working the moment it is revoked.</p>
${made ? html`<div class="card notice tone-success" role="status" id="share-made"><p>Copy the link now: it is not shown again. It works until ${when(made.expiresAt)}.</p><label class="record-label" for="share-url">Shared link (shown once)</label><textarea class="secret" id="share-url" readonly rows="3" spellcheck="false">${made.url}</textarea></div>` : null}
${manage
  ? html`<form method="post" action="${base}" class="console-form" id="share-form">${token}
<div><label for="share-label">Who it is for</label><input type="text" id="share-label" name="label" maxlength="${MAX_SHARE_LABEL_LENGTH}" placeholder="The auditor"></div>
<div><label for="share-days">Works for (days, at most ${SHARE_LINK_MAX_DAYS})</label><input type="number" id="share-days" name="days" min="1" max="${SHARE_LINK_MAX_DAYS}" value="${SHARE_LINK_DEFAULT_DAYS}" required></div>
<div><button type="submit" class="secondary">Make a link</button></div></form>`
  : html`<p class="muted" id="share-viewer">Only an owner or admin can make or revoke links.</p>`}
${all.length === 0
  ? html`<p id="no-shares">No link has been made.</p>`
  : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="shares-caption"><table id="shares"><caption id="shares-caption">Links to this dashboard</caption>
<thead><tr><th scope="col">For</th><th scope="col">Made</th><th scope="col">State</th>${manage ? html`<th scope="col">Action</th>` : null}</tr></thead>
<tbody>${all.map((l) => {
      const state = linkState(l, at);
      return html`<tr><td>${l.label || 'No note'}</td><td>${when(l.createdAt)}</td><td>${state === 'open' ? `Works until ${when(l.expiresAt)}` : state === 'revoked' ? `Revoked ${when(l.revokedAt)}` : 'Expired'}</td>${manage ? html`<td>${state === 'open' ? html`<form method="post" action="${base}/${l.id}/revoke" class="inline-action">${token}<button type="submit" class="danger">Revoke<span class="visually-hidden"> the link for ${l.label || 'no note'}</span></button></form>` : null}</td>` : null}</tr>`;
    })}</tbody></table></div>`}
</section>`;
  }

  app.post<{ Params: { domain: string } }>(`${CONSOLE_PATH}/domains/:domain/shares`, audit('create', 'created'), async (request, reply) => {
    const signed = await context.actor(request, 'manage');
    const domain = await organisationHasDomain(context.stores, signed.viewer.organizationId, request.params.domain);
    if (!domain) throw noDomain();
    const typed = formField(request, 'days').trim();
    const days = typed === '' ? SHARE_LINK_DEFAULT_DAYS : /^\d{1,3}$/.test(typed) ? Number(typed) : NaN;
    if (!Number.isInteger(days) || days < 1 || days > SHARE_LINK_MAX_DAYS) {
      throw context.refuse('VALIDATION_FAILED', { message: `A link works for 1 to ${SHARE_LINK_MAX_DAYS} days, not "${typed.slice(0, 20)}".`, why: 'A shared dashboard must expire.', fix: `Type a whole number of days from 1 to ${SHARE_LINK_MAX_DAYS}.` });
    }
    const at = context.now();
    const token = randomBytes(SHARE_TOKEN_BYTES).toString('base64url');
    const link: ShareLink = {
      id: `shr_${randomBytes(12).toString('hex')}`,
      tokenHash: secretHash(token),
      organizationId: signed.viewer.organizationId,
      domain,
      label: formField(request, 'label').trim().slice(0, MAX_SHARE_LABEL_LENGTH),
      createdAt: at.toISOString(),
      createdBy: signed.user.id,
      expiresAt: new Date(at.getTime() + days * 86_400_000).toISOString(),
      revokedAt: null,
    };
    await links.create(link);
    request.auditResourceId = link.id;
    const url = `${context.expectedOrigin(request)}${SHARED_PATH}/${token}`;
    const body = await section(signed, domain, request, { url, expiresAt: link.expiresAt });
    return context.sendPage(reply, 200, page({ title: `Share ${domain}`, description: `Read-only links to the DMARC and TLS reports for ${domain}.`, noindex: true, nav: html`<nav aria-label="Console"><a href="${CONSOLE_PATH}">Domains</a><a href="${CONSOLE_PATH}/reports">Reports</a></nav>`, wide: true, body: html`<p><a href="${domainPath(domain)}/reports">Back to the reports for ${domain}</a></p><h1>Share the reports for ${domain}</h1>${body}` }));
  });

  app.post<{ Params: { domain: string; id: string } }>(`${CONSOLE_PATH}/domains/:domain/shares/:id/revoke`, audit('delete', 'deleted', 'id'), async (request, reply) => {
    const signed = await context.actor(request, 'manage');
    const domain = await organisationHasDomain(context.stores, signed.viewer.organizationId, request.params.domain);
    if (!domain) throw noDomain();
    const own = (await links.list(signed.viewer.organizationId, domain)).some((l) => l.id === request.params.id);
    if (!own || !(await links.revoke(signed.viewer.organizationId, request.params.id, context.now().toISOString()))) {
      throw context.refuse('NOT_FOUND', { message: 'No such open link.', why: 'This domain has no open link with that id (it may be revoked already).', fix: 'Pick a link from the list.' });
    }
    return reply.code(303).redirect(`${domainPath(domain)}/reports#share`, 303);
  });

  /** The link of a shared request, or the closed page sent (null). */
  async function openLink(token: string, reply: FastifyReply): Promise<ShareLink | null> {
    void reply.header('x-robots-tag', 'noindex, nofollow');
    const link = TOKEN.test(token) ? await links!.byTokenHash(secretHash(token)) : undefined;
    const state = linkState(link, context.now());
    if (state === 'open') return link!;
    context.sendPage(reply, state === 'unknown' ? 404 : 410, closedPage(state));
    return null;
  }

  app.get<{ Params: { token: string }; Querystring: Record<string, unknown> }>(`${SHARED_PATH}/:token`, publicConfig, async (request, reply) => {
    const link = await openLink(request.params.token, reply);
    if (!link) return reply;
    const { window, days, now } = windowOf(request.query);
    const shown = await domainReports(context.stores, context.settings, link.organizationId, link.domain, days, now);
    const base = `${SHARED_PATH}/${request.params.token}`;
    return context.sendPage(
      reply,
      200,
      page({
        title: `Reports for ${link.domain}`,
        description: `A read-only dashboard of the DMARC and TLS reports for ${link.domain}, shared by the domain's owner.`,
        noindex: true,
        nav: html``,
        wide: true,
        footer: html`A read-only dashboard shared by the domain's owner. It works until ${when(link.expiresAt)}.`,
        body: dashboardBody({ shown, window, base, csvBase: `${base}.csv`, heading: html`<p class="muted" id="shared-note">Shared read-only view · ${figure(shown.summary.messages)} message(s) reported</p><h1 id="reports-title">DMARC and TLS reports for ${link.domain}</h1>` }),
      }),
    );
  });

  app.get<{ Params: { token: string }; Querystring: Record<string, unknown> }>(`${SHARED_PATH}/:token.csv`, publicConfig, async (request, reply) => {
    const link = await openLink(request.params.token, reply);
    if (!link) return reply;
    const t = tableOf(request.query);
    if (!t) {
      context.sendPage(reply, 404, closedPage('unknown'));
      return reply;
    }
    const { window, days, now } = windowOf(request.query);
    const shown = await domainReports(context.stores, context.settings, link.organizationId, link.domain, days, now);
    return sendCsv(reply, `${link.domain}-${t}.csv`, dashboardCsv(shown, t, window.includeUntrusted));
  });

  return { sharesSection: (viewer, domain, request) => section(viewer, domain, request) };
}
