/**
 * The validator's DNS client: one question with EDNS (RFC 6891), DO (RFC 3225, RFC 4035 §4.9.2) and
 * CD (RFC 4035 §3.2.2; RFC 6840 §5.9 says a validating stub always sets it, so that a recursive
 * resolver hands over bogus data and the validator can say why), asked through the network
 * resolver's query path (`NetworkResolver.dnssecQuery`): its sockets, its TCP fallback for a
 * truncated answer (RFC 7766 §5), its EDNS payload size. Records come back as raw octets for the
 * canonical form; a socket error or timeout is the question's `{ kind: 'error' }`, never a rejection.
 */
import { EDNS_UDP_PAYLOAD, NetworkResolver, type ServerAddress } from '../dns/network-resolver.js';
import type { RawQuery } from './types.js';

/** The UDP payload size advertised (RFC 6891 §6.2.5; the DNS Flag Day 2020 value): the network resolver's. */
export const DNSSEC_UDP_PAYLOAD = EDNS_UDP_PAYLOAD;
/** How long one attempt waits, in milliseconds. */
export const DNSSEC_QUERY_TIMEOUT_MS = 3000;
/** Attempts per question, spread over the servers. */
export const DNSSEC_QUERY_ATTEMPTS = 2;

/** Where to ask (an IP address and a port). */
export type RawQueryServer = ServerAddress;

/** A `RawQuery` that asks `servers` (in turn, one per attempt), through a network resolver of its own. */
export function createRawQuery(
  servers: readonly RawQueryServer[],
  options: { timeoutMs?: number; attempts?: number; /** CD (true unless told): false asks a validating resolver for its own verdict. */ checkingDisabled?: boolean } = {},
): RawQuery {
  if (servers.length === 0) throw new TypeError('createRawQuery needs at least one server');
  const resolver = new NetworkResolver({
    servers: servers.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)),
    timeoutMs: options.timeoutMs ?? DNSSEC_QUERY_TIMEOUT_MS,
    attempts: options.attempts ?? DNSSEC_QUERY_ATTEMPTS,
  });
  return resolver.dnssecQuery({ checkingDisabled: options.checkingDisabled ?? true });
}
