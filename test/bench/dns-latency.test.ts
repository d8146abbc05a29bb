import { createSocket, type Socket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startDelayingDnsFront, type DelayingDnsFront } from '../../bench/dns-latency.js';

/** What the front holds each query in these tests, ms. */
const LATENCY_MS = 40;

/** A 12-octet DNS header (RFC 1035 §4.1.1) with `id`, then `tag` as the rest of the message. */
function message(id: number, tag: string): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  return Buffer.concat([header, Buffer.from(tag)]);
}

/** An upstream on loopback (UDP and TCP, one port) that answers each query with itself, tagged. */
async function echoUpstream(): Promise<{ port: number; udp: Socket; tcp: Server }> {
  const tcp = createServer((socket) => socket.on('data', (bytes) => socket.write(Buffer.concat([bytes, Buffer.from('+tcp')]))));
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve()));
  const port = (tcp.address() as { port: number }).port;
  const udp = createSocket('udp4');
  udp.on('message', (query, rinfo) => udp.send(Buffer.concat([query, Buffer.from('+udp')]), rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', () => resolve()));
  return { port, udp, tcp };
}

/** Sends `query` from a fresh UDP socket to `port`; the answer and how long it took. */
async function askUdp(port: number, query: Buffer): Promise<{ answer: Buffer; ms: number }> {
  const socket = createSocket('udp4');
  const started = performance.now();
  const answer = await new Promise<Buffer>((resolve) => {
    socket.once('message', (bytes) => resolve(bytes));
    socket.send(query, port, '127.0.0.1');
  });
  socket.close();
  return { answer, ms: performance.now() - started };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function setUp(): Promise<DelayingDnsFront> {
  const upstream = await echoUpstream();
  const front = await startDelayingDnsFront(upstream.port, LATENCY_MS);
  cleanup.push(
    async () => new Promise<void>((resolve) => upstream.tcp.close(() => resolve())),
    async () => new Promise<void>((resolve) => upstream.udp.close(() => resolve())),
    () => front.close(),
  );
  return front;
}

describe('the delaying DNS front (bench/dns-latency.ts)', () => {
  it('holds each UDP query, and hands each client its own answer under its own ID', async () => {
    const front = await setUp();
    // Two clients pick the same ID at once: the front's own IDs keep their answers apart.
    const [a, b] = await Promise.all([askUdp(front.port, message(7, 'alpha')), askUdp(front.port, message(7, 'beta'))]);
    expect(a.answer.readUInt16BE(0)).toBe(7);
    expect(b.answer.readUInt16BE(0)).toBe(7);
    expect(a.answer.subarray(12).toString()).toBe('alpha+udp');
    expect(b.answer.subarray(12).toString()).toBe('beta+udp');
    // Timers may fire a millisecond early by the clock read here, never more.
    expect(Math.min(a.ms, b.ms)).toBeGreaterThanOrEqual(LATENCY_MS - 1);
    expect(front.stats()).toEqual({ udp: 2, tcp: 0 });
  });

  it('holds TCP queries too and pipes the answers back', async () => {
    const front = await setUp();
    const socket = connect(front.port, '127.0.0.1');
    const started = performance.now();
    const answer = await new Promise<Buffer>((resolve) => {
      socket.once('data', (bytes) => resolve(bytes));
      socket.write(message(9, 'gamma'));
    });
    const ms = performance.now() - started;
    socket.destroy();
    expect(answer.readUInt16BE(0)).toBe(9);
    expect(answer.subarray(12).toString()).toBe('gamma+tcp');
    expect(ms).toBeGreaterThanOrEqual(LATENCY_MS - 1);
    expect(front.stats().tcp).toBe(1);
  });
});
