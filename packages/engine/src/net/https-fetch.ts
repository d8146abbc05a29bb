/**
 * One HTTPS GET, the way every fetch of the engine makes it (the MTA-STS policy, RFC 8461 §3.3;
 * the BIMI logo and evidence document): the host's addresses from the injected resolver, each
 * through the address guard, TLS with SNI and the certificate judged (./tls-peer.ts: trusted chain,
 * validity, name) before any request is sent, HTTP/1.1, a body cap and a deadline, redirects
 * returned and never followed here. Every outcome is a value, network errors included
 * (./socket-errors.ts).
 */
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { describeAnswer, type DnsAnswer, type Resolver } from '../dns/types.js';
import { ADDRESS_CLASS_TEXT, classifyAddress } from './address-guard.js';
import { describeError, oneOutcome } from './socket-errors.js';
import { judgePeer, MIN_TLS_VERSION, type TlsTrust } from './tls-peer.js';

/** The standard HTTPS port. */
export const HTTPS_PORT = 443;
/** The whole fetch (connect, handshake, answer) must finish within this by default (RFC 8461 §3.3 suggests at most 60 s). */
export const HTTPS_FETCH_TIMEOUT_MS = 10_000;
/** Most addresses of a host tried (one after another, while they cannot be reached). */
export const MAX_HTTPS_ADDRESSES = 4;

/**
 * Why a fetch gave no body.
 * - `dns-failure`: the address lookup of the host failed (not the same as no host).
 * - `no-address`: the host has no A or AAAA record.
 * - `refused-private`: it resolves only to addresses the checker may not reach (see the address guard).
 * - `unreachable`: no TCP connection (refused, unreachable, a bad port, timed out).
 * - `tls-failed`, `cert-expired`, `cert-untrusted`, `cert-name-mismatch`: the certificate check failed.
 * - `redirect`: a 3xx answer (returned with its Location).
 * - `http-status`: any other answer than 200.
 * - `content-type`: not a media type the caller accepts.
 * - `too-large`: the body exceeded the cap.
 * - `timeout`: the whole fetch exceeded its deadline.
 * - `http-error`: the HTTP exchange broke (reset, malformed answer, a request that cannot be written).
 */
export type HttpsFetchError =
  | 'dns-failure'
  | 'no-address'
  | 'refused-private'
  | 'unreachable'
  | 'tls-failed'
  | 'cert-expired'
  | 'cert-untrusted'
  | 'cert-name-mismatch'
  | 'redirect'
  | 'http-status'
  | 'content-type'
  | 'too-large'
  | 'timeout'
  | 'http-error';

/** Where and how to connect. */
export interface HttpsConnectOptions {
  /** Port to connect to (default `HTTPS_PORT`). */
  port?: number | undefined;
  timeoutMs?: number | undefined;
  trust?: TlsTrust | undefined;
  allowPrivateAddresses?: boolean | undefined;
  now?: (() => Date) | undefined;
}

/** Where an HTTPS GET goes: the host (SNI, Host header, the name the certificate must match), the path, the URL for messages. */
export interface HttpsTarget {
  host: string;
  path: string;
  url: string;
}

/** Options of `fetchHttps`: where to connect, and what the answer may be. */
export interface HttpsFetchOptions extends HttpsConnectOptions {
  /** The body cap in bytes (a larger declared or sent body is `too-large`). */
  maxBytes: number;
  /** The Accept header. */
  accept: string;
  userAgent: string;
  /** Media types accepted (lower case, parameters ignored); undefined accepts any. */
  contentTypes?: readonly string[] | undefined;
  /** What the body is, for messages ("a policy", "a logo"). */
  what: string;
}

/** One HTTPS GET: a 200 body, or why there is none (a 3xx is returned with its Location, never followed here). */
export type HttpsFetch =
  | { ok: true; url: string; httpStatus: 200; body: Buffer; contentType: string | null; address: string }
  | { ok: false; url: string; httpStatus: number | null; error: HttpsFetchError; detail: string; address: string | null; location: string | null; contentType: string | null };

/**
 * GETs `target` over HTTPS the way the MTA-STS policy is fetched: addresses from the injected
 * resolver, each through the address guard, TLS judged (trusted chain, validity, name) before the
 * request is sent, a body cap and a deadline. Every outcome is a value. Redirects are returned,
 * not followed: a caller that follows one fetches its Location as a new target, guard included.
 */
export async function fetchHttps(target: HttpsTarget, resolver: Resolver, options: HttpsFetchOptions): Promise<HttpsFetch> {
  const { host, url } = target;
  const failed = (error: HttpsFetchError, detail: string, address: string | null = null, httpStatus: number | null = null): HttpsFetch => ({ ok: false, url, httpStatus, error, detail, address, location: null, contentType: null });
  const [a, aaaa] = await Promise.all([resolver.resolve(host, 'A'), resolver.resolve(host, 'AAAA')]);
  const addresses = [...recordsOf(a), ...recordsOf(aaaa)];
  if (addresses.length === 0) {
    const broken = [a, aaaa].find((answer) => answer.kind === 'error');
    if (broken) return failed('dns-failure', `the address lookup of ${host} failed: ${describeAnswer(broken)}`);
    return failed('no-address', `${host} has no A or AAAA record (${describeAnswer(a)})`);
  }
  const allowed = addresses.filter((address) => options.allowPrivateAddresses || classifyAddress(address) === 'public');
  if (allowed.length === 0) {
    const first = addresses[0] as string;
    return failed('refused-private', `${host} resolves to ${addresses.join(', ')}: ${first} is ${ADDRESS_CLASS_TEXT[classifyAddress(first)]}, and the checker does not connect there`, first);
  }
  const deadline = Date.now() + (options.timeoutMs ?? HTTPS_FETCH_TIMEOUT_MS);
  let last: HttpsFetch | null = null;
  for (const address of allowed.slice(0, MAX_HTTPS_ADDRESSES)) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    last = await fetchFrom(address, target, remaining, options);
    // Another address is worth trying only when this one could not be reached at all.
    if (last.ok || last.error !== 'unreachable') return last;
  }
  return last ?? failed('timeout', `no answer from ${host} within ${options.timeoutMs ?? HTTPS_FETCH_TIMEOUT_MS} ms`);
}

function recordsOf(answer: DnsAnswer<'A'> | DnsAnswer<'AAAA'>): string[] {
  return answer.kind === 'records' ? answer.records : [];
}

/** One attempt at one address: TLS first (judged), then the GET over that connection. */
function fetchFrom(address: string, target: HttpsTarget, timeoutMs: number, options: HttpsFetchOptions): Promise<HttpsFetch> {
  const { host, path, url } = target;
  const now = options.now ?? (() => new Date());
  const max = options.maxBytes;
  return new Promise<HttpsFetch>((resolve) => {
    let socket: TLSSocket | null = null;
    let status: number | null = null;
    let location: string | null = null;
    let contentType: string | null = null;
    let stage: 'connect' | 'http' = 'connect';
    const outcome = oneOutcome<HttpsFetch>(resolve, () => {
      clearTimeout(timer);
      socket?.destroy();
    });
    const done = (result: HttpsFetch): void => outcome.settle(result);
    const failed = (error: HttpsFetchError, detail: string): void => done({ ok: false, url, httpStatus: status, error, detail, address, location, contentType });
    const timer = setTimeout(() => failed(stage === 'connect' ? 'unreachable' : 'timeout', `no ${stage === 'connect' ? 'TLS connection' : 'complete answer'} from ${host} (${address}) within ${timeoutMs} ms`), timeoutMs);
    timer.unref();

    try {
      socket = tlsConnect({
      host: address,
      port: options.port ?? HTTPS_PORT,
      servername: host, // SNI (RFC 8461 §3.3; RFC 6066 §3)
      rejectUnauthorized: false, // judged below, so each failure is named
      checkServerIdentity: () => undefined,
      minVersion: MIN_TLS_VERSION,
      ALPNProtocols: ['http/1.1'],
      ...(options.trust?.secureContext ? { secureContext: options.trust.secureContext } : {}),
      });
    } catch (error) {
      // A bad port or address throws before any socket exists (ERR_SOCKET_BAD_PORT): an outcome too.
      return failed('unreachable', `cannot connect to ${host} (${address}): ${describeError(error)}`);
    }
    let tcpConnected = false;
    socket.once('connect', () => {
      tcpConnected = true;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (stage !== 'connect') return; // the request reports it
      if (!tcpConnected) return failed('unreachable', `cannot connect to ${host} (${address}): ${error.code ?? error.message}`);
      failed('tls-failed', `the TLS handshake with ${host} (${address}) failed: ${error.code ?? error.message}`);
    });
    // A throw inside a socket's listener would end the process: the exchange runs within a catch.
    socket.once('secureConnect', () => {
      try {
        exchange();
      } catch (error) {
        failed(stage === 'connect' ? 'tls-failed' : 'http-error', `the exchange with ${host} (${address}) failed: ${describeError(error)}`);
      }
    });
    const exchange = (): void => {
      const judged = judgePeer(socket as TLSSocket, host, now());
      if (judged.outcome !== 'ok') return failed(judged.outcome, `the HTTPS certificate of ${host}: ${judged.detail}`);
      stage = 'http';
      const request = httpsRequest({
        host,
        port: options.port ?? HTTPS_PORT,
        path,
        method: 'GET',
        // No agent: the request goes over the connection judged above (no second DNS lookup, no pool).
        createConnection: () => socket as TLSSocket,
        headers: {
          host,
          accept: options.accept,
          // RFC 8461 §3.3: HTTP caching MUST NOT be used.
          'cache-control': 'no-cache',
          'user-agent': options.userAgent,
        },
      });
      request.on('error', (error: NodeJS.ErrnoException) => failed('http-error', `the HTTP exchange with ${host} broke: ${error.code ?? error.message}`));
      request.on('response', (response) => {
        status = response.statusCode ?? null;
        contentType = typeof response.headers['content-type'] === 'string' ? response.headers['content-type'] : null;
        if (status !== null && status >= 300 && status < 400) {
          response.resume();
          location = typeof response.headers.location === 'string' ? response.headers.location : null;
          return failed('redirect', `${url} answered ${status}, a redirect${location !== null ? ` to ${location.slice(0, 200)}` : ''}`);
        }
        if (status !== 200) {
          response.resume();
          return failed('http-status', `${url} answered HTTP ${status ?? '?'}; only 200 is ${options.what}`);
        }
        const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (options.contentTypes && !options.contentTypes.includes(type)) {
          response.resume();
          return failed('content-type', `${url} is served as "${contentType ?? '(no Content-Type)'}", not ${options.contentTypes.join(' or ')}`);
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > max) {
          return failed('too-large', `${url} declares ${declared} bytes; ${options.what} may be at most ${max} bytes`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > max) return failed('too-large', `${url} sent more than ${max} bytes; ${options.what} may be at most ${max} bytes`);
          chunks.push(chunk);
        });
        response.on('error', (error: NodeJS.ErrnoException) => failed('http-error', `the answer from ${host} broke off: ${error.code ?? error.message}`));
        response.on('end', () => done({ ok: true, url, httpStatus: 200, body: Buffer.concat(chunks), contentType, address }));
      });
      request.end();
    };
  });
}
