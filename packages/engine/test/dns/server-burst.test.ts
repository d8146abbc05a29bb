/**
 * The embedded server under a burst of UDP queries (issue 43 item 1: the cold DNSSEC benchmark's
 * checks waited whole retry timeouts): queries that arrive while the process is busy wait in the
 * socket's receive buffer (`SERVER_UDP_RECEIVE_BUFFER`), so a burst of thousands is answered in
 * full rather than losing every query past the default buffer's few hundred. Counted, not timed.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { queryMessage, ZONES } from './helpers.js';

/** Queries sent in one go, before the server can read any (client and server share this process). */
const BURST = 2000;

let server: RunningDnsServer;
beforeAll(async () => {
  server = await startDnsServer({ resolver: new ZoneResolver(ZONES) });
});
afterAll(async () => {
  await server?.close();
});

describe('a burst of UDP queries', () => {
  it(`${BURST} queries sent at once are all answered`, async () => {
    const client = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024 });
    await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
    const answered = new Set<number>();
    client.on('message', (bytes) => answered.add(bytes.readUInt16BE(0)));
    // Sent without yielding: the server reads nothing until all of them wait in its buffer.
    for (let id = 0; id < BURST; id++) client.send(queryMessage(`n${id}.example.com`, 16, { id }), server.address.port, '127.0.0.1');
    const deadline = Date.now() + 20_000;
    while (answered.size < BURST && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    client.close();
    expect(answered.size).toBe(BURST);
  }, 30_000);
});
