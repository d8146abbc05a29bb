/**
 * Issue 38, item 1, for every socket other than DNS: each network error of a probe or a fetch ends
 * as that operation's recorded failure, never a thrown exception, a rejected promise or a process
 * exit. A port no socket can have (ERR_SOCKET_BAD_PORT, thrown before a socket exists), a closed
 * loopback port (ECONNREFUSED), a server that resets the connection mid-reply (ECONNRESET), one that
 * closes it quietly mid-dialogue, and a request that cannot be written (a throw inside the socket's
 * listener, which would otherwise be an uncaught exception).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/dns/types.js';
import { chainAsSent } from '../../src/dane/handshake.js';
import { fetchBimiFile } from '../../src/bimi/fetch.js';
import { createSmtpProbe } from '../../src/lookalikes/smtp.js';
import { fetchHttps } from '../../src/net/https-fetch.js';
import { probeStarttls } from '../../src/transport/starttls.js';
import { tlsTrust } from '../../src/net/tls-peer.js';
import { LOGO_ADDRESS, LOGO_HOST, startBimiLab, type BimiLab } from '../bimi/lab.js';
import { closedTcpPort } from '../support/closed-port.js';

/** A port no socket can have: Node throws ERR_SOCKET_BAD_PORT from connect(). */
const BAD_PORT = 70_000;
/** Generous: a failure must come from the network, never from the deadline. */
const DEADLINE_MS = 20_000;

/** Every name resolves to 127.0.0.1. */
const loopback: Resolver = { resolve: async (_name: string, type: string) => (type === 'A' ? { kind: 'records', records: ['127.0.0.1'] } : { kind: 'nodata' }) } as unknown as Resolver;

const servers: Server[] = [];
/** A loopback server running `onConnection`; its port. */
async function serve(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}
const closedPort = closedTcpPort;

let refusedPort = 0;
let resetPort = 0;
let quietClosePort = 0;
beforeAll(async () => {
  refusedPort = await closedPort();
  // Greets, starts a multi-line EHLO answer, then resets the connection mid-reply (TCP RST).
  resetPort = await serve((socket) => {
    socket.write('220 lab ESMTP\r\n');
    socket.once('data', () => {
      socket.write('250-lab\r\n250-PIPE');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
  });
  // Greets, then closes quietly (FIN) as soon as the client speaks.
  quietClosePort = await serve((socket) => {
    socket.write('220 lab ESMTP\r\n');
    socket.once('data', () => socket.end());
  });
});
afterAll(async () => {
  for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the STARTTLS probe: every network error is an outcome', () => {
  it.each([
    ['a port no socket can have (ERR_SOCKET_BAD_PORT)', () => BAD_PORT, /ERR_SOCKET_BAD_PORT/],
    ['a closed loopback port (ECONNREFUSED)', () => refusedPort, /ECONNREFUSED/],
    ['a reset in the middle of the EHLO reply (ECONNRESET)', () => resetPort, /ECONNRESET|closed the connection/],
  ])('%s', async (_what, port, detail) => {
    const result = await probeStarttls('127.0.0.1', 'mx.lab.example', { port: port(), allowPrivateAddresses: true, timeoutMs: DEADLINE_MS });
    expect(result.outcome).toBe('unreachable');
    expect(result.detail).toMatch(detail);
  });
});

describe('the DANE handshake: every network error is an outcome', () => {
  it.each([
    ['a port no socket can have (ERR_SOCKET_BAD_PORT)', () => BAD_PORT, 'connect', /ERR_SOCKET_BAD_PORT/],
    ['a closed loopback port (ECONNREFUSED)', () => refusedPort, 'connect', /ECONNREFUSED/],
    ['a reset in the middle of the EHLO reply (ECONNRESET)', () => resetPort, 'smtp', /ECONNRESET|closed the connection/],
    ['a server that closes quietly after the greeting (no error event)', () => quietClosePort, 'smtp', /closed the connection during ehlo/],
  ])('%s', async (_what, port, stage, detail) => {
    const result = await chainAsSent('127.0.0.1', port(), 'mx.lab.example', { timeoutMs: DEADLINE_MS });
    expect(result).toMatchObject({ ok: false, stage });
    expect(result.ok ? '' : result.detail).toMatch(detail);
  });
});

describe('the lookalike SMTP probe: every network error is "unknown"', () => {
  it.each([
    ['a port no socket can have (ERR_SOCKET_BAD_PORT)', () => BAD_PORT],
    ['a closed loopback port (ECONNREFUSED)', () => refusedPort],
    ['a reset in the middle of the EHLO reply (ECONNRESET)', () => resetPort],
  ])('%s', async (_what, port) => {
    const probe = createSmtpProbe({ resolver: loopback, port: port(), allowPrivateAddresses: true, timeoutMs: DEADLINE_MS });
    await expect(probe.probe('mx.lookalike.example', 'lookalike.example', 'original.example')).resolves.toBe('unknown');
  });
});

describe('HTTPS fetches (MTA-STS, BIMI): every network error is a failed fetch', () => {
  let lab: BimiLab;
  beforeAll(async () => {
    lab = await startBimiLab();
  }, 60_000);
  afterAll(async () => lab?.close());

  const options = (port: number, userAgent = 'spoof-checker (test)') => ({ port, allowPrivateAddresses: true, timeoutMs: DEADLINE_MS, maxBytes: 65_536, accept: '*/*', userAgent, what: 'a test file', trust: tlsTrust(lab.tlsCaPem) });
  const target = { host: LOGO_HOST, path: '/a.svg', url: `https://${LOGO_HOST}/a.svg` };

  it('a port no socket can have (ERR_SOCKET_BAD_PORT), for the MTA-STS fetch and the BIMI fetch', async () => {
    const got = await fetchHttps(target, lab.resolver, options(BAD_PORT));
    expect(got).toMatchObject({ ok: false, error: 'unreachable', address: LOGO_ADDRESS });
    expect(got.ok ? '' : got.detail).toMatch(/ERR_SOCKET_BAD_PORT/);
    const bimi = await fetchBimiFile(target.url, 'logo', lab.resolver, { port: BAD_PORT, allowPrivateAddresses: true, trust: tlsTrust(lab.tlsCaPem), timeoutMs: DEADLINE_MS });
    expect(bimi).toMatchObject({ ok: false, error: 'unreachable' });
  });

  it('a closed loopback port (ECONNREFUSED)', async () => {
    const got = await fetchHttps({ ...target, host: 'closed.lab.example' }, loopback, options(refusedPort));
    expect(got).toMatchObject({ ok: false, error: 'unreachable' });
    expect(got.ok ? '' : got.detail).toMatch(/ECONNREFUSED/);
  });

  it('a reset during the TLS handshake (ECONNRESET)', async () => {
    const got = await fetchHttps({ ...target, host: 'reset.lab.example' }, loopback, options(resetPort));
    expect(got.ok).toBe(false);
    expect(got.ok ? null : got.error).toMatch(/tls-failed|unreachable/);
  });

  it('a request that cannot be written (a throw inside the secureConnect listener) is a failed fetch, not an uncaught exception', async () => {
    const got = await fetchHttps(target, lab.resolver, options(lab.httpsPort, 'bad\nagent'));
    expect(got).toMatchObject({ ok: false, error: 'http-error' });
    expect(got.ok ? '' : got.detail).toMatch(/ERR_INVALID_CHAR|Invalid character/);
    // The lab still answers: the connection was closed, nothing else broke.
    expect((await fetchHttps(target, lab.resolver, options(lab.httpsPort))).ok).toBe(true);
  });
});
