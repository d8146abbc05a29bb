/**
 * Webhook delivery: signed POSTs of confirmed changes, retried with exponential backoff for 24 h,
 * every attempt recorded in the store.
 *
 * The store is the outbox: a confirmed change writes its delivery in the same transaction as the
 * history, and a pump (in `serve`, and in every `worker`) takes due deliveries with a lease, so a
 * process killed mid-delivery loses nothing (the lease runs out and another pump retries).
 *
 * Signature: `Spoof-Checker-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with
 * the monitor's secret; a receiver recomputes it over the raw body and rejects an old `t`.
 *
 * Every connection goes to an address the private-address guard checked (src/net/address-guard.ts)
 * and to that address only: the socket is opened to it, so DNS cannot change between check and
 * connection; HTTPS still verifies the certificate against the URL's host name.
 *
 * A delivery never takes the process down: every network error (unreachable, refused, reset, TLS,
 * timeout) ends as a recorded failed attempt, retried on the schedule below (issue 29).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { PassThrough, type Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { classifyAddress, resolveAllowedAddress, type AddressCheck, type HostLookup } from '@spoof-checker/engine';
import type { DeliveryAttempt, DeliveryAttemptOutcome, MonitorStore, WebhookDelivery } from '../../store/monitors.js';

/** The signature header. */
export const SIGNATURE_HEADER = 'Spoof-Checker-Signature';
/** An attempt that has not had its whole answer after this long is a timeout. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Wait before the first retry; each retry waits twice the one before. */
export const WEBHOOK_RETRY_BASE_MS = 30_000;
/** Longest wait between two attempts. */
export const WEBHOOK_RETRY_MAX_DELAY_MS = 60 * 60 * 1000;
/** Attempts stop this long after the delivery was created. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long a pump holds a delivery it took (longer than an attempt can take). */
export const DELIVERY_LEASE_MS = 3 * WEBHOOK_TIMEOUT_MS;
/** How often a pump looks for due deliveries. */
export const DELIVERY_POLL_MS = 1_000;
/** Deliveries one pump takes per look. */
export const DELIVERY_CLAIM_BATCH = 20;
/** Bytes of a receiver's answer read (the rest is dropped). */
const MAX_RESPONSE_BYTES = 4096;

/** The signature header's value for `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** Wait before attempt number `attempt + 1` (after `attempt` failed ones, counting from 1). */
export function retryDelayMs(failedAttempts: number): number {
  return Math.min(WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_BASE_MS * 2 ** Math.max(0, failedAttempts - 1));
}

/** A new delivery of `body` to `url`, due now. */
export function newDelivery(input: { monitorId: string; organizationId: string; eventId: string; url: string; body: string; at: string; redeliveryOf?: string }): WebhookDelivery {
  return {
    id: `whd_${randomUUID()}`,
    monitorId: input.monitorId,
    organizationId: input.organizationId,
    eventId: input.eventId,
    url: input.url,
    body: input.body,
    status: 'pending',
    attempts: [],
    nextAttemptAt: input.at,
    giveUpAt: new Date(Date.parse(input.at) + WEBHOOK_RETRY_WINDOW_MS).toISOString(),
    redeliveryOf: input.redeliveryOf ?? null,
    createdAt: input.at,
  };
}

/** Where one attempt connects: the checked address (never the name again), the URL's port, and for HTTPS the name the certificate must carry. */
export interface WebhookConnectTarget {
  address: string;
  family: number;
  port: number;
  tls: boolean;
  /** The URL's host name for TLS SNI and certificate checks (undefined when the URL names an IP address). */
  servername: string | undefined;
}

/**
 * Opens the connection of one attempt. The default is `net.connect` / `tls.connect` to the checked
 * address; tests inject one that fails the way the network does. Whatever it returns gets an
 * `'error'` listener before the connection can fail, so no error of it can go unhandled.
 */
export type WebhookConnector = (target: WebhookConnectTarget) => Duplex;

/** The default connector: TCP to the checked address, TLS on top for `https:` (the certificate is checked against the URL's host name). */
export const connectWebhookTarget: WebhookConnector = (target) =>
  target.tls
    ? tlsConnect({ host: target.address, port: target.port, ...(target.servername !== undefined ? { servername: target.servername } : {}), ALPNProtocols: ['http/1.1'] })
    : netConnect({ host: target.address, port: target.port, family: target.family });

/** What the demo says of a webhook URL outside this machine. */
export const LOOPBACK_ONLY_REASON = 'the demo sends webhooks only to this machine (a loopback address such as 127.0.0.1)';

/**
 * The address a webhook goes to, checked: public addresses only (or private ones too, with
 * `allowPrivate`); with `loopbackOnly` (`serve --demo`, which sends nothing off the machine) only a
 * loopback address, whatever else is allowed.
 */
export async function resolveWebhookAddress(host: string, allowPrivate: boolean, lookup: HostLookup | undefined, loopbackOnly = false): Promise<AddressCheck> {
  if (!loopbackOnly) return resolveAllowedAddress(host, allowPrivate, lookup);
  const checked = await resolveAllowedAddress(host, true, lookup);
  if (checked.ok && classifyAddress(checked.address) !== 'loopback') return { ok: false, kind: 'forbidden', address: checked.address, reason: LOOPBACK_ONLY_REASON };
  return checked;
}

/** Options of one POST. */
export interface PostOptions {
  allowPrivateAddresses: boolean;
  /** Only loopback addresses (the demo). */
  loopbackOnly?: boolean;
  /** The whole attempt (lookup, connection, TLS, request and answer) ends within this; default {@link WEBHOOK_TIMEOUT_MS}. */
  timeoutMs?: number;
  lookup?: HostLookup;
  /** How the connection is opened (default {@link connectWebhookTarget}). */
  connect?: WebhookConnector;
  now?: () => Date;
}

/** The name of a network error for the attempt's detail: its code (ECONNREFUSED, ENETUNREACH, a TLS code), else its message. */
function errorDetail(error: unknown): string {
  const failure = error as NodeJS.ErrnoException | undefined;
  const code = typeof failure?.code === 'string' ? failure.code : undefined;
  const message = failure instanceof Error ? failure.message : String(error);
  return code !== undefined ? code : message.slice(0, 200);
}

/**
 * Sends one signed POST and says how it went. Never throws and never leaves an error event
 * unhandled: every failure of the lookup, the socket, TLS, the request or the answer ends as an
 * attempt (`network-error`, `timeout`, `refused-address`, `http-error`), and the whole attempt is
 * bounded by `timeoutMs`, the lookup included.
 */
export async function postWebhook(url: string, body: string, secret: string, options: PostOptions): Promise<DeliveryAttempt> {
  return postJson(url, body, (unixSeconds) => ({ [SIGNATURE_HEADER]: signatureHeader(secret, unixSeconds, body) }), options);
}

/**
 * Sends one JSON POST (the signed webhook's, and the Slack and Teams alerts'), with the same
 * guarantees as {@link postWebhook}: the address guard, the checked address connected to, one
 * deadline, every failure a recorded attempt. `extraHeaders` is given the attempt's Unix time.
 */
export async function postJson(url: string, body: string, extraHeaders: (unixSeconds: number) => Record<string, string>, options: PostOptions): Promise<DeliveryAttempt> {
  const now = options.now ?? (() => new Date());
  const started = now();
  const at = started.toISOString();
  const done = (outcome: DeliveryAttemptOutcome, statusCode: number | null, detail: string): DeliveryAttempt => ({
    at,
    outcome,
    statusCode,
    durationMs: Math.max(0, now().getTime() - started.getTime()),
    detail,
  });
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const timedOut = () => done('timeout', null, `no answer within ${timeoutMs / 1000} s`);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return done('network-error', null, 'the webhook URL is not a URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return done('network-error', null, `the webhook URL's scheme ${target.protocol} is not http: or https:`);
  // One deadline for the whole attempt: the lookup below counts against it too.
  const deadline = Date.now() + timeoutMs;
  let lookupTimer: NodeJS.Timeout | undefined;
  const checked = await Promise.race([
    resolveWebhookAddress(target.hostname, options.allowPrivateAddresses, options.lookup, options.loopbackOnly === true).catch(
      (error: unknown) => ({ ok: false as const, kind: 'unresolvable' as const, reason: `${target.hostname} does not resolve (${errorDetail(error)})` }),
    ),
    new Promise<'timeout'>((resolve) => (lookupTimer = setTimeout(() => resolve('timeout'), timeoutMs))),
  ]).finally(() => clearTimeout(lookupTimer));
  if (checked === 'timeout') return timedOut();
  if (!checked.ok) {
    return checked.kind === 'forbidden'
      ? done('refused-address', null, `refused: ${target.hostname} resolves to ${checked.address}, ${checked.reason}`)
      : done('network-error', null, checked.reason);
  }
  const tls = target.protocol === 'https:';
  const bareHost = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const connectTarget: WebhookConnectTarget = {
    address: checked.address,
    family: checked.family,
    port: target.port !== '' ? Number(target.port) : tls ? 443 : 80,
    tls,
    // RFC 6066 §3: no IP literal in SNI.
    servername: isIP(bareHost) === 0 ? bareHost : undefined,
  };
  const connect = options.connect ?? connectWebhookTarget;
  const unixSeconds = Math.floor(started.getTime() / 1000);
  const payload = Buffer.from(body, 'utf8');
  return new Promise<DeliveryAttempt>((resolve) => {
    let settled = false;
    let socket: Duplex | undefined;
    let req: ClientRequest | undefined;
    const finish = (attempt: DeliveryAttempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(attempt);
      // Nothing of this attempt outlives it (a late error still has its listener, below).
      req?.destroy();
      socket?.destroy();
    };
    const failed = (error: unknown) => finish(done('network-error', null, errorDetail(error)));
    const timer = setTimeout(() => finish(timedOut()), Math.max(0, deadline - Date.now()));
    const requestOptions: RequestOptions = {
      method: 'POST',
      host: target.hostname,
      ...(target.port !== '' ? { port: Number(target.port) } : {}),
      path: `${target.pathname}${target.search}`,
      headers: {
        'content-type': 'application/json',
        'content-length': String(payload.length),
        'user-agent': 'spoof-checker-webhooks/1',
        ...extraHeaders(unixSeconds),
      },
      // No agent: the request runs on the one socket opened here, whose 'error' listener is in place
      // before it can fail (a connection error emitted before the request took the socket crashed
      // the process: issue 29).
      createConnection: () => {
        try {
          socket = connect(connectTarget);
        } catch (error) {
          // A connector that throws (a bad address) is a failed attempt too, reported on a later tick.
          socket = new PassThrough();
          const thrown = error;
          setImmediate(() => socket?.destroy(thrown instanceof Error ? thrown : new Error(String(thrown))));
        }
        socket.on('error', failed);
        return socket as Socket;
      },
    };
    try {
      req = httpRequest(requestOptions, (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const status = res.statusCode ?? 0;
        const end = () =>
          finish(status >= 200 && status < 300 ? done('delivered', status, `HTTP ${status}`) : done('http-error', status, `HTTP ${status} ${res.statusMessage ?? ''}`.trim()));
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
    } catch (error) {
      failed(error);
      return;
    }
    req.on('error', failed);
    try {
      req.end(payload);
    } catch (error) {
      failed(error);
    }
  });
}

/** Where a delivery stands after an attempt. */
export function afterAttempt(delivery: WebhookDelivery, attempt: DeliveryAttempt): { status: WebhookDelivery['status']; nextAttemptAt: string | null } {
  if (attempt.outcome === 'delivered') return { status: 'delivered', nextAttemptAt: null };
  // A refused address is the URL's fault: retrying will not help (PATCH the URL, then redeliver).
  if (attempt.outcome === 'refused-address') return { status: 'failed', nextAttemptAt: null };
  const failed = delivery.attempts.length + 1;
  const next = Date.parse(attempt.at) + attempt.durationMs + retryDelayMs(failed);
  if (next > Date.parse(delivery.giveUpAt)) return { status: 'failed', nextAttemptAt: null };
  return { status: 'pending', nextAttemptAt: new Date(next).toISOString() };
}

/** What a pump needs. */
export interface DeliveryPumpOptions {
  store: MonitorStore;
  /** The secret of a monitor (opened from the store), or undefined when the monitor is gone. */
  secretFor: (monitorId: string) => Promise<string | undefined>;
  allowPrivateAddresses: boolean;
  /** Only loopback addresses (the demo). */
  loopbackOnly?: boolean;
  now?: () => Date;
  pollMs?: number;
  timeoutMs?: number;
  lookup?: HostLookup;
  /** How connections are opened (tests inject failures; default {@link connectWebhookTarget}). */
  connect?: WebhookConnector;
  log?: (message: string, error?: unknown) => void;
  /**
   * Sends a delivery to an organisation's alert channel (src/jobs/monitors/alerts.ts); never rejects.
   * `final`: no retry can help (the channel was deleted or disabled). Without it, a channel's
   * delivery is a failed attempt saying so.
   */
  sendToChannel?: (delivery: WebhookDelivery) => Promise<{ attempt: DeliveryAttempt; final: boolean }>;
}

/** Takes due deliveries from the store and sends them, until closed. */
export class DeliveryPump {
  readonly #options: DeliveryPumpOptions;
  readonly #now: () => Date;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(options: DeliveryPumpOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  /** Starts polling. */
  start(): void {
    this.#timer = setInterval(() => this.poke(), this.#options.pollMs ?? DELIVERY_POLL_MS);
    this.#timer.unref();
    this.poke();
  }

  /** Looks for due deliveries now (after a change was confirmed). */
  poke(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.drain()
      .then(() => undefined)
      .catch((error: unknown) => this.#options.log?.('webhook delivery failed', error))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.poke();
        }
      });
  }

  /** Sends every delivery due now; resolves when they are all recorded. */
  async drain(): Promise<number> {
    let sent = 0;
    for (;;) {
      if (this.#closed) return sent;
      const now = this.#now();
      const claimed = await this.#options.store.claimDueDeliveries(now.toISOString(), new Date(now.getTime() + DELIVERY_LEASE_MS).toISOString(), DELIVERY_CLAIM_BATCH);
      if (claimed.length === 0) return sent;
      await Promise.all(claimed.map((delivery) => this.#deliver(delivery)));
      sent += claimed.length;
    }
  }

  async #deliver(delivery: WebhookDelivery): Promise<void> {
    if (delivery.channelId != null) return this.#deliverToChannel(delivery);
    const secret = await this.#options.secretFor(delivery.monitorId);
    let attempt: DeliveryAttempt;
    if (secret === undefined) {
      attempt = { at: this.#now().toISOString(), outcome: 'network-error', statusCode: null, durationMs: 0, detail: 'the webhook secret cannot be opened (another server key?)' };
    } else {
      const at = this.#now();
      try {
        attempt = await postWebhook(delivery.url, delivery.body, secret, {
          allowPrivateAddresses: this.#options.allowPrivateAddresses,
          ...(this.#options.loopbackOnly ? { loopbackOnly: true } : {}),
          now: this.#now,
          ...(this.#options.timeoutMs !== undefined ? { timeoutMs: this.#options.timeoutMs } : {}),
          ...(this.#options.lookup ? { lookup: this.#options.lookup } : {}),
          ...(this.#options.connect ? { connect: this.#options.connect } : {}),
        });
      } catch (error) {
        // postWebhook does not throw; should it ever, the attempt is still recorded and retried.
        attempt = { at: at.toISOString(), outcome: 'network-error', statusCode: null, durationMs: Math.max(0, this.#now().getTime() - at.getTime()), detail: errorDetail(error) };
      }
    }
    const next = secret === undefined ? { status: 'failed' as const, nextAttemptAt: null } : afterAttempt(delivery, attempt);
    await this.#options.store.recordAttempt(delivery.id, attempt, next.status, next.nextAttemptAt);
  }

  /** A delivery to an alert channel: the same queue, retries and record of attempts, sent by the channel's kind. */
  async #deliverToChannel(delivery: WebhookDelivery): Promise<void> {
    const at = this.#now();
    let sent: { attempt: DeliveryAttempt; final: boolean };
    if (!this.#options.sendToChannel) {
      sent = { attempt: { at: at.toISOString(), outcome: 'network-error', statusCode: null, durationMs: 0, detail: 'this process sends no alert channels' }, final: false };
    } else {
      try {
        sent = await this.#options.sendToChannel(delivery);
      } catch (error) {
        sent = { attempt: { at: at.toISOString(), outcome: 'network-error', statusCode: null, durationMs: Math.max(0, this.#now().getTime() - at.getTime()), detail: errorDetail(error) }, final: false };
      }
    }
    const attempt = sent.attempt;
    const next = sent.final && attempt.outcome !== 'delivered' ? { status: 'failed' as const, nextAttemptAt: null } : afterAttempt(delivery, attempt);
    await this.#options.store.recordAttempt(delivery.id, attempt, next.status, next.nextAttemptAt);
  }

  /** Stops polling and waits for the attempts in flight. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
  }
}
