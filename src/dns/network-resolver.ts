/**
 * The resolver that asks real DNS servers: the system's (from /etc/resolv.conf) unless servers are
 * given as `ip[:port]`.
 *
 * Client chosen by measurement (`npx tsx bench/dns-clients.ts`: loopback, the embedded server in a
 * child process, TXT queries, 2 CPUs). Node's c-ares resolver (`dns.promises.Resolver`) against
 * dns2's UDP client: at concurrency 1, 0.9–1.4× over several runs (the round trip dominates, so
 * within noise); at concurrency 32, 2.6–3.3× (about 26–34k against 10k queries/s, Node 20 and
 * 24), as dns2 opens a UDP socket per query and decodes bit by bit. c-ares also tells NXDOMAIN (ENOTFOUND)
 * from NODATA (ENODATA), retries over TCP on truncation by itself, and keeps TXT
 * character-strings apart. So c-ares does every query, and what it lacks is handled here:
 * - A deadline of our own around each query: c-ares backs off (doubling, with jitter) between
 *   attempts, so its total time is only roughly `timeout × tries`; the race makes `timeoutMs` a
 *   bound, not a hint.
 * - TTLs: c-ares reports them for A and AAAA only. Other answers carry no `ttl` and the cache
 *   uses its configured default, which is what the cache is for.
 * - CNAMEs: c-ares reads the records at the end of the chain the server sent but does not say
 *   which aliases it crossed, so `cnames` is not reported. Chains are followed and bounded by the
 *   recursive server (ours stops at 16).
 * - A CNAME whose target has no address comes back from c-ares as an empty list: that is NODATA.
 * - TXT octets: c-ares hands them over as Latin-1 text; they are decoded as UTF-8 here when they
 *   are valid UTF-8, so that the text matches what the zone resolver gives.
 * Known gap: a server that sets TC even over TCP gets an empty answer from c-ares, which Node
 * reports as ENODATA, so it reads as NODATA. Only a broken server does this: TC means "longer than
 * the channel allows" (RFC 1035 §4.1.1), and a TCP message may be 65535 octets.
 */
import { Resolver as CaresResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { canonicalName, dnsNameProblem } from './name.js';
import type { DnsAnswer, DnsErrorReason, MxData, RecordType, Resolver, SoaData } from './types.js';

/** How long one query may take in all, retries included, before it is a `timeout`. */
export const DEFAULT_QUERY_TIMEOUT_MS = 4000;
/** How many times one query is sent over UDP before giving up (c-ares `tries`). */
export const DEFAULT_QUERY_ATTEMPTS = 2;
/** The shortest wait for one attempt that we hand c-ares, however small the budget. */
export const MIN_ATTEMPT_TIMEOUT_MS = 10;
/** RFC 1035 §4.2: DNS listens on port 53. */
export const DNS_PORT = 53;

/** Options of `NetworkResolver`. */
export interface NetworkResolverOptions {
  /** Servers as `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`. Default: the system's resolvers. */
  servers?: readonly string[];
  /** The time one query may take in all, in milliseconds. */
  timeoutMs?: number;
  /** How many times a query is sent before it times out. */
  attempts?: number;
}

/** A server address, split. */
export interface ServerAddress {
  host: string;
  port: number;
}

/**
 * Reads `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`. Returns the address, or a message saying what is
 * wrong with the text.
 */
export function parseServerAddress(text: string): ServerAddress | { error: string } {
  const trimmed = text.trim();
  let host = trimmed;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2];
    if (isIP(host) !== 6) return { error: `"${text}" has brackets but no IPv6 address inside them` };
  } else if (isIP(trimmed) === 0) {
    const colon = trimmed.lastIndexOf(':');
    if (colon === -1 || trimmed.indexOf(':') !== colon) {
      return { error: `"${text}" is not an IP address (give ip, ip:port or [ipv6]:port)` };
    }
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
    if (isIP(host) !== 4) return { error: `"${text}" is not an IPv4 address with a port` };
  }
  if (portText === undefined) return { host, port: DNS_PORT };
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65_535) {
    return { error: `"${text}" has port "${portText}"; a port is a number from 1 to 65535` };
  }
  return { host, port };
}

/** The form c-ares's `setServers` takes. */
function formatServer({ host, port }: ServerAddress): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Asks real DNS servers through c-ares and maps every outcome onto `DnsAnswer`: records, NODATA,
 * NXDOMAIN, or an error (`servfail`, `refused`, `timeout`, `malformed`, `invalid-name`). It never
 * rejects. An unreachable server is `refused` (ICMP port unreachable) or `timeout`, never NXDOMAIN.
 */
export class NetworkResolver implements Resolver {
  private readonly client: CaresResolver;
  private readonly timeoutMs: number;

  /** Throws a `TypeError` when a server address cannot be read (a configuration error). */
  constructor(options: NetworkResolverOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    const attempts = options.attempts ?? DEFAULT_QUERY_ATTEMPTS;
    if (!(this.timeoutMs > 0) || !Number.isInteger(attempts) || attempts < 1) {
      throw new TypeError(`NetworkResolver needs timeoutMs > 0 and attempts ≥ 1 (got ${this.timeoutMs}, ${attempts})`);
    }
    // c-ares doubles its wait on each retry, so the attempts together take timeout × (2^n − 1).
    const attemptTimeout = Math.max(MIN_ATTEMPT_TIMEOUT_MS, Math.floor(this.timeoutMs / (2 ** attempts - 1)));
    this.client = new CaresResolver({ timeout: attemptTimeout, tries: attempts });
    if (options.servers && options.servers.length > 0) {
      const servers = options.servers.map((text) => {
        const parsed = parseServerAddress(text);
        if ('error' in parsed) throw new TypeError(`DNS server ${parsed.error}`);
        return formatServer(parsed);
      });
      this.client.setServers(servers);
    }
  }

  /** The servers queries go to, as `ip:port` or `[ipv6]:port`. */
  servers(): string[] {
    return this.client.getServers();
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const problem = dnsNameProblem(name);
    if (problem) return { kind: 'error', reason: 'invalid-name', detail: problem };
    // c-ares wants the root as "."; every other name goes without the trailing dot.
    const query = canonicalName(name) || '.';
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<DnsAnswer<T>>((resolve) => {
      timer = setTimeout(
        () => resolve({ kind: 'error', reason: 'timeout', detail: `no answer within ${this.timeoutMs} ms` }),
        this.timeoutMs,
      );
    });
    try {
      return await Promise.race([ask(this.client, query, type), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

async function ask<T extends RecordType>(client: CaresResolver, name: string, type: T): Promise<DnsAnswer<T>> {
  try {
    return (await QUERIES[type](client, name)) as DnsAnswer<T>;
  } catch (error) {
    return fromCaresError(error);
  }
}

type Query<T extends RecordType> = (client: CaresResolver, name: string) => Promise<DnsAnswer<T>>;

/** One c-ares call per type, its result mapped onto `RecordDataMap` (names canonical). */
const QUERIES: { [T in RecordType]: Query<T> } = {
  A: async (client, name) => {
    const found = await client.resolve4(name, { ttl: true });
    return answerOf(found.map((r) => r.address), minTtl(found));
  },
  AAAA: async (client, name) => {
    const found = await client.resolve6(name, { ttl: true });
    return answerOf(found.map((r) => r.address), minTtl(found));
  },
  MX: async (client, name) => {
    const found = await client.resolveMx(name);
    // RFC 7505 §3: the null MX's exchange is the root, '' in canonical form.
    return answerOf(found.map((r): MxData => ({ preference: r.priority, exchange: canonicalName(r.exchange) })));
  },
  TXT: async (client, name) => {
    const found = await client.resolveTxt(name);
    return answerOf(found.map((strings) => strings.map(utf8FromLatin1)));
  },
  CNAME: async (client, name) => answerOf((await client.resolveCname(name)).map(canonicalName)),
  PTR: async (client, name) => answerOf((await client.resolvePtr(name)).map(canonicalName)),
  NS: async (client, name) => answerOf((await client.resolveNs(name)).map(canonicalName)),
  SOA: async (client, name) => {
    const soa = await client.resolveSoa(name);
    const data: SoaData = {
      mname: canonicalName(soa.nsname),
      rname: canonicalName(soa.hostmaster),
      serial: soa.serial,
      refresh: soa.refresh,
      retry: soa.retry,
      expire: soa.expire,
      minimum: soa.minttl,
    };
    return answerOf([data]);
  },
};

/** RFC 2308 §2.2: an answer without records of the type asked for is NODATA. */
function answerOf<D>(records: D[], ttl?: number): { kind: 'records'; records: D[]; ttl?: number } | { kind: 'nodata' } {
  if (records.length === 0) return { kind: 'nodata' };
  return ttl === undefined ? { kind: 'records', records } : { kind: 'records', records, ttl };
}

/** RFC 2181 §5.2: one RRset, one TTL; where they differ, the smallest is the safe one. */
function minTtl(records: readonly { ttl: number }[]): number | undefined {
  return records.length === 0 ? undefined : Math.min(...records.map((r) => r.ttl));
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * c-ares passes TXT octets to JavaScript one octet per character (Latin-1). When those octets are
 * valid UTF-8 the text is decoded as UTF-8; otherwise (or when a later Node already decoded it, with
 * characters above U+00FF) it is kept as it came.
 */
export function utf8FromLatin1(text: string): string {
  if (!/[^\u0000-\u007f]/.test(text) || /[^\u0000-\u00ff]/.test(text)) return text;
  try {
    return strictUtf8.decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

/** Node's names for c-ares status codes (`dns.NODATA` …), mapped onto the answer union. */
const CARES_ERRORS: Readonly<Record<string, { kind: 'nodata' | 'nxdomain' } | { kind: 'error'; reason: DnsErrorReason }>> = {
  ENODATA: { kind: 'nodata' }, // NOERROR with no records of the type (RFC 2308 §2.2)
  ENOTFOUND: { kind: 'nxdomain' }, // RCODE 3 (RFC 2308 §2.1)
  ESERVFAIL: { kind: 'error', reason: 'servfail' },
  EREFUSED: { kind: 'error', reason: 'refused' },
  ENOTIMP: { kind: 'error', reason: 'refused' }, // the server will not do this kind of query
  EFORMERR: { kind: 'error', reason: 'servfail' }, // the server could not read our query
  ECONNREFUSED: { kind: 'error', reason: 'refused' }, // nothing listens there
  ETIMEOUT: { kind: 'error', reason: 'timeout' },
  ECANCELLED: { kind: 'error', reason: 'timeout' },
  EBADRESP: { kind: 'error', reason: 'malformed' },
  EBADSTR: { kind: 'error', reason: 'malformed' },
  EOF: { kind: 'error', reason: 'malformed' },
  EBADNAME: { kind: 'error', reason: 'invalid-name' },
  EBADQUERY: { kind: 'error', reason: 'invalid-name' },
};

/** A c-ares rejection as an answer; anything unexpected is a server failure, never "no record". */
function fromCaresError<T extends RecordType>(error: unknown): DnsAnswer<T> {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'UNKNOWN';
  const mapped = CARES_ERRORS[code];
  if (mapped && mapped.kind !== 'error') return { kind: mapped.kind };
  return { kind: 'error', reason: mapped ? mapped.reason : 'servfail', detail: `c-ares ${code}` };
}
