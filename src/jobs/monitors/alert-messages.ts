/**
 * What an alert says, and its shape for each channel: Slack's incoming-webhook JSON (`text` for
 * notifications, Block Kit `blocks` for the message), a Microsoft Teams Workflows webhook's
 * message with one Adaptive Card (schema 1.4), and an email with a plain-text and an HTML part.
 * Every part links back to the domain's page in the console (`<public origin>/console/domains/<domain>`).
 *
 * Record text comes from DNS, so it is hostile input: every value is cut to a bound, and escaped
 * for where it lands (Slack mrkdwn: &, <, >; HTML: the five characters).
 */
import type { LookalikeAlert } from './monitor-changes.js';

/** Longest value shown in one line of an alert (a record's text is cut there, with "…"). */
export const ALERT_VALUE_MAX_CHARS = 300;
/** Most changed fields (and lookalikes) listed in one alert; the rest are counted. */
export const ALERT_MAX_LINES = 20;
/** Slack refuses a header block over 150 characters. */
const SLACK_HEADER_MAX_CHARS = 150;
/** Slack refuses a button's text over 75 characters. */
const SLACK_BUTTON_MAX_CHARS = 75;
/** Slack refuses a section's text over 3,000 characters. */
const SLACK_SECTION_MAX_CHARS = 3000;

/** The event an alert reports (the monitor webhook's body, src/jobs/monitors/monitor-run.ts `MonitorChangedEvent`). */
export interface AlertEvent {
  type: 'monitor.changed' | 'lookalike.changed' | 'alert.test';
  monitorId?: string;
  domain: string;
  changes: { field: string; before: unknown; after: unknown }[];
  lookalikes?: LookalikeAlert[];
  checkedAt: string;
}

/** An alert, ready to be shaped for a channel. */
export interface AlertMessage {
  domain: string;
  /** One line: the subject of the mail, the header of the card. */
  title: string;
  /** One line per change (at most ALERT_MAX_LINES, then a count of the rest). */
  lines: string[];
  /** The domain's page in the console: absolute with a public origin, else the path. */
  link: string;
  /** `link` is absolute (Slack and Teams buttons need an absolute URL). */
  linkIsAbsolute: boolean;
  checkedAt: string;
  test: boolean;
}

/** What people call each changed field. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  state: 'state',
  verdict: 'spoofing verdict',
  inboxOutcome: 'what a spoofed message meets',
  'dmarc.status': 'DMARC',
  'dmarc.record': 'DMARC record',
  'spf.status': 'SPF',
  'spf.record': 'SPF record',
  'dkim.status': 'DKIM',
  'dkim.keys': 'DKIM keys',
  'mx.status': 'MX',
  'mx.hosts': 'MX hosts',
  findings: 'findings',
  'transport.verdict': 'transport security',
  lookalikes: 'lookalike domains',
  'bimi.grade': 'BIMI',
  'bimi.logoValid': 'BIMI logo',
  'bimi.certificateExpiring': 'BIMI mark certificate expiry',
  'reports.unauthorised': 'unauthorised senders in DMARC reports',
  'reports.passRateDropped': 'DMARC pass rate drop',
  'dnssec.status': 'DNSSEC',
  'dnssec.expiring': 'DNSSEC signature expiry',
};

/** `text` cut to `max` characters (code points), with "…" when cut. */
export function cut(text: string, max: number = ALERT_VALUE_MAX_CHARS): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** A value of a change for people: null is "none", a list is joined. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(String).join(', ');
  return String(value);
}

/** The console page of `domain`: `<origin>/console/domains/<domain>`. */
export function consoleLink(publicOrigin: string | undefined, domain: string): { link: string; absolute: boolean } {
  const path = `/console/domains/${encodeURIComponent(domain)}`;
  if (publicOrigin === undefined) return { link: path, absolute: false };
  return { link: `${publicOrigin.replace(/\/+$/, '')}${path}`, absolute: true };
}

/** The alert an event makes. */
export function alertMessage(event: AlertEvent, publicOrigin: string | undefined): AlertMessage {
  const { link, absolute } = consoleLink(publicOrigin, event.domain);
  const test = event.type === 'alert.test';
  const lines: string[] = [];
  for (const alert of event.lookalikes ?? []) {
    lines.push(
      alert.change === 'mail'
        ? `Lookalike ${alert.domain}: can now handle mail (MX or SPF published), graded ${alert.after}`
        : alert.before === null
          ? `Lookalike ${alert.domain}: ${alert.change === 'registered' ? 'newly registered' : 'new'}, graded ${alert.after}`
          : `Lookalike ${alert.domain}: grade rose from ${alert.before} to ${alert.after}`,
    );
  }
  for (const change of event.changes) {
    if (change.field === 'lookalikes' && (event.lookalikes?.length ?? 0) > 0) continue;
    const name = FIELD_NAMES[change.field] ?? change.field;
    lines.push(`${name}: ${cut(shown(change.before))} → ${cut(shown(change.after))}`);
  }
  const kept = lines.slice(0, ALERT_MAX_LINES);
  if (lines.length > ALERT_MAX_LINES) kept.push(`… and ${lines.length - ALERT_MAX_LINES} more`);
  const first = event.lookalikes?.[0] !== undefined ? 'a lookalike domain' : FIELD_NAMES[event.changes[0]?.field ?? ''] ?? 'its state';
  const more = Math.max(0, event.changes.length - 1);
  const names = event.lookalikes?.length ?? 0;
  const title = test
    ? `Test alert from spoof-checker for ${event.domain}`
    : event.type === 'lookalike.changed'
      ? `${event.domain}: ${names} lookalike domain${names === 1 ? '' : 's'} worth a look`
      : `${event.domain}: ${first} changed${more > 0 ? ` (and ${more} more)` : ''}`;
  return { domain: event.domain, title: cut(title, SLACK_HEADER_MAX_CHARS), lines: kept, link, linkIsAbsolute: absolute, checkedAt: event.checkedAt, test };
}

/** Slack mrkdwn escapes (Slack's "Formatting text": &, < and > only). */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Slack incoming-webhook body: `text` (the notification) and Block Kit blocks. */
export function slackPayload(message: AlertMessage): Record<string, unknown> {
  const body = message.lines.map((line) => `• ${slackEscape(line)}`).join('\n');
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: message.title, emoji: false } },
    { type: 'section', text: { type: 'mrkdwn', text: cut(body === '' ? 'This is a test: the channel works.' : body, SLACK_SECTION_MAX_CHARS) } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `Confirmed at ${slackEscape(message.checkedAt)}` }] },
  ];
  if (message.linkIsAbsolute) {
    // Slack refuses a button's text over 75 characters.
    blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: `Open ${cut(message.domain, SLACK_BUTTON_MAX_CHARS - 20)} in the console` }, url: message.link }] });
  }
  return { text: slackEscape(message.title), blocks };
}

/** The Teams Workflows webhook body: a message with one Adaptive Card attachment. */
export function teamsPayload(message: AlertMessage): Record<string, unknown> {
  const card: Record<string, unknown> = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'TextBlock', text: message.title, weight: 'Bolder', size: 'Medium', wrap: true },
      ...(message.lines.length === 0
        ? [{ type: 'TextBlock', text: 'This is a test: the channel works.', wrap: true }]
        : message.lines.map((line) => ({ type: 'TextBlock', text: line, wrap: true, spacing: 'Small' }))),
      { type: 'TextBlock', text: `Confirmed at ${message.checkedAt}`, isSubtle: true, size: 'Small', wrap: true },
    ],
    ...(message.linkIsAbsolute ? { actions: [{ type: 'Action.OpenUrl', title: 'Open in the console', url: message.link }] } : {}),
  };
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
}

/** HTML escapes of the five characters. */
function htmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The mail of an alert: subject, plain text and HTML, each with the link to the console. */
export function emailMessage(message: AlertMessage): { subject: string; text: string; html: string } {
  const lines = message.lines.length === 0 ? ['This is a test: the channel works.'] : message.lines;
  const text = [message.title, '', ...lines.map((l) => `- ${l}`), '', `Confirmed at ${message.checkedAt}.`, `Open it in the console: ${message.link}`, ''].join('\n');
  const html = [
    '<!doctype html><html lang="en"><body>',
    `<h1 style="font-size:1.2em">${htmlEscape(message.title)}</h1>`,
    `<ul>${lines.map((l) => `<li>${htmlEscape(l)}</li>`).join('')}</ul>`,
    `<p>Confirmed at ${htmlEscape(message.checkedAt)}.</p>`,
    `<p><a href="${htmlEscape(message.link)}">Open ${htmlEscape(message.domain)} in the console</a></p>`,
    '</body></html>',
  ].join('\n');
  // RFC 5322 §2.1.1: no line breaks in the subject; keep it short.
  return { subject: `[spoof-checker] ${message.title.replace(/[\r\n]+/g, ' ')}`, text, html };
}
