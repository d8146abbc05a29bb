/**
 * Fetching the logo (`l=`) and the evidence document (`a=`) the way the MTA-STS policy is fetched
 * (net/https-fetch.ts `fetchHttps`, which the MTA-STS policy fetch uses too): HTTPS only, the host's addresses from the injected
 * resolver and each through the address guard, the TLS certificate judged before anything is
 * asked, a body cap and a deadline. Redirects are followed at most `MAX_BIMI_REDIRECTS` times,
 * each new URL checked again (HTTPS, a host name, the guard) before it is fetched.
 */
import type { Resolver } from '../dns/types.js';
import { fetchHttps, HTTPS_FETCH_TIMEOUT_MS, HTTPS_PORT } from '../net/https-fetch.js';
import type { TlsTrust } from '../net/tls-peer.js';
import { httpsUrlProblem } from './parse.js';
import type { BimiFetchFailure } from './types.js';

/** The fetch cap of the logo and of the certificate document (Mail::BIMI: 65,535), above the 32 KiB logo limit so an oversize logo is measured. */
export const MAX_BIMI_FETCH_BYTES = 64 * 1024;
/** Redirects followed at most (the BIMI Group inspector allows 3), each re-checked. */
export const MAX_BIMI_REDIRECTS = 3;

/** Options of `fetchBimiFile`. */
export interface BimiFetchOptions {
  /** Port to connect to instead of the URL's (test labs: `--connect-ports https=N`). */
  port?: number | undefined;
  trust?: TlsTrust | undefined;
  allowPrivateAddresses?: boolean | undefined;
  timeoutMs?: number | undefined;
  now?: (() => Date) | undefined;
}

/** A fetched file, or why there is none. */
export type BimiFetch = { ok: true; url: string; body: Buffer; contentType: string | null } | ({ ok: false; url: string } & BimiFetchFailure);

/** Fetches `url` (the logo or the certificate document); every outcome is a value. */
export async function fetchBimiFile(url: string, what: 'logo' | 'certificate', resolver: Resolver, options: BimiFetchOptions = {}): Promise<BimiFetch> {
  const started = Date.now();
  const total = options.timeoutMs ?? HTTPS_FETCH_TIMEOUT_MS;
  let current = url;
  for (let hop = 0; hop <= MAX_BIMI_REDIRECTS; hop++) {
    const problem = httpsUrlProblem(current, hop === 0 ? (what === 'logo' ? 'l=' : 'a=') : 'the redirect');
    if (problem) return { ok: false, url, error: 'bad-url', httpStatus: null, detail: problem };
    const target = new URL(current);
    const remaining = total - (Date.now() - started);
    if (remaining <= 0) return { ok: false, url, error: 'timeout', httpStatus: null, detail: `no answer for ${url} within ${total} ms` };
    const got = await fetchHttps({ host: target.hostname, path: `${target.pathname}${target.search}`, url: current }, resolver, {
      port: options.port ?? (target.port === '' ? HTTPS_PORT : Number(target.port)),
      trust: options.trust,
      allowPrivateAddresses: options.allowPrivateAddresses,
      timeoutMs: remaining,
      now: options.now,
      maxBytes: MAX_BIMI_FETCH_BYTES,
      accept: what === 'logo' ? 'image/svg+xml' : 'application/x-pem-file, application/pem-certificate-chain, text/plain, */*',
      userAgent: 'spoof-checker (BIMI check)',
      what: what === 'logo' ? 'a BIMI logo' : 'a certificate document',
    });
    if (got.ok) return { ok: true, url: current, body: got.body, contentType: got.contentType };
    if (got.error === 'redirect' && got.location !== null) {
      let next: string;
      try {
        next = new URL(got.location, current).toString();
      } catch {
        return { ok: false, url, error: 'redirect', httpStatus: got.httpStatus, detail: `${current} redirects to "${got.location.slice(0, 200)}", which is not a URL` };
      }
      current = next;
      continue;
    }
    return { ok: false, url, error: got.error, httpStatus: got.httpStatus, detail: got.detail };
  }
  return { ok: false, url, error: 'too-many-redirects', httpStatus: null, detail: `${url} redirects more than ${MAX_BIMI_REDIRECTS} times` };
}
