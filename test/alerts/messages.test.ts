/**
 * The pure parts of alerts, table-driven: which kinds of event a change is, which channels take it,
 * how hostile record text is bounded and escaped in Slack, Teams and email, and the relay settings
 * (a password never from argv).
 */
import { describe, expect, it } from 'vitest';
import { alertMessage, ALERT_MAX_LINES, ALERT_VALUE_MAX_CHARS, emailMessage, slackPayload, teamsPayload, type AlertEvent } from '../../src/jobs/monitors/alert-messages.js';
import { alertSmtpConfig } from '../../src/jobs/monitors/alert-email.js';
import { channelTakes, eventKindsOf } from '../../src/jobs/monitors/alerts.js';
import type { AlertEventKind } from '../../src/store/alerts.js';

const event = (changes: AlertEvent['changes'], lookalikes?: AlertEvent['lookalikes']): AlertEvent => ({
  type: 'monitor.changed',
  domain: 'example.com',
  changes,
  ...(lookalikes ? { lookalikes } : {}),
  checkedAt: '2026-01-01T00:00:00.000Z',
});

describe('eventKindsOf', () => {
  it.each<[string, AlertEvent, AlertEventKind[]]>([
    ['a DMARC record', event([{ field: 'dmarc.record', before: 'a', after: 'b' }]), ['authentication']],
    ['the verdict and MX', event([{ field: 'verdict', before: 'a', after: 'b' }, { field: 'mx.hosts', before: [], after: ['x'] }]), ['authentication']],
    ['could not check', event([{ field: 'state', before: 'checked', after: 'could-not-check' }]), ['availability']],
    ['transport', event([{ field: 'transport.verdict', before: 'enforced', after: 'broken' }]), ['transport']],
    ['BIMI and DNSSEC', event([{ field: 'bimi.grade', before: 'a', after: 'b' }, { field: 'dnssec.status', before: 'a', after: 'b' }]), ['bimi', 'dnssec']],
    ['reports', event([{ field: 'reports.passRateDropped', before: false, after: true }]), ['reports']],
    ['lookalikes that only went away', event([{ field: 'lookalikes', before: ['a.com high'], after: [] }]), []],
    ['a new lookalike', event([{ field: 'lookalikes', before: [], after: ['examp1e.com critical'] }], [{ domain: 'examp1e.com', before: null, after: 'critical' }]), ['lookalikes']],
  ])('%s', (_name, input, kinds) => {
    expect(eventKindsOf(input)).toEqual(kinds);
  });
});

describe('channelTakes', () => {
  const rules = (events: AlertEventKind[], domains: string[] = []) => ({ enabled: true, rules: { events, domains } });
  it.each<[string, ReturnType<typeof rules> | { enabled: boolean; rules: { events: AlertEventKind[]; domains: string[] } }, string, AlertEventKind[], boolean]>([
    ['every domain, the kind matches', rules(['authentication']), 'example.com', ['authentication'], true],
    ['the kind does not match', rules(['bimi']), 'example.com', ['authentication'], false],
    ['one of several kinds matches', rules(['bimi']), 'example.com', ['authentication', 'bimi'], true],
    ['another domain', rules(['authentication'], ['other.example']), 'example.com', ['authentication'], false],
    ['its domain', rules(['authentication'], ['example.com']), 'example.com', ['authentication'], true],
    ['disabled', { enabled: false, rules: { events: ['authentication'], domains: [] } }, 'example.com', ['authentication'], false],
  ])('%s', (_name, channel, domain, kinds, takes) => {
    expect(channelTakes(channel, domain, kinds)).toBe(takes);
  });
});

describe('alert messages', () => {
  const hostile = `v=spf1 <!channel> <script>alert(1)</script> & ${'x'.repeat(5000)}`;
  const message = alertMessage(event([{ field: 'spf.record', before: null, after: hostile }]), 'https://console.example/');

  it('bounds every value and the number of lines', () => {
    expect(message.lines[0]!.length).toBeLessThan(ALERT_VALUE_MAX_CHARS + 50);
    const many = alertMessage(event(Array.from({ length: 50 }, (_, i) => ({ field: `findings`, before: i, after: i + 1 }))), undefined);
    expect(many.lines).toHaveLength(ALERT_MAX_LINES + 1);
    expect(many.lines.at(-1)).toBe('… and 30 more');
    expect(many.link).toBe('/console/domains/example.com');
    expect(many.linkIsAbsolute).toBe(false);
  });

  it('escapes Slack mrkdwn (no @channel mention, no link injection) and HTML', () => {
    const slack = JSON.stringify(slackPayload(message));
    expect(slack).not.toContain('<!channel>');
    expect(slack).toContain('&lt;!channel&gt;');
    const mail = emailMessage(message);
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;');
    expect(mail.text).toContain('https://console.example/console/domains/example.com');
    expect(mail.subject).not.toMatch(/[\r\n]/);
  });

  it('keeps Slack\'s limits: header 150, button text 75 characters', () => {
    const long = alertMessage(event([{ field: 'verdict', before: 'a', after: 'b' }]), 'https://console.example');
    const longDomain = { ...long, domain: `${'a'.repeat(63)}.${'b'.repeat(63)}.example`, title: 'x'.repeat(400) };
    const payload = slackPayload(longDomain) as { blocks: { type: string; text?: { text: string }; elements?: { text: { text: string } }[] }[] };
    expect(payload.blocks[0]!.text!.text.length).toBeLessThanOrEqual(400);
    expect(alertMessage({ ...event([]), domain: 'd'.repeat(300) }, undefined).title.length).toBeLessThanOrEqual(150);
    expect(payload.blocks.find((b) => b.type === 'actions')!.elements![0]!.text.text.length).toBeLessThanOrEqual(75);
  });

  it('without a public origin, Slack and Teams get no button (they need an absolute URL); the mail gives the path', () => {
    const relative = alertMessage(event([{ field: 'verdict', before: 'protected', after: 'spoofable' }]), undefined);
    expect(JSON.stringify(slackPayload(relative))).not.toContain('"actions"');
    expect(teamsPayload(relative)).not.toHaveProperty('attachments.0.content.actions');
    expect(emailMessage(relative).text).toContain('/console/domains/example.com');
  });

  it('a lookalike alert says what happened to which name', () => {
    const m = alertMessage(event([{ field: 'lookalikes', before: ['examp1e.com medium'], after: ['examp1e.com critical', 'exarnple.com high'] }], [
      { domain: 'examp1e.com', before: 'medium', after: 'critical' },
      { domain: 'exarnple.com', before: null, after: 'high' },
    ]), undefined);
    expect(m.title).toBe('example.com: a lookalike domain changed');
    expect(m.lines).toEqual(['Lookalike examp1e.com: grade rose from medium to critical', 'Lookalike exarnple.com: new, graded high']);
  });
});

describe('alertSmtpConfig', () => {
  const base = { urlFromArgv: true, from: 'alerts@example.com', passwordFromEnv: undefined, passwordFile: undefined, readFile: (p: string) => (p === 'pw.txt' ? 'from-file' : (() => { throw Object.assign(new Error('no'), { code: 'ENOENT' }); })()), extraCa: undefined };
  it.each<[string, Partial<Parameters<typeof alertSmtpConfig>[0]> & { url: string | undefined }, RegExp | Record<string, unknown> | undefined]>([
    ['no relay', { url: undefined, from: undefined }, undefined],
    ['smtp: port 587, STARTTLS', { url: 'smtp://relay.example.com' }, { scheme: 'smtp', host: 'relay.example.com', port: 587, user: undefined, password: undefined }],
    ['smtps: port 465', { url: 'smtps://alerts@relay.example.com' }, { scheme: 'smtps', port: 465, user: 'alerts' }],
    ['password from the environment', { url: 'smtp://alerts@relay.example.com:2525', passwordFromEnv: 's3cret' }, { port: 2525, user: 'alerts', password: 's3cret' }],
    ['password from a file', { url: 'smtp://alerts@relay.example.com', passwordFile: 'pw.txt' }, { password: 'from-file' }],
    ['password in the URL of the environment', { url: 'smtp://alerts:in%20env@relay.example.com', urlFromArgv: false }, { password: 'in env' }],
    ['password in the URL on argv', { url: 'smtp://alerts:pw@relay.example.com' }, /must not carry a password/],
    ['another scheme', { url: 'http://relay.example.com' }, /smtp:\/\/ \(STARTTLS\) or smtps:\/\//],
    ['no sender', { url: 'smtp://relay.example.com', from: undefined }, /--alert-from/],
    ['a bad sender', { url: 'smtp://relay.example.com', from: 'not an address' }, /--alert-from must be an address/],
    ['a sender without a relay', { url: undefined }, /needs a relay/],
    ['a password without a user', { url: 'smtp://relay.example.com', passwordFromEnv: 'x' }, /no user/],
    ['an unreadable file', { url: 'smtp://a@relay.example.com', passwordFile: 'missing' }, /ENOENT/],
  ])('%s', (_name, input, expected) => {
    const run = () => alertSmtpConfig({ ...base, ...input });
    if (expected instanceof RegExp) expect(run).toThrow(expected);
    else if (expected === undefined) expect(run()).toBeUndefined();
    else expect(run()).toMatchObject(expected);
  });
});

describe('serve --alert-smtp', () => {
  it('takes the relay from the flags or the environment, the password never from argv', async () => {
    const { serveConfig } = await import('../../src/cli/serve.js');
    const { UsageError } = await import('../../src/cli/args.js');
    expect(serveConfig([], {})).toMatchObject({ alertSmtp: undefined });
    expect(serveConfig(['--alert-smtp', 'smtp://alerts@relay.example.com', '--alert-from', 'a@example.com'], { SPOOF_CHECKER_ALERT_SMTP_PASSWORD: 'pw' })).toMatchObject({
      alertSmtp: { scheme: 'smtp', host: 'relay.example.com', port: 587, user: 'alerts', password: 'pw', from: 'a@example.com' },
    });
    expect(serveConfig([], { SPOOF_CHECKER_ALERT_SMTP: 'smtps://u:p@relay.example.com', SPOOF_CHECKER_ALERT_FROM: 'a@example.com' })).toMatchObject({ alertSmtp: { scheme: 'smtps', password: 'p' } });
    expect(() => serveConfig(['--alert-smtp', 'smtp://u:p@relay.example.com', '--alert-from', 'a@example.com'], {})).toThrow(UsageError);
    expect(() => serveConfig(['--alert-smtp', 'smtp://relay.example.com', '--alert-from', 'a@example.com', '--tls-ca', '/nonexistent/ca.pem'], {})).toThrow(/--tls-ca/);
  });
});
