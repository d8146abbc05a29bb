/**
 * The validator's own DNS client: one question with EDNS (RFC 6891), DO (RFC 3225) and CD
 * (RFC 4035 §3.2.2; RFC 6840 §5.9 says a validating stub always sets it, so that a recursive
 * resolver hands over bogus data and the validator can say why) over UDP, again over TCP when the
 * answer is truncated (RFC 7766 §5); records come back as raw octets for the canonical form.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import { encodeRawQuery, readRawMessage, WireFormatError } from '../dns/canonical.js';
import type { RawQuery, RawResponse } from './types.js';

/** The UDP payload size advertised (RFC 6891 §6.2.5; the DNS Flag Day 2020 value). */
export const DNSSEC_UDP_PAYLOAD = 1232;
/** How long one attempt waits, in milliseconds. */
export const DNSSEC_QUERY_TIMEOUT_MS = 3000;
/** Attempts per question, spread over the servers. */
export const DNSSEC_QUERY_ATTEMPTS = 2;

/** Where to ask. */
export interface RawQueryServer {
  host: string;
  port: number;
}

/** A `RawQuery` that asks `servers` (in turn, one per attempt). */
export function createRawQuery(
  servers: readonly RawQueryServer[],
  options: { timeoutMs?: number; attempts?: number; /** CD (true unless told): false asks a validating resolver for its own verdict. */ checkingDisabled?: boolean } = {},
): RawQuery {
  const cd = options.checkingDisabled ?? true;
  const timeoutMs = options.timeoutMs ?? DNSSEC_QUERY_TIMEOUT_MS;
  const attempts = options.attempts ?? DNSSEC_QUERY_ATTEMPTS;
  if (servers.length === 0) throw new TypeError('createRawQuery needs at least one server');
  let next = 0;
  return async (name, type) => {
    let last: RawResponse = { kind: 'error', detail: 'no attempt made' };
    for (let attempt = 0; attempt < attempts; attempt++) {
      const server = servers[(next++ + attempt) % servers.length] as RawQueryServer;
      try {
        last = await askOnce(server, name, type, timeoutMs, cd);
      } catch (error) {
        // Nothing a socket does ends the process or rejects: it is this question's failure.
        last = { kind: 'error', detail: `${server.host}:${server.port}: ${error instanceof Error ? error.message : String(error)}` };
      }
      if (last.kind === 'response') return last;
    }
    return last;
  };
}

async function askOnce(server: RawQueryServer, name: string, type: number, timeoutMs: number, cd: boolean): Promise<RawResponse> {
  const id = randomInt(0, 0x10000);
  let query: Buffer;
  try {
    query = encodeRawQuery(id, name, type, { rd: true, do: true, cd, udpPayload: DNSSEC_UDP_PAYLOAD });
  } catch (error) {
    return { kind: 'error', detail: (error as Error).message };
  }
  const udp = await exchangeUdp(server, query, id, timeoutMs, name, type);
  if (udp.kind === 'error') return udp;
  if ((udp.message.flags & 0x0200) === 0) return udp; // TC clear
  return exchangeTcp(server, query, id, timeoutMs, name, type);
}

/** The response to this query (RFC 5452 §4.3: id, and the question echoed), or undefined to keep waiting. */
function accept(bytes: Buffer, id: number, name: string, type: number): RawResponse | undefined {
  if (bytes.length < 12 || bytes.readUInt16BE(0) !== id || (bytes.readUInt16BE(2) & 0x8000) === 0) return undefined;
  try {
    const message = readRawMessage(bytes);
    const question = message.question;
    if (!question || question.type !== type || question.name !== name.toLowerCase().replace(/\.$/, '')) return undefined;
    return { kind: 'response', message };
  } catch (error) {
    return { kind: 'error', detail: `a malformed response: ${error instanceof WireFormatError ? error.message : String(error)}` };
  }
}

function exchangeUdp(server: RawQueryServer, query: Buffer, id: number, timeoutMs: number, name: string, type: number): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    let finished = false;
    const done = (response: RawResponse): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      try {
        socket.close();
      } catch {
        // already closed
      }
      resolve(response);
    };
    const timer = setTimeout(() => done({ kind: 'error', detail: `no answer from ${server.host}:${server.port} within ${timeoutMs} ms` }), timeoutMs);
    socket.on('error', (error) => done({ kind: 'error', detail: `${server.host}:${server.port}: ${error.message}` }));
    socket.on('message', (bytes, peer) => {
      if (peer.port !== server.port) return;
      const response = accept(bytes, id, name, type);
      if (response) done(response);
    });
    // A send that fails (no route: ENETUNREACH; a broadcast address: EACCES) is this attempt's error.
    const failed = (error: unknown): void => done({ kind: 'error', detail: `${server.host}:${server.port}: ${error instanceof Error ? error.message : String(error)}` });
    try {
      socket.send(query, server.port, server.host, (error) => {
        if (error) failed(error);
      });
    } catch (error) {
      failed(error);
    }
  });
}

function exchangeTcp(server: RawQueryServer, query: Buffer, id: number, timeoutMs: number, name: string, type: number): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, server.host);
    let buffered = Buffer.alloc(0);
    let finished = false;
    const done = (response: RawResponse): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(response);
    };
    const timer = setTimeout(() => done({ kind: 'error', detail: `no TCP answer from ${server.host}:${server.port} within ${timeoutMs} ms` }), timeoutMs);
    socket.on('error', (error) => done({ kind: 'error', detail: `${server.host}:${server.port} (TCP): ${error.message}` }));
    socket.on('connect', () => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16BE(query.length);
      socket.write(Buffer.concat([prefix, query]));
    });
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2) return;
      const length = buffered.readUInt16BE(0);
      if (buffered.length < 2 + length) return;
      done(accept(buffered.subarray(2, 2 + length), id, name, type) ?? { kind: 'error', detail: 'a TCP answer that does not match the query' });
    });
  });
}
