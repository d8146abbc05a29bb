/**
 * The client side of an SMTP dialogue (RFC 5321 §4.1, §4.2: a reply is one or more lines, the last
 * with a space after its code), for the tests and the benchmarks that send reports to the receiver
 * on loopback: one reader of replies, and the plain send of one message.
 */
import { connect, type Socket } from 'node:net';

/** An open connection: `reply()` waits for the next whole reply, `send(line)` writes a command and waits for its reply. */
export interface SmtpConversation {
  socket: Socket;
  reply(): Promise<string>;
  send(line: string): Promise<string>;
}

/** Connects to `port` on 127.0.0.1. Multi-line replies come joined, without the final line break. */
export function openSmtp(port: number): SmtpConversation {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  const waiting: ((line: string) => void)[] = [];
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    for (;;) {
      // A complete reply ends with a line whose fourth character is a space.
      const match = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(buffer);
      if (!match) break;
      buffer = buffer.slice(match[0].length);
      waiting.shift()?.(match[0].trimEnd());
    }
  });
  const reply = () => new Promise<string>((resolve) => waiting.push(resolve));
  const send = (line: string) => {
    const r = reply();
    socket.write(`${line}\r\n`);
    return r;
  };
  return { socket, reply, send };
}

/**
 * Sends `raw` (already CRLF, as the bytes go) from noreply-dmarc-support@google.com to
 * dmarc@reports.example, greeting as `ehlo`; the reply to the message (after the final dot).
 */
export async function smtpSend(port: number, raw: Buffer, ehlo = 'sender.example'): Promise<string> {
  const { socket, reply, send } = openSmtp(port);
  await reply();
  await send(`EHLO ${ehlo}`);
  await send('MAIL FROM:<noreply-dmarc-support@google.com>');
  await send('RCPT TO:<dmarc@reports.example>');
  await send('DATA');
  const done = reply();
  socket.write(Buffer.concat([raw, Buffer.from('\r\n.\r\n')]));
  const answer = await done;
  socket.end('QUIT\r\n');
  return answer;
}
