/**
 * The console: where a domain's owner or an operator of many organisations signs in, sees every
 * domain at a glance and acts, on the same stores and service functions as the API (monitors are
 * created, changed, run and removed through MonitorService; API keys go into the API's key store;
 * accounts through ./accounts.ts, which `spoof-checker users` uses too).
 *
 * Security (docs/console.md, docs/security.md):
 * - sessions are server-side (the store), the cookie HttpOnly, SameSite=Lax, `__Host-` and Secure
 *   when the public origin is HTTPS; a new id at every sign-in; idle and absolute expiry;
 * - every POST is refused with 403 before anything else unless its Origin (or Referer) is the
 *   public origin (or, without one, the request's own) and, once a session exists, its form carries
 *   the session's token;
 * - roles are checked on every route; another organisation's domain is 404;
 * - failed sign-ins are limited per account and per client address (429 with Retry-After), the same
 *   answer for a wrong password and an unknown email;
 * - every POST is written to the record log with the acting user, without passwords, codes or tokens.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { normaliseDomainInput, type SpoofCheckResult } from '@spoof-checker/engine';
import { announceKeyRevoked } from '../store/key-revocations.js';
import { apiKeyIdFromDigest, digestApiKey } from '../store/api-keys.js';
import type { ConsoleOrganizationSettings, ConsoleRole, ConsoleSession, ConsoleSessionView, ConsoleUser } from '../store/console.js';
import type { MonitorCheckKind } from '../store/monitors.js';
import { MONITOR_CHECK_KINDS } from '../store/monitors.js';
import type { RecordLog, Stores } from '../store/types.js';
import type { MonitorService } from '../jobs/monitors/monitors.js';
import type { DemoSettings } from '../web/demo.js';
import { toHtmlString, type SafeHtml } from '../web/html.js';
import { SECURITY_HEADERS, type CatalogueAnswer } from '../web/plugin.js';
import { acceptInvitation, CONSOLE_PATH, invitationPath, invite, isRole, openInvitation, secretHash } from './accounts.js';
import { arrange, countStates, overviewQuery, overviewRows, type DomainRow } from './overview.js';
import { registerReportRoutes, type ReportSettings } from './reports-routes.js';
import { shareRoutes } from './share.js';
import { decoyHash, MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.js';
import {
  FORM_TOKEN_FIELD,
  formToken,
  formTokenMatches,
  newSessionId,
  sessionCookie,
  sessionIdFrom,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_INTERVAL_MS,
} from './sessions.js';
import { registerPeoplePages } from './people-pages.js';
import { hashRecoveryCode, newRecoveryCodes, newTotpSecret, otpauthUri, verifyTotp } from './totp.js';
import {
  accountPage,
  consoleErrorPage,
  domainPage,
  domainPath,
  doneNotices,
  enrolPage,
  invitationGonePage,
  invitationPage,
  keysPage,
  membersPage,
  overviewPage,
  ROLE_CAN,
  secondFactorPage,
  signInPage,
  type ConsoleViewer,
  type Notice,
} from './views.js';

/** Failed sign-ins allowed per account in SIGN_IN_WINDOW_MS; beyond, 429. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
/** Failed sign-ins allowed per client address in SIGN_IN_WINDOW_MS; beyond, 429. */
export const SIGN_IN_FAILURES_PER_ADDRESS = 50;
/** The window the failures are counted in: 15 minutes. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Largest form body the console reads (its forms are a few fields). */
export const CONSOLE_BODY_LIMIT_BYTES = 16 * 1024;
/** Longest API key name. */
export const MAX_KEY_NAME_LENGTH = 100;
/** Longest webhook URL a form may set (the monitors' own limit applies too). */
const MAX_FORM_URL_LENGTH = 2048;
/** The console's pages are per person and change: never cached. */
const NO_STORE = 'no-store';
const HTML_TYPE = 'text/html; charset=utf-8';
/** Changes shown on a domain page (the newest). */
export const DOMAIN_PAGE_CHANGES = 50;
/** Alerts shown on a domain page (the newest). */
export const DOMAIN_PAGE_DELIVERIES = 20;
/** The demo viewer's address (`serve --demo` on loopback signs in as them). */
export const DEMO_VIEWER_EMAIL = 'viewer@demo.invalid';

/** The catalogue codes the console names. */
export type ConsoleErrorCode = 'FORBIDDEN' | 'NOT_FOUND' | 'RATE_LIMITED' | 'INTERNAL' | 'STORE_UNAVAILABLE' | 'VALIDATION_FAILED';

/** What the console takes from the HTTP layer, handed in by the composition (src/service/compose.ts). */
export interface ConsoleHttp {
  /** The client's address, as the API's limits and record log see it (trusted proxies applied). */
  clientAddress(request: FastifyRequest): string;
  /** The per-client key of the API's limits (an IPv4 address, or an IPv6 /64). */
  clientKey(address: string): string;
  /** The record log's record of a finished request (the API's own builder: redaction, bounds). */
  record(request: FastifyRequest, reply: FastifyReply): RecordLog;
  /** The catalogue's answer for a code. */
  answer(code: ConsoleErrorCode, details?: { message?: string; why?: string; fix?: string; retryAfter?: number }): CatalogueAnswer;
  /** The catalogue's answer for any error. */
  answerFor(error: unknown): CatalogueAnswer;
}

/** The console's options. */
export interface ConsoleOptions {
  stores: Stores;
  /** Monitors: adding, changing, running and removing a domain go through it. Without it the domain actions answer 404. */
  monitors?: MonitorService;
  /** `https://console.example`: the origin POSTs must come from, and whether the cookie is Secure. */
  publicOrigin?: string;
  /** `serve --demo`: the banner, and on loopback a demo viewer signed in by itself. */
  demo?: { settings: DemoSettings; organizationId: string; autoSignIn: boolean } | null;
  http: ConsoleHttp;
  now?: () => Date;
  /** The report dashboards' resolver (SPF tightening, reverse names) and report domain: the API's report settings (src/console/reports-routes.ts). */
  reports?: ReportSettings;
}

/** Who a request is from, once its session is read. */
interface Signed {
  sessionId: string;
  session: ConsoleSession;
  user: ConsoleUser;
  role: ConsoleRole;
  viewer: ConsoleViewer;
}

type Form = Record<string, string | string[]>;
type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown>; Body: Form | undefined }>;

/** A refusal that becomes a page: 403, 404 or 429 through the catalogue. */
class ConsoleRefusal extends Error {
  constructor(
    readonly code: ConsoleErrorCode,
    readonly details: { message?: string; why?: string; fix?: string; retryAfter?: number } = {},
  ) {
    super(code);
  }
}

const field = (body: Form | undefined, name: string): string => {
  const value = body?.[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? '') : '';
};
const fields = (body: Form | undefined, name: string): string[] => {
  const value = body?.[name];
  return typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
};

/** Fields never written to the record log. */
const SECRET_FIELDS = new Set(['password', 'confirm', 'otp', 'secret', FORM_TOKEN_FIELD]);

/** The form's fields as the record log keeps them: secrets left out, values bounded. */
function loggedForm(body: unknown): Record<string, unknown> | null {
  if (typeof body !== 'object' || body === null) return null;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body as Form)) {
    if (SECRET_FIELDS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.slice(0, 10).map((v) => v.slice(0, 200)) : value.slice(0, 200);
  }
  return out;
}

/** The origin of a URL (`https://host[:port]`), or null. */
function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.origin === 'null' ? null : parsed.origin;
  } catch {
    return null;
  }
}

/** A `next` target that stays in the console (never another host, never `//`). */
function safeNext(next: string): string | null {
  return /^\/console(\/[A-Za-z0-9._~%/-]*)?(\?[A-Za-z0-9._~%&=+-]*)?$/.test(next) && !next.startsWith('//') ? next : null;
}

export const consolePlugin: FastifyPluginAsync<ConsoleOptions> = async (app: FastifyInstance, options) => {
  const { stores, http } = options;
  const store = stores.console;
  const now = options.now ?? (() => new Date());
  const demo = options.demo ?? null;
  const demoSettings = demo?.settings ?? null;
  const publicOrigin = options.publicOrigin ? originOf(options.publicOrigin) : null;
  const secure = publicOrigin?.startsWith('https:') ?? false;
  const signedIn = new WeakMap<FastifyRequest, Signed>();

  // Forms arrive URL-encoded: read here (the API reads JSON only), bounded.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: CONSOLE_BODY_LIMIT_BYTES }, (_request, body, done) => {
    const form: Form = Object.create(null) as Form;
    for (const [name, value] of new URLSearchParams(body as string)) {
      const current = form[name];
      form[name] = current === undefined ? value : Array.isArray(current) ? [...current, value] : [current, value];
    }
    done(null, form);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    void reply.header('cache-control', NO_STORE);
    if (request.method === 'POST') await writeRecord(request, reply);
    return payload;
  });

  /** One record per console action (every POST), with the acting user and never a secret. */
  async function writeRecord(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    try {
      const record = http.record(request, reply);
      const who = signedIn.get(request);
      record.actor_type = who ? 'user' : 'anonymous';
      record.actor_id = who?.user.id ?? '';
      record.service = 'console';
      record.request_body = loggedForm(request.body);
      const details = (record.requestDetails ?? {}) as Record<string, unknown>;
      // An invitation's token is in its path: never logged.
      if (typeof details['path'] === 'string' && details['path'].startsWith(`${CONSOLE_PATH}/invite/`)) details['path'] = `${CONSOLE_PATH}/invite/[REDACTED]`;
      if (record.resource_type === 'invitation') record.resource_id = '';
      record.metadata = { ...(record.metadata ?? {}), ...(who ? { userEmail: who.user.email } : {}) };
      await stores.recordLogs.append(who?.session.organizationId ?? null, record);
    } catch (error) {
      request.log.error({ err: error }, 'console: record log not written');
    }
  }

  app.setErrorHandler(async (error, request, reply) => {
    const who = signedIn.get(request) ?? null;
    const answer = error instanceof ConsoleRefusal ? http.answer(error.code, error.details) : http.answerFor(error);
    if (answer.statusCode >= 500) request.log.error({ err: error }, 'console: request failed');
    if (answer.retryAfter !== undefined) void reply.header('retry-after', String(answer.retryAfter));
    return sendPage(
      reply,
      answer.statusCode,
      consoleErrorPage({ status: answer.statusCode, title: answer.message, message: answer.message, why: answer.why, fix: answer.fix, viewer: who?.viewer ?? null, demo: demoSettings }),
    );
  });

  const sendPage = (reply: FastifyReply, status: number, body: SafeHtml) => reply.code(status).type(HTML_TYPE).send(toHtmlString(body));
  const seeOther = (reply: FastifyReply, location: string) => reply.code(303).redirect(location, 303);

  /** The origin this service is reached at: the public origin, else the request's own. */
  const expectedOrigin = (request: FastifyRequest): string => publicOrigin ?? originOf(`${request.protocol}://${request.host}`) ?? `${request.protocol}://${request.host}`;

  // Every POST: from this console, or 403 before anything else is looked at (RFC 6454 §7: Origin;
  // the Referer's origin when a browser sends no Origin).
  app.addHook('onRequest', async (request) => {
    if (request.method !== 'POST') return;
    const origin = typeof request.headers.origin === 'string' ? request.headers.origin : originOf(request.headers.referer);
    if (origin === null || origin !== expectedOrigin(request)) {
      throw new ConsoleRefusal('FORBIDDEN', { message: 'This form did not come from this console.', why: `The request came from ${origin ?? 'an unknown page'}, not from ${expectedOrigin(request)}.`, fix: 'Open the console page and send the form from there.' });
    }
  });

  // ---- sessions ----------------------------------------------------------------------------

  async function organizationName(id: string): Promise<string> {
    return (await stores.apiKeys.getOrganization(id))?.name ?? id;
  }

  /** The session of the request, valid and current; ended sessions are deleted (idle, absolute, user gone). */
  async function readSession(request: FastifyRequest, withMemberships = false): Promise<{ sessionId: string; session: ConsoleSession; user: ConsoleUser } | null> {
    const sessionId = sessionIdFrom(request.headers.cookie, secure);
    if (!sessionId) return null;
    const idHash = secretHash(sessionId);
    // The session, its user and the user's memberships (with their organisations' names and settings): one read.
    const view = await store.sessionView(idHash);
    if (!view) return null;
    const { session, user } = view;
    const at = now();
    const idleEnd = new Date(session.lastSeenAt).getTime() + SESSION_IDLE_MS;
    if (session.expiresAt <= at.toISOString() || idleEnd <= at.getTime()) {
      await store.deleteSession(idHash);
      return null;
    }
    if (at.getTime() - new Date(session.lastSeenAt).getTime() >= SESSION_TOUCH_INTERVAL_MS) await store.updateSession(idHash, { lastSeenAt: at.toISOString() });
    if (!user) {
      await store.deleteSession(idHash);
      return null;
    }
    if (withMemberships) membershipsRead.set(request, view.memberships);
    return { sessionId, session, user };
  }

  /** The memberships of a user, each with its organisation's name and settings (the name read where the store did not read it beside). */
  async function membershipsWithNames(memberships: ConsoleSessionView['memberships']) {
    return Promise.all(memberships.map(async (m) => ({ membership: m.membership, settings: m.settings, name: m.organizationName === undefined ? await organizationName(m.membership.organizationId) : (m.organizationName ?? m.membership.organizationId) })));
  }
  /** What readSession read for the request's viewer (its memberships, their organisations' names and settings). */
  const membershipsRead = new WeakMap<FastifyRequest, ConsoleSessionView['memberships']>();
  /** The settings of the viewer's organisation as the session's read gave them (needsEnrolment reads them again without). */
  const settingsRead = new WeakMap<Signed, ConsoleOrganizationSettings>();

  /** The signed-in viewer, or null (no session, a pending second factor, no membership left). */
  async function viewerOf(request: FastifyRequest): Promise<Signed | null> {
    const read = await readSession(request, true);
    if (!read || read.session.pendingSecondFactor) return null;
    const named = await membershipsWithNames(membershipsRead.get(request) ?? (await store.sessionView(secretHash(read.sessionId)))?.memberships ?? []);
    membershipsRead.delete(request);
    const memberships = named.map((n) => n.membership);
    let membership = memberships.find((m) => m.organizationId === read.session.organizationId);
    if (!membership) {
      // Removed from this organisation: another of theirs, else signed out.
      membership = memberships[0];
      if (!membership) return null;
      await store.updateSession(secretHash(read.sessionId), { organizationId: membership.organizationId });
      read.session.organizationId = membership.organizationId;
    }
    const organizations = named.map((n) => ({ id: n.membership.organizationId, name: n.name, role: n.membership.role }));
    const signed: Signed = {
      ...read,
      role: membership.role,
      viewer: {
        email: read.user.email,
        role: membership.role,
        organizationId: membership.organizationId,
        organizationName: organizations.find((o) => o.id === membership.organizationId)?.name ?? membership.organizationId,
        organizations,
        token: formToken(read.sessionId),
        demo: demoSettings,
      },
    };
    const settings = named.find((n) => n.membership.organizationId === membership.organizationId)?.settings;
    if (settings) settingsRead.set(signed, settings);
    return signed;
  }

  /** A new session for `user` on `organizationId` (a fresh id: the old cookie's session is ended). */
  async function startSession(request: FastifyRequest, reply: FastifyReply, user: ConsoleUser, organizationId: string, pendingSecondFactor: boolean): Promise<string> {
    const old = sessionIdFrom(request.headers.cookie, secure);
    if (old) await store.deleteSession(secretHash(old));
    const sessionId = newSessionId();
    const at = now();
    await store.createSession({
      idHash: secretHash(sessionId),
      userId: user.id,
      organizationId,
      createdAt: at.toISOString(),
      lastSeenAt: at.toISOString(),
      expiresAt: new Date(at.getTime() + SESSION_ABSOLUTE_MS).toISOString(),
      pendingSecondFactor,
    });
    void reply.header('set-cookie', sessionCookie(sessionId, secure));
    return sessionId;
  }

  /** The demo viewer, signed in by itself (`serve --demo` on loopback only). */
  async function demoSignIn(request: FastifyRequest, reply: FastifyReply): Promise<Signed | null> {
    if (!demo?.autoSignIn) return null;
    let user = await store.findUserByEmail(DEMO_VIEWER_EMAIL);
    if (!user) {
      user = { id: `usr_demo_viewer`, email: DEMO_VIEWER_EMAIL, passwordHash: null, totpSecret: null, totpLastStep: 0, recoveryCodes: [], createdAt: now().toISOString() };
      await store.createUser(user);
    }
    await store.putMembership({ userId: user.id, organizationId: demo.organizationId, role: 'viewer', createdAt: now().toISOString() });
    const sessionId = await startSession(request, reply, user, demo.organizationId, false);
    // Read back as the next request will (the cookie is set on this response).
    request.headers.cookie = `${request.headers.cookie ? `${request.headers.cookie}; ` : ''}${sessionCookie(sessionId, secure).split(';')[0]}`;
    return viewerOf(request);
  }

  /** A page for signed-in people: the viewer, or a redirect to sign in (null returned). */
  async function pageViewer(request: FastifyRequest, reply: FastifyReply): Promise<Signed | null> {
    const signed = (await viewerOf(request)) ?? (await demoSignIn(request, reply));
    if (!signed) {
      const read = await readSession(request);
      if (read?.session.pendingSecondFactor) {
        await seeOther(reply, read.user.totpSecret ? `${CONSOLE_PATH}/second-factor` : `${CONSOLE_PATH}/second-factor/enrol`);
        return null;
      }
      const next = safeNext(request.url);
      await seeOther(reply, `${CONSOLE_PATH}/sign-in${next && next !== CONSOLE_PATH ? `?next=${encodeURIComponent(next)}` : ''}`);
      return null;
    }
    signedIn.set(request, signed);
    return signed;
  }

  /**
   * A state-changing request of a signed-in person: the session's token first (403 otherwise, before
   * anything in the request is acted on), then the role.
   */
  async function actor(request: Req, need: 'any' | 'manage' | 'own'): Promise<Signed> {
    const read = await readSession(request);
    if (!read || !formTokenMatches(read.sessionId, field(request.body, FORM_TOKEN_FIELD))) {
      throw new ConsoleRefusal('FORBIDDEN', { message: 'This form is out of date or did not come from this console.', why: 'Each form of the console carries a token of your session; this one did not match (you may have signed out, or signed in again since).', fix: 'Reload the page and send the form again.' });
    }
    const signed = await viewerOf(request);
    if (!signed) throw new ConsoleRefusal('FORBIDDEN', { message: 'You are not signed in.', why: 'The session has ended or needs its second factor.', fix: 'Sign in again.' });
    signedIn.set(request, signed);
    const allowed = need === 'any' || (need === 'manage' ? ROLE_CAN.manage(signed.role) : ROLE_CAN.own(signed.role));
    if (!allowed) {
      throw new ConsoleRefusal('FORBIDDEN', {
        message: `Your role (${signed.role}) does not allow this.`,
        why: need === 'own' ? 'Only an owner of the organisation may do this.' : 'Only an owner or admin of the organisation may change things.',
        fix: 'Ask an owner of the organisation for the role this needs.',
      });
    }
    return signed;
  }

  /** Whether the organisation requires a second factor and the user has none (then only the account page works). */
  async function needsEnrolment(signed: Signed): Promise<boolean> {
    return signed.user.totpSecret === null && (settingsRead.get(signed) ?? (await store.getSettings(signed.viewer.organizationId))).requireSecondFactor;
  }

  const audit = (resource: string, verb: string, past: string, idParam?: string) => ({ public: true, audit: { service: 'console', resource, verb, past, ...(idParam ? { idParam } : {}) } });
  const page = { public: true };
  const schema = { hide: true };

  // ---- sign in, second factor, sign out ----------------------------------------------------

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/sign-in`, { config: page, schema }, async (request, reply) => {
    if (await viewerOf(request)) return seeOther(reply, CONSOLE_PATH);
    const next = typeof request.query['next'] === 'string' ? safeNext(request.query['next']) : null;
    return sendPage(reply, 200, signInPage({ email: '', error: null, demo: demoSettings, next }));
  });

  /** Refuses with 429 when the account or the address has failed too often in the window. */
  async function refuseOverLimit(keys: { account: string; address: string }): Promise<void> {
    const at = now().getTime();
    const since = new Date(at - SIGN_IN_WINDOW_MS).toISOString();
    const [account, address] = await Promise.all([store.failedSignIns(keys.account, since), store.failedSignIns(keys.address, since)]);
    const over = account.count >= SIGN_IN_FAILURES_PER_ACCOUNT ? account : address.count >= SIGN_IN_FAILURES_PER_ADDRESS ? address : null;
    if (!over) return;
    const retryAfter = Math.max(1, Math.ceil((new Date(over.oldest ?? new Date(at).toISOString()).getTime() + SIGN_IN_WINDOW_MS - at) / 1000));
    throw new ConsoleRefusal('RATE_LIMITED', {
      message: 'Too many failed sign-ins.',
      why: `After ${SIGN_IN_FAILURES_PER_ACCOUNT} failed sign-ins to one account, or ${SIGN_IN_FAILURES_PER_ADDRESS} from one address, in ${SIGN_IN_WINDOW_MS / 60_000} minutes, sign-in waits.`,
      fix: `Wait ${Math.ceil(retryAfter / 60)} minute(s), then try again.`,
      retryAfter,
    });
  }

  const limitKeys = (request: FastifyRequest, email: string) => ({ account: `account:${email}`, address: `address:${http.clientKey(http.clientAddress(request))}` });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/sign-in`, { config: audit('session', 'create', 'created'), schema }, async (request, reply) => {
    const typed = field(request.body, 'email').trim().toLowerCase().slice(0, 254);
    const password = field(request.body, 'password');
    const next = safeNext(field(request.body, 'next'));
    const keys = limitKeys(request, typed);
    await refuseOverLimit(keys);
    const user = typed === '' ? undefined : await store.findUserByEmail(typed);
    // An unknown email costs the same scrypt as a wrong password: one answer, in one time.
    const ok = password.length <= MAX_PASSWORD_LENGTH * 4 && (await verifyPassword(password, user?.passwordHash ?? (await decoyHash())));
    const memberships = ok && user ? await store.membershipsOf(user.id) : [];
    if (!ok || !user || user.passwordHash === null || memberships.length === 0) {
      await store.addFailedSignIn([keys.account, keys.address], now().toISOString());
      return sendPage(reply, 401, signInPage({ email: typed, error: 'The email or the password is wrong.', demo: demoSettings, next }));
    }
    const organizationId = memberships[0]!.organizationId;
    const required = (await Promise.all(memberships.map((m) => store.getSettings(m.organizationId)))).some((s) => s.requireSecondFactor);
    const pending = user.totpSecret !== null || required;
    await startSession(request, reply, user, organizationId, pending);
    if (pending) return seeOther(reply, user.totpSecret ? `${CONSOLE_PATH}/second-factor` : `${CONSOLE_PATH}/second-factor/enrol`);
    return seeOther(reply, next ?? CONSOLE_PATH);
  });

  /** The pending session of the second step, or a redirect to sign in. */
  async function pendingSession(request: FastifyRequest, reply: FastifyReply): Promise<{ sessionId: string; session: ConsoleSession; user: ConsoleUser } | null> {
    const read = await readSession(request);
    if (!read || !read.session.pendingSecondFactor) {
      await seeOther(reply, read ? CONSOLE_PATH : `${CONSOLE_PATH}/sign-in`);
      return null;
    }
    return read;
  }

  app.get(`${CONSOLE_PATH}/second-factor`, { config: page, schema }, async (request, reply) => {
    const read = await pendingSession(request, reply);
    if (!read) return reply;
    if (!read.user.totpSecret) return seeOther(reply, `${CONSOLE_PATH}/second-factor/enrol`);
    return sendPage(reply, 200, secondFactorPage({ token: formToken(read.sessionId), error: null, demo: demoSettings }));
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/second-factor`, { config: audit('session', 'verify', 'verified'), schema }, async (request, reply) => {
    const read = await readSession(request);
    if (!read || !formTokenMatches(read.sessionId, field(request.body, FORM_TOKEN_FIELD))) throw new ConsoleRefusal('FORBIDDEN', { message: 'This form is out of date.', why: 'It does not belong to your sign-in.', fix: 'Sign in again.' });
    if (!read.session.pendingSecondFactor || !read.user.totpSecret) return seeOther(reply, CONSOLE_PATH);
    const keys = limitKeys(request, read.user.email);
    await refuseOverLimit(keys);
    const code = field(request.body, 'otp').trim();
    const idHash = secretHash(read.sessionId);
    const step = verifyTotp(read.user.totpSecret, code, now().getTime(), read.user.totpLastStep);
    if (step !== null) {
      await store.updateUser(read.user.id, { totpLastStep: step });
    } else {
      const hash = hashRecoveryCode(code);
      if (code.length < 8 || !read.user.recoveryCodes.includes(hash)) {
        await store.addFailedSignIn([keys.account, keys.address], now().toISOString());
        return sendPage(reply, 401, secondFactorPage({ token: formToken(read.sessionId), error: 'That code is not right (or was used already). Try the code the app shows now.', demo: demoSettings }));
      }
      // A recovery code works once.
      await store.updateUser(read.user.id, { recoveryCodes: read.user.recoveryCodes.filter((h) => h !== hash) });
    }
    await store.updateSession(idHash, { pendingSecondFactor: false });
    signedIn.set(request, { ...read, role: 'viewer', viewer: {} as ConsoleViewer });
    return seeOther(reply, CONSOLE_PATH);
  });

  app.get(`${CONSOLE_PATH}/second-factor/enrol`, { config: page, schema }, async (request, reply) => {
    const read = await pendingSession(request, reply);
    if (!read) return reply;
    if (read.user.totpSecret) return seeOther(reply, `${CONSOLE_PATH}/second-factor`);
    const secret = newTotpSecret();
    return sendPage(reply, 200, enrolPage({ token: formToken(read.sessionId), secret, uri: otpauthUri(secret, read.user.email), error: null, demo: demoSettings, required: true }));
  });

  /** Turns the second factor on with the secret the form carried, if the code matches; the recovery codes, or null. */
  async function enableTotp(user: ConsoleUser, secret: string, code: string): Promise<string[] | null> {
    if (!/^[A-Z2-7]{32}$/.test(secret)) return null;
    const step = verifyTotp(secret, code, now().getTime(), 0);
    if (step === null) return null;
    const recovery = newRecoveryCodes();
    await store.updateUser(user.id, { totpSecret: secret, totpLastStep: step, recoveryCodes: recovery.hashes });
    return recovery.codes;
  }

  const recoveryNotice = (codes: string[]): Notice => ({
    tone: 'success',
    text: 'The second factor is on. Keep these recovery codes somewhere safe: each signs you in once if you lose your phone.',
    secret: codes.join('\n'),
    secretLabel: 'Recovery codes (shown once)',
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/second-factor/enrol`, { config: audit('second_factor', 'enable', 'enabled'), schema }, async (request, reply) => {
    const read = await readSession(request);
    if (!read || !formTokenMatches(read.sessionId, field(request.body, FORM_TOKEN_FIELD))) throw new ConsoleRefusal('FORBIDDEN', { message: 'This form is out of date.', why: 'It does not belong to your sign-in.', fix: 'Sign in again.' });
    if (!read.session.pendingSecondFactor || read.user.totpSecret) return seeOther(reply, CONSOLE_PATH);
    const secret = field(request.body, 'secret');
    const codes = await enableTotp(read.user, secret, field(request.body, 'otp'));
    if (!codes) {
      return sendPage(reply, 400, enrolPage({ token: formToken(read.sessionId), secret, uri: otpauthUri(secret, read.user.email), error: 'That code does not match: type the code the app shows now.', demo: demoSettings, required: true }));
    }
    await store.updateSession(secretHash(read.sessionId), { pendingSecondFactor: false });
    const signed = await viewerOf(request);
    if (!signed) return seeOther(reply, `${CONSOLE_PATH}/sign-in`);
    signedIn.set(request, signed);
    return sendPage(reply, 200, accountPage({ viewer: signed.viewer, totp: true, setup: null, error: null, notice: recoveryNotice(codes) }));
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/sign-out`, { config: audit('session', 'delete', 'deleted'), schema }, async (request, reply) => {
    await actor(request as Req, 'any');
    const sessionId = sessionIdFrom(request.headers.cookie, secure)!;
    // Ended on the server: the cookie, replayed, is signed out.
    await store.deleteSession(secretHash(sessionId));
    void reply.header('set-cookie', sessionCookie(null, secure));
    return seeOther(reply, `${CONSOLE_PATH}/sign-in`);
  });

  // ---- invitations -------------------------------------------------------------------------

  app.get<{ Params: { token: string } }>(`${CONSOLE_PATH}/invite/:token`, { config: page, schema }, async (request, reply) => {
    void reply.header('referrer-policy', 'no-referrer');
    const invitation = await openInvitation(store, request.params.token, now());
    if (!invitation) return sendPage(reply, 404, invitationGonePage(demoSettings));
    const existing = await store.findUserByEmail(invitation.email);
    return sendPage(
      reply,
      200,
      invitationPage({ email: invitation.email, organizationName: await organizationName(invitation.organizationId), role: invitation.role, existing: existing?.passwordHash != null, error: null, action: invitationPath(request.params.token), demo: demoSettings }),
    );
  });

  app.post<{ Params: { token: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/invite/:token`, { config: audit('invitation', 'accept', 'accepted'), schema }, async (request, reply) => {
    void reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params;
    const invitation = await openInvitation(store, token, now());
    if (!invitation) return sendPage(reply, 404, invitationGonePage(demoSettings));
    const existing = await store.findUserByEmail(invitation.email);
    const keys = limitKeys(request, invitation.email);
    if (existing?.passwordHash != null) await refuseOverLimit(keys);
    const outcome = await acceptInvitation(store, token, { password: field(request.body, 'password'), confirm: existing?.passwordHash != null ? undefined : field(request.body, 'confirm'), now: now() } as { password: string; confirm?: string; now: Date });
    if (outcome.kind === 'gone') return sendPage(reply, 404, invitationGonePage(demoSettings));
    if (outcome.kind !== 'accepted') {
      if (outcome.kind === 'wrong-password') await store.addFailedSignIn([keys.account, keys.address], now().toISOString());
      const error = outcome.kind === 'wrong-password' ? 'That is not the password of this account.' : outcome.message;
      return sendPage(
        reply,
        400,
        invitationPage({ email: invitation.email, organizationName: await organizationName(invitation.organizationId), role: invitation.role, existing: existing?.passwordHash != null, error, action: invitationPath(token), demo: demoSettings }),
      );
    }
    const required = (await store.getSettings(outcome.organizationId)).requireSecondFactor;
    const pending = outcome.user.totpSecret !== null || required;
    await startSession(request, reply, outcome.user, outcome.organizationId, pending);
    signedIn.set(request, { sessionId: '', session: { organizationId: outcome.organizationId } as ConsoleSession, user: outcome.user, role: invitation.role, viewer: {} as ConsoleViewer });
    if (pending) return seeOther(reply, outcome.user.totpSecret ? `${CONSOLE_PATH}/second-factor` : `${CONSOLE_PATH}/second-factor/enrol`);
    return seeOther(reply, CONSOLE_PATH);
  });

  // ---- the overview and the organisation switch ---------------------------------------------

  /** Reads a notice the previous action left in the query (`?done=...`): fixed words only, never the query's text. */
  const doneNotice = doneNotices({
    added: { tone: 'success', text: 'The domain was added: its first check runs now.' },
    removed: { tone: 'success', text: 'The domain is no longer watched.' },
    ran: { tone: 'success', text: 'A check was started: reload in a few seconds to see it.' },
    saved: { tone: 'success', text: 'The settings were saved.' },
    switched: { tone: 'info', text: 'You are now looking at another organisation.' },
    role: { tone: 'success', text: 'The role was changed.' },
    member_removed: { tone: 'success', text: 'The member was removed.' },
    revoked: { tone: 'success', text: 'The key was revoked: it no longer works.' },
    totp_off: { tone: 'success', text: 'The second factor is off.' },
    required: { tone: 'success', text: 'The setting was saved.' },
    enrol: { tone: 'warning', text: 'Your organisation requires a second factor: set one up to continue.' },
  });

  /** A page for a signed-in person who may need to set up the second factor first. */
  async function consoleViewer(request: FastifyRequest, reply: FastifyReply): Promise<Signed | null> {
    return (await consoleViewerAnd(request, reply, async () => undefined))?.signed ?? null;
  }

  /**
   * As consoleViewer, with the page's own reads (`read`) made beside the second factor's setting: a
   * page waits for one round trip fewer. The enrolment redirect still comes before anything `read` found
   * (a refusal of it included).
   */
  async function consoleViewerAnd<T>(request: FastifyRequest, reply: FastifyReply, read: (signed: Signed) => Promise<T>): Promise<{ signed: Signed; value: T } | null> {
    const signed = await pageViewer(request, reply);
    if (!signed) return null;
    const [enrol, value] = await Promise.allSettled([needsEnrolment(signed), read(signed)]);
    if (enrol.status === 'rejected') throw enrol.reason;
    if (enrol.value) {
      await seeOther(reply, `${CONSOLE_PATH}/account?setup=1&done=enrol`);
      return null;
    }
    if (value.status === 'rejected') throw value.reason;
    return { signed, value: value.value };
  }

  // The report pages' resolver: readiness judged with the SPF record as the report page judges it.
  const readOverviewRows = (signed: Signed) => overviewRows(stores.monitors, stores.reports, signed.viewer.organizationId, now(), options.reports?.resolver);

  async function renderOverview(request: Req, reply: FastifyReply, signed: Signed, status: number, extra: { notice?: Notice | null; addError?: string | null; addValue?: string; rows?: DomainRow[] } = {}) {
    const query = overviewQuery(request.query ?? {});
    const rows = extra.rows ?? (await readOverviewRows(signed));
    return sendPage(
      reply,
      status,
      overviewPage({ viewer: signed.viewer, rows: arrange(rows, query), total: rows.length, counts: countStates(rows), query, notice: extra.notice ?? doneNotice(request.query ?? {}), addError: extra.addError ?? null, addValue: extra.addValue ?? '' }),
    );
  }

  app.get<{ Querystring: Record<string, unknown> }>(CONSOLE_PATH, { config: page, schema }, async (request, reply) => {
    const got = await consoleViewerAnd(request, reply, readOverviewRows);
    if (!got) return reply;
    return renderOverview(request as Req, reply, got.signed, 200, { rows: got.value });
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/organization`, { config: audit('session', 'switch', 'switched'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'any');
    const target = field(request.body, 'organization');
    const membership = await store.getMembership(signed.user.id, target);
    if (!membership) throw new ConsoleRefusal('NOT_FOUND', { message: 'No such organisation.', why: 'You are not a member of it.', fix: 'Choose one of the organisations in the list.' });
    await store.updateSession(secretHash(signed.sessionId), { organizationId: target });
    return seeOther(reply, `${CONSOLE_PATH}?done=switched`);
  });

  // ---- domains -----------------------------------------------------------------------------

  const monitors = options.monitors;
  const noMonitors = () => new ConsoleRefusal('NOT_FOUND', { message: 'Monitors are not running on this service.', why: 'The service was started without monitors.', fix: 'Ask the operator to run spoof-checker serve with its store.' });

  app.post<{ Body: Form | undefined; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains`, { config: audit('monitor', 'create', 'created'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    if (!monitors) throw noMonitors();
    const typed = field(request.body, 'domain').slice(0, 300);
    const created = await monitors.create(signed.viewer.organizationId, { domain: typed, intervalMinutes: 1440 });
    if (!('monitor' in created)) {
      const message =
        created.kind === 'invalid-domain'
          ? `${created.message} ${created.fix}`
          : created.kind === 'duplicate-domain'
            ? `${created.domain} is watched already.`
            : created.kind === 'too-many-monitors'
              ? `This organisation watches ${created.max} domains, as many as it may.`
              : 'The domain could not be added.';
      return renderOverview(request as Req, reply, signed, created.kind === 'duplicate-domain' || created.kind === 'too-many-monitors' ? 409 : 400, { addError: message, addValue: typed });
    }
    request.auditResourceId = created.monitor.id;
    // The first check now, so that the page has something to show.
    await monitors.runNow(signed.viewer.organizationId, created.monitor.id);
    return seeOther(reply, `${domainPath(created.monitor.domain)}?done=added`);
  });

  /** The organisation's monitor of the domain in the path, or 404 (another organisation's domain too). */
  async function monitorOf(signed: Signed, typed: string) {
    const normalised = normaliseDomainInput(typed);
    const monitor = normalised.ok ? await stores.monitors.getByDomain(signed.viewer.organizationId, normalised.domain) : undefined;
    if (!monitor) throw new ConsoleRefusal('NOT_FOUND', { message: 'This organisation does not watch that domain.', why: 'No monitor of this organisation has that name.', fix: 'Pick a domain from the list, or add it.' });
    return monitor;
  }

  app.get<{ Params: { domain: string }; Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/domains/:domain`, { config: page, schema }, async (request, reply) => {
    // The second factor's setting, the monitor and its latest result are read at once, and the
    // monitor's recent changes and deliveries (one read) as soon as the monitor is known.
    const typed = normaliseDomainInput(request.params.domain);
    const got = await consoleViewerAnd(request, reply, (viewer) =>
      Promise.all([
        monitorOf(viewer, request.params.domain).then(async (monitor) => ({
          monitor,
          activity: await stores.monitors.recentActivity(viewer.viewer.organizationId, monitor.id, { entries: DOMAIN_PAGE_CHANGES * 4, changes: DOMAIN_PAGE_CHANGES, deliveries: DOMAIN_PAGE_DELIVERIES }),
        })),
        typed.ok ? store.getLatestResult(typed.domain) : Promise.resolve(undefined),
      ]),
    );
    if (!got) return reply;
    const { signed } = got;
    const [{ monitor, activity }, latest] = got.value;
    let result: { result: SpoofCheckResult; checkedAt: string } | null = null;
    if (latest) {
      try {
        result = { result: JSON.parse(latest.result) as SpoofCheckResult, checkedAt: latest.checkedAt };
      } catch {
        result = null;
      }
    }
    return sendPage(reply, 200, domainPage({ viewer: signed.viewer, monitor, result, changes: activity?.changes ?? [], deliveries: activity?.deliveries ?? [], notice: doneNotice(request.query), origin: expectedOrigin(request) }));
  });

  app.post<{ Params: { domain: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/domains/:domain/run`, { config: audit('monitor', 'run', 'ran', 'domain'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    if (!monitors) throw noMonitors();
    const monitor = await monitorOf(signed, request.params.domain);
    await monitors.runNow(signed.viewer.organizationId, monitor.id);
    return seeOther(reply, `${domainPath(monitor.domain)}?done=ran`);
  });

  app.post<{ Params: { domain: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/domains/:domain/settings`, { config: audit('monitor', 'update', 'updated', 'domain'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    if (!monitors) throw noMonitors();
    const monitor = await monitorOf(signed, request.params.domain);
    const interval = Number(field(request.body, 'intervalMinutes'));
    const webhook = field(request.body, 'webhookUrl').trim().slice(0, MAX_FORM_URL_LENGTH);
    const checks = fields(request.body, 'checks').filter((c): c is MonitorCheckKind => (MONITOR_CHECK_KINDS as readonly string[]).includes(c));
    const problem = !Number.isInteger(interval) || interval < 5 || interval > 10_080 ? 'The interval must be a whole number of minutes from 5 to 10080 (a week).' : null;
    const outcome = problem ? null : await monitors.update(signed.viewer.organizationId, monitor.id, { intervalMinutes: interval, webhookUrl: webhook === '' ? null : webhook, checks });
    if (problem || (outcome && 'kind' in outcome)) {
      const message = problem ?? (outcome && 'kind' in outcome && outcome.kind === 'webhook-refused' ? `The webhook URL was refused: ${outcome.message}` : 'The settings could not be saved.');
      return renderDomainWithNotice(request as Req, reply, signed, monitor.domain, { tone: 'critical', text: message });
    }
    return seeOther(reply, `${domainPath(monitor.domain)}?done=saved`);
  });

  async function renderDomainWithNotice(request: Req, reply: FastifyReply, signed: Signed, domain: string, notice: Notice) {
    const monitor = await monitorOf(signed, domain);
    const latest = await store.getLatestResult(monitor.domain);
    return sendPage(
      reply,
      400,
      domainPage({ viewer: signed.viewer, monitor, result: latest ? { result: JSON.parse(latest.result) as SpoofCheckResult, checkedAt: latest.checkedAt } : null, changes: [], deliveries: [], notice, origin: expectedOrigin(request) }),
    );
  }

  app.post<{ Params: { domain: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/domains/:domain/remove`, { config: audit('monitor', 'delete', 'deleted', 'domain'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    if (!monitors) throw noMonitors();
    const monitor = await monitorOf(signed, request.params.domain);
    await monitors.delete(signed.viewer.organizationId, monitor.id);
    return seeOther(reply, `${CONSOLE_PATH}?done=removed`);
  });

  // ---- members -----------------------------------------------------------------------------

  async function renderMembers(reply: FastifyReply, signed: Signed, status: number, notice: Notice | null) {
    const org = signed.viewer.organizationId;
    const [members, invitations, settings] = await Promise.all([store.members(org), store.invitations(org), store.getSettings(org)]);
    const open = invitations.filter((i) => i.expiresAt > now().toISOString());
    return sendPage(reply, status, membersPage({ viewer: signed.viewer, members, invitations: open, requireSecondFactor: settings.requireSecondFactor, notice }));
  }

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/members`, { config: page, schema }, async (request, reply) => {
    const signed = await consoleViewer(request, reply);
    if (!signed) return reply;
    return renderMembers(reply, signed, 200, doneNotice(request.query));
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/members/invite`, { config: audit('invitation', 'create', 'created'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    const role = field(request.body, 'role');
    // An admin invites viewers and admins; only an owner makes owners.
    if (role === 'owner' && !ROLE_CAN.own(signed.role)) throw new ConsoleRefusal('FORBIDDEN', { message: 'Only an owner may invite an owner.', why: 'An owner can remove everyone else.', fix: 'Invite them as admin, or ask an owner.' });
    const outcome = await invite(store, { organizationId: signed.viewer.organizationId, email: field(request.body, 'email'), role, invitedBy: signed.user.id, now: now() });
    if (outcome.kind === 'invalid') return renderMembers(reply, signed, 400, { tone: 'critical', text: outcome.message });
    const link = `${expectedOrigin(request)}${outcome.path}`;
    return renderMembers(reply, signed, 200, { tone: 'success', text: `Send this link to ${outcome.invitation.email}: it works once, for 72 hours.`, secret: link, secretLabel: 'Invitation link (shown once)' });
  });

  app.post<{ Params: { userId: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/members/:userId/role`, { config: audit('membership', 'update', 'updated', 'userId'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'own');
    const role = field(request.body, 'role');
    if (!isRole(role)) return renderMembers(reply, signed, 400, { tone: 'critical', text: 'Choose owner, admin or viewer.' });
    const outcome = await store.changeMembership(request.params.userId, signed.viewer.organizationId, role);
    if (outcome === 'not-found') throw new ConsoleRefusal('NOT_FOUND', { message: 'No such member.', why: 'That person is not a member of this organisation.', fix: 'Pick a member from the list.' });
    if (outcome === 'last-owner') return renderMembers(reply, signed, 409, { tone: 'critical', text: 'The last owner cannot be demoted: make someone else owner first.' });
    return seeOther(reply, `${CONSOLE_PATH}/members?done=role`);
  });

  app.post<{ Params: { userId: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/members/:userId/remove`, { config: audit('membership', 'delete', 'deleted', 'userId'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'own');
    const outcome = await store.changeMembership(request.params.userId, signed.viewer.organizationId, null);
    if (outcome === 'not-found') throw new ConsoleRefusal('NOT_FOUND', { message: 'No such member.', why: 'That person is not a member of this organisation.', fix: 'Pick a member from the list.' });
    if (outcome === 'last-owner') return renderMembers(reply, signed, 409, { tone: 'critical', text: 'The last owner cannot be removed: make someone else owner first.' });
    return seeOther(reply, `${CONSOLE_PATH}/members?done=member_removed`);
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/members/second-factor`, { config: audit('organization', 'update', 'updated'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'own');
    await store.putSettings({ organizationId: signed.viewer.organizationId, requireSecondFactor: field(request.body, 'require') === 'yes' });
    return seeOther(reply, `${CONSOLE_PATH}/members?done=required`);
  });

  // ---- API keys ----------------------------------------------------------------------------

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/keys`, { config: page, schema }, async (request, reply) => {
    const signed = await consoleViewer(request, reply);
    if (!signed) return reply;
    return sendPage(reply, 200, keysPage({ viewer: signed.viewer, keys: await store.apiKeys(signed.viewer.organizationId), notice: doneNotice(request.query) }));
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/keys`, { config: audit('api_key', 'create', 'created'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    const name = field(request.body, 'name').trim().slice(0, MAX_KEY_NAME_LENGTH);
    const org = signed.viewer.organizationId;
    if (name === '') return sendPage(reply, 400, keysPage({ viewer: signed.viewer, keys: await store.apiKeys(org), notice: { tone: 'critical', text: 'Give the key a name, such as "CI pipeline".' } }));
    // 32 random bytes: far past the API's weak-key rule (src/store/api-key-strength.ts).
    const secret = `sk_${randomBytes(32).toString('base64url')}`;
    const sha256 = digestApiKey(secret);
    const id = apiKeyIdFromDigest(sha256);
    await stores.apiKeys.addKey({ id, organizationId: org, sha256, owner: { id: signed.user.id, name, email: signed.user.email, image: '' } });
    await store.addApiKey({ id, organizationId: org, name, createdAt: now().toISOString(), createdBy: signed.user.id, lastUsedAt: null });
    request.auditResourceId = id;
    return sendPage(reply, 200, keysPage({ viewer: signed.viewer, keys: await store.apiKeys(org), notice: { tone: 'success', text: `The key "${name}" was made. Copy it now: it is not shown again.`, secret, secretLabel: 'API key (shown once)' } }));
  });

  app.post<{ Params: { id: string }; Body: Form | undefined }>(`${CONSOLE_PATH}/keys/:id/revoke`, { config: audit('api_key', 'delete', 'deleted', 'id'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'manage');
    const org = signed.viewer.organizationId;
    const removed = await store.removeApiKey(org, request.params.id);
    if (!removed) throw new ConsoleRefusal('NOT_FOUND', { message: 'No such key.', why: 'This organisation has no key with that id made in the console.', fix: 'Pick a key from the list.' });
    await stores.apiKeys.removeKey(org, request.params.id);
    // This process's key caches forget it now (another process's within API_KEY_CACHE_TTL_MS).
    announceKeyRevoked(request.params.id);
    return seeOther(reply, `${CONSOLE_PATH}/keys?done=revoked`);
  });

  // ---- account -----------------------------------------------------------------------------

  app.get<{ Querystring: Record<string, unknown> }>(`${CONSOLE_PATH}/account`, { config: page, schema }, async (request, reply) => {
    const signed = await pageViewer(request, reply);
    if (!signed) return reply;
    const setup = request.query['setup'] === '1' && signed.user.totpSecret === null ? newTotpSecret() : null;
    return sendPage(
      reply,
      200,
      accountPage({ viewer: signed.viewer, totp: signed.user.totpSecret !== null, setup: setup ? { secret: setup, uri: otpauthUri(setup, signed.user.email) } : null, error: null, notice: doneNotice(request.query) }),
    );
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/account/totp`, { config: audit('second_factor', 'enable', 'enabled'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'any');
    if (signed.user.totpSecret !== null) return seeOther(reply, `${CONSOLE_PATH}/account`);
    const secret = field(request.body, 'secret');
    const codes = await enableTotp(signed.user, secret, field(request.body, 'otp'));
    if (!codes) {
      return sendPage(reply, 400, accountPage({ viewer: signed.viewer, totp: false, setup: { secret, uri: otpauthUri(secret, signed.user.email) }, error: 'That code does not match: type the code the app shows now.', notice: null }));
    }
    return sendPage(reply, 200, accountPage({ viewer: signed.viewer, totp: true, setup: null, error: null, notice: recoveryNotice(codes) }));
  });

  app.post<{ Body: Form | undefined }>(`${CONSOLE_PATH}/account/totp/disable`, { config: audit('second_factor', 'disable', 'disabled'), schema }, async (request, reply) => {
    const signed = await actor(request as Req, 'any');
    if (await store.getSettings(signed.viewer.organizationId).then((s) => s.requireSecondFactor)) {
      throw new ConsoleRefusal('FORBIDDEN', { message: 'Your organisation requires a second factor.', why: 'An owner turned the requirement on.', fix: 'Ask an owner to turn it off first.' });
    }
    await store.updateUser(signed.user.id, { totpSecret: null, totpLastStep: 0, recoveryCodes: [] });
    return seeOther(reply, `${CONSOLE_PATH}/account?done=totp_off`);
  });

  registerPeoplePages(app, { stores, monitors, now, viewer: consoleViewer, actor: (request, need) => actor(request as Req, need), monitorOf: (who, domain) => monitorOf(who as Signed, domain), send: sendPage, seeOther, notFound: (details) => new ConsoleRefusal('NOT_FOUND', details), audit });
  registerReportRoutes(app, { stores, now, settings: options.reports ?? {}, pageViewer: consoleViewer, sendPage, refuse: (code, details) => new ConsoleRefusal(code, details), ...shareRoutes(app, { stores, now, settings: options.reports ?? {}, actor: (request, need) => actor(request as Req, need), sendPage, refuse: (code, details) => new ConsoleRefusal(code, details), expectedOrigin }) });

  // Anything else under /console: the console's own 404 page.
  app.get(`${CONSOLE_PATH}/*`, { config: page, schema }, async () => {
    throw new ConsoleRefusal('NOT_FOUND', { message: 'There is no such console page.', why: 'The address does not match a page of the console.', fix: 'Go back to the list of domains.' });
  });
};

/** A result as the console keeps it (the latest of each domain). */
export function latestResultOf(result: SpoofCheckResult, checkedAt: string): { domain: string; checkedAt: string; result: string } {
  return { domain: result.domain, checkedAt, result: JSON.stringify(result) };
}
