/**
 * The opt-in catch-all test against a real SMTP listener on loopback: it never sends DATA, it tells
 * an accepted random recipient from a refused one, and the address guard keeps it off private
 * addresses unless a test lab allows them.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { createSmtpProbe } from '../../src/lookalikes/smtp.js';
import { parseZone } from '../../src/zones/parse.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A minimal SMTP server: answers each command, RCPT with `rcptCode`; records what it was sent. */
async function smtpServer(rcptCode: number): Promise<{ port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((socket) => {
    socket.write('220 lab ESMTP\r\n');
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      for (const line of chunk.split('\r\n').filter(Boolean)) {
        seen.push(line);
        if (line.startsWith('EHLO')) socket.write('250-lab\r\n250 PIPELINING\r\n');
        else if (line.startsWith('MAIL')) socket.write('250 ok\r\n');
        else if (line.startsWith('RCPT')) socket.write(`${rcptCode} rcpt\r\n`);
        else if (line === 'QUIT') socket.end('221 bye\r\n');
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, seen };
}

const resolver = new ZoneResolver([parseZone('$ORIGIN lab.example.\n$TTL 60\n@ IN SOA ns. h. 1 1 1 1 1\nmx IN A 127.0.0.1\n', { origin: 'lab.example' })]);

describe('createSmtpProbe', () => {
  it('a 250 to a random recipient is accepts-any; a 550 is rejects; never DATA', async () => {
    const open = await smtpServer(250);
    expect(await createSmtpProbe({ resolver, port: open.port, allowPrivateAddresses: true }).probe('mx.lab.example', 'fake.example', 'real.example')).toBe('accepts-any');
    expect(open.seen[1]).toBe('MAIL FROM:<>');
    expect(open.seen[2]).toMatch(/^RCPT TO:<sc-[0-9a-f]{12}@fake\.example>$/);
    expect(open.seen.some((l) => l.startsWith('DATA'))).toBe(false);
    const closed = await smtpServer(550);
    expect(await createSmtpProbe({ resolver, port: closed.port, allowPrivateAddresses: true }).probe('mx.lab.example', 'fake.example', 'real.example')).toBe('rejects');
  });

  it('the address guard: loopback is refused without a lab flag, and nothing connects', async () => {
    const open = await smtpServer(250);
    expect(await createSmtpProbe({ resolver, port: open.port }).probe('mx.lab.example', 'fake.example', 'real.example')).toBe('unknown');
    expect(open.seen).toEqual([]);
  });
});
