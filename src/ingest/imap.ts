/**
 * Reports from a mailbox (`spoof-checker reports fetch --imap imap://user:password@host:port/MAILBOX`)
 * on `imapflow`.
 *
 * - `imap://` upgrades with STARTTLS and refuses to go on without it (the password never crosses the
 *   wire in clear); `imaps://` is TLS from the first byte. The certificate is always verified:
 *   the system's roots plus `--tls-ca` (as for transport probes).
 * - The mailbox is the operator's own, named by the operator: it may be on a private address.
 * - Each message is read whole only when its size (RFC822.SIZE) is under the cap, then ingested and
 *   moved to the processed folder, so that a second fetch adds nothing. A message without a report,
 *   or over the cap, is moved to the aside folder and counted; neither is an error.
 * - A failure of the store leaves the message where it was: the next fetch takes it again.
 *
 * The connection of the report's sender was never seen here: SPF is not checked, DKIM and DMARC are.
 */
import { rootCertificates } from 'node:tls';
import { ImapFlow } from 'imapflow';
import type { Resolver } from '@spoof-checker/engine';
import { countTally, ingestReportMessage, rejectFile, type IngestTally, type ReportSink } from './ingest.js';
import { MAX_REPORT_MESSAGE_BYTES } from './message.js';

/** The folder processed messages are moved to (created when missing). */
export const DEFAULT_PROCESSED_FOLDER = 'spoof-checker-processed';
/** The folder messages without a report (or over the cap) are moved to. */
export const DEFAULT_ASIDE_FOLDER = 'spoof-checker-no-report';
/** Messages taken in one fetch (the rest wait for the next). */
export const MAX_MESSAGES_PER_FETCH = 10_000;
/** The connection's timeouts. */
export const IMAP_CONNECT_TIMEOUT_MS = 30_000;
export const IMAP_SOCKET_TIMEOUT_MS = 5 * 60_000;

/** The environment variable that may hold the IMAP password instead of the URL. */
export const IMAP_PASSWORD_ENV = 'SPOOF_CHECKER_IMAP_PASSWORD';

/** An IMAP URL, parsed. */
export interface ImapTarget {
  secure: boolean;
  host: string;
  port: number;
  user: string;
  password: string;
  mailbox: string;
}

/** Parses `imap://user:password@host:port/MAILBOX` (RFC 5092 in its simple form); the password may come from `envPassword`. */
export function parseImapUrl(url: string, envPassword?: string): { ok: true; target: ImapTarget } | { ok: false; problem: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, problem: `--imap must be a URL such as imap://user:password@host:143/INBOX or imaps://user@host:993/INBOX` };
  }
  if (parsed.protocol !== 'imap:' && parsed.protocol !== 'imaps:') return { ok: false, problem: `--imap must start with imap:// (STARTTLS) or imaps:// (TLS), not ${parsed.protocol}//` };
  const secure = parsed.protocol === 'imaps:';
  const user = decodeURIComponent(parsed.username);
  if (user === '') return { ok: false, problem: '--imap names no user: imap://USER[:password]@host/MAILBOX' };
  const password = parsed.password !== '' ? decodeURIComponent(parsed.password) : (envPassword ?? '');
  if (password === '') return { ok: false, problem: `--imap names no password: put it in the URL or in ${IMAP_PASSWORD_ENV}` };
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return { ok: false, problem: '--imap names no host' };
  const mailbox = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'INBOX';
  return { ok: true, target: { secure, host, port: parsed.port ? Number(parsed.port) : secure ? 993 : 143, user, password, mailbox } };
}

/** Options of {@link fetchReportsFromImap}. */
export interface ImapFetchOptions {
  target: ImapTarget;
  sink: ReportSink;
  /** Authenticates each message (DKIM, DMARC) through the configured resolver. */
  resolver?: Resolver;
  /** Extra trusted roots (PEM), added to the system's. */
  tlsCa?: string;
  processedFolder?: string;
  asideFolder?: string;
  maxMessageBytes?: number;
  /** Called after each message. */
  onMessage?: (uid: number, outcome: 'processed' | 'no-report' | 'too-large', tally: IngestTally) => void;
}

/** What one fetch did. */
export interface ImapFetchOutcome {
  messages: number;
  processed: number;
  noReport: number;
  tooLarge: number;
  tally: IngestTally;
}

/**
 * Why the connection to the mailbox could not be made (or logged in): a recorded outcome, never a
 * throw. `refused`: nothing listens at the port; `unreachable`: no route, or the name does not
 * resolve; `timeout`: no answer within IMAP_CONNECT_TIMEOUT_MS; `tls`: the server's certificate or
 * TLS (STARTTLS included) failed; `login`: the server refused the user or password; `other`: the rest.
 */
export type ImapConnectFailureKind = 'refused' | 'unreachable' | 'timeout' | 'tls' | 'login' | 'other';

/** What one fetch came to: the counts, or the connection failure with its kind and the server's words. */
export type ImapFetchResult = { outcome: 'fetched'; fetched: ImapFetchOutcome } | { outcome: 'connect-failed'; kind: ImapConnectFailureKind; detail: string };

/** The kind of a connect failure, from the socket's code or imapflow's flags. */
function connectFailureKind(error: unknown): ImapConnectFailureKind {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; authenticationFailed?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (e.authenticationFailed === true) return 'login';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unreachable';
  if (code === 'ETIMEDOUT' || code === 'CONNECT_TIMEOUT' || code === 'GREETING_TIMEOUT') return 'timeout';
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code) || /certificate|STARTTLS|TLS/i.test(String(e.message ?? ''))) return 'tls';
  return 'other';
}

/** The words of a connect failure: the server's response text when it gave one, else the error's. */
function connectFailureDetail(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { responseText, code } = error as { responseText?: string; code?: string };
  return responseText ?? (code && !error.message.includes(code) ? `${error.message} (${code})` : error.message);
}

/** What a connect failure means for the operator, by kind. */
export function describeConnectFailure(target: ImapTarget, failure: { kind: ImapConnectFailureKind; detail: string }): string {
  const where = `${target.host}:${target.port}`;
  switch (failure.kind) {
    case 'refused':
      return `the IMAP server ${where} cannot be reached: nothing listens at that port (${failure.detail}); check the host and port of --imap`;
    case 'unreachable':
      return `the IMAP server ${where} cannot be reached: no route to it, or the name does not resolve (${failure.detail}); check the host of --imap and this machine's network`;
    case 'timeout':
      return `the IMAP server ${where} did not answer within ${IMAP_CONNECT_TIMEOUT_MS / 1000} s (${failure.detail}); check the host, the port and any firewall between`;
    case 'tls':
      return `TLS with the IMAP server ${where} failed (${failure.detail}); a private CA's certificate is given with --tls-ca FILE`;
    case 'login':
      return `the IMAP server ${where} refused the login of ${target.user} (${failure.detail}); check the user and password`;
    case 'other':
      return `cannot connect to the IMAP server ${where} (${failure.detail})`;
  }
}

async function ensureFolder(client: ImapFlow, folder: string): Promise<void> {
  const existing = await client.list();
  if (existing.some((m) => m.path === folder)) return;
  try {
    await client.mailboxCreate(folder);
  } catch (error) {
    const why = (error as { responseText?: string }).responseText ?? (error instanceof Error ? error.message : String(error));
    // Some servers keep every folder under a namespace (INBOX. or INBOX/): say how to name one there.
    throw new Error(`cannot create the folder "${folder}" (${why}); name one the server allows with --processed / --aside, e.g. INBOX.${folder} or INBOX/${folder}`, { cause: error });
  }
}

/**
 * Fetches, ingests and moves every message of the mailbox (at most MAX_MESSAGES_PER_FETCH). A
 * connection that cannot be made or logged in is an outcome (`connect-failed`), not a throw; a
 * failure after it (a folder, the store) still throws.
 */
export async function fetchReportsFromImap(options: ImapFetchOptions): Promise<ImapFetchResult> {
  const { target } = options;
  const processedFolder = options.processedFolder ?? DEFAULT_PROCESSED_FOLDER;
  const asideFolder = options.asideFolder ?? DEFAULT_ASIDE_FOLDER;
  const maxBytes = options.maxMessageBytes ?? MAX_REPORT_MESSAGE_BYTES;
  const client = new ImapFlow({
    host: target.host,
    port: target.port,
    secure: target.secure,
    // imap://: STARTTLS or nothing (never the password in clear).
    doSTARTTLS: target.secure ? undefined : true,
    auth: { user: target.user, pass: target.password },
    tls: {
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
      ...(options.tlsCa ? { ca: [...rootCertificates, options.tlsCa] } : {}),
    },
    logger: false,
    connectionTimeout: IMAP_CONNECT_TIMEOUT_MS,
    socketTimeout: IMAP_SOCKET_TIMEOUT_MS,
    disableAutoIdle: true,
  });
  // A connection error after connect() is reported through the operation in flight.
  client.on('error', () => undefined);
  const outcome: ImapFetchOutcome = { messages: 0, processed: 0, noReport: 0, tooLarge: 0, tally: { reports: [], rejected: [] } };
  try {
    await client.connect();
  } catch (error) {
    client.close();
    return { outcome: 'connect-failed', kind: connectFailureKind(error), detail: connectFailureDetail(error) };
  }
  try {
    await ensureFolder(client, processedFolder);
    await ensureFolder(client, asideFolder);
    const lock = await client.getMailboxLock(target.mailbox);
    try {
      const listed: { uid: number; size: number }[] = [];
      const mailbox = client.mailbox;
      if (mailbox && mailbox.exists > 0) {
        for await (const message of client.fetch('1:*', { uid: true, size: true })) {
          listed.push({ uid: message.uid, size: message.size ?? 0 });
          if (listed.length >= MAX_MESSAGES_PER_FETCH) break;
        }
      }
      for (const { uid, size } of listed) {
        outcome.messages += 1;
        if (size > maxBytes) {
          const rejected = await rejectFile(options.sink, { channel: 'imap', sender: null }, `uid ${uid}`, 'too-large', `the message has ${size} bytes, over the ${maxBytes}-byte cap`);
          outcome.tally.rejected.push(rejected);
          outcome.tooLarge += 1;
          await client.messageMove(String(uid), asideFolder, { uid: true });
          options.onMessage?.(uid, 'too-large', { reports: [], rejected: [rejected] });
          continue;
        }
        const fetched = await client.fetchOne(String(uid), { source: true }, { uid: true });
        if (!fetched || !fetched.source) continue;
        const tally = await ingestReportMessage(options.sink, fetched.source, { channel: 'imap', ...(options.resolver ? { resolver: options.resolver } : {}) });
        outcome.tally.reports.push(...tally.reports);
        outcome.tally.rejected.push(...tally.rejected);
        if (tally.noReport) {
          outcome.noReport += 1;
          await client.messageMove(String(uid), asideFolder, { uid: true });
          options.onMessage?.(uid, 'no-report', tally);
        } else {
          outcome.processed += 1;
          await client.messageMove(String(uid), processedFolder, { uid: true });
          options.onMessage?.(uid, 'processed', tally);
        }
      }
    } finally {
      lock.release();
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
  return { outcome: 'fetched', fetched: outcome };
}

/** The counts of a fetch, for one line of output. */
export function describeFetch(outcome: ImapFetchOutcome): string {
  const c = countTally(outcome.tally);
  return `${outcome.messages} message(s): ${c.stored} report(s) stored, ${c.duplicates} duplicate(s), ${c.rejected} refused, ${outcome.noReport} without a report, ${outcome.tooLarge} over the size cap (moved aside)`;
}
