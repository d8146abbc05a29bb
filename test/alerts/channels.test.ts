/**
 * Alert channels end to end against local receivers: a monitor's confirmed change goes through the
 * delivery queue to a signed webhook, Slack (incoming-webhook JSON), Teams (a Workflows message with
 * an Adaptive Card) and email (a local relay with STARTTLS and AUTH), each within 5 s of the change
 * being committed; the rules choose which; the address guard refuses private targets unless
 * allowed; "send a test" returns the outcome; a deleted channel's queued alert fails for good.
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AlertService } from '../../src/jobs/monitors/alerts.js';
import { alertSmtpConfig, type AlertSmtpConfig } from '../../src/jobs/monitors/alert-email.js';
import { runMonitor } from '../../src/jobs/monitors/monitor-run.js';
import { INITIAL_MACHINE } from '../../src/jobs/monitors/monitor-changes.js';
import { DeliveryPump, SIGNATURE_HEADER } from '../../src/jobs/monitors/webhooks.js';
import { MemoryAlertStore } from '../../src/store/alerts-memory.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import type { Monitor } from '../../src/store/monitors.js';
import { checkOver, MutableResolver, NONE, REJECT, WATCHED } from '../monitors/helpers.js';
import { loopbackLookup, makeRelayCertificates, RELAY_HOST, RELAY_PASSWORD, RELAY_USER, startReceiver, startRelay, waitFor } from './helpers.js';

const ORG = 'org_a';
const ORIGIN = 'https://console.example';
/** The bound the issue sets: an alert reaches each receiver within 5 s of the change being confirmed. */
const ALERT_LATENCY_BOUND_MS = 5_000;
const serverKey = Buffer.alloc(32, 9);

describe('alert channels against local receivers', () => {
  let certs: ReturnType<typeof makeRelayCertificates>;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let monitors: MemoryMonitorStore;
  let store: MemoryAlertStore;
  let smtp: AlertSmtpConfig;
  let alerts: AlertService;
  let pump: DeliveryPump;
  let resolver: MutableResolver;
  let monitor: Monitor;

  beforeAll(async () => {
    certs = makeRelayCertificates();
    relay = await startRelay(certs);
  });
  afterAll(async () => {
    await relay.close();
  });

  beforeEach(async () => {
    receiver = await startReceiver();
    monitors = new MemoryMonitorStore();
    store = new MemoryAlertStore();
    smtp = alertSmtpConfig({
      url: `smtp://${RELAY_USER}@${RELAY_HOST}:${relay.port}`,
      urlFromArgv: true,
      from: 'alerts@checker.example',
      passwordFromEnv: RELAY_PASSWORD,
      passwordFile: undefined,
      readFile: () => '',
      extraCa: certs.caPem,
    })!;
    alerts = new AlertService({ store, serverKey, allowPrivateAddresses: true, smtp, publicOrigin: ORIGIN, lookup: loopbackLookup, timeoutMs: 4_000 });
    pump = new DeliveryPump({ store: monitors, secretFor: async () => undefined, allowPrivateAddresses: true, lookup: loopbackLookup, sendToChannel: (d) => alerts.sendDelivery(d) });
    resolver = new MutableResolver(REJECT);
    const at = new Date().toISOString();
    monitor = {
      id: 'mon_alerts',
      organizationId: ORG,
      domain: WATCHED,
      intervalMinutes: 60,
      webhookUrl: null,
      checks: [],
      sealedSecret: '',
      machine: INITIAL_MACHINE,
      lastResult: null,
      nextRunAt: at,
      leaseUntil: null,
      version: 0,
      createdAt: at,
      updatedAt: at,
    };
    await monitors.create(monitor);
    relay.mails.length = 0;
  });
  afterEach(async () => {
    await pump.close();
    await receiver.close();
  });

  const deps = () => ({ store: monitors, check: checkOver(resolver), now: () => new Date(), alertDeliveries: alerts.deliveriesFor.bind(alerts) });
  /** Baseline, then two checks that agree on p=none: the change is confirmed by the third run. */
  const confirmDmarcChange = async (): Promise<{ committedAt: number; deliveries: number }> => {
    await runMonitor(deps(), monitor.id, 'slot:1');
    resolver.setDmarc(NONE);
    await runMonitor(deps(), monitor.id, 'slot:2');
    const outcome = await runMonitor(deps(), monitor.id, 'slot:3');
    const committedAt = Date.now();
    expect(outcome).toMatchObject({ kind: 'committed', changed: true });
    return { committedAt, deliveries: outcome.kind === 'committed' ? outcome.deliveries : 0 };
  };
  const create = async (input: Parameters<AlertService['create']>[1]) => {
    const created = await alerts.create(ORG, input);
    if (!('channel' in created)) throw new Error(`channel refused: ${JSON.stringify(created)}`);
    return created;
  };

  it('a confirmed change reaches the webhook, Slack, Teams and email receivers within 5 s, in their shapes', async () => {
    const webhook = await create({ name: 'hook', kind: 'webhook', url: `${receiver.url}?c=webhook` });
    await create({ name: 'slack', kind: 'slack', url: `${receiver.url}?c=slack` });
    await create({ name: 'teams', kind: 'teams', url: `${receiver.url}?c=teams` });
    await create({ name: 'mail', kind: 'email', recipients: ['Security@Example.com', 'ops@example.com'] });
    pump.start();
    const { committedAt, deliveries } = await confirmDmarcChange();
    expect(deliveries).toBe(4);
    // serve pokes the pump after a commit that queued deliveries (src/jobs/monitors/monitor-setup.ts onRun).
    pump.poke();
    const receivedAt = new Map<string, number>();
    await waitFor(
      () => {
        for (const r of receiver.received) {
          const channel = /c=(\w+)/.exec(r.url ?? '')?.[1];
          if (channel && !receivedAt.has(channel)) receivedAt.set(channel, Date.now());
        }
        if (relay.mails.length > 0 && !receivedAt.has('email')) receivedAt.set('email', relay.mails[0]!.receivedAt);
        return receivedAt.size === 4;
      },
      ALERT_LATENCY_BOUND_MS,
      'an alert at each of the four receivers',
    );
    for (const [channel, at] of receivedAt) expect(at - committedAt, channel).toBeLessThan(ALERT_LATENCY_BOUND_MS);
    if (process.env["ALERTS_PRINT_LATENCY"]) console.log([...receivedAt].map(([c, at]) => `${c} ${at - committedAt} ms`).join(", "));

    const byChannel = (c: string) => receiver.received.find((r) => r.url?.includes(`c=${c}`))!;
    // The signed webhook: the monitor webhook's body, signed with the channel's own secret.
    const hook = byChannel('webhook');
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook.headers[SIGNATURE_HEADER.toLowerCase()]))!;
    expect(v1).toBe(createHmac('sha256', webhook.secret!).update(`${t}.${hook.body}`).digest('hex'));
    expect(JSON.parse(hook.body)).toMatchObject({ type: 'monitor.changed', domain: WATCHED, changes: expect.arrayContaining([{ field: 'dmarc.record', before: REJECT, after: NONE }]) });

    // Slack: `text` for the notification, Block Kit blocks, a button back to the console.
    const slack = JSON.parse(byChannel('slack').body);
    expect(byChannel('slack').headers[SIGNATURE_HEADER.toLowerCase()]).toBeUndefined();
    expect(typeof slack.text).toBe('string');
    expect(slack.text).toContain(WATCHED);
    expect(slack.blocks[0]).toMatchObject({ type: 'header', text: { type: 'plain_text' } });
    expect(slack.blocks[1]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
    expect(slack.blocks[1].text.text).toContain('DMARC record: v=DMARC1; p=reject → v=DMARC1; p=none');
    const button = slack.blocks.find((b: { type: string }) => b.type === 'actions').elements[0];
    expect(button).toMatchObject({ type: 'button', url: `${ORIGIN}/console/domains/${WATCHED}` });

    // Teams: a Workflows message whose one attachment is an Adaptive Card.
    const teams = JSON.parse(byChannel('teams').body);
    expect(teams.type).toBe('message');
    expect(teams.attachments).toHaveLength(1);
    expect(teams.attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    const card = teams.attachments[0].content;
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4', $schema: 'http://adaptivecards.io/schemas/adaptive-card.json' });
    expect(card.body[0]).toMatchObject({ type: 'TextBlock', weight: 'Bolder' });
    expect(card.body.map((b: { text: string }) => b.text).join('\n')).toContain('DMARC record: v=DMARC1; p=reject → v=DMARC1; p=none');
    expect(card.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Open in the console', url: `${ORIGIN}/console/domains/${WATCHED}` }]);

    // Email: through STARTTLS, authenticated, plain text and HTML, each with the link back.
    const mail = relay.mails[0]!;
    expect(mail.secure).toBe(true);
    expect(mail.user).toBe(RELAY_USER);
    expect(mail.from).toBe('alerts@checker.example');
    expect(mail.to.sort()).toEqual(['ops@example.com', 'security@example.com']);
    expect(mail.parsed.subject).toMatch(new RegExp(`^\\[spoof-checker\\] ${WATCHED.replace('.', '\\.')}: `));
    expect(mail.parsed.text).toContain('DMARC record: v=DMARC1; p=reject → v=DMARC1; p=none');
    expect(mail.parsed.text).toContain(`${ORIGIN}/console/domains/${WATCHED}`);
    expect(mail.parsed.html).toContain(`<a href="${ORIGIN}/console/domains/${WATCHED}">`);

    // Every delivery is in the monitor's record of attempts, delivered once. The pump records the
    // outcome after the receiver has answered: wait for the record, not only for the arrival.
    await waitFor(
      async () => ((await monitors.deliveries(ORG, monitor.id, { page: 1, limit: 10 }))?.items ?? []).every((d) => d.status !== 'pending'),
      ALERT_LATENCY_BOUND_MS,
      'every delivery recorded',
    );
    const recorded = await monitors.deliveries(ORG, monitor.id, { page: 1, limit: 10 });
    expect(recorded!.items).toHaveLength(4);
    for (const d of recorded!.items) {
      expect(d.status).toBe('delivered');
      expect(d.attempts).toHaveLength(1);
      expect(d.url).toBe(`channel:${d.channelId}`);
    }
  });

  it('the rules choose the channels: kinds of event and domains', async () => {
    await create({ name: 'bimi only', kind: 'slack', url: `${receiver.url}?c=bimi`, events: ['bimi'] });
    await create({ name: 'other domain', kind: 'slack', url: `${receiver.url}?c=other`, domains: ['other.example'] });
    await create({ name: 'auth on this domain', kind: 'slack', url: `${receiver.url}?c=auth`, events: ['authentication'], domains: [WATCHED.toUpperCase()] });
    await create({ name: 'off', kind: 'slack', url: `${receiver.url}?c=off`, enabled: false });
    const { deliveries } = await confirmDmarcChange();
    expect(deliveries).toBe(1);
    await pump.drain();
    expect(receiver.received.map((r) => /c=(\w+)/.exec(r.url ?? '')?.[1])).toEqual(['auth']);
  });

  it('the address guard: private targets are refused at creation and at each attempt unless allowed', async () => {
    const guarded = new AlertService({ store, serverKey, allowPrivateAddresses: false, smtp, lookup: loopbackLookup, timeoutMs: 4_000 });
    expect(await guarded.create(ORG, { name: 'x', kind: 'slack', url: receiver.url })).toMatchObject({ kind: 'url-refused' });
    // Made while allowed (or the name moved since): each attempt checks again, and is not retried.
    const slack = await create({ name: 'slack', kind: 'slack', url: receiver.url });
    const mail = await create({ name: 'mail', kind: 'email', recipients: ['a@example.com'] });
    expect(await guarded.sendTest(ORG, slack.channel.id)).toMatchObject({ outcome: 'refused-address' });
    expect(await guarded.sendTest(ORG, mail.channel.id)).toMatchObject({ outcome: 'refused-address', detail: expect.stringContaining(RELAY_HOST) });
    expect(receiver.received).toHaveLength(0);
    expect(relay.mails).toHaveLength(0);
  });

  it('"send a test" answers with the outcome for every kind, and keeps it on the channel', async () => {
    for (const input of [
      { name: 'hook', kind: 'webhook' as const, url: receiver.url },
      { name: 'slack', kind: 'slack' as const, url: receiver.url },
      { name: 'teams', kind: 'teams' as const, url: receiver.url },
      { name: 'mail', kind: 'email' as const, recipients: ['a@example.com'] },
    ]) {
      const { channel } = await create(input);
      const attempt = await alerts.sendTest(ORG, channel.id, 'tested.example');
      expect(attempt, input.kind).toMatchObject({ outcome: 'delivered' });
      expect((await store.getChannel(ORG, channel.id))!.lastTest).toEqual(attempt);
    }
    expect(relay.mails[0]!.parsed.subject).toBe('[spoof-checker] Test alert from spoof-checker for tested.example');
    expect(relay.mails[0]!.parsed.text).toContain(`${ORIGIN}/console/domains/tested.example`);
    receiver.setStatus(500);
    const { channel } = await create({ name: 'failing', kind: 'teams', url: receiver.url });
    expect(await alerts.sendTest(ORG, channel.id)).toMatchObject({ outcome: 'http-error', statusCode: 500 });
    expect(await alerts.sendTest('org_b', channel.id)).toBeUndefined();
  });

  it('a relay that refuses the password is an smtp-error attempt, retried; a wrong CA is a TLS error', async () => {
    const wrongPassword = new AlertService({ store, serverKey, allowPrivateAddresses: true, smtp: { ...smtp, password: 'wrong' }, lookup: loopbackLookup, timeoutMs: 4_000 });
    const { channel } = await create({ name: 'mail', kind: 'email', recipients: ['a@example.com'] });
    expect(await wrongPassword.sendTest(ORG, channel.id)).toMatchObject({ outcome: 'smtp-error', statusCode: 535 });
    const untrusted = new AlertService({ store, serverKey, allowPrivateAddresses: true, smtp: { ...smtp, extraCa: undefined }, lookup: loopbackLookup, timeoutMs: 4_000 });
    const second = await create({ name: 'mail 2', kind: 'email', recipients: ['a@example.com'] });
    const attempt = await untrusted.sendTest(ORG, second.channel.id);
    expect(attempt).toMatchObject({ outcome: 'network-error' });
    expect(relay.mails).toHaveLength(0);
  });

  it('a failed attempt stays queued for a retry; a deleted channel fails for good and gets nothing', async () => {
    receiver.setStatus(503);
    const { channel } = await create({ name: 'slack', kind: 'slack', url: receiver.url });
    await confirmDmarcChange();
    await pump.drain();
    let [delivery] = (await monitors.deliveries(ORG, monitor.id, { page: 1, limit: 10 }))!.items;
    expect(delivery).toMatchObject({ status: 'pending', attempts: [{ outcome: 'http-error', statusCode: 503 }] });
    expect(await store.deleteChannel(ORG, channel.id)).toBe(true);
    const sent = await alerts.sendDelivery(delivery!);
    expect(sent).toMatchObject({ final: true, attempt: { detail: 'the alert channel was deleted' } });
    expect(receiver.received).toHaveLength(1);
    [delivery] = (await monitors.deliveries(ORG, monitor.id, { page: 1, limit: 10 }))!.items;
    expect(delivery!.channelId).toBe(channel.id);
  });
});
