/**
 * The resolver that asks real DNS servers: the system's (from /etc/resolv.conf, through
 * `node:dns` `getServers()`) unless servers are given as `ip[:port]`.
 *
 * A stub client of our own on dns-packet's codec (src/dns/wire.ts), over `node:dgram` and
 * `node:net`, because c-ares (Node's resolver) could not tell the truth about four things:
 * - TTLs: c-ares reports them for A and AAAA only. Here every answer carries the smallest TTL of its
 *   RRset and of the CNAMEs crossed, and a negative answer the TTL of RFC 2308 §5 (the SOA in the
 *   authority section: the smaller of its TTL and its MINIMUM; 0, not cached, without an SOA).
 * - Truncation: a TC answer is asked again over TCP (RFC 7766 §5); a TCP answer that fails, or is
 *   truncated again, is an error (`malformed` for TC over TCP, as `FaultyResolver` says too), never
 *   "no record". c-ares read TC-over-TCP as an empty answer, i.e. NODATA.
 * - Time: each attempt waits exactly `timeoutMs` and there are exactly `attempts` of them, so a
 *   server that never answers costs `timeoutMs × attempts` and then `timeout`.
 * - Which aliases were followed (`cnames`), and RDATA that does not match its type (`malformed`).
 * Every query has a random ID and goes out over UDP from a small pool of sockets per server, each
 * bound to its own OS-chosen random source port, taken in turn so that consecutive queries leave
 * from different ports (RFC 5452 §9.2: the port adds entropy to the ID; a pool of up to
 * `UDP_SOCKETS_PER_SERVER` random ports, each retired for a fresh one after `UDP_SOCKET_MAX_QUERIES`
 * queries or `UDP_SOCKET_MAX_AGE_MS`, and a 16-bit ID not in flight on that socket). A socket
 * multiplexes the queries in flight on it; a reply counts only when it comes from the server asked
 * (the socket is connected) and matches the ID and the question (name case-insensitively, type,
 * class); anything else is ignored and the wait goes on (RFC 5452 §4.3, §9.1). Each socket has one
 * timer for all its queries (the first deadline in the queue), not one per query. Sockets are made
 * when needed, closed once idle for `UDP_SOCKET_IDLE_MS` (checked when their timer next runs: after
 * the last query's deadline at the latest), and never keep the process alive while idle. Queries
 * carry EDNS0 with a 1232-octet buffer (RFC 6891; DNS Flag Day 2020).
 * Truncated answers are asked again over TCP on connections kept per server and reused (RFC 7766
 * §6.2.1): up to `TCP_CONNECTIONS_PER_SERVER`, queries pipelined and matched by ID and question,
 * closed after `TCP_CONNECTION_IDLE_MS` without one; a connection that closes or fails ends only
 * the queries in flight on it, each of which then goes on to its next attempt.
 */
import { randomFillSync } from 'node:crypto';
import dgram from 'node:dgram';
import { getServers as systemServers } from 'node:dns';
import net from 'node:net';
import { canonicalName, canonicalNameProblem, MAX_LABEL_OCTETS } from './name.js';
import { MAX_CNAME_CHAIN, SERVER_UNREACHABLE, type CallbackResolver, type DnsAnswer, type DnsErrorReason, type RecordData, type RecordType, type Resolver, type SoaData } from './types.js';
import { CLASS_IN, encodeQuery, FLAG, HEADER_OCTETS, MalformedMessage, RCODE, readMessage, TYPE_CODES, type WireMessage } from './wire.js';
import { encodeRawQuery, readRawMessage, type RawMessage, type RawQuery, type RawResponse } from './canonical.js';

/** How long one attempt (a UDP query, and its TCP retry if it was truncated) may take. */
export const DEFAULT_QUERY_TIMEOUT_MS = 2000;
/** How many attempts one query gets; they go to the servers in turn. */
export const DEFAULT_QUERY_ATTEMPTS = 2;
/** RFC 1035 §4.2: DNS listens on port 53. */
export const DNS_PORT = 53;
/** RFC 6891 §6.2.5: the UDP payload size we advertise; 1232 fits the IPv6 minimum MTU (DNS Flag Day 2020). */
export const EDNS_UDP_PAYLOAD = 1232;
/** The largest DNS message over TCP: the 2-octet length prefix (RFC 1035 §4.2.2). */
export const MAX_TCP_MESSAGE_OCTETS = 65_535;
/** Where the system lists no resolver, c-ares and glibc ask the local host. */
export const FALLBACK_SERVER = '127.0.0.1';
/**
 * The most UDP sockets (each on its own OS-chosen random source port) in use per server at once.
 *
 * Why 4, and not more (RFC 5452 §9.2 asks for an unpredictable source port from a range as large as
 * practicable, and for several ports at once while several queries are in flight):
 * - Against a blind, off-path forger, the number of sockets does not change the odds. Each socket's
 *   port is drawn by the kernel from its whole ephemeral range (R ports), and each query's ID from
 *   all 65,536 (RFC 5452 §4.3, §9.1); a forged reply wins only on the port and the ID of a query in
 *   flight on that port, so one forged datagram wins with probability Q / (R × 65,536) for Q
 *   queries in flight, however they are spread over the sockets (the odds of RFC 5452 §7, with the
 *   port term the range of ports an attacker must cover, not the count of sockets open).
 * - What a port spread does guard against is a port that has become known (an on-path glimpse, or
 *   an ICMP rate-limit side channel that finds open ports, CVE-2020-25705 "SADDNS"): the queries
 *   that then rest on the ID alone are those the known socket still carries. A pool of 16 long-lived
 *   sockets bounded that by nothing: under steady load none ever went idle, so each carried queries
 *   for as long as the process ran. Here each socket is retired, and replaced by a fresh one on a
 *   new random port, after `UDP_SOCKET_MAX_QUERIES` queries or `UDP_SOCKET_MAX_AGE_MS`, whichever
 *   comes first: a known port exposes at most that many queries, for at most that long.
 * - Consecutive queries still leave from different ports (the sockets are taken in turn), and
 *   several ports are in use while several queries are in flight (RFC 5452 §9.2).
 * The cost that bought: each ready socket is one more read per wake-up of the event loop (a read
 * that finds the datagram and one that finds the socket empty); at 16 checks in flight, 16 sockets
 * cost about a sixth of the engine's CPU per cold check against 2, a tenth against 4
 * (bench/engine-cold.ts; docs/benchmarks.md, issue 43 item 6).
 */
export const UDP_SOCKETS_PER_SERVER = 4;
/** How long a UDP socket with no query in flight is kept before it is closed. */
export const UDP_SOCKET_IDLE_MS = 1000;
/** The most TCP connections kept per server; queries are pipelined on them (RFC 7766 §6.2.1.1). */
export const TCP_CONNECTIONS_PER_SERVER = 2;
/**
 * How long a TCP connection with no query in flight is kept open for the next truncated answer
 * (RFC 7766 §6.2.1: reuse; §6.2.3: servers close idle connections after seconds, so keep it short).
 */
export const TCP_CONNECTION_IDLE_MS = 1000;

/** Options of `NetworkResolver`. */
export interface NetworkResolverOptions {
  /** Servers as `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`. Default: the system's resolvers. */
  servers?: readonly string[];
  /** How long each attempt waits for its answer, in milliseconds (UDP and any TCP retry together). */
  timeoutMs?: number;
  /** How many attempts a query gets before it is a `timeout`; attempt n goes to server n mod servers. */
  attempts?: number;
  /** Advertise EDNS0 (RFC 6891) with a 1232-octet buffer; true unless told. */
  edns?: boolean;
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
    if (isIPv6(host) === false) return { error: `"${text}" has brackets but no IPv6 address inside them` };
  } else if (net.isIP(trimmed) === 0) {
    const colon = trimmed.lastIndexOf(':');
    if (colon === -1 || trimmed.indexOf(':') !== colon) {
      return { error: `"${text}" is not an IP address (give ip, ip:port or [ipv6]:port)` };
    }
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
    if (net.isIP(host) !== 4) return { error: `"${text}" is not an IPv4 address with a port` };
  }
  if (portText === undefined) return { host, port: DNS_PORT };
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65_535) {
    return { error: `"${text}" has port "${portText}"; a port is a number from 1 to 65535` };
  }
  return { host, port };
}

function isIPv6(host: string): boolean {
  return net.isIP(host) === 6;
}

/** `ip:port` or `[ipv6]:port`. */
function formatServer({ host, port }: ServerAddress): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Asks real DNS servers and maps every outcome onto `DnsAnswer`: records, NODATA, NXDOMAIN, or an
 * error (`servfail`, `refused`, `timeout`, `malformed`, `invalid-name`). It never rejects. An
 * unreachable server is `refused` (ICMP port unreachable) or `timeout`, never NXDOMAIN.
 */
export class NetworkResolver implements CallbackResolver {
  private readonly client: Client;

  /** Throws a `TypeError` when a server address cannot be read or a number is out of range (a configuration error). */
  constructor(options: NetworkResolverOptions = {}) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    const attempts = options.attempts ?? DEFAULT_QUERY_ATTEMPTS;
    if (!(timeoutMs > 0) || !Number.isInteger(attempts) || attempts < 1) {
      throw new TypeError(`NetworkResolver needs timeoutMs > 0 and attempts ≥ 1 (got ${timeoutMs}, ${attempts})`);
    }
    const given = options.servers && options.servers.length > 0 ? options.servers : defaultServers();
    const addresses = given.map((text) => {
      const parsed = parseServerAddress(text);
      if ('error' in parsed) throw new TypeError(`DNS server ${parsed.error}`);
      return parsed;
    });
    this.client = new Client(addresses, timeoutMs, attempts, options.edns ?? true);
  }

  /**
   * A raw query client to the same servers for DNSSEC validation: EDNS with DO and CD set
   * (RFC 4035 §4.9.2, RFC 6840 §5.9), the records handed back as raw octets (`Validator`). Its
   * questions share this resolver's sockets, TCP connections, attempts and timeout (one socket
   * pool, one TCP fallback, one EDNS payload size); `checkingDisabled: false` asks a validating
   * resolver for its own verdict.
   */
  dnssecQuery(options: { checkingDisabled?: boolean } = {}): RawQuery {
    const cd = options.checkingDisabled ?? true;
    return (name, type) => new Promise<RawResponse>((resolve) => new RawLookup(this.client, name, type, cd, resolve).begin());
  }

  /** The servers queries go to, as `ip:port` or `[ipv6]:port`. */
  servers(): string[] {
    return this.client.addresses.map(formatServer);
  }

  /**
   * Closes the UDP sockets and TCP connections kept for later queries. Not needed for the process
   * to exit (idle ones do not keep it alive); queries still in flight end as `servfail`. The
   * resolver stays usable.
   */
  close(): void {
    this.client.close();
  }

  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return new Promise((resolve) => this.resolveThen(name, type, resolve));
  }

  /** `resolve` with the answer handed to `done` (`CallbackResolver`); `failed` is never called: this resolver never rejects. */
  resolveThen<T extends RecordType>(name: string, type: T, done: (answer: DnsAnswer<T>) => void, _failed?: (error: unknown) => void): void {
    const first = canonicalName(name);
    const problem = canonicalNameProblem(first, name) ?? octetProblem(first);
    if (problem) return done({ kind: 'error', reason: 'invalid-name', detail: problem });
    new Lookup<T>(this.client, first, type, done).ask(first);
  }
}

/** What the lookups of one resolver share: its settings, its servers and their sockets. */
class Client {
  /** Which server the next question starts with: questions are spread over the servers. */
  private nextServer = 0;
  /** The sockets of each server, by its index in `addresses` (made when first needed). */
  private readonly pools: (ServerPool | undefined)[] = [];

  constructor(
    readonly addresses: readonly ServerAddress[],
    readonly timeoutMs: number,
    readonly attempts: number,
    readonly edns: boolean,
  ) {}

  /** The server a new question starts with. */
  firstServer(): number {
    const start = this.nextServer;
    this.nextServer = (this.nextServer + 1) % this.addresses.length;
    return start;
  }

  /** The sockets of server `index`, made when first needed. */
  pool(index: number): ServerPool {
    return (this.pools[index] ??= new ServerPool(this.addresses[index] as ServerAddress));
  }

  close(): void {
    for (const pool of this.pools) pool?.close();
    this.pools.length = 0;
  }
}

/**
 * One lookup, from the name asked to its answer, as a chain of callbacks rather than nested async
 * functions (which cost a promise and a frame each, per query): each question goes through the
 * attempts, each attempt asks over UDP (again without EDNS when the server does not support it,
 * RFC 6891 §7) and over TCP when the answer was truncated (RFC 7766 §5), all within `timeoutMs`;
 * the answer is read along its CNAMEs, and a chain the server left unfinished is asked for from
 * where it stopped (RFC 1034 §5.3.3).
 */
class Lookup<T extends RecordType> {
  private readonly cnames: string[] = [];
  private ttl = Infinity;
  private qname: string;
  /** The question's first server, and the attempt under way. */
  private start = 0;
  private attempt = 0;
  /** The error that ends the attempts: a timeout only when every attempt timed out. */
  private last: ErrorAnswer | undefined;
  private pool: ServerPool | undefined;
  private deadline = 0;
  private useEdns = false;
  private query: Buffer | undefined;
  private readonly onUdp = (outcome: AttemptOutcome): void => this.guard(() => this.udpOutcome(outcome));
  private settled = false;

  constructor(
    private readonly client: Client,
    private readonly original: string,
    private readonly type: T,
    private readonly done: (answer: DnsAnswer<T>) => void,
  ) {
    this.qname = original;
  }

  /** Hands the answer on, once: after it, nothing this lookup still hears (a late socket error) counts. */
  private resolve(answer: DnsAnswer<T>): void {
    if (this.settled) return;
    this.settled = true;
    this.done(answer);
  }

  /** One question through every attempt (a new question after a restart starts afresh). */
  ask(qname: string): void {
    this.qname = qname;
    this.start = this.client.firstServer();
    this.attempt = 0;
    this.last = undefined;
    this.guard(() => this.beginAttempt());
  }

  /**
   * An unexpected exception (a socket that throws where none should) ends the lookup as a failure:
   * the resolver never rejects and nothing it does can end the process.
   */
  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    this.resolve({ kind: 'error', reason: 'servfail', detail: `the query could not be made: ${error instanceof Error ? error.message : String(error)}` } as DnsAnswer<T>);
  }

  private beginAttempt(): void {
    const { client } = this;
    this.pool = client.pool((this.start + this.attempt) % client.addresses.length);
    this.deadline = Date.now() + client.timeoutMs;
    this.useEdns = client.edns;
    this.sendUdp();
  }

  private sendUdp(): void {
    const socket = (this.pool as ServerPool).take(this.deadline - this.client.timeoutMs);
    const id = socket.freeId();
    this.query = encodeQuery(this.qname, this.type, { id, rd: true, ednsUdpPayload: this.useEdns ? EDNS_UDP_PAYLOAD : undefined });
    socket.exchange(this.query, id, lookupReader(this.qname, this.type), this.deadline, this.onUdp);
  }

  private udpOutcome(outcome: AttemptOutcome): void {
    if ('error' in outcome) return this.attemptFailed(outcome);
    if (!('message' in outcome)) return this.fail('a reply of the wrong kind');
    const { message } = outcome;
    if (this.useEdns && !message.opt && (message.rcode === RCODE.FORMERR || message.rcode === RCODE.NOTIMP)) {
      this.useEdns = false;
      return this.sendUdp();
    }
    // RFC 7766 §5 and RFC 2181 §9: a truncated answer is not used; ask again over TCP.
    if ((message.flags & FLAG.TC) === 0) return this.answered(message);
    (this.pool as ServerPool).tcp
      .take()
      .exchange(this.query as Buffer, lookupReader(this.qname, this.type), this.deadline)
      .then((tcp) => this.guard(() => this.tcpOutcome(tcp)), (error: unknown) => this.fail(error));
  }

  private tcpOutcome(tcp: AttemptOutcome): void {
    if ('error' in tcp) return this.attemptFailed(tcp);
    if (!('message' in tcp)) return this.fail('a reply of the wrong kind');
    // A TCP message can hold 65535 octets (RFC 1035 §4.2.2): TC here is a broken server.
    if ((tcp.message.flags & FLAG.TC) !== 0) {
      return this.attemptFailed({ error: { kind: 'error', reason: 'malformed', detail: 'the answer was truncated even over TCP' }, final: true });
    }
    this.answered(tcp.message);
  }

  private attemptFailed(outcome: { error: ErrorAnswer; final: boolean }): void {
    if (outcome.final) return this.resolve(outcome.error as DnsAnswer<T>);
    const { last } = this;
    if (outcome.error.reason !== 'timeout' || last === undefined || last.reason === 'timeout') this.last = outcome.error;
    this.nextAttempt();
  }

  private nextAttempt(): void {
    this.attempt++;
    if (this.attempt < this.client.attempts) return this.beginAttempt();
    const { last } = this;
    const { timeoutMs, attempts } = this.client;
    this.resolve((last === undefined || last.reason === 'timeout' ? timeoutAnswer(timeoutMs, attempts) : last) as DnsAnswer<T>);
  }

  /** A response that matches the question: the answer, or, after a failure, another server's turn. */
  private answered(message: WireMessage): void {
    const { client } = this;
    const failure = rcodeFailure(message.rcode);
    // Another server may do better than one that failed; the last attempt's failure stands.
    if (failure && client.addresses.length > 1 && this.attempt + 1 < client.attempts) {
      this.last = failure;
      return this.nextAttempt();
    }
    const read = interpret<T>(message, this.qname, this.type, this.original, this.cnames, this.ttl);
    if (read.kind !== 'restart') return this.resolve(read);
    // RFC 1034 §5.3.3: a chain the server left unfinished is asked again from where it stopped.
    this.ttl = read.ttl;
    this.ask(read.owner);
  }
}

/**
 * `dnsNameProblem` counts characters; on the wire a label is at most 63 octets and a name 255
 * (RFC 1035 §2.3.4), which text that is not ASCII (an IDN not converted to A-labels) can exceed.
 */
function octetProblem(canonical: string): string | null {
  let ascii = true;
  for (let index = 0; index < canonical.length && ascii; index++) ascii = canonical.charCodeAt(index) < 0x80;
  if (ascii) return null;
  let total = 1;
  for (const label of canonical.split('.')) {
    const octets = Buffer.byteLength(label);
    if (octets > MAX_LABEL_OCTETS) return `the label "${label.slice(0, 20)}…" is ${octets} octets in UTF-8; DNS allows at most ${MAX_LABEL_OCTETS}`;
    total += octets + 1;
  }
  return total > MAX_WIRE_NAME_OCTETS ? `the name is ${total} octets on the wire; DNS allows at most ${MAX_WIRE_NAME_OCTETS}` : null;
}

/** RFC 1035 §2.3.4: a name on the wire, length octets and the root label included. */
const MAX_WIRE_NAME_OCTETS = 255;

type ErrorAnswer = { kind: 'error'; reason: DnsErrorReason; detail?: string };

/**
 * What one attempt came to: a response that answers our question (decoded, or raw for DNSSEC), or
 * an error (final: do not retry).
 */
type AttemptOutcome = { message: WireMessage } | { raw: RawMessage } | { error: ErrorAnswer; final: boolean };

/**
 * How the reply to one query is read: its outcome, or undefined when the bytes do not answer it
 * (over UDP: someone else's datagram, ignored while the wait goes on, RFC 5452 §4.3). `id` is the
 * ID the query went out with (a TCP retry sends its own).
 */
type ReplyReader = (bytes: Buffer, id: number) => AttemptOutcome | undefined;

function malformed(detail: string): AttemptOutcome {
  return { error: { kind: 'error', reason: 'malformed', detail }, final: true };
}

/** The reader of a lookup's replies: decoded, matched by ID and question (RFC 5452 §4.3). */
function lookupReader(qname: string, type: RecordType): ReplyReader {
  return (bytes, id) => {
    let message: WireMessage;
    try {
      message = readMessage(bytes);
    } catch (error) {
      // A reply to this query that does not read is an error; stray bytes are not ours.
      return headerAnswers(bytes, id, qname, type) ? malformed((error as Error).message) : undefined;
    }
    return answersQuery(message, id, qname, type) ? { message } : undefined;
  };
}

/** The reader of a DNSSEC question's replies: raw octets (for the canonical form), matched by ID and question. */
function rawReader(name: string, type: number): ReplyReader {
  const qname = name.toLowerCase().replace(/\.$/, '');
  return (bytes, id) => {
    if (bytes.length < HEADER_OCTETS || bytes.readUInt16BE(0) !== id || (bytes.readUInt16BE(2) & 0x8000) === 0) return undefined;
    let message: RawMessage;
    try {
      message = readRawMessage(bytes);
    } catch (error) {
      return malformed(`a malformed response: ${(error as Error).message}`);
    }
    const question = message.question;
    if (!question || question.type !== type || question.name !== qname) return undefined;
    return { raw: message };
  };
}

/**
 * One DNSSEC question (DO and CD set) through the resolver's own sockets: the attempts go to the
 * servers in turn, each waits `timeoutMs`, a truncated answer is asked again over TCP (RFC 7766
 * §5); the whole message comes back raw. Never rejects: a failure is `{ kind: 'error' }`.
 */
class RawLookup {
  private start = 0;
  private attempt = 0;
  private last: string | undefined;
  private pool: ServerPool | undefined;
  private deadline = 0;
  private query: Buffer | undefined;
  private readonly reader: ReplyReader;
  private settled = false;

  constructor(
    private readonly client: Client,
    private readonly name: string,
    private readonly type: number,
    private readonly cd: boolean,
    private readonly done: (response: RawResponse) => void,
  ) {
    this.reader = rawReader(name, type);
  }

  begin(): void {
    this.start = this.client.firstServer();
    this.guard(() => this.beginAttempt());
  }

  private resolve(response: RawResponse): void {
    if (this.settled) return;
    this.settled = true;
    this.done(response);
  }

  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.resolve({ kind: 'error', detail: error instanceof Error ? error.message : String(error) });
    }
  }

  private beginAttempt(): void {
    const { client } = this;
    this.pool = client.pool((this.start + this.attempt) % client.addresses.length);
    this.deadline = Date.now() + client.timeoutMs;
    const socket = this.pool.take(this.deadline - client.timeoutMs);
    const id = socket.freeId();
    // RFC 4035 §4.9.2 (DO), RFC 6840 §5.9 (CD), RFC 6891 (the resolver's EDNS payload size).
    this.query = encodeRawQuery(id, this.name, this.type, { rd: true, do: true, cd: this.cd, udpPayload: EDNS_UDP_PAYLOAD });
    socket.exchange(this.query, id, this.reader, this.deadline, (outcome) => this.guard(() => this.udpOutcome(outcome)));
  }

  private udpOutcome(outcome: AttemptOutcome): void {
    if (!('raw' in outcome)) return this.failed(outcome);
    // RFC 7766 §5: a truncated answer is asked again over TCP.
    if ((outcome.raw.flags & FLAG.TC) === 0) return this.resolve({ kind: 'response', message: outcome.raw });
    (this.pool as ServerPool).tcp
      .take()
      .exchange(this.query as Buffer, this.reader, this.deadline)
      .then(
        (tcp) => this.guard(() => this.tcpOutcome(tcp)),
        (error: unknown) => this.resolve({ kind: 'error', detail: error instanceof Error ? error.message : String(error) }),
      );
  }

  private tcpOutcome(tcp: AttemptOutcome): void {
    if (!('raw' in tcp)) return this.failed(tcp);
    if ((tcp.raw.flags & FLAG.TC) !== 0) return this.failed(malformed('the answer was truncated even over TCP'));
    this.resolve({ kind: 'response', message: tcp.raw });
  }

  private failed(outcome: AttemptOutcome): void {
    const detail = 'error' in outcome ? (outcome.error.detail ?? outcome.error.reason) : 'a reply of the wrong kind';
    if ('error' in outcome && outcome.final) return this.resolve({ kind: 'error', detail });
    this.last = detail;
    this.attempt++;
    if (this.attempt < this.client.attempts) return this.beginAttempt();
    this.resolve({ kind: 'error', detail: this.last ?? `no answer in ${this.client.attempts} attempt(s) of ${this.client.timeoutMs} ms` });
  }
}

function timeoutAnswer(timeoutMs: number, attempts: number): ErrorAnswer {
  return { kind: 'error', reason: 'timeout', detail: `no answer in ${attempts} attempt(s) of ${timeoutMs} ms` };
}

function defaultServers(): string[] {
  const found = systemServers();
  return found.length > 0 ? found : [FALLBACK_SERVER];
}

/** 16-bit query IDs from the system's CSPRNG (RFC 5452 §4.3), drawn a batch at a time. */
const idPool = new Uint16Array(1024);
let idNext = idPool.length;
function randomId(): number {
  if (idNext >= idPool.length) {
    randomFillSync(idPool);
    idNext = 0;
  }
  return idPool[idNext++] as number;
}

/** True when `message` answers the query `id` for `qname`/`type` (RFC 5452 §4.3). */
function answersQuery(message: WireMessage, id: number, qname: string, type: RecordType): boolean {
  if (message.id !== id || (message.flags & FLAG.QR) === 0 || ((message.flags >> 11) & 0xf) !== 0) return false;
  const question = message.questions[0];
  // A server that cannot read a query may answer it without the question (RFC 1035 §4.1.1 FORMERR).
  if (message.questions.length === 0) return message.rcode !== RCODE.NOERROR && message.rcode !== RCODE.NXDOMAIN;
  return (
    message.questions.length === 1 &&
    question !== undefined &&
    question.name === qname &&
    question.type === TYPE_CODES[type] &&
    question.class === CLASS_IN
  );
}

/**
 * The ID and question of a message that does not read in full, to tell a malformed answer to our
 * query (an error) from stray bytes (ignored).
 */
function headerAnswers(bytes: Buffer, id: number, qname: string, type: RecordType): boolean {
  if (bytes.length < HEADER_OCTETS || bytes.readUInt16BE(0) !== id) return false;
  try {
    const head = Buffer.from(bytes.subarray(0, HEADER_OCTETS));
    head.writeUInt16BE(0, 6);
    head.writeUInt16BE(0, 8);
    head.writeUInt16BE(0, 10);
    const questionEnd = findQuestionEnd(bytes);
    if (questionEnd === undefined) return false;
    return answersQuery(readMessage(Buffer.concat([head, bytes.subarray(HEADER_OCTETS, questionEnd)])), id, qname, type);
  } catch {
    return false;
  }
}

/** The offset after the (first) question, or undefined when it does not fit. */
function findQuestionEnd(bytes: Buffer): number | undefined {
  if (bytes.readUInt16BE(4) !== 1) return undefined;
  let offset = HEADER_OCTETS;
  // RFC 1035 §4.1.2: the question name is labels ending in 0; a query's name is never compressed.
  while (offset < bytes.length) {
    const length = bytes[offset] as number;
    if (length === 0) return offset + 5 <= bytes.length ? offset + 5 : undefined;
    if (length > 63) return undefined;
    offset += length + 1;
  }
  return undefined;
}

/**
 * Calls `onExpiry` at `deadline`, but only after the event loop has read the sockets once more: when
 * the process was busy past the deadline, timers run before I/O, and an answer that had arrived in
 * time would otherwise lose to its own timeout.
 */
function expireAt(deadline: number, onExpiry: () => void): NodeJS.Timeout {
  return setTimeout(() => setImmediate(onExpiry), Math.max(0, deadline - Date.now()));
}

/**
 * Queries one UDP socket sends before it is retired for a fresh one on a new random port: a port
 * that became known exposes no more queries than this (see `UDP_SOCKETS_PER_SERVER`).
 */
export const UDP_SOCKET_MAX_QUERIES = 256;
/**
 * How long one UDP socket takes new queries before it is retired for a fresh one, however few it
 * carried: a known port is of no use for longer than this (see `UDP_SOCKETS_PER_SERVER`).
 */
export const UDP_SOCKET_MAX_AGE_MS = 10_000;

/**
 * The sockets of one server: up to `UDP_SOCKETS_PER_SERVER` UDP sockets, made when needed and taken
 * in turn, so that consecutive queries go out from different random source ports; and its TCP
 * connections, for answers that were truncated.
 */
class ServerPool {
  private readonly sockets: PooledSocket[] = [];
  /** Sockets retired while queries were still in flight on them (closed with the pool, too). */
  private readonly retiring = new Set<PooledSocket>();
  private next = 0;
  readonly tcp: TcpPool;

  constructor(readonly server: ServerAddress) {
    this.tcp = new TcpPool(server);
  }

  /**
   * The socket for the next query: a new one while the pool is not full, else the next in turn; one
   * that has carried `UDP_SOCKET_MAX_QUERIES` queries or is `UDP_SOCKET_MAX_AGE_MS` old is retired
   * (it closes once its queries in flight have their outcome) and a fresh one, on a new random
   * port, takes its place (RFC 5452 §9.2; the argument is at `UDP_SOCKETS_PER_SERVER`).
   */
  take(now: number): PooledSocket {
    if (this.sockets.length < UDP_SOCKETS_PER_SERVER) {
      const socket = new PooledSocket(this.server, (gone) => this.drop(gone), now);
      this.sockets.push(socket);
      return socket;
    }
    this.next = (this.next + 1) % this.sockets.length;
    const socket = this.sockets[this.next] as PooledSocket;
    if (socket.sent < UDP_SOCKET_MAX_QUERIES && now - socket.bornAt < UDP_SOCKET_MAX_AGE_MS) return socket;
    const fresh = new PooledSocket(this.server, (gone) => this.drop(gone), now);
    this.sockets[this.next] = fresh;
    this.retiring.add(socket);
    socket.retire();
    return fresh;
  }

  close(): void {
    for (const socket of [...this.sockets, ...this.retiring]) socket.close('the resolver was closed');
    this.sockets.length = 0;
    this.retiring.clear();
    this.tcp.close();
  }

  private drop(gone: PooledSocket): void {
    if (this.retiring.delete(gone)) return;
    const index = this.sockets.indexOf(gone);
    if (index !== -1) this.sockets.splice(index, 1);
  }
}

/** A query waiting on a pooled socket for its reply. */
interface Waiter {
  read: ReplyReader;
  finish(outcome: AttemptOutcome): void;
}

/** A query in flight on a UDP socket: its waiter, and the time it gives up. */
class UdpQuery implements Waiter {
  done = false;

  constructor(
    readonly id: number,
    readonly read: ReplyReader,
    readonly deadline: number,
    private readonly socket: PooledSocket,
    private onOutcome: (outcome: AttemptOutcome) => void,
  ) {}

  finish(outcome: AttemptOutcome): void {
    if (this.done) return;
    this.done = true;
    const onOutcome = this.onOutcome;
    // A settled query may wait in the deadline queue behind a slower one: it keeps nothing alive.
    this.onOutcome = settledAlready;
    this.socket.settled(this);
    onOutcome(outcome);
  }
}

function settledAlready(): void {}

/** How many settled queries may sit at the front of a socket's deadline queue before it is compacted. */
const DEADLINE_QUEUE_SLACK = 1024;

/**
 * One UDP socket connected to the server (so the kernel passes on datagrams from the server's
 * address and port only), carrying any number of queries at once, told apart by ID and question.
 * One timer per socket, not one per query: the queries wait in a queue in deadline order (they
 * share the resolver's timeout, so that is nearly send order), and the timer is set for the first
 * deadline, or, with nothing in flight, for the idle close.
 */
class PooledSocket {
  private readonly socket: dgram.Socket;
  private readonly waiting = new Map<number, UdpQuery>();
  /** Queries sent before the socket was connected. */
  private queue: Buffer[] | undefined = [];
  /** The queries in flight, in deadline order; `first` is the index of the first not yet dropped. */
  private readonly deadlines: (UdpQuery | undefined)[] = [];
  private first = 0;
  /** The one timer: for the first deadline while queries are in flight, else for the idle close. */
  private timer: NodeJS.Timeout | undefined;
  /** When `timer` fires. */
  private timerAt = Infinity;
  /** When the last query in flight was settled. */
  private idleSince: number;
  private closed = false;
  /** Taken out of the pool: no new queries; it closes once its last query in flight has its outcome. */
  private retired = false;
  /** Queries sent on it so far. */
  sent = 0;

  constructor(
    private readonly server: ServerAddress,
    private readonly onClose: (socket: PooledSocket) => void,
    /** When it was made (the pool retires it at `UDP_SOCKET_MAX_AGE_MS`). */
    readonly bornAt: number,
  ) {
    this.idleSince = bornAt;
    this.socket = dgram.createSocket(isIPv6(server.host) ? 'udp6' : 'udp4');
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      // A connected UDP socket hears ICMP port unreachable as ECONNREFUSED: nothing listens there.
      // That is a server that cannot answer (servfail), not the DNS's REFUSED (rcode 5), which
      // means a server that answered and declined: the two call for different fixes. The error
      // ends the queries in flight on this socket only, and the socket.
      this.close(socketFailure(server, error));
    });
    this.socket.on('message', (bytes) => this.receive(bytes));
    // With a callback, a failed connect (no route: ENETUNREACH; a broadcast address: EACCES; a
    // link-local address without a scope: EINVAL) comes to the callback, not to 'error': it ends the
    // queries waiting on this socket, never a send on a socket that has no peer (which throws).
    this.socket.connect(server.port, server.host, (error?: Error) => {
      const queue = this.queue;
      this.queue = undefined;
      if (this.closed) return;
      if (error) return this.close(socketFailure(server, error));
      for (const query of queue ?? []) this.send(query);
    });
  }

  /** Sends one query; a socket that cannot send ends its queries (an error, never a throw). */
  private send(query: Buffer): void {
    try {
      this.socket.send(query, this.onSent);
    } catch (error) {
      this.close(socketFailure(this.server, error));
    }
  }

  /** After each send: one callback for the socket's life, not a closure per query. */
  private readonly onSent = (error: Error | null): void => {
    if (error) this.close(socketFailure(this.server, error));
  };

  /** A random ID that no query in flight on this socket has (RFC 5452 §4.3, §9.1). */
  freeId(): number {
    for (;;) {
      const id = randomId();
      if (!this.waiting.has(id)) return id;
    }
  }

  /** Sends `query` and calls `onOutcome` with the matching reply, or the error, by `deadline`. */
  exchange(query: Buffer, id: number, read: ReplyReader, deadline: number, onOutcome: (outcome: AttemptOutcome) => void): void {
    if (this.closed) {
      onOutcome({ error: { kind: 'error', reason: 'servfail', detail: `${formatServer(this.server)}: the socket was closed` }, final: false });
      return;
    }
    this.sent++;
    const pending = new UdpQuery(id, read, deadline, this, onOutcome);
    // A query in flight keeps the process alive (the socket and its timer); an idle one does not.
    if (this.waiting.size === 0) {
      this.socket.ref();
      this.timer?.ref();
    }
    this.waiting.set(id, pending);
    this.enqueue(pending);
    if (this.queue) this.queue.push(query);
    else this.send(query);
  }

  /** Ends the queries in flight as `servfail` with `detail`, and closes the socket for good. */
  close(detail: string): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.onClose(this);
    try {
      this.socket.close();
    } catch {
      // already closed
    }
    const waiters = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of waiters) waiter.finish({ error: { kind: 'error', reason: 'servfail', detail }, final: false });
  }

  /** Out of the pool: closed now if nothing is in flight on it, else when its last query has its outcome. */
  retire(): void {
    this.retired = true;
    if (this.waiting.size === 0) this.close(`${formatServer(this.server)}: the socket was retired`);
  }

  /** `query` has its outcome: it no longer holds its ID, and it leaves the deadline queue once at its front. */
  settled(query: UdpQuery): void {
    if (this.waiting.get(query.id) === query) this.waiting.delete(query.id);
    this.dropSettled();
    if (this.waiting.size === 0 && this.retired) {
      this.close(`${formatServer(this.server)}: the socket was retired`);
    } else if (this.waiting.size === 0 && !this.closed) {
      this.idleSince = Date.now();
      this.socket.unref();
      this.timer?.unref();
    }
  }

  private receive(bytes: Buffer): void {
    if (bytes.length < 2) return;
    const id = bytes.readUInt16BE(0);
    const waiter = this.waiting.get(id);
    if (!waiter) return; // no query in flight with this ID: ignore it (RFC 5452 §4.3)
    const outcome = waiter.read(bytes, id);
    if (outcome) waiter.finish(outcome); // else not an answer to this query: keep waiting (RFC 5452 §4.3)
  }

  /** Puts `query` in deadline order (from the back: it is nearly always the latest) and sees to the timer. */
  private enqueue(query: UdpQuery): void {
    const { deadlines } = this;
    let at = deadlines.length;
    while (at > this.first && (deadlines[at - 1] as UdpQuery).deadline > query.deadline) at--;
    if (at === deadlines.length) deadlines.push(query);
    else deadlines.splice(at, 0, query);
    if (query.deadline < this.timerAt) this.arm(query.deadline);
  }

  /** Drops the settled queries at the front of the deadline queue, and compacts it now and then. */
  private dropSettled(): void {
    const { deadlines } = this;
    while (this.first < deadlines.length && (deadlines[this.first] as UdpQuery).done) deadlines[this.first++] = undefined;
    if (this.first === deadlines.length) {
      deadlines.length = 0;
      this.first = 0;
    } else if (this.first > DEADLINE_QUEUE_SLACK && this.first * 2 > deadlines.length) {
      deadlines.splice(0, this.first);
      this.first = 0;
    }
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    // When the process was busy past the deadline, timers run before I/O, and an answer that had
    // arrived in time would otherwise lose to its own timeout: the socket is read once more first.
    this.timer = setTimeout(() => setImmediate(() => this.onTimer()), Math.max(0, at - Date.now()));
    if (this.waiting.size === 0) this.timer.unref();
  }

  /** Times out the queries past their deadline; closes the socket when it has been idle long enough. */
  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = Date.now();
    const { deadlines } = this;
    while (this.first < deadlines.length) {
      const query = deadlines[this.first] as UdpQuery;
      if (!query.done && query.deadline > now) break;
      // finish() drops it, and any settled queries behind it, from the front of the queue.
      if (!query.done) query.finish({ error: { kind: 'error', reason: 'timeout', detail: `no answer from ${formatServer(this.server)}` }, final: false });
      else this.dropSettled();
    }
    const next = deadlines[this.first];
    if (next) this.arm(next.deadline);
    else if (now - this.idleSince >= UDP_SOCKET_IDLE_MS) this.close(`${formatServer(this.server)}: the socket was closed when idle`);
    else this.arm(this.idleSince + UDP_SOCKET_IDLE_MS);
  }
}

/**
 * What a socket error says, for the lookups it ends. ECONNREFUSED on a connected UDP socket is
 * ICMP port unreachable: nothing listens there. ENETUNREACH / EHOSTUNREACH: no route to the server
 * (an offline machine, an IPv6 server on a host without IPv6).
 */
function socketFailure(server: ServerAddress, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = formatServer(server);
  if (code === 'ECONNREFUSED') return `the DNS server ${where} ${SERVER_UNREACHABLE}: no DNS server listens there (connection refused)`;
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH') return `the DNS server ${where} ${SERVER_UNREACHABLE}: no route to it (${code})`;
  return `the DNS server ${where} ${SERVER_UNREACHABLE} (${code ?? (error instanceof Error ? error.message : String(error))})`;
}

/**
 * The TCP connections of one server (RFC 7766 §6.2.1: a client should reuse a connection for
 * several queries and may pipeline them): up to `TCP_CONNECTIONS_PER_SERVER`, made when needed,
 * kept open `TCP_CONNECTION_IDLE_MS` after their last answer, and never keeping the process alive
 * while idle.
 */
class TcpPool {
  private readonly connections: TcpConnection[] = [];

  constructor(readonly server: ServerAddress) {}

  /** An idle open connection, else a new one while there is room, else the least busy. */
  take(): TcpConnection {
    let best: TcpConnection | undefined;
    for (const connection of this.connections) {
      if (!best || connection.inFlight() < best.inFlight()) best = connection;
    }
    if (best && (best.inFlight() === 0 || this.connections.length >= TCP_CONNECTIONS_PER_SERVER)) return best;
    const connection = new TcpConnection(this.server, (gone) => this.drop(gone));
    this.connections.push(connection);
    return connection;
  }

  close(): void {
    for (const connection of [...this.connections]) connection.close('servfail', 'the resolver was closed');
    this.connections.length = 0;
  }

  private drop(gone: TcpConnection): void {
    const index = this.connections.indexOf(gone);
    if (index !== -1) this.connections.splice(index, 1);
  }
}

/**
 * One TCP connection to the server carrying any number of queries at once (RFC 7766 §6.2.1.1
 * pipelining), each answer matched to its query by ID and question (RFC 7766 §7). When it closes
 * or fails, only the queries in flight on it fail; each then goes through its own attempts.
 */
class TcpConnection {
  private readonly socket: net.Socket;
  private readonly waiting = new Map<number, Waiter>();
  /** IDs of queries given up on (timed out): a late answer to one is ignored, and the ID not reused. */
  private readonly abandoned = new Set<number>();
  private received: Buffer | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly where: string;

  constructor(
    server: ServerAddress,
    private readonly onClose: (connection: TcpConnection) => void,
  ) {
    this.where = `${formatServer(server)} over TCP`;
    this.socket = net.connect({ host: server.host, port: server.port });
    this.socket.setNoDelay(true);
    this.socket.on('error', (error: NodeJS.ErrnoException) =>
      this.close(error.code === 'ECONNREFUSED' ? 'refused' : 'servfail', `the retry of a truncated answer failed (${error.code ?? error.message})`),
    );
    // RFC 7766 §6.2.3: the server may close a connection at any time (idle, or to shed load).
    this.socket.on('close', () => this.close('servfail', 'the connection closed before the answer to a truncated query'));
    this.socket.on('end', () => this.close('servfail', 'the server closed the connection before the answer to a truncated query'));
    this.socket.on('data', (chunk) => this.receive(chunk));
  }

  inFlight(): number {
    return this.waiting.size;
  }

  /**
   * Sends `query` (its ID replaced by one not in flight on this connection) and waits for the
   * matching answer until `deadline`.
   */
  exchange(query: Buffer, read: ReplyReader, deadline: number): Promise<AttemptOutcome> {
    return new Promise((resolve) => {
      if (this.closed) {
        resolve({ error: { kind: 'error', reason: 'servfail', detail: `${this.where}: the connection was closed` }, final: false });
        return;
      }
      let id: number;
      do id = randomId();
      while (this.waiting.has(id) || this.abandoned.has(id));
      // RFC 1035 §4.2.2: each message is prefixed with its length in two octets.
      const framed = Buffer.allocUnsafe(2 + query.length);
      framed.writeUInt16BE(query.length, 0);
      query.copy(framed, 2);
      framed.writeUInt16BE(id, 2);
      let done = false;
      const finish = (outcome: AttemptOutcome): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (this.waiting.get(id) === waiter) this.waiting.delete(id);
        if (this.waiting.size === 0) this.idle();
        resolve(outcome);
      };
      const waiter: Waiter = { read, finish };
      const timer = expireAt(deadline, () => {
        this.abandoned.add(id);
        finish({ error: { kind: 'error', reason: 'timeout', detail: `${this.where}: no answer to the retry of a truncated answer` }, final: false });
      });
      this.busy();
      this.waiting.set(id, waiter);
      this.socket.write(framed);
    });
  }

  /** Ends the queries in flight with `reason` and `detail`, and closes the connection for good. */
  close(reason: DnsErrorReason, detail: string, final = false): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.onClose(this);
    this.socket.destroy();
    const waiters = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of waiters) waiter.finish({ error: { kind: 'error', reason, detail: `${this.where}: ${detail}` }, final });
  }

  private receive(chunk: Buffer): void {
    let received = this.received === undefined ? chunk : Buffer.concat([this.received, chunk]);
    while (received.length >= 2 && !this.closed) {
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) break;
      this.answer(received.subarray(2, 2 + length));
      received = received.subarray(2 + length);
    }
    this.received = received.length > 0 ? received : undefined;
  }

  /** One whole message from the server. */
  private answer(bytes: Buffer): void {
    const id = bytes.length >= 2 ? bytes.readUInt16BE(0) : -1;
    const waiter = this.waiting.get(id);
    if (!waiter) {
      if (this.abandoned.delete(id)) return; // a late answer to a query given up on
      // Over TCP nobody else can slip a reply in: an answer to no query asked is the server's fault,
      // and nothing more on this connection can be trusted.
      this.close('malformed', 'a reply that matches no query in flight (ID)', true);
      return;
    }
    // RFC 7766 §7: the answer must match the query's ID and question; over TCP nothing else is expected.
    const outcome = waiter.read(bytes, id);
    if (!outcome) waiter.finish(malformed(`${this.where}: the reply does not match the query (ID or question)`));
    else if ('error' in outcome) waiter.finish({ ...outcome, error: { ...outcome.error, detail: `${this.where}: ${outcome.error.detail ?? outcome.error.reason}` } });
    else waiter.finish(outcome);
  }

  /** A query is in flight: the connection keeps the process alive, as the query's timer does. */
  private busy(): void {
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    if (this.waiting.size === 0) this.socket.ref();
  }

  /** Nothing in flight: the connection lets the process exit, and closes after a while unused. */
  private idle(): void {
    if (this.closed) return;
    this.socket.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close('servfail', 'the connection was closed when idle'), TCP_CONNECTION_IDLE_MS);
    this.idleTimer.unref();
  }
}

/** RFC 1035 §4.1.1 RCODEs that are failures, as answers; undefined for NOERROR and NXDOMAIN. */
function rcodeFailure(rcode: number): ErrorAnswer | undefined {
  switch (rcode) {
    case RCODE.NOERROR:
    case RCODE.NXDOMAIN:
      return undefined;
    case RCODE.SERVFAIL:
      return { kind: 'error', reason: 'servfail', detail: 'the server answered SERVFAIL' };
    case RCODE.REFUSED:
      return { kind: 'error', reason: 'refused', detail: 'the server answered REFUSED' };
    case RCODE.NOTIMP:
      return { kind: 'error', reason: 'refused', detail: 'the server answered NOTIMP' };
    case RCODE.FORMERR:
      return { kind: 'error', reason: 'servfail', detail: 'the server could not read the query (FORMERR)' };
    default:
      return { kind: 'error', reason: 'servfail', detail: `the server answered RCODE ${rcode}` };
  }
}

type Interpreted<T extends RecordType> = DnsAnswer<T> | { kind: 'restart'; owner: string; ttl: number };

/**
 * A matched response as an answer. RFC 1034 §4.3.2 step 3a / §5.3.3: the answer section is read
 * from the name asked along its CNAMEs; only records owned by a name on that chain count (RFC 2181
 * §5.4.1). `cnames` and `ttlSoFar` carry what earlier queries of the same lookup found.
 */
function interpret<T extends RecordType>(
  message: WireMessage,
  qname: string,
  type: T,
  original: string,
  cnames: string[],
  ttlSoFar: number,
): Interpreted<T> {
  const failure = rcodeFailure(message.rcode);
  if (failure) return failure;
  const code = TYPE_CODES[type];
  let owner = qname;
  let ttl = ttlSoFar;
  for (;;) {
    const records: RecordData<T>[] = [];
    let rrsetTtl = Infinity;
    let alias: { target: string; ttl: number } | undefined;
    for (const record of message.answers) {
      if (record.name !== owner || record.class !== CLASS_IN || record.data === undefined) continue;
      if (record.type === code) {
        records.push(record.data as RecordData<T>);
        rrsetTtl = Math.min(rrsetTtl, record.ttl); // RFC 2181 §5.2: one RRset, the smallest TTL
      } else if (record.type === TYPE_CODES.CNAME && type !== 'CNAME' && !alias) {
        alias = { target: record.data as string, ttl: record.ttl };
      }
    }
    if (records.length > 0) {
      return withChain({ kind: 'records', records, ttl: Math.min(ttl, rrsetTtl) }, cnames);
    }
    if (!alias) break;
    // RFC 1034 §3.6.2: follow the alias; one that revisits a name or runs too long is a loop.
    if (alias.target === original || cnames.includes(alias.target) || cnames.length >= MAX_CNAME_CHAIN) {
      return { kind: 'error', reason: 'servfail', detail: `CNAME loop or chain longer than ${MAX_CNAME_CHAIN} at ${owner}` };
    }
    cnames.push(alias.target);
    ttl = Math.min(ttl, alias.ttl);
    owner = alias.target;
  }
  const soa = message.authorities.find((record) => record.type === TYPE_CODES.SOA && record.class === CLASS_IN && record.data !== undefined);
  if (message.rcode === RCODE.NOERROR && owner !== qname && !soa) {
    // The server followed the chain out of what it knows and stopped: ask for the rest.
    return { kind: 'restart', owner, ttl };
  }
  // RFC 2308 §5: a negative answer lives min(SOA TTL, SOA MINIMUM); without an SOA it is not cached.
  const negativeTtl = soa ? Math.min(soa.ttl, (soa.data as SoaData).minimum) : 0;
  const kind = message.rcode === RCODE.NXDOMAIN ? 'nxdomain' : 'nodata';
  return withChain({ kind, ttl: Math.min(ttl, negativeTtl) }, cnames);
}

function withChain<A extends DnsAnswer>(answer: A, cnames: string[]): A {
  if (cnames.length > 0) (answer as { cnames?: string[] }).cnames = [...cnames];
  return answer;
}
