/**
 * The console's pages, rendered on the server with the public page's shell, escaping and
 * stylesheet (src/web/): every value goes through `html`, and a domain's result is the public
 * page's own sections (`resultSections`). Forms work without JavaScript; each state-changing form
 * carries the session's token.
 */
import type { SpoofCheckResult } from '@spoof-checker/engine';
import type { ConsoleApiKey, ConsoleInvitation, ConsoleMember, ConsoleRole } from '../store/console.js';
import type { Monitor, MonitorHistoryEntry, WebhookDelivery } from '../store/monitors.js';
import type { DemoSettings } from '../web/demo.js';
import { html, type SafeHtml } from '../web/html.js';
import { page } from '../web/layout.js';
import { resultSections, VERDICT_LABELS } from '../web/result-view.js';
import { CONSOLE_PATH } from './accounts.js';
import type { DomainRow, OverviewQuery, SortKey } from './overview.js';
import { OVERVIEW_ROWS_PER_PAGE, SORT_KEYS } from './overview.js';
import { FORM_TOKEN_FIELD } from './sessions.js';

/** Who is looking, for the shell and the forms. */
export interface ConsoleViewer {
  email: string;
  role: ConsoleRole;
  organizationId: string;
  organizationName: string;
  /** Every organisation the user may switch to. */
  organizations: { id: string; name: string; role: ConsoleRole }[];
  /** The session's form token. */
  token: string;
  demo: DemoSettings | null;
}

/** What a role may do (docs/console.md); enforced by the routes, shown here. */
export const ROLE_CAN = {
  /** Add, remove and run domains, change their settings, invite, manage API keys. */
  manage: (role: ConsoleRole) => role === 'owner' || role === 'admin',
  /** Change roles, remove members, require a second factor. */
  own: (role: ConsoleRole) => role === 'owner',
};

const ROLE_WORDS: Readonly<Record<ConsoleRole, string>> = { owner: 'Owner', admin: 'Admin', viewer: 'Viewer' };

const tokenField = (viewer: { token: string }) => html`<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${viewer.token}">`;

/** A form that changes something: POST, with the session's token. */
function actionForm(viewer: ConsoleViewer, action: string, label: string, options: { danger?: boolean; fields?: SafeHtml; className?: string } = {}): SafeHtml {
  return html`<form method="post" action="${action}" class="${options.className ?? 'inline-action'}">${tokenField(viewer)}${options.fields ?? null}<button type="submit"${options.danger ? html` class="danger"` : html` class="secondary"`}>${label}</button></form>`;
}

/** The console's navigation: its pages, the organisation switcher, sign out. */
function consoleNav(viewer: ConsoleViewer | null, current: string): SafeHtml {
  if (viewer === null) return html`<nav aria-label="Console"><a href="/">Check a domain</a><a href="${CONSOLE_PATH}/sign-in">Sign in</a></nav>`;
  const link = (href: string, label: string) => html`<a href="${href}"${href === current ? html` aria-current="page"` : null}>${label}</a>`;
  return html`<nav aria-label="Console">${link(CONSOLE_PATH, 'Domains')}${link(`${CONSOLE_PATH}/reports`, 'Reports')}${link(`${CONSOLE_PATH}/alerts`, 'Alerts')}${link(`${CONSOLE_PATH}/members`, 'Members')}${link(`${CONSOLE_PATH}/keys`, 'API keys')}${link(`${CONSOLE_PATH}/account`, 'Account')}</nav>`;
}

/** The bar under the header: who is signed in, to which organisation, the switcher and sign out. */
function accountBar(viewer: ConsoleViewer): SafeHtml {
  const others = viewer.organizations.length > 1;
  return html`<div class="actions card" id="account-bar">
<p><span id="signed-in-as">Signed in as <strong>${viewer.email}</strong></span> · <span id="current-org">${viewer.organizationName}</span> · <span id="current-role">${ROLE_WORDS[viewer.role]}</span></p>
${others
  ? html`<form method="post" action="${CONSOLE_PATH}/organization" class="console-form inline">${tokenField(viewer)}<div><label for="switch-org">Organisation</label><select id="switch-org" name="organization">${viewer.organizations.map(
      (o) => html`<option value="${o.id}"${o.id === viewer.organizationId ? html` selected` : null}>${o.name} (${ROLE_WORDS[o.role]})</option>`,
    )}</select></div><button type="submit" class="secondary">Switch</button></form>`
  : null}
${viewer.demo ? null : actionForm(viewer, `${CONSOLE_PATH}/sign-out`, 'Sign out')}
</div>`;
}

/**
 * A console page: the public shell and the console's navigation. Its pages need a session, so a
 * crawler only ever reaches the sign-in page: no `noindex` is needed for them. A page reached
 * without one through a secret link (an invitation, a shared dashboard) asks for it with `noindex`:
 * such a link can still reach a crawler (a mail scanner that follows links, a pasted address).
 */
export function consolePage(options: { title: string; body: SafeHtml; viewer: ConsoleViewer | null; current?: string; demo?: DemoSettings | null; notice?: Notice | null; keepWhole?: boolean; noindex?: boolean }): SafeHtml {
  const { viewer } = options;
  return page({
    title: options.title,
    description: 'The spoof-checker console: every domain of your organisation, its checks, confirmed changes, reports and alerts.',
    noindex: options.noindex ?? false,
    demo: options.demo ?? viewer?.demo ?? null,
    nav: consoleNav(viewer, options.current ?? ''),
    wide: true,
    keepWhole: options.keepWhole ?? true,
    footer: html`The console shows what this service's monitors keep for your organisation: checks, confirmed changes, alerts. The same data is in the API: <a href="/docs">documentation</a>.`,
    body: html`${viewer ? accountBar(viewer) : null}${options.notice ? noticeBox(options.notice) : null}${options.body}`,
  });
}

/** A message after an action: what happened, or what went wrong and how to fix it. */
export interface Notice {
  tone: 'success' | 'critical' | 'info' | 'warning';
  text: string;
  /** A secret to copy now (an invitation link, a new API key): shown once. */
  secret?: string;
  secretLabel?: string;
}

/**
 * The reader of the notice an action left in the query (`?done=<key>`, after its redirect): one of
 * `notices`' fixed words, never the query's text, and only the table's own keys (`?done=toString`
 * or `__proto__` is no notice).
 */
export function doneNotices(notices: Readonly<Record<string, Notice>>): (query: Record<string, unknown>) => Notice | null {
  return (query) => {
    const key = query['done'];
    return typeof key === 'string' && Object.hasOwn(notices, key) ? notices[key]! : null;
  };
}

function noticeBox(notice: Notice): SafeHtml {
  return html`<div class="card notice tone-${notice.tone}" role="${notice.tone === 'critical' ? 'alert' : 'status'}" id="notice"><p>${notice.text}</p>
${notice.secret ? html`<label class="record-label" for="secret">${notice.secretLabel ?? 'Copy it now: it is not shown again.'}</label><textarea class="secret" id="secret" readonly rows="${Math.min(12, Math.max(notice.secret.split('\n').length, Math.ceil(notice.secret.length / 28)))}" spellcheck="false">${notice.secret}</textarea>` : null}</div>`;
}

/** Sign in: Email, Password, "Sign in". */
export function signInPage(options: { email: string; error: string | null; demo: DemoSettings | null; next: string | null }): SafeHtml {
  return consolePage({
    title: 'Sign in',
    viewer: null,
    demo: options.demo,
    body: html`<h1>Sign in to the console</h1>
<p class="lead">See every domain of your organisation at a glance, and act on what changed.</p>
${options.error ? html`<div class="card notice tone-critical" role="alert" id="sign-in-error"><p>${options.error}</p></div>` : null}
<form method="post" action="${CONSOLE_PATH}/sign-in" class="console-form card">
${options.next ? html`<input type="hidden" name="next" value="${options.next}">` : null}
<div><label for="email">Email</label><input type="email" id="email" name="email" value="${options.email}" required autocomplete="username" autocapitalize="none" spellcheck="false"${options.error ? html` aria-describedby="sign-in-error"` : null}></div>
<div><label for="password">Password</label><input type="password" id="password" name="password" required autocomplete="current-password"></div>
<div><button type="submit">Sign in</button></div>
</form>
<p class="muted">No account? An owner or admin of your organisation invites you; the operator can with <code>spoof-checker users add</code>.</p>`,
  });
}

/** The second step of a sign-in: the code of the authenticator app, or a recovery code. */
export function secondFactorPage(options: { token: string; error: string | null; demo: DemoSettings | null }): SafeHtml {
  return consolePage({
    title: 'Second factor',
    viewer: null,
    demo: options.demo,
    body: html`<h1>Enter your code</h1>
${options.error ? html`<div class="card notice tone-critical" role="alert" id="otp-error"><p>${options.error}</p></div>` : null}
<form method="post" action="${CONSOLE_PATH}/second-factor" class="console-form card">${tokenField(options)}
<div><label for="otp">Code from your authenticator app, or a recovery code</label><input type="text" id="otp" name="otp" required autocomplete="one-time-code" inputmode="text" autocapitalize="none" spellcheck="false"></div>
<div><button type="submit">Continue</button></div>
</form>`,
  });
}

/** Set up second factor while signing in (the organisation requires it). */
export function enrolPage(options: { token: string; secret: string; uri: string; error: string | null; demo: DemoSettings | null; required: boolean }): SafeHtml {
  return consolePage({
    title: 'Set up a second factor',
    viewer: null,
    demo: options.demo,
    body: html`<h1>Set up a second factor</h1>
${options.required ? html`<p>Your organisation requires a code from an authenticator app at every sign-in.</p>` : null}
${totpSetup(options, `${CONSOLE_PATH}/second-factor/enrol`)}`,
  });
}

function totpSetup(options: { token: string; secret: string; uri: string; error: string | null }, action: string): SafeHtml {
  return html`${options.error ? html`<div class="card notice tone-critical" role="alert" id="otp-error"><p>${options.error}</p></div>` : null}
<div class="card"><p>Add this key to your authenticator app (TOTP, 6 digits, every 30 seconds), then type the code it shows.</p>
<p class="record-label">Key</p><pre class="secret" id="totp-secret" data-copy="key">${options.secret}</pre>
<p class="record-label">Or as a link your app opens</p><pre tabindex="0" class="record"><code>${options.uri}</code></pre>
<form method="post" action="${action}" class="console-form">${tokenField(options)}<input type="hidden" name="secret" value="${options.secret}">
<div><label for="otp">Code from the app</label><input type="text" id="otp" name="otp" required autocomplete="one-time-code" inputmode="numeric" pattern="[0-9 ]*"></div>
<div><button type="submit">Turn on</button></div></form></div>`;
}

/** The invitation: set a password (a new account) or confirm yours (an existing one). */
export function invitationPage(options: { email: string; organizationName: string; role: ConsoleRole; existing: boolean; error: string | null; action: string; demo: DemoSettings | null }): SafeHtml {
  return consolePage({
    title: 'Accept the invitation',
    viewer: null,
    noindex: true,
    demo: options.demo,
    body: html`<h1>Join ${options.organizationName}</h1>
<p>You are invited as <strong>${ROLE_WORDS[options.role]}</strong>, with the address <strong id="invited-email">${options.email}</strong>.</p>
${options.error ? html`<div class="card notice tone-critical" role="alert" id="invite-error"><p>${options.error}</p></div>` : null}
<form method="post" action="${options.action}" class="console-form card">
${options.existing
  ? html`<div><label for="password">Password</label><input type="password" id="password" name="password" required autocomplete="current-password"></div>
<p class="hint">You already have an account: your password confirms it is you.</p>`
  : html`<div><label for="password">New password</label><input type="password" id="password" name="password" required minlength="12" autocomplete="new-password" aria-describedby="password-hint"></div>
<p class="hint" id="password-hint">At least 12 characters. Not a common password and not your email address; any characters, a few words in a row make a good one.</p>
<div><label for="confirm">New password again</label><input type="password" id="confirm" name="confirm" required autocomplete="new-password"></div>`}
<div><button type="submit">${options.existing ? 'Accept' : 'Set password and join'}</button></div>
</form>`,
  });
}

/** A page that says the link does not work (unknown, used or expired: one answer). */
export function invitationGonePage(demo: DemoSettings | null): SafeHtml {
  return consolePage({
    title: 'Invitation not valid',
    viewer: null,
    noindex: true,
    demo,
    body: html`<h1>This invitation link does not work</h1><div class="card"><p>It may have been used already, or it is more than 72 hours old.</p><p>Ask whoever invited you for a new link, or <a href="${CONSOLE_PATH}/sign-in">sign in</a> if you have an account.</p></div>`,
  });
}

/** An error as a console page. */
export function consoleErrorPage(options: { status: number; title: string; message: string; why: string; fix: string; viewer: ConsoleViewer | null; demo: DemoSettings | null }): SafeHtml {
  return consolePage({
    title: options.title,
    viewer: options.viewer,
    demo: options.demo,
    body: html`<div class="error-page ${options.status === 429 || options.status >= 500 ? 'tone-warning' : 'tone-critical'}"><p class="muted">Error ${options.status}</p><h1>${options.title}</h1>
<div class="card"><p><strong>${options.message}</strong></p><p>${options.why}</p><p>${options.fix}</p></div>
<p><a href="${CONSOLE_PATH}">Back to the console</a></p></div>`,
  });
}

const VERDICT_TONE: Readonly<Record<string, string>> = { spoofable: 'critical', partially_protected: 'warning', protected: 'success' };
const SORT_LABELS: Readonly<Record<SortKey, string>> = {
  domain: 'Domain',
  verdict: 'Spoofing',
  dmarc: 'DMARC',
  transport: 'Inbound TLS',
  dnssec: 'DNSSEC',
  bimi: 'BIMI',
  lookalikes: 'Lookalikes',
  passrate: 'Pass rate',
  readiness: 'Enforce?',
  checked: 'Checked',
};

function verdictBadge(row: DomainRow): SafeHtml {
  if (row.outcome === 'could-not-check') return html`<span class="badge tone-warning">Could not check</span>`;
  if (row.outcome === 'domain-not-found') return html`<span class="badge tone-critical">Domain not found</span>`;
  if (row.verdict === null) return html`<span class="muted">Not checked yet</span>`;
  const label = VERDICT_LABELS[row.verdict as keyof typeof VERDICT_LABELS]?.label ?? row.verdict;
  return html`<span class="badge tone-${VERDICT_TONE[row.verdict] ?? 'info'}" data-verdict="${row.verdict}">${label}</span>`;
}

const dash = html`<span class="muted">—</span>`;
/**
 * The overview's readiness column in words: the two pending states say why there is no verdict yet
 * (text, not a colour or an icon alone), short enough that the table fits 1280 pixels (its cells do
 * not wrap); the legend under the table says what each means.
 */
const READINESS_WORDS: Readonly<Record<Exclude<DomainRow['readiness'], null>, string>> = {
  ready: 'Ready',
  'not-ready': 'Not yet',
  'checking-spf': 'Checking SPF…',
  'spf-unreadable': 'SPF unreadable',
};
const percent = (share: number) => `${(Math.floor(share * 1000) / 10).toFixed(1)}%`;

/** A UTC time people read: `2026-01-31 14:05 UTC`. */
export function when(iso: string | null): string {
  return iso === null ? '—' : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `/console`: every domain at a glance, sortable and filterable by query, worst first by default. */
export function overviewPage(options: {
  viewer: ConsoleViewer;
  rows: DomainRow[];
  total: number;
  counts: Record<'spoofable' | 'partially_protected' | 'protected' | 'unchecked', number>;
  query: OverviewQuery;
  notice: Notice | null;
  addError: string | null;
  addValue: string;
}): SafeHtml {
  const { viewer, query } = options;
  const href = (changes: Partial<OverviewQuery>) => {
    const q = { ...query, ...changes };
    const params = new URLSearchParams({ sort: q.sort, order: q.order });
    if (q.q) params.set('q', q.q);
    if (q.verdict) params.set('verdict', q.verdict);
    if (q.page > 1) params.set('page', String(q.page));
    return `${CONSOLE_PATH}?${params.toString()}`;
  };
  const sortHref = (key: SortKey) => href({ sort: key, order: query.sort === key && query.order === 'asc' ? 'desc' : 'asc', page: 1 });
  const pages = Math.max(1, Math.ceil(options.rows.length / OVERVIEW_ROWS_PER_PAGE));
  const pageNumber = Math.min(query.page, pages);
  const rows = options.rows.slice((pageNumber - 1) * OVERVIEW_ROWS_PER_PAGE, pageNumber * OVERVIEW_ROWS_PER_PAGE);
  const first = (pageNumber - 1) * OVERVIEW_ROWS_PER_PAGE + 1;
  const summary: [keyof typeof options.counts, string][] = [
    ['spoofable', 'spoofable'],
    ['partially_protected', 'partially protected'],
    ['protected', 'protected'],
    ['unchecked', 'not checked or failed'],
  ];
  // Rows whose readiness waits for an SPF analysis still running (those matching the filter, every page).
  const checkingSpf = options.rows.filter((row) => row.readiness === 'checking-spf').length;
  const sortState = (key: SortKey) => (query.sort === key ? (query.order === 'asc' ? 'ascending' : 'descending') : null);
  const th = (key: SortKey) =>
    html`<th scope="col"${sortState(key) ? html` aria-sort="${sortState(key)!}"` : null}><a href="${sortHref(key)}">${SORT_LABELS[key]}${query.sort === key ? (query.order === 'asc' ? ' ▲' : ' ▼') : ''}</a></th>`;
  return consolePage({
    title: 'Domains',
    viewer,
    current: CONSOLE_PATH,
    notice: options.notice,
    // A thousand rows: the table's cells do not wrap (the stylesheet), so no word needs holding whole.
    keepWhole: false,
    body: html`<h1>Domains of ${viewer.organizationName}</h1>
${ROLE_CAN.manage(viewer.role)
  ? html`<form method="post" action="${CONSOLE_PATH}/domains" class="console-form inline card" aria-label="Add a domain">${tokenField(viewer)}
<div><label for="add-domain">Add a domain to watch</label><input type="text" id="add-domain" name="domain" value="${options.addValue}" required autocapitalize="none" spellcheck="false"${options.addError ? html` aria-invalid="true" aria-describedby="add-error"` : null}>
${options.addError ? html`<p class="field-error" id="add-error">${options.addError}</p>` : null}</div>
<button type="submit">Add domain</button></form>`
  : null}
<form method="get" action="${CONSOLE_PATH}" class="console-form inline" role="search" aria-label="Filter the domains">
<div><label for="filter-q">Name contains</label><input type="search" id="filter-q" name="q" value="${query.q}"></div>
<div><label for="filter-verdict">Spoofing</label><select id="filter-verdict" name="verdict">
${[
  ['', 'Any'],
  ['spoofable', 'Spoofable'],
  ['partially_protected', 'Partially protected'],
  ['protected', 'Protected'],
  ['unchecked', 'Not checked or failed'],
].map(([value, label]) => html`<option value="${value!}"${query.verdict === value ? html` selected` : null}>${label!}</option>`)}
</select></div>
<input type="hidden" name="sort" value="${query.sort}"><input type="hidden" name="order" value="${query.order}">
<button type="submit" class="secondary">Filter</button></form>
${options.total === 0
  ? null
  : html`<p id="states">${options.total} domain${options.total === 1 ? '' : 's'}: ${summary.map(
      ([key, words], i) => html`${i === 0 ? '' : ', '}<a href="${href({ verdict: key, page: 1 })}">${options.counts[key]} ${words}</a>`,
    )}.</p>`}
${options.rows.length === 0
  ? null
  : html`<p id="domain-count">${options.rows.length === options.total ? '' : `${options.rows.length} of ${options.total} match the filter. `}${rows.length === options.rows.length ? `Showing all ${rows.length}` : `Showing ${first}–${first + rows.length - 1}`}${query.sort === 'verdict' && query.order === 'asc' ? ', the worst first' : ''}.</p>`}
${checkingSpf === 0 ? null : html`<p id="readiness-pending" role="status"><span id="readiness-pending-count">${checkingSpf}</span> domain${checkingSpf === 1 ? '' : 's'}: Enforce? is still checking the SPF record (it shows Checking SPF… until then). Reload the page in a few seconds for the verdict.</p>`}
${rows.length === 0
  ? html`<div class="card"><p>${options.total === 0 ? (ROLE_CAN.manage(viewer.role) ? 'No domain is watched yet: add one above.' : 'No domain is watched yet: an owner or admin adds them.') : 'No domain matches the filter.'}</p></div>`
  : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="overview-caption"><table class="overview" id="overview">
<caption id="overview-caption">Every domain, its latest check</caption>
<thead><tr>${SORT_KEYS.map(th)}</tr></thead>
<tbody>${rows.map(
      (row) => html`<tr data-domain="${row.domain}">
<th scope="row"><a href="${domainPath(row.domain)}">${row.domain}</a></th>
<td>${verdictBadge(row)}</td>
<td>${row.dmarcPolicy ?? dash}</td>
<td>${row.transport ?? dash}</td>
<td>${row.dnssec ?? dash}</td>
<td>${row.bimi ?? dash}</td>
<td>${row.lookalikes ? `${row.lookalikes.critical} / ${row.lookalikes.high}` : dash}</td>
<td>${row.passRate === null ? dash : percent(row.passRate)}</td>
<td${row.readiness === 'checking-spf' || row.readiness === 'spf-unreadable' ? html` data-readiness="${row.readiness}"` : null}>${row.readiness === null ? dash : READINESS_WORDS[row.readiness]}</td>
<td>${row.checkedAt === null ? dash : html`<time datetime="${row.checkedAt}">${when(row.checkedAt)}</time>`}</td>
</tr>`,
    )}</tbody></table></div>
${pages > 1
  ? html`<nav aria-label="Pages of domains" class="actions" id="pages">${pageNumber > 1 ? html`<a href="${href({ page: pageNumber - 1 })}" rel="prev">Previous ${OVERVIEW_ROWS_PER_PAGE}</a>` : null}<span>Page ${pageNumber} of ${pages}</span>${pageNumber < pages ? html`<a href="${href({ page: pageNumber + 1 })}" rel="next">Next ${OVERVIEW_ROWS_PER_PAGE}</a>` : null}</nav>`
  : null}
<p class="hint" id="overview-legend">Spoofing: whether someone can send mail as the domain. DMARC: the policy published. Inbound TLS: how mail sent to the domain travels (when the monitor checks it). Lookalikes: critical / high lookalike names (when it looks for them). Pass rate and Enforce?: the last 7 days of DMARC reports, where there are some (Checking SPF…: the domain's SPF record is being read, reload the page for the verdict; SPF unreadable: the record could not be read, a DNS error, so there is no verdict yet). Click a heading to sort by it.</p>`}`,
  });
}

/** The path of a domain's console page. */
export function domainPath(domain: string): string {
  return `${CONSOLE_PATH}/domains/${encodeURIComponent(domain)}`;
}

/** Words for a field of a confirmed change. */
function changeLine(change: { field: string; before: unknown; after: unknown }): SafeHtml {
  const show = (v: unknown) => (v === null || v === undefined ? 'none' : typeof v === 'string' ? v : JSON.stringify(v));
  return html`<li><strong>${change.field}</strong>: <code>${show(change.before)}</code> → <code>${show(change.after)}</code></li>`;
}

/** `/console/domains/<domain>`: the result (the public page's sections), the timeline, the alerts, the actions. */
export function domainPage(options: {
  viewer: ConsoleViewer;
  monitor: Monitor;
  result: { result: SpoofCheckResult; checkedAt: string } | null;
  changes: MonitorHistoryEntry[];
  deliveries: WebhookDelivery[];
  notice: Notice | null;
  origin: string | null;
}): SafeHtml {
  const { viewer, monitor } = options;
  const manage = ROLE_CAN.manage(viewer.role);
  const base = domainPath(monitor.domain);
  return consolePage({
    title: monitor.domain,
    viewer,
    current: CONSOLE_PATH,
    notice: options.notice,
    body: html`<p><a href="${CONSOLE_PATH}">All domains</a></p>
<h1 id="domain-title">${monitor.domain}</h1>
<p><a href="${base}/reports" id="reports-link">DMARC and TLS reports for ${monitor.domain}</a></p>
<dl class="facts"><dt>Checked every</dt><dd id="interval">${describeInterval(monitor.intervalMinutes)}</dd>
<dt>Last checked</dt><dd id="last-checked">${when(monitor.lastResult?.checkedAt ?? null)}</dd>
<dt>Alerts go to</dt><dd id="webhook">${monitor.webhookUrl ?? 'nowhere (no webhook set)'}</dd></dl>
<p class="actions" id="domain-links"><a href="${base}/lookalikes">Lookalikes remembered</a> <a href="${base}/failures">Failure reports</a> <a href="${CONSOLE_PATH}/alerts">Alert channels</a></p>
${manage
  ? html`<section aria-labelledby="actions-title" class="card"><h2 id="actions-title">Actions</h2>
<div class="actions">${actionForm(viewer, `${base}/run`, 'Run now')}</div>
<form method="post" action="${base}/settings" class="console-form">${tokenField(viewer)}
<div><label for="interval-minutes">Check every (minutes)</label><input type="number" id="interval-minutes" name="intervalMinutes" min="5" max="10080" value="${monitor.intervalMinutes}" required></div>
<div><label for="webhook-url">Webhook URL for alerts (empty: none)</label><input type="url" id="webhook-url" name="webhookUrl" value="${monitor.webhookUrl ?? ''}"></div>
<fieldset><legend>Also check</legend>${(['transport', 'lookalikes', 'bimi'] as const).map(
      (kind) => html`<label><input type="checkbox" name="checks" value="${kind}"${monitor.checks.includes(kind) ? html` checked` : null}> ${{ transport: 'Mail sent to you (TLS)', lookalikes: 'Lookalike names', bimi: 'BIMI logo' }[kind]}</label>`,
    )}</fieldset>
<div><button type="submit" class="secondary">Save settings</button></div></form>
<div class="actions">${actionForm(viewer, `${base}/remove`, `Stop watching ${monitor.domain}`, { danger: true })}</div>
</section>`
  : null}
<section aria-labelledby="timeline-title"><h2 id="timeline-title">Changes over time</h2>
${options.changes.length === 0
  ? html`<p id="no-changes">No change has been confirmed yet.</p>`
  : html`<ol class="timeline" id="timeline">${options.changes.map((entry) =>
      entry.type === 'change'
        ? html`<li><time datetime="${entry.at}">${when(entry.at)}</time><ul class="list-plain">${entry.changes.map(changeLine)}</ul></li>`
        : null,
    )}</ol>`}
</section>
<section aria-labelledby="alerts-title"><h2 id="alerts-title">Alerts sent</h2>
${options.deliveries.length === 0
  ? html`<p id="no-alerts">No alert has been sent for this domain.</p>`
  : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="alerts-caption"><table id="alerts"><caption id="alerts-caption">Webhook deliveries, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
<tbody>${options.deliveries.map((d) => html`<tr><td>${when(d.createdAt)}</td><td>${d.url}</td><td>${d.status}</td><td>${d.attempts.length}</td></tr>`)}</tbody></table></div>`}
</section>
${options.result
  ? html`<section aria-labelledby="current-title"><h2 id="current-title">Current result <span class="muted">(${when(options.result.checkedAt)})</span></h2>
${resultSections(options.result.result, { origin: options.origin, demo: viewer.demo })}</section>`
  : html`<section aria-labelledby="current-title" class="card"><h2 id="current-title">Current result</h2><p>The first check has not finished yet${manage ? ': use Run now, then reload this page' : ''}.</p></section>`}`,
  });
}

function describeInterval(minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? 'day' : `${minutes / 1440} days`;
  if (minutes % 60 === 0) return minutes === 60 ? 'hour' : `${minutes / 60} hours`;
  return `${minutes} minutes`;
}

/** `/console/members`. */
export function membersPage(options: { viewer: ConsoleViewer; members: ConsoleMember[]; invitations: ConsoleInvitation[]; requireSecondFactor: boolean; notice: Notice | null }): SafeHtml {
  const { viewer } = options;
  const own = ROLE_CAN.own(viewer.role);
  return consolePage({
    title: 'Members',
    viewer,
    current: `${CONSOLE_PATH}/members`,
    notice: options.notice,
    body: html`<h1>Members of ${viewer.organizationName}</h1>
<h2 id="members-title">Who may sign in</h2>
<ul class="member-list" id="members" aria-labelledby="members-title">${options.members.map(
      (m) => html`<li class="card" data-member="${m.email}"><p><strong>${m.email}</strong>${m.active ? null : html` <span class="muted">(invited, no password yet)</span>`}</p>
<dl class="facts"><dt>Role</dt><dd>${ROLE_WORDS[m.role]}</dd><dt>Second factor</dt><dd>${m.totp ? 'On' : 'Off'}</dd></dl>
${own
  ? html`<div class="actions"><form method="post" action="${CONSOLE_PATH}/members/${m.userId}/role" class="console-form inline">${tokenField(viewer)}<div><label for="role-${m.userId}">Role of ${m.email}</label><select id="role-${m.userId}" name="role">${(['owner', 'admin', 'viewer'] as const).map((r) => html`<option value="${r}"${r === m.role ? html` selected` : null}>${ROLE_WORDS[r]}</option>`)}</select></div><button type="submit" class="secondary">Change role</button></form>
${actionForm(viewer, `${CONSOLE_PATH}/members/${m.userId}/remove`, `Remove ${m.email}`, { danger: true })}</div>`
  : null}</li>`,
    )}</ul>
${ROLE_CAN.manage(viewer.role)
  ? html`<section aria-labelledby="invite-title" class="card"><h2 id="invite-title">Invite someone</h2>
<form method="post" action="${CONSOLE_PATH}/members/invite" class="console-form">${tokenField(viewer)}
<div><label for="invite-email">Their email</label><input type="email" id="invite-email" name="email" required autocomplete="off"></div>
<div><label for="invite-role">Role</label><select id="invite-role" name="role">${(own ? (['viewer', 'admin', 'owner'] as const) : (['viewer', 'admin'] as const)).map((r) => html`<option value="${r}">${ROLE_WORDS[r]}</option>`)}</select></div>
<div><button type="submit">Make an invitation link</button></div></form>
<p class="hint">The link works once, for 72 hours: send it to them yourself.</p></section>`
  : null}
${options.invitations.length > 0
  ? html`<h2>Open invitations</h2><ul class="list-plain" id="invitations">${options.invitations.map((i) => html`<li>${i.email} as ${ROLE_WORDS[i.role]}, until ${when(i.expiresAt)}</li>`)}</ul>`
  : null}
<section aria-labelledby="second-factor-title"><h2 id="second-factor-title">Second factor</h2>
<p id="second-factor-state">${options.requireSecondFactor ? 'Every member must sign in with a code from an authenticator app.' : 'Members may turn on a second factor on their Account page; it is not required.'}</p>
${own ? actionForm(viewer, `${CONSOLE_PATH}/members/second-factor`, options.requireSecondFactor ? 'Stop requiring a second factor' : 'Require a second factor', { fields: html`<input type="hidden" name="require" value="${options.requireSecondFactor ? 'no' : 'yes'}">` }) : null}
</section>`,
  });
}

/** `/console/keys`. */
export function keysPage(options: { viewer: ConsoleViewer; keys: ConsoleApiKey[]; notice: Notice | null }): SafeHtml {
  const { viewer } = options;
  const manage = ROLE_CAN.manage(viewer.role);
  return consolePage({
    title: 'API keys',
    viewer,
    current: `${CONSOLE_PATH}/keys`,
    notice: options.notice,
    body: html`<h1>API keys of ${viewer.organizationName}</h1>
<p>A key lets a program use the API for this organisation (<a href="/docs">API documentation</a>).</p>
${manage
  ? html`<form method="post" action="${CONSOLE_PATH}/keys" class="console-form inline card">${tokenField(viewer)}<div><label for="key-name">Name of the new key</label><input type="text" id="key-name" name="name" required maxlength="100" placeholder="CI pipeline"></div><button type="submit">Create key</button></form>`
  : null}
${options.keys.length === 0
  ? html`<p id="no-keys">No key was made in the console for this organisation.</p>`
  : html`<h2 id="keys-title">Keys made in the console</h2>
<ul class="member-list" id="keys" aria-labelledby="keys-title">${options.keys.map(
      (k) => html`<li class="card" data-key="${k.id}"><p><strong>${k.name}</strong></p>
<dl class="facts"><dt>Id</dt><dd><code>${k.id}</code></dd><dt>Created</dt><dd>${when(k.createdAt)}</dd><dt>Last used</dt><dd>${k.lastUsedAt === null ? 'Never' : when(k.lastUsedAt)}</dd></dl>
${manage ? html`<div class="actions">${actionForm(viewer, `${CONSOLE_PATH}/keys/${k.id}/revoke`, `Revoke ${k.name}`, { danger: true })}</div>` : null}</li>`,
    )}</ul>`}`,
  });
}

/** `/console/account`: the second factor. */
export function accountPage(options: { viewer: ConsoleViewer; totp: boolean; setup: { secret: string; uri: string } | null; error: string | null; notice: Notice | null }): SafeHtml {
  const { viewer } = options;
  return consolePage({
    title: 'Account',
    viewer,
    current: `${CONSOLE_PATH}/account`,
    notice: options.notice,
    body: html`<h1>Your account</h1>
<dl class="facts"><dt>Email</dt><dd>${viewer.email}</dd><dt>Second factor</dt><dd id="totp-state">${options.totp ? 'On' : 'Off'}</dd></dl>
<section aria-labelledby="totp-title"><h2 id="totp-title">Second factor (authenticator app)</h2>
${options.totp
  ? actionForm(viewer, `${CONSOLE_PATH}/account/totp/disable`, 'Turn off the second factor', { danger: true })
  : options.setup
    ? totpSetup({ token: viewer.token, secret: options.setup.secret, uri: options.setup.uri, error: options.error }, `${CONSOLE_PATH}/account/totp`)
    : html`<form method="get" action="${CONSOLE_PATH}/account" class="console-form"><input type="hidden" name="setup" value="1"><div><button type="submit" class="secondary">Set up a second factor</button></div></form>`}
</section>`,
  });
}
