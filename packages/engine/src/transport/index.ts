/**
 * Mail sent to a domain (RFC 8461 MTA-STS, RFC 8460 TLS-RPT, RFC 3207 STARTTLS): `checkTransport`
 * is the entry point; the parsers and matchers are pure and usable alone.
 */
export { checkTransport, TransportCache, MAX_ADDRESSES_PER_HOST, MAX_CONNECTIONS_PER_ADDRESS, MAX_ADDRESSES_PROBED, MAX_MX_HOSTS_PROBED, MAX_PARALLEL_PROBES, MAX_PROBE_CACHE_SECONDS } from './check.js';
export type { TransportOptions } from './check.js';
export { fetchPolicy, MAX_POLICY_BYTES, POLICY_FETCH_TIMEOUT_MS, POLICY_PATH, policyLocation } from './fetch-policy.js';
export { judgeTransport } from './judge.js';
export { certificateNameMatches, matchesOneLabelPattern, mxCovered, normaliseHost } from './mx-pattern.js';
export { MAX_STS_MAX_AGE, parseStsPolicy, parseStsRecord, parseTlsRptRecord, selectRecord } from './parse.js';
export { PROBE_DEADLINE_MS, probeStarttls, SMTP_PORT } from './starttls.js';
export { tlsTrust } from '../net/tls-peer.js';
export type * from './types.js';
