/**
 * The SMTP report receiver (`serve --smtp-port N`), on `smtp-server` and `mailparser`: where the
 * `rua` of a DMARC or TLS-RPT record points, so that receivers deliver their reports straight to
 * the service.
 *
 * - RCPT: only report addresses are accepted (src/ingest/report-address.ts); everything else is
 *   refused with 550 before any data is sent. A DNS failure deciding it is 451 (try later).
 * - DATA: capped at `maxMessageBytes` (smtp-server only advertises SIZE: the stream's
 *   `sizeExceeded` is checked and answered 552, RFC 5321 §4.5.3.1.10 / RFC 1870).
 * - Each message is authenticated with mailauth using the real connection (client address, HELO,
 *   MAIL FROM), then ingested: stored for each organisation that takes its domain. When no
 *   organisation takes any report in it, 550 (counted). A bad report file is accepted (250) and
 *   kept as a rejection with its reason: the reporter cannot repair it, and retrying would not help.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Resolver } from '@spoof-checker/engine';
import type { ReportStore } from '../store/reports.js';
import type { FailureReportStore } from '../store/failure-reports.js';
import { countTally, ingestReportMessage, serviceRouting, soleOrganization } from './ingest.js';
import { MAX_REPORT_MESSAGE_BYTES } from './message.js';
import { ReportAddressCheck } from './report-address.js';

/** Connections served at once. */
export const SMTP_MAX_CLIENTS = 50;
/** Idle time before a connection is closed (RFC 5321 §4.5.3.2.7 suggests 5 minutes for the server). */
export const SMTP_SOCKET_TIMEOUT_MS = 5 * 60_000;
/** Recipients per message (RFC 5321 §4.5.3.1.8 asks servers to take at least 100). */
export const SMTP_MAX_RECIPIENTS = 100;
/**
 * Refused recipients after which the connection is cut with 421 (RFC 5321 §3.8): each refusal may
 * cost DNS lookups (the rua of the recipient's domain), so a client cannot relay a random-subdomain
 * flood through our resolver (500 refusals made 1,000 queries).
 */
export const SMTP_MAX_REFUSED_RECIPIENTS = 20;
/** Connections one client address may hold at once; more are answered 421 (RFC 5321 §3.8). */
export const SMTP_MAX_CONNECTIONS_PER_CLIENT = 10;
/** A connection that has not sent MAIL this long after connecting (or after its last message) is closed with 421. */
export const SMTP_IDLE_BEFORE_MAIL_MS = 60_000;
/**
 * Bytes of messages being received or processed at once, over every connection: past it a message is
 * answered 452 (RFC 5321 §4.5.3.1.10: "insufficient system storage", try again later) and its bytes
 * are read and dropped, so that ten concurrent 23 MiB messages cannot take a gigabyte.
 */
export const SMTP_MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;

/** What the receiver has done since it started (the operator's counters). */
export interface SmtpReceiverCounters {
  /** Messages taken (DATA answered 250). */
  messages: number;
  /** Report copies stored (one per organisation). */
  stored: number;
  duplicates: number;
  /** Report files refused (kept with their reason). */
  rejected: number;
  /** Messages without any report. */
  noReport: number;
  /** Recipients refused at RCPT (not report addresses). */
  refusedRecipients: number;
  /** Messages refused with 550 because no organisation takes their domain. */
  refusedNoOrganization: number;
  /** Messages refused with 552 (over the size cap). */
  tooLarge: number;
  /** Connections cut after `SMTP_MAX_REFUSED_RECIPIENTS` refused recipients. */
  cutForRefusedRecipients: number;
  /** Connections refused (421) over `SMTP_MAX_CONNECTIONS_PER_CLIENT`. */
  refusedConnections: number;
  /** Connections closed idle before MAIL. */
  idleClosed: number;
  /** Messages answered 452 over `SMTP_MAX_IN_FLIGHT_BYTES`. */
  deferredInFlight: number;
}

/** The limits of the receiver; the defaults are the named constants (tests lower them). */
export interface SmtpReceiverLimits {
  maxRefusedRecipients: number;
  maxConnectionsPerClient: number;
  idleBeforeMailMs: number;
  maxInFlightBytes: number;
}

/** Options of {@link SmtpReportReceiver}. */
export interface SmtpReceiverOptions {
  store: ReportStore;
  /** Looks up report addresses and authenticates messages (the service's resolver or zones). */
  resolver?: Resolver;
  /** Addresses that are always report addresses (`--report-address`). */
  reportAddresses?: readonly string[];
  host?: string;
  port: number;
  maxMessageBytes?: number;
  /** The name in the greeting and in the mailauth results. */
  hostname?: string;
  /** Where a failure of the store while ingesting is reported. */
  onError?: (error: unknown) => void;
  now?: () => Date;
  /** Failure reports (RFC 6591) are stored here (src/ingest/failure-reports.ts); without it they count as no report. */
  failures?: FailureReportStore;
  limits?: Partial<SmtpReceiverLimits>;
}

/** A self-contained SMTP listener for reports: start() and stop(). */
export class SmtpReportReceiver {
  readonly counters: SmtpReceiverCounters = {
    messages: 0,
    stored: 0,
    duplicates: 0,
    rejected: 0,
    noReport: 0,
    refusedRecipients: 0,
    refusedNoOrganization: 0,
    tooLarge: 0,
    cutForRefusedRecipients: 0,
    refusedConnections: 0,
    idleClosed: 0,
    deferredInFlight: 0,
  };
  readonly #options: SmtpReceiverOptions;
  readonly #limits: SmtpReceiverLimits;
  /** Connections held per client address (only those let in). */
  readonly #perClient = new Map<string, number>();
  /** Per connection (session id): refused recipients, the idle timer, whether it was counted. */
  readonly #connections = new Map<string, { refused: number; idle: NodeJS.Timeout | undefined; address: string }>();
  /** Bytes of messages being received or processed now. */
  #inFlight = 0;
  readonly #addresses: ReportAddressCheck;
  readonly #route: (domain: string) => Promise<string[]>;
  #server: SMTPServer | undefined;

  constructor(options: SmtpReceiverOptions) {
    this.#options = options;
    this.#addresses = new ReportAddressCheck({ configured: options.reportAddresses ?? [], ...(options.resolver ? { resolver: options.resolver } : {}) });
    this.#route = serviceRouting(options.store);
    this.#limits = {
      maxRefusedRecipients: options.limits?.maxRefusedRecipients ?? SMTP_MAX_REFUSED_RECIPIENTS,
      maxConnectionsPerClient: options.limits?.maxConnectionsPerClient ?? SMTP_MAX_CONNECTIONS_PER_CLIENT,
      idleBeforeMailMs: options.limits?.idleBeforeMailMs ?? SMTP_IDLE_BEFORE_MAIL_MS,
      maxInFlightBytes: options.limits?.maxInFlightBytes ?? SMTP_MAX_IN_FLIGHT_BYTES,
    };
  }

  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  async start(): Promise<{ host: string; port: number }> {
    const maxBytes = this.#options.maxMessageBytes ?? MAX_REPORT_MESSAGE_BYTES;
    const server = new SMTPServer({
      name: this.#options.hostname ?? 'spoof-checker',
      banner: 'spoof-checker report receiver',
      // Reports need no login and no TLS of ours; the message is authenticated with DKIM/SPF/DMARC.
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      hideSTARTTLS: true,
      size: maxBytes,
      maxClients: SMTP_MAX_CLIENTS,
      socketTimeout: SMTP_SOCKET_TIMEOUT_MS,
      logger: false,
      onConnect: (session, callback) => callback(this.#onConnect(session)),
      onMailFrom: (_address, session, callback) => {
        this.#disarmIdle(session.id);
        callback();
      },
      onClose: (session) => this.#onClose(session),
      onRcptTo: (address, session, callback) => {
        void this.#onRcptTo(address, session).then(
          () => callback(),
          (error: Error) => callback(error),
        );
      },
      onData: (stream, session, callback) => {
        void this.#onData(stream, session, maxBytes).then(
          (message) => {
            this.#armIdle(session.id);
            callback(null, message);
          },
          (error: Error) => {
            this.#armIdle(session.id);
            callback(error);
          },
        );
      },
    });
    server.on('error', (error) => this.#options.onError?.(error));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      server.server.once('error', failed);
      server.listen(this.#options.port, this.#options.host ?? '127.0.0.1', () => {
        server.server.off('error', failed);
        resolve();
      });
    });
    const address = server.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  /** Stops accepting and closes the listener (connections in progress are ended). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A new connection: refused with 421 past the per-client limit; else counted and its idle timer armed. */
  #onConnect(session: SMTPServerSession): Error | null {
    const address = session.remoteAddress;
    const held = this.#perClient.get(address) ?? 0;
    if (held >= this.#limits.maxConnectionsPerClient) {
      this.counters.refusedConnections += 1;
      return smtpError(421, `4.7.0 Too many connections from ${address} (at most ${this.#limits.maxConnectionsPerClient}); try again later`);
    }
    this.#perClient.set(address, held + 1);
    this.#connections.set(session.id, { refused: 0, idle: undefined, address });
    this.#armIdle(session.id);
    return null;
  }

  #onClose(session: SMTPServerSession): void {
    const connection = this.#connections.get(session.id);
    if (connection === undefined) return;
    clearTimeout(connection.idle);
    this.#connections.delete(session.id);
    const held = (this.#perClient.get(connection.address) ?? 1) - 1;
    if (held <= 0) this.#perClient.delete(connection.address);
    else this.#perClient.set(connection.address, held);
  }

  /** Closes the connection with 421 unless MAIL comes within the idle limit. */
  #armIdle(id: string): void {
    const connection = this.#connections.get(id);
    if (connection === undefined) return;
    clearTimeout(connection.idle);
    connection.idle = setTimeout(() => {
      this.counters.idleClosed += 1;
      this.#send421(id, `4.4.2 Idle for ${this.#limits.idleBeforeMailMs / 1000} s before MAIL: closing`);
    }, this.#limits.idleBeforeMailMs);
    connection.idle.unref();
  }

  #disarmIdle(id: string): void {
    const connection = this.#connections.get(id);
    if (connection !== undefined) clearTimeout(connection.idle);
  }

  /** Answers 421 on a connection, which smtp-server then closes (RFC 5321 §3.8). */
  #send421(id: string, text: string): void {
    const server = this.#server as unknown as { connections?: Set<{ id: string; send(code: number, text: string): void }> } | undefined;
    for (const connection of server?.connections ?? []) if (connection.id === id) connection.send(421, text);
  }

  async #onRcptTo(address: SMTPServerAddress, session: SMTPServerSession): Promise<void> {
    if (session.envelope.rcptTo.length >= SMTP_MAX_RECIPIENTS) throw smtpError(452, '4.5.3 Too many recipients');
    const connection = this.#connections.get(session.id);
    const verdict = await this.#addresses.check(address.address);
    if (verdict.kind === 'report-address') return;
    // Every refusal (and every DNS failure) counts towards cutting the connection.
    if (connection !== undefined && ++connection.refused >= this.#limits.maxRefusedRecipients) {
      this.counters.refusedRecipients += 1;
      this.counters.cutForRefusedRecipients += 1;
      throw smtpError(421, `4.7.0 ${this.#limits.maxRefusedRecipients} recipients refused on this connection: closing`);
    }
    if (verdict.kind === 'unknown') throw smtpError(451, `4.4.3 Cannot tell whether ${address.address} takes reports now: ${verdict.detail}; try again later`);
    this.counters.refusedRecipients += 1;
    throw smtpError(550, `5.1.1 ${address.address} is not a report address here (not configured, and not in the rua of its domain's DMARC or TLS-RPT record)`);
  }

  async #onData(stream: SMTPServerDataStream, session: SMTPServerSession, maxBytes: number): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    // Bytes this message holds of the receiver's in-flight budget (released when it is done).
    let held = 0;
    let deferred = false;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        // Past the cap or the in-flight budget, the rest is read and dropped (the client is still sending).
        if (size > maxBytes || deferred) continue;
        if (this.#inFlight + chunk.length > this.#limits.maxInFlightBytes) {
          deferred = true;
          chunks.length = 0;
          this.#inFlight -= held;
          held = 0;
          continue;
        }
        this.#inFlight += chunk.length;
        held += chunk.length;
        chunks.push(chunk);
      }
      if (stream.sizeExceeded || size > maxBytes) {
        this.counters.tooLarge += 1;
        throw smtpError(552, `5.3.4 Message over the ${maxBytes}-byte limit`);
      }
      if (deferred) {
        this.counters.deferredInFlight += 1;
        throw smtpError(452, `4.3.1 Too much mail in progress here (over ${this.#limits.maxInFlightBytes} bytes at once); try again later`);
      }
      return await this.#ingest(Buffer.concat(chunks), session);
    } finally {
      this.#inFlight -= held;
    }
  }

  async #ingest(raw: Buffer, session: SMTPServerSession): Promise<string> {
    const rejectionOrganizations = await soleOrganization(this.#options.store);
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const tally = await ingestReportMessage(
      { store: this.#options.store, organizationsFor: this.#route, rejectionOrganizations, ...(this.#options.now ? { now: this.#options.now } : {}), ...(this.#options.failures ? { failures: this.#options.failures } : {}) },
      raw,
      {
        channel: 'smtp',
        ...(this.#options.resolver ? { resolver: this.#options.resolver } : {}),
        connection: { ip: session.remoteAddress, helo: session.hostNameAppearsAs || session.remoteAddress, sender: mailFrom },
      },
    );
    const counts = countTally(tally);
    this.counters.stored += counts.stored;
    this.counters.duplicates += counts.duplicates;
    this.counters.rejected += counts.rejected;
    if (tally.reports.length > 0 && counts.unrouted === tally.reports.length) {
      this.counters.refusedNoOrganization += 1;
      const domains = [...new Set(tally.reports.map((r) => r.domain))].join(', ');
      throw smtpError(550, `5.7.1 No organisation here takes reports for ${domains}`);
    }
    this.counters.messages += 1;
    if (tally.noReport) this.counters.noReport += 1;
    return `2.6.0 ${counts.stored} report(s) stored, ${counts.duplicates} duplicate(s), ${counts.rejected} refused`;
  }
}

function smtpError(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}
