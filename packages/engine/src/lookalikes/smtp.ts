/**
 * The optional catch-all test (`smtpProbe`, CLI `--smtp-probe`; off by default because it opens SMTP
 * to third parties): connect to a lookalike's first MX, EHLO, `MAIL FROM:<>`, `RCPT TO:` a random
 * address at the lookalike, QUIT. Never DATA: no message is sent. A 250 to a random address means
 * the name catches every misdirected message. The address guard decides where it may connect.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { Resolver } from '../dns/types.js';
import { classifyAddress } from '../net/address-guard.js';
import { command, replyReader, SMTP_PORT } from '../net/smtp-session.js';
import type { LookalikeSmtpProbe } from './types.js';

/** RFC 5321 §4.5.4: MX delivery is to port 25. */
export const LOOKALIKE_SMTP_PORT = SMTP_PORT;
/** The whole dialogue with one MX must finish within this. */
export const LOOKALIKE_SMTP_DEADLINE_MS = 10_000;

/** Options of `createSmtpProbe`. */
export interface SmtpProbeOptions {
  /** Where the MX host's address comes from. */
  resolver: Resolver;
  port?: number;
  timeoutMs?: number;
  /** The EHLO name (default `spoof-checker.invalid`). */
  ehloName?: string;
  /** Connect to loopback and private addresses (test labs only). */
  allowPrivateAddresses?: boolean;
}

/** A catch-all test over SMTP: `accepts-any`, `rejects`, or `unknown` (refused address, no answer, a temporary reply). */
export function createSmtpProbe(options: SmtpProbeOptions): LookalikeSmtpProbe {
  return {
    async probe(mxHost, lookalike) {
      const a = await options.resolver.resolve(mxHost, 'A');
      const address = a.kind === 'records' ? a.records[0] : undefined;
      if (address === undefined) return 'unknown';
      const kind = classifyAddress(address);
      // The address guard: a stranger's MX may point at loopback or an internal network.
      if (kind !== 'public' && !options.allowPrivateAddresses) return 'unknown';
      return dialogue(address, options.port ?? LOOKALIKE_SMTP_PORT, options.timeoutMs ?? LOOKALIKE_SMTP_DEADLINE_MS, options.ehloName ?? 'spoof-checker.invalid', lookalike);
    },
  };
}

function dialogue(address: string, port: number, timeoutMs: number, ehlo: string, lookalike: string): Promise<'accepts-any' | 'rejects' | 'unknown'> {
  return new Promise((resolve) => {
    let socket: Socket;
    try {
      socket = connect({ host: address, port });
    } catch {
      // A bad port or address throws before any socket exists (ERR_SOCKET_BAD_PORT): no answer.
      return resolve('unknown');
    }
    let settled = false;
    const finish = (outcome: 'accepts-any' | 'rejects' | 'unknown'): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!socket.destroyed) socket.end('QUIT\r\n');
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('unknown'), timeoutMs);
    socket.on('error', () => finish('unknown'));
    socket.on('close', () => finish('unknown'));
    // The SMTP session of ../net/smtp-session.ts: the greeting, EHLO, MAIL FROM:<>, then the RCPT
    // whose answer is the outcome; a null reply is a connection that ended.
    const reader = replyReader(socket);
    void (async () => {
      const greeting = await reader.next();
      if (greeting === null || greeting.code === 0 || greeting.code >= 400) return finish('unknown');
      for (const line of [`EHLO ${ehlo}`, 'MAIL FROM:<>']) {
        const reply = await command(socket, reader, line);
        if (reply === null || reply.code === 0 || reply.code >= 400) return finish('unknown');
      }
      const rcpt = await command(socket, reader, `RCPT TO:<sc-${randomBytes(6).toString('hex')}@${lookalike}>`);
      if (rcpt === null || rcpt.code === 0) return finish('unknown');
      finish(rcpt.code >= 200 && rcpt.code < 300 ? 'accepts-any' : rcpt.code >= 500 ? 'rejects' : 'unknown');
    })().catch(() => finish('unknown'));
  });
}
