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
 * `UDP_SOCKETS_PER_SERVER` random ports and a 16-bit ID not in flight on that socket). A socket
 * multiplexes the queries in flight on it; a reply counts only when it comes from the server asked
 * (the socket is connected) and matches the ID and the question (name case-insensitively, type,
 * class); anything else is ignored and the wait goes on (RFC 5452 §4.3, §9.1). Sockets are made
 * when needed, closed after `UDP_SOCKET_IDLE_MS` without a query, and never keep the process alive
 * while idle. Queries carry EDNS0 with a 1232-octet buffer (RFC 6891; DNS Flag Day 2020).
 */
import { randomFillSync } from 'node:crypto';
import dgram from 'node:dgram';
import { getServers as systemServers } from 'node:dns';
import net from 'node:net';
import { canonicalName, dnsNameProblem, MAX_LABEL_OCTETS } from './name.js';
import type { DnsAnswer, DnsErrorReason, RecordData, RecordType, Resolver, SoaData } from './types.js';
import {
  CLASS_IN,
  encodeQuery,
  FLAG,
  HEADER_OCTETS,
  MalformedMessage,
  RCODE,
  readMessage,
  TYPE_CODES,
  type WireMessage,
} from './wire.js';
import { MAX_CNAME_CHAIN } from './zone-resolver.js';

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
/** The most UDP sockets (each on its own random source port) kept per server. */
export const UDP_SOCKETS_PER_SERVER = 16;
/** How long a UDP socket with no query in flight is kept before it is closed. */
export const UDP_SOCKET_IDLE_MS = 1000;

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
export class NetworkResolver implements Resolver {
  private readonly addresses: ServerAddress[];
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly edns: boolean;
  /** Which server the next query starts with: queries are spread over the servers. */
  private nextServer = 0;
  /** The UDP sockets of each server, by `formatServer`. */
  private readonly pools = new Map<string, UdpPool>();

  /** Throws a `TypeError` when a server address cannot be read or a number is out of range (a configuration error). */
  constructor(options: NetworkResolverOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.attempts = options.attempts ?? DEFAULT_QUERY_ATTEMPTS;
    this.edns = options.edns ?? true;
    if (!(this.timeoutMs > 0) || !Number.isInteger(this.attempts) || this.attempts < 1) {
      throw new TypeError(`NetworkResolver needs timeoutMs > 0 and attempts ≥ 1 (got ${this.timeoutMs}, ${this.attempts})`);
    }
    const given = options.servers && options.servers.length > 0 ? options.servers : defaultServers();
    this.addresses = given.map((text) => {
      const parsed = parseServerAddress(text);
      if ('error' in parsed) throw new TypeError(`DNS server ${parsed.error}`);
      return parsed;
    });
  }

  /** The servers queries go to, as `ip:port` or `[ipv6]:port`. */
  servers(): string[] {
    return this.addresses.map(formatServer);
  }

  /**
   * Closes the UDP sockets kept for later queries. Not needed for the process to exit (idle sockets
   * do not keep it alive); queries still in flight end as `servfail`. The resolver stays usable.
   */
  close(): void {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
  }

  private pool(server: ServerAddress): UdpPool {
    const key = formatServer(server);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new UdpPool(server);
      this.pools.set(key, pool);
    }
    return pool;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const problem = dnsNameProblem(name) ?? octetProblem(canonicalName(name));
    if (problem) return { kind: 'error', reason: 'invalid-name', detail: problem };
    const first = canonicalName(name);
    const cnames: string[] = [];
    let ttl = Infinity;
    let qname = first;
    // RFC 1034 §5.3.3: a chain the server left unfinished is asked again from where it stopped.
    for (;;) {
      const outcome = await this.query(qname, type);
      if (!('message' in outcome)) return outcome as DnsAnswer<T>;
      const read = interpret<T>(outcome.message, qname, type, first, cnames, ttl);
      if (read.kind !== 'restart') return read;
      qname = read.owner;
      ttl = read.ttl;
    }
  }

  /** One question through every attempt; a matched response, or the error that ended the attempts. */
  private async query(qname: string, type: RecordType): Promise<{ message: WireMessage } | ErrorAnswer> {
    const start = this.nextServer;
    this.nextServer = (this.nextServer + 1) % this.addresses.length;
    let last: ErrorAnswer = timeoutAnswer(this.timeoutMs, this.attempts);
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      const server = this.addresses[(start + attempt) % this.addresses.length] as ServerAddress;
      const outcome = await attemptQuery(this.pool(server), qname, type, this.timeoutMs, this.edns);
      if ('message' in outcome) {
        const failure = rcodeFailure(outcome.message.rcode);
        // Another server may do better than one that failed; the last attempt's failure stands.
        if (failure && this.addresses.length > 1 && attempt + 1 < this.attempts) {
          last = failure;
          continue;
        }
        return outcome;
      }
      if (outcome.final) return outcome.error;
      if (outcome.error.reason !== 'timeout' || last.reason === 'timeout') last = outcome.error;
    }
    if (last.reason === 'timeout') return timeoutAnswer(this.timeoutMs, this.attempts);
    return last;
  }
}

/**
 * `dnsNameProblem` counts characters; on the wire a label is at most 63 octets and a name 255
 * (RFC 1035 §2.3.4), which text that is not ASCII (an IDN not converted to A-labels) can exceed.
 */
function octetProblem(canonical: string): string | null {
  if (!/[^\u0000-\u007f]/.test(canonical)) return null;
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

/** What one attempt came to: a response that answers our question, or an error (final: do not retry). */
type AttemptOutcome = { message: WireMessage } | { error: ErrorAnswer; final: boolean };

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

/**
 * One attempt: the query over UDP; when the answer is truncated, again over TCP; all within
 * `timeoutMs`. Without EDNS support at the server (FORMERR or NOTIMP and no OPT back), once more
 * without the OPT record (RFC 6891 §7).
 */
async function attemptQuery(pool: UdpPool, qname: string, type: RecordType, timeoutMs: number, edns: boolean): Promise<AttemptOutcome> {
  const { server } = pool;
  const deadline = Date.now() + timeoutMs;
  let useEdns = edns;
  for (;;) {
    const socket = pool.take();
    const id = socket.freeId();
    const query = encodeQuery(qname, type, { id, rd: true, ednsUdpPayload: useEdns ? EDNS_UDP_PAYLOAD : undefined });
    const udp = await socket.exchange(query, id, qname, type, deadline);
    if (!('message' in udp)) return udp;
    const { message } = udp;
    if (useEdns && !message.opt && (message.rcode === RCODE.FORMERR || message.rcode === RCODE.NOTIMP)) {
      useEdns = false;
      continue;
    }
    // RFC 7766 §5 and RFC 2181 §9: a truncated answer is not used; ask again over TCP.
    if ((message.flags & FLAG.TC) === 0) return udp;
    const tcp = await tcpExchange(server, query, id, qname, type, deadline);
    if ('message' in tcp && (tcp.message.flags & FLAG.TC) !== 0) {
      // A TCP message can hold 65535 octets (RFC 1035 §4.2.2): TC here is a broken server.
      return { error: { kind: 'error', reason: 'malformed', detail: 'the answer was truncated even over TCP' }, final: true };
    }
    return tcp;
  }
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
 * The UDP sockets of one server: up to `UDP_SOCKETS_PER_SERVER`, made when needed and taken in
 * turn, so that consecutive queries go out from different random source ports.
 */
class UdpPool {
  private readonly sockets: PooledSocket[] = [];
  private next = 0;

  constructor(readonly server: ServerAddress) {}

  /** The socket for the next query: a new one while the pool is not full, else the next in turn. */
  take(): PooledSocket {
    if (this.sockets.length < UDP_SOCKETS_PER_SERVER) {
      const socket = new PooledSocket(this.server, (gone) => this.drop(gone));
      this.sockets.push(socket);
      return socket;
    }
    this.next = (this.next + 1) % this.sockets.length;
    return this.sockets[this.next] as PooledSocket;
  }

  close(): void {
    for (const socket of [...this.sockets]) socket.close('the resolver was closed');
    this.sockets.length = 0;
  }

  private drop(gone: PooledSocket): void {
    const index = this.sockets.indexOf(gone);
    if (index !== -1) this.sockets.splice(index, 1);
  }
}

/** A query waiting on a pooled socket for its reply. */
interface Waiter {
  qname: string;
  type: RecordType;
  finish(outcome: AttemptOutcome): void;
}

/**
 * One UDP socket connected to the server (so the kernel passes on datagrams from the server's
 * address and port only), carrying any number of queries at once, told apart by ID and question.
 */
class PooledSocket {
  private readonly socket: dgram.Socket;
  private readonly waiting = new Map<number, Waiter>();
  /** Queries sent before the socket was connected. */
  private queue: Buffer[] | undefined = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly server: ServerAddress,
    private readonly onClose: (socket: PooledSocket) => void,
  ) {
    this.socket = dgram.createSocket(isIPv6(server.host) ? 'udp6' : 'udp4');
    this.socket.on('error', (error: NodeJS.ErrnoException) => {
      // A connected UDP socket hears ICMP port unreachable as ECONNREFUSED: nothing listens there.
      // That is a server that cannot answer (servfail), not the DNS's REFUSED (rcode 5), which
      // means a server that answered and declined: the two call for different fixes. The error
      // ends the queries in flight on this socket only, and the socket.
      const detail = error.code === 'ECONNREFUSED' ? `no DNS server listens at ${formatServer(server)} (connection refused)` : `${formatServer(server)}: ${error.code ?? error.message}`;
      this.close(detail);
    });
    this.socket.on('message', (bytes) => this.receive(bytes));
    this.socket.connect(server.port, server.host, () => {
      const queue = this.queue;
      this.queue = undefined;
      if (this.closed || !queue) return;
      for (const query of queue) this.socket.send(query);
    });
  }

  /** A random ID that no query in flight on this socket has (RFC 5452 §4.3, §9.1). */
  freeId(): number {
    for (;;) {
      const id = randomId();
      if (!this.waiting.has(id)) return id;
    }
  }

  /** Sends `query` and waits for the matching reply until `deadline`. */
  exchange(query: Buffer, id: number, qname: string, type: RecordType, deadline: number): Promise<AttemptOutcome> {
    return new Promise((resolve) => {
      if (this.closed) {
        resolve({ error: { kind: 'error', reason: 'servfail', detail: `${formatServer(this.server)}: the socket was closed` }, final: false });
        return;
      }
      let done = false;
      const finish = (outcome: AttemptOutcome): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (this.waiting.get(id) === waiter) this.waiting.delete(id);
        if (this.waiting.size === 0) this.idle();
        resolve(outcome);
      };
      const waiter: Waiter = { qname, type, finish };
      const timer = expireAt(deadline, () =>
        finish({ error: { kind: 'error', reason: 'timeout', detail: `no answer from ${formatServer(this.server)}` }, final: false }),
      );
      this.busy();
      this.waiting.set(id, waiter);
      if (this.queue) this.queue.push(query);
      else this.socket.send(query);
    });
  }

  /** Ends the queries in flight as `servfail` with `detail`, and closes the socket for good. */
  close(detail: string): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
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

  private receive(bytes: Buffer): void {
    if (bytes.length < 2) return;
    const waiter = this.waiting.get(bytes.readUInt16BE(0));
    if (!waiter) return; // no query in flight with this ID: ignore it (RFC 5452 §4.3)
    const id = bytes.readUInt16BE(0);
    let message: WireMessage;
    try {
      message = readMessage(bytes);
    } catch (error) {
      if (headerAnswers(bytes, id, waiter.qname, waiter.type)) {
        waiter.finish({ error: { kind: 'error', reason: 'malformed', detail: (error as Error).message }, final: true });
      }
      return; // not an answer to this query: keep waiting (RFC 5452 §4.3)
    }
    if (answersQuery(message, id, waiter.qname, waiter.type)) waiter.finish({ message });
  }

  /** A query is in flight: the socket keeps the process alive, as the query's timer does. */
  private busy(): void {
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    if (this.waiting.size === 0) this.socket.ref();
  }

  /** Nothing in flight: the socket lets the process exit, and closes after a while unused. */
  private idle(): void {
    if (this.closed) return;
    this.socket.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(`${formatServer(this.server)}: the socket was closed when idle`), UDP_SOCKET_IDLE_MS);
    this.idleTimer.unref();
  }
}

/** Sends `query` over TCP (RFC 1035 §4.2.2 length prefix, RFC 7766) and reads one reply until `deadline`. */
function tcpExchange(server: ServerAddress, query: Buffer, id: number, qname: string, type: RecordType, deadline: number): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    let done = false;
    const where = `${formatServer(server)} over TCP`;
    const finish = (outcome: AttemptOutcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const fail = (reason: DnsErrorReason, detail: string, final = false): void =>
      finish({ error: { kind: 'error', reason, detail: `${where}: ${detail}` }, final });
    const timer = expireAt(deadline, () => fail('timeout', 'no answer to the retry of a truncated answer'));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      fail(error.code === 'ECONNREFUSED' ? 'refused' : 'servfail', `the retry of a truncated answer failed (${error.code ?? error.message})`),
    );
    socket.on('close', () => fail('servfail', 'the connection closed before the answer to a truncated query'));
    socket.on('data', (chunk) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      if (received.length < 2) return;
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return;
      const bytes = received.subarray(2, 2 + length);
      try {
        const message = readMessage(bytes);
        // Over TCP nobody else can slip a reply in: a reply that does not match is the server's fault.
        if (answersQuery(message, id, qname, type)) finish({ message });
        else fail('malformed', 'the reply does not match the query (ID or question)', true);
      } catch (error) {
        fail('malformed', (error as Error).message, true);
      }
    });
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(query.length);
    socket.write(Buffer.concat([prefix, query]));
  });
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
