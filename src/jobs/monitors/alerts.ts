/**
 * Alerts where people are: an organisation's channels (the signed webhook, Slack, Microsoft
 * Teams, email) and the rules saying which events go to which. What the API routes and the console
 * call (create, change, delete, send a test), what a monitor run calls to queue a confirmed
 * change's deliveries, and what the delivery pump calls to send one.
 *
 * Every delivery goes through the monitors' delivery queue (src/jobs/monitors/webhooks.ts `DeliveryPump`):
 * written with the change in one transaction, retried with backoff for 24 h, every attempt
 * recorded, and every target behind the address guard (refused-address unless the operator runs
 * with --allow-private-addresses). A test is sent at once through the same senders and its outcome
 * returned (and kept on the channel as `lastTest`).
 */
import { randomUUID } from 'node:crypto';
import { normaliseDomainInput, resolveAllowedAddress, type HostLookup } from '@spoof-checker/engine';
import { ALERT_EVENT_KINDS, type AlertChannel, type AlertChannelKind, type AlertEventKind, type AlertRules, type AlertStore } from '../../store/alerts.js';
import type { DeliveryAttempt, Monitor, WebhookDelivery } from '../../store/monitors.js';
import { alertMessage, emailMessage, slackPayload, teamsPayload, type AlertEvent } from './alert-messages.js';
import { isMailAddress, MAX_ALERT_RECIPIENTS, sendAlertMail, type AlertSmtpConfig } from './alert-email.js';
import { newWebhookSecret, openSecret, sealSecret } from './monitor-secrets.js';
import { newDelivery, postJson, postWebhook, type WebhookConnector } from './webhooks.js';

/** Most channels one organisation may keep. */
export const MAX_ALERT_CHANNELS_PER_ORGANIZATION = 20;
/** Most domains one channel's rule may name. */
export const MAX_ALERT_RULE_DOMAINS = 100;
/**
 * Least time between two tests of one channel: a test sends at once, outside the queue, so without
 * a floor an API key could use the relay (or a Slack channel) as a loudspeaker.
 */
export const ALERT_TEST_COOLDOWN_MS = 10_000;
/** Longest target URL (as a monitor's webhook URL). */
export const MAX_ALERT_URL_LENGTH = 2048;
/** Longest channel name. */
export const MAX_ALERT_CHANNEL_NAME_LENGTH = 100;

/** What a client sends to create a channel. */
export interface NewAlertChannelInput {
  name: string;
  kind: AlertChannelKind;
  /** The target of a webhook, Slack or Teams channel. */
  url?: string;
  /** The recipients of an email channel. */
  recipients?: string[];
  /** Default: every kind of event. */
  events?: AlertEventKind[];
  /** Default: every domain of the organisation. */
  domains?: string[];
  enabled?: boolean;
}

/** What a client sends to change a channel (its kind cannot change). */
export interface AlertChannelPatchInput {
  name?: string;
  url?: string;
  recipients?: string[];
  events?: AlertEventKind[];
  domains?: string[];
  enabled?: boolean;
}

/** Why a channel could not be created or changed. */
export type AlertChannelRefusal =
  | { kind: 'invalid'; message: string }
  | { kind: 'url-refused'; message: string }
  | { kind: 'email-not-configured' }
  | { kind: 'too-many-channels'; max: number };

/** A channel that has been created: the signed webhook's secret is shown this once. */
export interface CreatedAlertChannel {
  channel: AlertChannel;
  secret: string | null;
}

/** Options of {@link AlertService}. */
export interface AlertServiceOptions {
  store: AlertStore;
  /** The key that seals targets and secrets (the monitors' server key). */
  serverKey: Buffer;
  allowPrivateAddresses: boolean;
  /** The mail relay; without it, email channels cannot be created and queued mails fail saying so. */
  smtp?: AlertSmtpConfig | undefined;
  /** The origin the console links start with (`--public-url`); without it links are paths. */
  publicOrigin?: string | undefined;
  lookup?: HostLookup;
  connect?: WebhookConnector;
  timeoutMs?: number;
  now?: () => Date;
}

/** The kind of event each changed field is (the rules' unit). */
export function eventKindOfField(field: string): AlertEventKind {
  if (field === 'state') return 'availability';
  if (field.startsWith('transport.')) return 'transport';
  if (field.startsWith('bimi.')) return 'bimi';
  if (field.startsWith('dnssec.')) return 'dnssec';
  if (field.startsWith('reports.')) return 'reports';
  if (field === 'lookalikes') return 'lookalikes';
  return 'authentication';
}

/**
 * The kinds of event a confirmed change is. A change of the lookalikes counts only when it alerts
 * (a name newly registered, gaining mail, or whose grade rose: `event.lookalikes`).
 */
export function eventKindsOf(event: Pick<AlertEvent, 'changes' | 'lookalikes'>): AlertEventKind[] {
  const kinds = new Set<AlertEventKind>();
  for (const change of event.changes) {
    const kind = eventKindOfField(change.field);
    if (kind === 'lookalikes' && (event.lookalikes?.length ?? 0) === 0) continue;
    kinds.add(kind);
  }
  if ((event.lookalikes?.length ?? 0) > 0) kinds.add('lookalikes');
  return ALERT_EVENT_KINDS.filter((k) => kinds.has(k));
}

/** Whether a channel's rules take an event of `kinds` about `domain`. */
export function channelTakes(channel: Pick<AlertChannel, 'enabled' | 'rules'>, domain: string, kinds: readonly AlertEventKind[]): boolean {
  if (!channel.enabled) return false;
  if (channel.rules.domains.length > 0 && !channel.rules.domains.includes(domain)) return false;
  return kinds.some((k) => channel.rules.events.includes(k));
}

/** The URL form a channel delivery carries in place of its (secret) target. */
export function channelDeliveryUrl(channelId: string): string {
  return `channel:${channelId}`;
}

/** Alert channels for the routes, the runs and the pump. */
export class AlertService {
  readonly store: AlertStore;
  readonly #options: AlertServiceOptions;
  readonly #now: () => Date;

  constructor(options: AlertServiceOptions) {
    this.store = options.store;
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Whether email channels can be used (a relay is configured). */
  get emailConfigured(): boolean {
    return this.#options.smtp !== undefined;
  }

  /** Checks a channel's target URL: http(s), no credentials in it, a host that resolves to an allowed address. */
  async checkUrl(url: string): Promise<string | undefined> {
    if (url.length > MAX_ALERT_URL_LENGTH) return `the URL is longer than ${MAX_ALERT_URL_LENGTH} characters`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return `"${url.slice(0, 100)}" is not a URL`;
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `the URL must be http(s), not ${parsed.protocol}`;
    if (parsed.username !== '' || parsed.password !== '') return 'the URL must not carry a user name or password';
    const checked = await resolveAllowedAddress(parsed.hostname, this.#options.allowPrivateAddresses, this.#options.lookup).catch(() => ({ ok: false as const, kind: 'unresolvable' as const, reason: `${parsed.hostname} does not resolve` }));
    if (!checked.ok) return checked.kind === 'forbidden' ? `${parsed.hostname} resolves to ${checked.address}, ${checked.reason}` : checked.reason;
    return undefined;
  }

  #rules(events: AlertEventKind[] | undefined, domains: string[] | undefined, current?: AlertRules): AlertRules | AlertChannelRefusal {
    const chosenEvents = events ?? current?.events ?? [...ALERT_EVENT_KINDS];
    if (chosenEvents.length === 0) return { kind: 'invalid', message: 'events must name at least one kind of event (or leave it out for all of them)' };
    const unknown = chosenEvents.find((e) => !ALERT_EVENT_KINDS.includes(e));
    if (unknown !== undefined) return { kind: 'invalid', message: `"${String(unknown).slice(0, 50)}" is not a kind of event (${ALERT_EVENT_KINDS.join(', ')})` };
    const chosenDomains = domains ?? current?.domains ?? [];
    if (chosenDomains.length > MAX_ALERT_RULE_DOMAINS) return { kind: 'invalid', message: `a rule names at most ${MAX_ALERT_RULE_DOMAINS} domains` };
    const normalised: string[] = [];
    for (const input of chosenDomains) {
      const domain = normaliseDomainInput(input);
      if (!domain.ok) return { kind: 'invalid', message: `domains: "${input.slice(0, 100)}": ${domain.message}` };
      if (!normalised.includes(domain.domain)) normalised.push(domain.domain);
    }
    return { events: ALERT_EVENT_KINDS.filter((k) => chosenEvents.includes(k)), domains: normalised.sort() };
  }

  #recipients(recipients: string[] | undefined): string[] | AlertChannelRefusal {
    if (recipients === undefined || recipients.length === 0) return { kind: 'invalid', message: 'an email channel needs recipients (at least one address)' };
    if (recipients.length > MAX_ALERT_RECIPIENTS) return { kind: 'invalid', message: `an email channel has at most ${MAX_ALERT_RECIPIENTS} recipients` };
    const out: string[] = [];
    for (const address of recipients) {
      const lower = address.trim().toLowerCase();
      if (!isMailAddress(lower)) return { kind: 'invalid', message: `"${address.slice(0, 100)}" is not an address such as security@example.com` };
      if (!out.includes(lower)) out.push(lower);
    }
    return out;
  }

  /** Creates a channel, or says why not. */
  async create(organizationId: string, input: NewAlertChannelInput): Promise<CreatedAlertChannel | AlertChannelRefusal> {
    const name = input.name.trim();
    if (name === '' || name.length > MAX_ALERT_CHANNEL_NAME_LENGTH) return { kind: 'invalid', message: `name must be 1 to ${MAX_ALERT_CHANNEL_NAME_LENGTH} characters` };
    const rules = this.#rules(input.events, input.domains);
    if ('kind' in rules) return rules;
    const existing = await this.store.listChannels(organizationId);
    if (existing.length >= MAX_ALERT_CHANNELS_PER_ORGANIZATION) return { kind: 'too-many-channels', max: MAX_ALERT_CHANNELS_PER_ORGANIZATION };
    const at = this.#now().toISOString();
    let sealedUrl: string | null = null;
    let targetHost: string | null = null;
    let recipients: string[] = [];
    let secret: string | null = null;
    if (input.kind === 'email') {
      if (!this.emailConfigured) return { kind: 'email-not-configured' };
      const checked = this.#recipients(input.recipients);
      if (!Array.isArray(checked)) return checked;
      recipients = checked;
    } else {
      if (input.url === undefined) return { kind: 'invalid', message: `a ${input.kind} channel needs url` };
      const problem = await this.checkUrl(input.url);
      if (problem !== undefined) return { kind: 'url-refused', message: problem };
      sealedUrl = sealSecret(input.url, this.#options.serverKey);
      targetHost = new URL(input.url).host;
      if (input.kind === 'webhook') secret = newWebhookSecret();
    }
    const channel: AlertChannel = {
      id: `alc_${randomUUID()}`,
      organizationId,
      name,
      kind: input.kind,
      sealedUrl,
      targetHost,
      recipients,
      sealedSecret: secret === null ? null : sealSecret(secret, this.#options.serverKey),
      rules,
      enabled: input.enabled ?? true,
      lastTest: null,
      createdAt: at,
      updatedAt: at,
    };
    await this.store.createChannel(channel);
    return { channel, secret };
  }

  /** Changes a channel; undefined when not found. */
  async update(organizationId: string, id: string, patch: AlertChannelPatchInput): Promise<AlertChannel | AlertChannelRefusal | undefined> {
    const channel = await this.store.getChannel(organizationId, id);
    if (!channel) return undefined;
    const next: Parameters<AlertStore['updateChannel']>[2] = {};
    if (patch.name !== undefined) {
      const name = patch.name.trim();
      if (name === '' || name.length > MAX_ALERT_CHANNEL_NAME_LENGTH) return { kind: 'invalid', message: `name must be 1 to ${MAX_ALERT_CHANNEL_NAME_LENGTH} characters` };
      next.name = name;
    }
    if (patch.events !== undefined || patch.domains !== undefined) {
      const rules = this.#rules(patch.events, patch.domains, channel.rules);
      if ('kind' in rules) return rules;
      next.rules = rules;
    }
    if (patch.url !== undefined) {
      if (channel.kind === 'email') return { kind: 'invalid', message: 'an email channel has recipients, not a url' };
      const problem = await this.checkUrl(patch.url);
      if (problem !== undefined) return { kind: 'url-refused', message: problem };
      next.sealedUrl = sealSecret(patch.url, this.#options.serverKey);
      next.targetHost = new URL(patch.url).host;
    }
    if (patch.recipients !== undefined) {
      if (channel.kind !== 'email') return { kind: 'invalid', message: `a ${channel.kind} channel has a url, not recipients` };
      const checked = this.#recipients(patch.recipients);
      if (!Array.isArray(checked)) return checked;
      next.recipients = checked;
    }
    if (patch.enabled !== undefined) next.enabled = patch.enabled;
    return this.store.updateChannel(organizationId, id, next, this.#now().toISOString());
  }

  /**
   * The deliveries a confirmed change of `monitor` queues: one per enabled channel of its
   * organisation whose rules take the event. Read before the run commits, written with it.
   */
  async deliveriesFor(monitor: Pick<Monitor, 'id' | 'organizationId' | 'domain'>, event: AlertEvent, eventId: string, at: string): Promise<WebhookDelivery[]> {
    const kinds = eventKindsOf(event);
    if (kinds.length === 0) return [];
    const channels = await this.store.listChannels(monitor.organizationId);
    const body = JSON.stringify(event);
    return channels
      .filter((channel) => channelTakes(channel, monitor.domain, kinds))
      .map((channel) => ({ ...newDelivery({ monitorId: monitor.id, organizationId: monitor.organizationId, eventId, url: channelDeliveryUrl(channel.id), body, at }), channelId: channel.id }));
  }

  /** Sends one queued delivery to its channel (the pump's `sendToChannel`); never rejects. */
  async sendDelivery(delivery: WebhookDelivery): Promise<{ attempt: DeliveryAttempt; final: boolean }> {
    const at = this.#now().toISOString();
    const local = (detail: string): { attempt: DeliveryAttempt; final: boolean } => ({ attempt: { at, outcome: 'network-error', statusCode: null, durationMs: 0, detail }, final: true });
    if (delivery.channelId == null) return local('not a channel delivery');
    const channel = await this.store.getChannelById(delivery.channelId);
    if (!channel || channel.organizationId !== delivery.organizationId) return local('the alert channel was deleted');
    if (!channel.enabled) return local('the alert channel is disabled');
    let event: AlertEvent;
    try {
      event = JSON.parse(delivery.body) as AlertEvent;
    } catch {
      return local('the queued event is not JSON');
    }
    return this.#send(channel, delivery.body, event);
  }

  /**
   * Sends a test alert to a channel at once and keeps its outcome on the channel; undefined when not
   * found; `{ retryAfterSeconds }` within ALERT_TEST_COOLDOWN_MS of the channel's last test.
   */
  async sendTest(organizationId: string, id: string, domain?: string): Promise<DeliveryAttempt | { retryAfterSeconds: number } | undefined> {
    const channel = await this.store.getChannel(organizationId, id);
    if (!channel) return undefined;
    const nowMs = this.#now().getTime();
    if (channel.lastTest !== null) {
      const wait = Date.parse(channel.lastTest.at) + ALERT_TEST_COOLDOWN_MS - nowMs;
      if (wait > 0) return { retryAfterSeconds: Math.ceil(wait / 1000) };
    }
    const at = this.#now().toISOString();
    const event: AlertEvent = { type: 'alert.test', domain: domain ?? channel.rules.domains[0] ?? 'example.com', changes: [], checkedAt: at };
    const { attempt } = await this.#send(channel, JSON.stringify({ ...event, channelId: channel.id }), event);
    await this.store.updateChannel(organizationId, id, { lastTest: attempt }, this.#now().toISOString());
    return attempt;
  }

  async #send(channel: AlertChannel, body: string, event: AlertEvent): Promise<{ attempt: DeliveryAttempt; final: boolean }> {
    const options = {
      allowPrivateAddresses: this.#options.allowPrivateAddresses,
      now: this.#now,
      ...(this.#options.timeoutMs !== undefined ? { timeoutMs: this.#options.timeoutMs } : {}),
      ...(this.#options.lookup ? { lookup: this.#options.lookup } : {}),
      ...(this.#options.connect ? { connect: this.#options.connect } : {}),
    };
    const at = this.#now().toISOString();
    const unopenable = (what: string) => ({ attempt: { at, outcome: 'network-error' as const, statusCode: null, durationMs: 0, detail: `the channel's ${what} cannot be opened (another server key?)` }, final: true });
    const message = alertMessage(event, this.#options.publicOrigin);
    if (channel.kind === 'email') {
      if (!this.#options.smtp) return { attempt: { at, outcome: 'network-error', statusCode: null, durationMs: 0, detail: 'no mail relay is configured (serve --alert-smtp URL --alert-from ADDRESS)' }, final: false };
      return { attempt: await sendAlertMail(this.#options.smtp, { to: channel.recipients, ...emailMessage(message) }, options), final: false };
    }
    const url = channel.sealedUrl === null ? undefined : openSecret(channel.sealedUrl, this.#options.serverKey);
    if (url === undefined) return unopenable('URL');
    if (channel.kind === 'webhook') {
      const secret = channel.sealedSecret === null ? undefined : openSecret(channel.sealedSecret, this.#options.serverKey);
      if (secret === undefined) return unopenable('secret');
      return { attempt: await postWebhook(url, body, secret, options), final: false };
    }
    const payload = channel.kind === 'slack' ? slackPayload(message) : teamsPayload(message);
    return { attempt: await postJson(url, JSON.stringify(payload), () => ({}), options), final: false };
  }
}
