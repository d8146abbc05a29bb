/**
 * Fetches an MTA-STS policy (RFC 8461 §3.3): `https://mta-sts.<domain>/.well-known/mta-sts.txt`,
 * the host's addresses taken from the injected resolver, TLS with SNI and a certificate valid for
 * the policy host chained to a trusted root, HTTP/1.1 GET, only 200 accepted, redirects never
 * followed, no HTTP cache, a body cap and a deadline, `text/plain` expected.
 *
 * The connection is made (and the certificate judged) before any request is sent, so nothing is
 * asked of a host whose certificate fails. Addresses pass the address guard first. The HTTPS GET is
 * the engine's one (../net/https-fetch.ts).
 */
import type { Resolver } from '../dns/types.js';
import { fetchHttps, HTTPS_FETCH_TIMEOUT_MS, MAX_HTTPS_ADDRESSES, type HttpsConnectOptions } from '../net/https-fetch.js';
import type { PolicyFetch } from './types.js';

/** RFC 8461 §3.3 suggests a 64 KiB cap on the policy body. */
export const MAX_POLICY_BYTES = 64 * 1024;
/** The whole fetch (connect, handshake, answer) must finish within this (RFC 8461 §3.3 suggests at most 60 s). */
export const POLICY_FETCH_TIMEOUT_MS = HTTPS_FETCH_TIMEOUT_MS;
/** RFC 8461 §3.3: the policy is at this path of the policy host. */
export const POLICY_PATH = '/.well-known/mta-sts.txt';
export { HTTPS_PORT } from '../net/https-fetch.js';
/** Most addresses of the policy host tried (one after another, while they cannot be reached). */
export const MAX_POLICY_ADDRESSES = MAX_HTTPS_ADDRESSES;

/** Options of `fetchPolicy`: where and how to connect. */
export type PolicyFetchOptions = HttpsConnectOptions;

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
