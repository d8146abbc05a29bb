/**
 * One SMTP client session (RFC 5321) as the STARTTLS probe (../transport/starttls.ts), the DANE
 * handshake (../dane/handshake.ts) and the lookalike catch-all probe (../lookalikes/smtp.ts) hold it:
 * replies read one at a time (§4.2, bounded), a command and its reply, the STARTTLS keyword of an
 * EHLO reply (RFC 3207 §4). Each caller owns its socket, its deadline and its outcomes.
 */
import type { Socket } from 'node:net';

/** RFC 5321 §4.5.4 / §2.3.5: MX delivery is to port 25. */
export const SMTP_PORT = 25;
/** Longest SMTP reply read (RFC 5321 §4.5.3.1.5 allows 512 octets a line; multi-line EHLO replies are longer). */
export const MAX_SMTP_REPLY_BYTES = 16 * 1024;

/** One SMTP reply: its code (0: not a reply) and its text lines (without the code). */
export interface SmtpReply {
  code: number;
  lines: string[];
}

/** What `replyReader` gives. */
export interface SmtpReplyReader {
  next(): Promise<SmtpReply | null>;
  detach(): void;
}

/** Sends `line` (CRLF added) and reads its reply. */
export function command(socket: Socket, reader: SmtpReplyReader, line: string): Promise<SmtpReply | null> {
  socket.write(`${line}\r\n`);
  return reader.next();
}

/** RFC 3207 §4: STARTTLS is advertised as an EHLO keyword (a line after the first of a 250 reply). */
export function offersStarttls(ehlo: SmtpReply): boolean {
  return ehlo.code === 250 && ehlo.lines.slice(1).some((line) => /^STARTTLS\b/i.test(line.trim()));
}

/**
 * Reads SMTP replies (RFC 5321 §4.2: `code-text` continuation lines, `code text` last line), one
 * `next()` at a time: null once the server has ended the connection; code 0 for a line that is not
 * a reply or a reply over MAX_SMTP_REPLY_BYTES. `detach()` hands the socket over (to TLS).
 */
export function replyReader(socket: Socket): SmtpReplyReader {
  let buffer = '';
  let waiting: ((reply: SmtpReply | null) => void) | null = null;
  let ended = false;
  const tryDeliver = (): void => {
    if (!waiting) return;
    const lines: string[] = [];
    let offset = 0;
    for (;;) {
      const end = buffer.indexOf('\n', offset);
      if (end === -1) break;
      const line = buffer.slice(offset, end).replace(/\r$/, '');
      offset = end + 1;
      lines.push(line);
      const match = /^(\d{3})([ -]|$)/.exec(line);
      if (!match) {
        buffer = '';
        const deliver = waiting;
        waiting = null;
        deliver({ code: 0, lines });
        return;
      }
      if (match[2] !== '-') {
        buffer = buffer.slice(offset);
        const deliver = waiting;
        waiting = null;
        deliver({ code: Number(match[1]), lines: lines.map((l) => l.slice(4)) });
        return;
      }
    }
    if (buffer.length > MAX_SMTP_REPLY_BYTES || ended) {
      const deliver = waiting;
      waiting = null;
      deliver(ended ? null : { code: 0, lines: ['(reply too long)'] });
    }
  };
  const onData = (chunk: Buffer): void => {
    buffer += chunk.toString('latin1');
    tryDeliver();
  };
  const onEnd = (): void => {
    ended = true;
    tryDeliver();
  };
  socket.on('data', onData);
  socket.on('end', onEnd);
  return {
    next: () =>
      new Promise((resolve) => {
        waiting = resolve;
        tryDeliver();
      }),
    detach: () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
    },
  };
}
