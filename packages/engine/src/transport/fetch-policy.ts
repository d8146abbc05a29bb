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
  const failed = (error: PolicyFetchError, detail: string, address: string | null = null, httpStatus: number | null = null): PolicyFetch => ({ ok: false, url, httpStatus, error, detail, address });
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
  let last: PolicyFetch | null = null;
  for (const address of allowed.slice(0, MAX_POLICY_ADDRESSES)) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    last = await fetchFrom(address, host, url, remaining, options);
    // Another address is worth trying only when this one could not be reached at all.
    if (last.ok || last.error !== 'unreachable') return last;
  }
  return last ?? failed('timeout', `no answer from ${host} within ${options.timeoutMs ?? POLICY_FETCH_TIMEOUT_MS} ms`);
}

function recordsOf(answer: DnsAnswer<'A'> | DnsAnswer<'AAAA'>): string[] {
  return answer.kind === 'records' ? answer.records : [];
}

/** One attempt at one address: TLS first (judged), then the GET over that connection. */
function fetchFrom(address: string, host: string, url: string, timeoutMs: number, options: PolicyFetchOptions): Promise<PolicyFetch> {
  const now = options.now ?? (() => new Date());
  return new Promise<PolicyFetch>((resolve) => {
    let settled = false;
    let socket: TLSSocket | null = null;
    let status: number | null = null;
    let stage: 'connect' | 'http' = 'connect';
    const done = (result: PolicyFetch): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket?.destroy();
      resolve(result);
    };
    const failed = (error: PolicyFetchError, detail: string): void => done({ ok: false, url, httpStatus: status, error, detail, address });
    const timer = setTimeout(() => failed(stage === 'connect' ? 'unreachable' : 'timeout', `no ${stage === 'connect' ? 'TLS connection' : 'complete answer'} from ${host} (${address}) within ${timeoutMs} ms`), timeoutMs);
    timer.unref();

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
    let tcpConnected = false;
    socket.once('connect', () => {
      tcpConnected = true;
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (stage !== 'connect') return; // the request reports it
      if (!tcpConnected) return failed('unreachable', `cannot connect to ${host} (${address}): ${error.code ?? error.message}`);
      failed('tls-failed', `the TLS handshake with ${host} (${address}) failed: ${error.code ?? error.message}`);
    });
    socket.once('secureConnect', () => {
      const judged = judgePeer(socket as TLSSocket, host, now());
      if (judged.outcome !== 'ok') return failed(judged.outcome, `the HTTPS certificate of ${host}: ${judged.detail}`);
      stage = 'http';
      const request = httpsRequest({
        host,
        port: options.port ?? HTTPS_PORT,
        path: POLICY_PATH,
        method: 'GET',
        // No agent: the request goes over the connection judged above (no second DNS lookup, no pool).
        createConnection: () => socket as TLSSocket,
        headers: {
          host,
          accept: 'text/plain',
          // RFC 8461 §3.3: HTTP caching MUST NOT be used.
          'cache-control': 'no-cache',
          'user-agent': 'spoof-checker (MTA-STS policy check)',
        },
      });
      request.on('error', (error: NodeJS.ErrnoException) => failed('http-error', `the HTTP exchange with ${host} broke: ${error.code ?? error.message}`));
      request.on('response', (response) => {
        status = response.statusCode ?? null;
        // RFC 8461 §3.3: "HTTP 3xx redirects MUST NOT be followed"; only 200 is a policy.
        if (status !== null && status >= 300 && status < 400) {
          response.resume();
          const location = typeof response.headers.location === 'string' ? ` to ${response.headers.location.slice(0, 200)}` : '';
          return failed('redirect', `${url} answered ${status}, a redirect${location}; senders never follow redirects for a policy (RFC 8461 §3.3)`);
        }
        if (status !== 200) {
          response.resume();
          return failed('http-status', `${url} answered HTTP ${status ?? '?'}; only 200 is a policy (RFC 8461 §3.3)`);
        }
        // RFC 8461 §3.3: the media type is text/plain; parameters other than the charset are irrelevant.
        const type = (response.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (type !== 'text/plain') {
          response.resume();
          return failed('content-type', `${url} is served as "${response.headers['content-type'] ?? '(no Content-Type)'}", not text/plain; senders that check the type (RFC 8461 §3.3) ignore it`);
        }
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > MAX_POLICY_BYTES) {
          return failed('too-large', `${url} declares ${declared} bytes; a policy may be at most ${MAX_POLICY_BYTES} bytes`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_POLICY_BYTES) return failed('too-large', `${url} sent more than ${MAX_POLICY_BYTES} bytes; a policy may be at most ${MAX_POLICY_BYTES} bytes`);
          chunks.push(chunk);
        });
        response.on('error', (error: NodeJS.ErrnoException) => failed('http-error', `the answer from ${host} broke off: ${error.code ?? error.message}`));
        response.on('end', () => done({ ok: true, url, httpStatus: 200, body: Buffer.concat(chunks).toString('utf8'), address }));
      });
      request.end();
    });
  });
}
