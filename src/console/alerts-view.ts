/**
 * `/console/alerts`: an organisation's alert channels (signed webhook, Slack, Microsoft Teams,
 * email) and their rules, as the alert service (src/jobs/monitors/alerts.ts) keeps them. A channel's target
 * is a credential: only its host is shown; a signed webhook's secret once, at creation.
 */
import { ALERT_CHANNEL_KINDS, ALERT_EVENT_KINDS, type AlertChannel, type AlertChannelKind, type AlertEventKind } from '../store/alerts.js';
import type { DeliveryAttempt } from '../store/monitors.js';
import { html, type SafeHtml } from '../web/html.js';
import { CONSOLE_PATH } from './accounts.js';
import { FORM_TOKEN_FIELD } from './sessions.js';
import { consolePage, ROLE_CAN, when, type ConsoleViewer, type Notice } from './views.js';

/** The path of the alerts page. */
export const ALERTS_PATH = `${CONSOLE_PATH}/alerts`;

export const CHANNEL_KIND_WORDS: Readonly<Record<AlertChannelKind, string>> = { webhook: 'Signed webhook', slack: 'Slack', teams: 'Microsoft Teams', email: 'Email' };
const EVENT_WORDS: Readonly<Record<AlertEventKind, string>> = {
  authentication: 'Authentication (verdict, DMARC, SPF, DKIM, MX)',
  availability: 'Availability (could not check, domain gone)',
  transport: 'Mail transport (MTA-STS, TLS-RPT, DANE)',
  bimi: 'BIMI',
  dnssec: 'DNSSEC',
  reports: 'Reports (unauthorised senders, pass rate drop)',
  lookalikes: 'Lookalikes (registered, gains mail, grade rises)',
};

const tokenField = (viewer: ConsoleViewer) => html`<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${viewer.token}">`;

/** A test's outcome in words: delivered, or failed with the reason. */
export function testOutcome(attempt: DeliveryAttempt): { tone: Notice['tone']; text: string } {
  if (attempt.outcome === 'delivered') return { tone: 'success', text: `Delivered${attempt.statusCode !== null ? ` (${attempt.statusCode})` : ''}${attempt.durationMs >= 1 ? ` in ${Math.round(attempt.durationMs).toLocaleString('en-GB')} ms` : ''}.` };
  return { tone: 'critical', text: `Failed: ${attempt.outcome}${attempt.statusCode !== null ? ` ${attempt.statusCode}` : ''}${attempt.detail ? `: ${attempt.detail}` : ''}.` };
}

function eventBoxes(prefix: string, chosen: readonly AlertEventKind[], legend = 'Events sent'): SafeHtml {
  return html`<fieldset><legend>${legend}</legend>${ALERT_EVENT_KINDS.map(
    (kind) => html`<label><input type="checkbox" name="events" value="${kind}" id="${prefix}-event-${kind}"${chosen.includes(kind) ? html` checked` : null}> ${EVENT_WORDS[kind]}</label>`,
  )}</fieldset>`;
}

function channelCard(viewer: ConsoleViewer, channel: AlertChannel, tested: boolean): SafeHtml {
  const manage = ROLE_CAN.manage(viewer.role);
  const base = `${ALERTS_PATH}/${encodeURIComponent(channel.id)}`;
  const id = `ch-${channel.id}`;
  const outcome = channel.lastTest ? testOutcome(channel.lastTest) : null;
  return html`<section class="card channel" id="${id}" aria-labelledby="${id}-title"><h3 id="${id}-title">${channel.name} <span class="muted">(${CHANNEL_KIND_WORDS[channel.kind]}${channel.enabled ? '' : ', disabled'})</span></h3>
<dl class="facts"><dt>Goes to</dt><dd class="target">${channel.kind === 'email' ? channel.recipients.join(', ') : (channel.targetHost ?? 'unknown')}</dd>
<dt>Events</dt><dd class="events">${channel.rules.events.join(', ')}</dd>
<dt>Domains</dt><dd class="domains">${channel.rules.domains.length === 0 ? 'every domain' : channel.rules.domains.join(', ')}</dd>
<dt>Last test</dt><dd class="last-test${tested ? ' just-tested' : ''}">${outcome ? html`<span class="tone-${outcome.tone}">${outcome.text}</span> <span class="muted">(${when(channel.lastTest!.at)})</span>` : 'never sent'}</dd></dl>
${manage
  ? html`<form method="post" action="${base}/test" class="inline-action">${tokenField(viewer)}<button type="submit" class="secondary" aria-describedby="${id}-title">Send a test</button></form>
<details><summary>Change the rules of ${channel.name}</summary><form method="post" action="${base}/rules" class="console-form">${tokenField(viewer)}
${eventBoxes(id, channel.rules.events, `Events sent to ${channel.name}`)}
<div><label for="${id}-domains">Domains ${channel.name} takes (one a line; empty: every domain)</label><textarea id="${id}-domains" name="domains" rows="3" spellcheck="false">${channel.rules.domains.join('\n')}</textarea></div>
<div><label><input type="checkbox" name="enabled" value="yes"${channel.enabled ? html` checked` : null}> ${channel.name} enabled</label></div>
<div><button type="submit" class="secondary">Save rules</button></div></form></details>
<form method="post" action="${base}/remove" class="inline-action">${tokenField(viewer)}<button type="submit" class="danger" aria-describedby="${id}-title">Remove</button></form>`
  : null}</section>`;
}

/** `/console/alerts`. */
export function alertsPage(options: { viewer: ConsoleViewer; channels: AlertChannel[] | null; emailConfigured: boolean; tested: string | null; notice: Notice | null; form?: { kind: string; name: string; recipients: string; domains: string } }): SafeHtml {
  const { viewer, channels } = options;
  const manage = ROLE_CAN.manage(viewer.role);
  const form = options.form ?? { kind: 'slack', name: '', recipients: '', domains: '' };
  return consolePage({
    title: 'Alerts',
    viewer,
    current: ALERTS_PATH,
    notice: options.notice,
    body: html`<h1>Alerts</h1>
<p class="lead">Where a confirmed change of your domains is sent: a signed webhook, Slack, Microsoft Teams or email. Each channel's rules say which events and which domains.</p>
${channels === null
  ? html`<div class="card" id="alerts-off"><p>Alert channels are not available on this service (monitors run without the alert service).</p></div>`
  : html`<section aria-labelledby="channels-title"><h2 id="channels-title">Channels</h2>
${channels.length === 0 ? html`<p id="no-channels">No channel yet: alerts of this organisation go only to each domain's webhook, if it has one.</p>` : html`<div id="channels">${channels.map((c) => channelCard(viewer, c, c.id === options.tested))}</div>`}
</section>
${manage
  ? html`<section aria-labelledby="add-title" class="card"><h2 id="add-title">Add a channel</h2>
<form method="post" action="${ALERTS_PATH}" class="console-form">${tokenField(viewer)}
<div><label for="channel-kind">Kind</label><select id="channel-kind" name="kind">${ALERT_CHANNEL_KINDS.map((k) => html`<option value="${k}"${k === form.kind ? html` selected` : null}${k === 'email' && !options.emailConfigured ? html` disabled` : null}>${CHANNEL_KIND_WORDS[k]}${k === 'email' && !options.emailConfigured ? ' (no mail relay configured)' : ''}</option>`)}</select></div>
<div><label for="channel-name">Name</label><input type="text" id="channel-name" name="name" required maxlength="100" value="${form.name}" placeholder="#security on Slack"></div>
<div><label for="channel-url">URL (webhook, Slack incoming webhook, Teams Workflows webhook)</label><input type="url" id="channel-url" name="url" autocomplete="off" aria-describedby="channel-url-hint"></div>
<p class="hint" id="channel-url-hint">The URL is a credential: after saving, only its host is shown.</p>
<div><label for="channel-recipients">Recipients (email: one address a line)</label><textarea id="channel-recipients" name="recipients" rows="2" spellcheck="false">${form.recipients}</textarea></div>
${eventBoxes('new', ALERT_EVENT_KINDS)}
<div><label for="channel-domains">Only these domains (one a line; empty: every domain)</label><textarea id="channel-domains" name="domains" rows="2" spellcheck="false">${form.domains}</textarea></div>
<div><button type="submit">Add channel</button></div></form></section>`
  : null}`}`,
  });
}
