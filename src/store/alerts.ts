/**
 * The alert store: an organisation's alert channels (a signed webhook, Slack, Microsoft Teams,
 * email) and the rules saying which events go to each. One interface, a memory implementation
 * (src/store/alerts-memory.ts) and SQL ones (src/store/alerts-sql.ts, migration `0011_alerts`).
 *
 * Deliveries to channels are not kept here: they go through the monitors' delivery queue
 * (src/store/monitors.ts `WebhookDelivery`, with `channelId` set), with its retries, its record of
 * attempts and its lease, so that a channel alert is sent exactly as a monitor's webhook is.
 *
 * A channel's target is a credential (a Slack or Teams webhook URL carries its own token; a signed
 * webhook has a secret): both are sealed with the server key (src/jobs/monitors/monitor-secrets.ts) and
 * shown only as the target's host.
 */
import type { DeliveryAttempt } from './monitors.js';
import type { Timestamp } from './page-types.js';

/** The four kinds of channel. */
export type AlertChannelKind = 'webhook' | 'slack' | 'teams' | 'email';
/** Every value of {@link AlertChannelKind}. */
export const ALERT_CHANNEL_KINDS: readonly AlertChannelKind[] = ['webhook', 'slack', 'teams', 'email'];

/**
 * What a confirmed change is about, for the rules: `authentication` (verdict, DMARC, SPF, DKIM, MX,
 * findings), `availability` (could not check, domain not found), `transport`, `bimi`, `dnssec`,
 * `reports` (unauthorised senders, a pass-rate drop) and `lookalikes` (a lookalike newly
 * registered, gaining mail capability, or whose grade rose).
 */
export type AlertEventKind = 'authentication' | 'availability' | 'transport' | 'bimi' | 'dnssec' | 'reports' | 'lookalikes';
/** Every value of {@link AlertEventKind}. */
export const ALERT_EVENT_KINDS: readonly AlertEventKind[] = ['authentication', 'availability', 'transport', 'bimi', 'dnssec', 'reports', 'lookalikes'];

/** Which events a channel receives. */
export interface AlertRules {
  /** The kinds of event sent to the channel (at least one). */
  events: AlertEventKind[];
  /** The domains whose events are sent (A-labels, lower case); empty: every domain of the organisation. */
  domains: string[];
}

/** One alert channel, as stored. */
export interface AlertChannel {
  id: string;
  organizationId: string;
  name: string;
  kind: AlertChannelKind;
  /** The target URL (webhook, Slack, Teams) sealed with the server key; null for email. */
  sealedUrl: string | null;
  /** The host of the target URL, for people (the URL itself is a credential). */
  targetHost: string | null;
  /** Recipients of an email channel (lower case); empty for the others. */
  recipients: string[];
  /** A signed webhook's secret, sealed; null for the other kinds. */
  sealedSecret: string | null;
  rules: AlertRules;
  /** A disabled channel gets nothing (its queued deliveries fail with a clear detail). */
  enabled: boolean;
  /** How the last "send a test" went; null before the first. */
  lastTest: DeliveryAttempt | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** The fields a change of a channel may set. */
export interface AlertChannelPatch {
  name?: string;
  sealedUrl?: string | null;
  targetHost?: string | null;
  recipients?: string[];
  rules?: AlertRules;
  enabled?: boolean;
  lastTest?: DeliveryAttempt | null;
}

/** Storage of alert channels. */
export interface AlertStore {
  createChannel(channel: AlertChannel): Promise<void>;
  /** The organisation's channels, oldest first. */
  listChannels(organizationId: string): Promise<AlertChannel[]>;
  getChannel(organizationId: string, id: string): Promise<AlertChannel | undefined>;
  /** A channel by id alone (the delivery pump). */
  getChannelById(id: string): Promise<AlertChannel | undefined>;
  /** Applies the fields given, sets `updatedAt`; undefined if not found. */
  updateChannel(organizationId: string, id: string, patch: AlertChannelPatch, now: Timestamp): Promise<AlertChannel | undefined>;
  deleteChannel(organizationId: string, id: string): Promise<boolean>;
}
