/**
 * Fetches an MTA-STS policy (RFC 8461 §3.3): `https://mta-sts.<domain>/.well-known/mta-sts.txt`,
 * the host's addresses taken from the injected resolver, TLS with SNI and a certificate valid for
 * the policy host chained to a trusted root, HTTP/1.1 GET, only 200 accepted, redirects never
 * followed, no HTTP cache, a body cap and a deadline, `text/plain` expected.
 *
 * The connection is made (and the certificate judged) before any request is sent, so nothing is
 * asked of a host whose certificate fails. Addresses pass the address guard first.
 */
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { ADDRESS_CLASS_TEXT, classifyAddress } from '../net/address-guard.js';
import { describeError } from '../net/socket-errors.js';
import { describeAnswer, type DnsAnswer, type Resolver } from '../dns/types.js';
import { judgePeer, MIN_TLS_VERSION, type TlsTrust } from './tls-peer.js';
import type { PolicyFetch, PolicyFetchError } from './types.js';

/** RFC 8461 §3.3 suggests a 64 KiB cap on the policy body. */
export const MAX_POLICY_BYTES = 64 * 1024;
/** The whole fetch (connect, handshake, answer) must finish within this (RFC 8461 §3.3 suggests at most 60 s). */
export const POLICY_FETCH_TIMEOUT_MS = 10_000;
/** RFC 8461 §3.3: the policy is at this path of the policy host. */
export const POLICY_PATH = '/.well-known/mta-sts.txt';
/** The standard HTTPS port. */
export const HTTPS_PORT = 443;
/** Most addresses of the policy host tried (one after another, while they cannot be reached). */
export const MAX_POLICY_ADDRESSES = 4;

/** Options of `fetchPolicy`. */
export interface PolicyFetchOptions {
  /** Port to connect to (default `HTTPS_PORT`). */
  port?: number | undefined;
  timeoutMs?: number | undefined;
  trust?: TlsTrust | undefined;
  allowPrivateAddresses?: boolean | undefined;
  now?: (() => Date) | undefined;
}

/** The policy host and URL of a domain (RFC 8461 §3.3). */
export function policyLocation(domain: string): { host: string; url: string } {
  const host = `mta-sts.${domain}`;
  return { host, url: `https://${host}${POLICY_PATH}` };
}

/** Fetches the policy of `domain`; every outcome is a value. */
export async function fetchPolicy(domain: string, resolver: Resolver, options: PolicyFetchOptions = {}): Promise<PolicyFetch> {
  const { host, url } = policyLocation(domain);
  const got = await fetchHttps({ host, path: POLICY_PATH, url }, resolver, {
    ...options,
    maxBytes: MAX_POLICY_BYTES,
    accept: 'text/plain',
    userAgent: 'spoof-checker (MTA-STS policy check)',
    // RFC 8461 §3.3: the media type is text/plain; parameters other than the charset are irrelevant.
    contentTypes: ['text/plain'],
    what: 'a policy',
  });
  if (!got.ok) {
    const { error, detail, address, httpStatus } = got;
    if (error === 'redirect') {
      const location = got.location !== null ? ` to ${got.location.slice(0, 200)}` : '';
      // RFC 8461 §3.3: "HTTP 3xx redirects MUST NOT be followed".
      return { ok: false, url, httpStatus, error, detail: `${url} answered ${httpStatus ?? '?'}, a redirect${location}; senders never follow redirects for a policy (RFC 8461 §3.3)`, address };
    }
    if (error === 'http-status') return { ok: false, url, httpStatus, error, detail: `${url} answered HTTP ${httpStatus ?? '?'}; only 200 is a policy (RFC 8461 §3.3)`, address };
    if (error === 'content-type') return { ok: false, url, httpStatus, error, detail: `${url} is served as "${got.contentType ?? '(no Content-Type)'}", not text/plain; senders that check the type (RFC 8461 §3.3) ignore it`, address };
    return { ok: false, url, httpStatus, error, detail, address };
  }
  return { ok: true, url, httpStatus: 200, body: got.body.toString('utf8'), address: got.address };
}

/** Where an HTTPS GET goes: the host (SNI, Host header, the name the certificate must match), the path, the URL for messages. */
export interface HttpsTarget {
  host: string;
  path: string;
  url: string;
}

/** Options of `fetchHttps`: those of `fetchPolicy`, plus what the answer may be. */
export interface HttpsFetchOptions extends PolicyFetchOptions {
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
  | { ok: false; url: string; httpStatus: number | null; error: PolicyFetchError; detail: string; address: string | null; location: string | null; contentType: string | null };

/**
 * GETs `target` over HTTPS the way the MTA-STS policy is fetched: addresses from the injected
 * resolver, each through the address guard, TLS judged (trusted chain, validity, name) before the
 * request is sent, a body cap and a deadline. Every outcome is a value. Redirects are returned,
 * not followed: a caller that follows one fetches its Location as a new target, guard included.
 */
export async function fetchHttps(target: HttpsTarget, resolver: Resolver, options: HttpsFetchOptions): Promise<HttpsFetch> {
  const { host, url } = target;
  const failed = (error: PolicyFetchError, detail: string, address: string | null = null, httpStatus: number | null = null): HttpsFetch => ({ ok: false, url, httpStatus, error, detail, address, location: null, contentType: null });
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
  const deadline = Date.now() + (options.timeoutMs ?? POLICY_FETCH_TIMEOUT_MS);
  let last: HttpsFetch | null = null;
  for (const address of allowed.slice(0, MAX_POLICY_ADDRESSES)) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    last = await fetchFrom(address, target, remaining, options);
    // Another address is worth trying only when this one could not be reached at all.
    if (last.ok || last.error !== 'unreachable') return last;
  }
  return last ?? failed('timeout', `no answer from ${host} within ${options.timeoutMs ?? POLICY_FETCH_TIMEOUT_MS} ms`);
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
    let settled = false;
    let socket: TLSSocket | null = null;
    let status: number | null = null;
    let location: string | null = null;
    let contentType: string | null = null;
    let stage: 'connect' | 'http' = 'connect';
    const done = (result: HttpsFetch): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(result);
    };
    const failed = (error: PolicyFetchError, detail: string): void => done({ ok: false, url, httpStatus: status, error, detail, address, location, contentType });
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
