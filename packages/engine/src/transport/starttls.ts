/**
 * The STARTTLS probe of one MX address (RFC 5321, RFC 3207): connect, read the 220 greeting, EHLO,
 * look for the STARTTLS keyword, send STARTTLS (the SMTP session of ../net/smtp-session.ts), upgrade
 * with SNI = the MX host name, judge the
 * certificate (../net/tls-peer.ts), say QUIT. Never sends MAIL or RCPT. Each address gets exactly one
 * outcome (./types.ts `ProbeOutcome`); nothing here throws for a network condition.
 *
 * The address guard runs first: an address that is not public is `refused-private` and no
 * connection is opened, unless the caller allows private addresses (test labs).
 */
import { connect as netConnect, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { ADDRESS_CLASS_TEXT, classifyAddress } from '../net/address-guard.js';
import { offersStarttls, replyReader, SMTP_PORT } from '../net/smtp-session.js';
import { describeError } from '../net/socket-errors.js';
import { judgePeer, MIN_TLS_VERSION, type TlsTrust } from '../net/tls-peer.js';
import type { ProbeResult } from './types.js';

export { SMTP_PORT } from '../net/smtp-session.js';
/** The whole probe of one address (connect, dialogue, handshake) must finish within this. */
export const PROBE_DEADLINE_MS = 10_000;
export { MAX_SMTP_REPLY_BYTES } from '../net/smtp-session.js';

/** Options of `probeStarttls`. */
export interface StarttlsProbeOptions {
  /** Port to connect to (default `SMTP_PORT`). */
  port?: number | undefined;
  /** Deadline for the whole probe (default `PROBE_DEADLINE_MS`). */
  timeoutMs?: number | undefined;
  /** Roots to trust (default: Node's bundled roots). */
  trust?: TlsTrust | undefined;
  /** The name sent in EHLO (default `defaultEhloName()`). */
  ehloName?: string | undefined;
  /** Connect to loopback, private and other non-public addresses (test labs only). */
  allowPrivateAddresses?: boolean | undefined;
  /** The clock certificate validity is judged against. */
  now?: (() => Date) | undefined;
}

/** The EHLO name used when none is given: the host name if it looks like a domain (RFC 5321 §4.1.4). */
export function defaultEhloName(): string {
  const name = hostname().toLowerCase();
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name) ? name : 'spoof-checker.invalid';
}

/**
 * Probes `address` (from a DNS answer for `host`) for STARTTLS and judges the certificate for
 * `host`. Resolves with exactly one outcome.
 */
export async function probeStarttls(address: string, host: string, options: StarttlsProbeOptions = {}): Promise<ProbeResult> {
  const kind = classifyAddress(address);
  if (kind !== 'public' && !options.allowPrivateAddresses) {
    return { address, outcome: 'refused-private', tlsVersion: null, certificate: null, detail: `${address} is ${ADDRESS_CLASS_TEXT[kind]}; the probe does not connect there` };
  }
  const port = options.port ?? SMTP_PORT;
  const deadline = options.timeoutMs ?? PROBE_DEADLINE_MS;
  const now = options.now ?? (() => new Date());
  return new Promise<ProbeResult>((resolve) => {
    let stage: 'connect' | 'greeting' | 'ehlo' | 'starttls' | 'handshake' = 'connect';
    let settled = false;
    let plain: Socket | null = null;
    let secure: TLSSocket | null = null;
    const finish = (result: Omit<ProbeResult, 'address'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Polite close over TLS; the plain socket otherwise.
      if (secure && !secure.destroyed) {
        secure.end('QUIT\r\n');
        setTimeout(() => secure?.destroy(), 200).unref();
      } else if (plain && !plain.destroyed) {
        if (stage !== 'connect' && stage !== 'handshake') plain.end('QUIT\r\n');
        setTimeout(() => plain?.destroy(), 200).unref();
      }
      resolve({ address, ...result });
    };
    const fail = (outcome: 'unreachable' | 'no-starttls' | 'tls-failed', detail: string): void => finish({ outcome, tlsVersion: null, certificate: null, detail });
    const timer = setTimeout(() => {
      const waiting = stage === 'connect' ? 'connecting' : stage === 'handshake' ? 'the TLS handshake' : `the ${stage === 'greeting' ? '220 greeting' : `${stage.toUpperCase()} reply`}`;
      fail(stage === 'handshake' ? 'tls-failed' : stage === 'starttls' ? 'no-starttls' : 'unreachable', `timed out after ${deadline} ms waiting for ${waiting}`);
    }, deadline);
    timer.unref();

    try {
      plain = netConnect({ host: address, port });
    } catch (error) {
      // A bad port or address throws before any socket exists (ERR_SOCKET_BAD_PORT): an outcome too.
      return fail('unreachable', `cannot connect: ${describeError(error)}`);
    }
    plain.setNoDelay(true);
    const reader = replyReader(plain);
    plain.on('error', (error: NodeJS.ErrnoException) => {
      if (stage === 'handshake') return; // the TLS socket reports it
      fail(stage === 'connect' ? 'unreachable' : stage === 'starttls' ? 'no-starttls' : 'unreachable', `${stage === 'connect' ? 'cannot connect' : 'the connection broke'}: ${error.code ?? error.message}`);
    });
    plain.on('close', () => {
      if (stage !== 'handshake') fail(stage === 'starttls' ? 'no-starttls' : 'unreachable', `the server closed the connection during the ${stage === 'connect' ? 'connection' : stage}`);
    });
    plain.once('connect', () => {
      stage = 'greeting';
      void (async () => {
        // RFC 5321 §4.3.1: the session opens with a 220 greeting.
        const greeting = await reader.next();
        if (greeting === null || settled) return;
        if (greeting.code !== 220) return fail('unreachable', `the server greeted with ${greeting.code} instead of 220: ${greeting.lines.join(' ').slice(0, 200)}`);
        stage = 'ehlo';
        plain?.write(`EHLO ${options.ehloName ?? defaultEhloName()}\r\n`);
        const ehlo = await reader.next();
        if (ehlo === null || settled) return;
        if (ehlo.code !== 250) return fail('no-starttls', `the server answered EHLO with ${ehlo.code}, so it offers no extensions such as STARTTLS`);
        if (!offersStarttls(ehlo)) return fail('no-starttls', 'the server does not offer STARTTLS in its EHLO reply');
        stage = 'starttls';
        plain?.write('STARTTLS\r\n');
        const ready = await reader.next();
        if (ready === null || settled) return;
        // RFC 3207 §4: 220 Ready to start TLS; 454 TLS not available.
        if (ready.code !== 220) return fail('no-starttls', `the server answered STARTTLS with ${ready.code}: ${ready.lines.join(' ').slice(0, 200)}`);
        stage = 'handshake';
        reader.detach();
        secure = tlsConnect({
          socket: plain as Socket,
          servername: host, // SNI = the MX host name (RFC 6066 §3)
          rejectUnauthorized: false, // judged by judgePeer, so each failure gets its own outcome
          checkServerIdentity: () => undefined,
          minVersion: MIN_TLS_VERSION,
          ...(options.trust?.secureContext ? { secureContext: options.trust.secureContext } : {}),
        });
        secure.once('secureConnect', () => {
          // A throw inside a socket's listener would end the process: judged within a catch.
          try {
            const judged = judgePeer(secure as TLSSocket, host, now());
            finish({ outcome: judged.outcome, tlsVersion: judged.tlsVersion, certificate: judged.certificate, detail: judged.detail });
          } catch (error) {
            fail('tls-failed', `the server's certificate could not be read: ${describeError(error)}`);
          }
        });
        secure.on('error', (error: NodeJS.ErrnoException) => fail('tls-failed', `the TLS handshake failed: ${error.code ?? ''} ${error.message}`.trim()));
        secure.on('close', () => fail('tls-failed', 'the server closed the connection during the TLS handshake'));
      })().catch((error: unknown) => fail(stage === 'handshake' ? 'tls-failed' : 'unreachable', describeError(error)));
    });
  });
}
