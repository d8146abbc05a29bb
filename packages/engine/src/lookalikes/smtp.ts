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
import { guarded } from '../net/socket-errors.js';
import type { LookalikeSmtpProbe } from './types.js';

/** RFC 5321 §4.5.4: MX delivery is to port 25. */
export const LOOKALIKE_SMTP_PORT = 25;
/** The whole dialogue with one MX must finish within this. */
export const LOOKALIKE_SMTP_DEADLINE_MS = 10_000;
/** Longest reply read (RFC 5321 §4.5.3.1.5 allows 512 octets a line; EHLO replies have several). */
const MAX_REPLY_BYTES = 16 * 1024;

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
    let buffer = '';
    let step = 0;
    const commands = [`EHLO ${ehlo}`, 'MAIL FROM:<>', `RCPT TO:<sc-${randomBytes(6).toString('hex')}@${lookalike}>`];
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
    socket.setEncoding('latin1');
    socket.on('error', () => finish('unknown'));
    socket.on('close', () => finish('unknown'));
    // A throw inside a listener would end the process: it runs within a catch.
    socket.on('data', guarded((chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_REPLY_BYTES) return finish('unknown');
      // A complete reply ends with a line "NNN text" (a space, not a hyphen, after the code).
      const lines = buffer.split('\r\n');
      const last = lines.findLast((line) => /^\d{3} /.test(line) || /^\d{3}$/.test(line));
      if (last === undefined) return;
      buffer = '';
      const code = Number(last.slice(0, 3));
      if (step === 3) return finish(code >= 200 && code < 300 ? 'accepts-any' : code >= 500 ? 'rejects' : 'unknown');
      if (code >= 400) return finish('unknown');
      socket.write(`${commands[step]!}\r\n`);
      step++;
    }, () => finish('unknown')));
  });
}
