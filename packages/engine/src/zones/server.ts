/**
 * An embedded authoritative DNS server over UDP and TCP on one port, serving the zones of a
 * `ZoneResolver`. It serves the end-to-end tests, the benchmarks, the demo and
 * `spoof-checker dns-serve`, and it can be told to misbehave (`FaultPlan`) so that the network
 * resolver's handling of every failure is tested against real sockets.
 *
 * What it answers, as an authoritative server does:
 * - AA set for every name in a loaded zone; names outside every zone are REFUSED (it is not a
 *   recursive resolver, so RA is clear), or, with `outsideZones: 'nxdomain'`, NXDOMAIN from a
 *   synthesised empty root zone.
 * - NXDOMAIN and NODATA carry the zone's SOA in the authority section with TTL min(SOA TTL,
 *   MINIMUM), so clients can cache them (RFC 2308 §3, §5); empty non-terminals are NODATA
 *   (RFC 8020 §2, RFC 4592 §2.2.2).
 * - Every record goes out with its TTL from the zone file. CNAME chains are followed through the
 *   loaded zones (RFC 1034 §4.3.2 step 3a); a chain that leaves them stops at the last CNAME.
 * - ANY (QTYPE 255) gets one RRset of the name (RFC 8482 §4.1), not all of them.
 * - Over UDP, an answer larger than the client's EDNS buffer (512 octets without EDNS, RFC 1035
 *   §4.2.1; at most our own 1232) is replaced by a truncated one (TC set, no records).
 *
 * Packets are encoded and read with dns-packet (packages/engine/src/dns/wire.ts) over `node:dgram` and `node:net`.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { faultFor, type Fault, type FaultPlan } from '../dns/faults.js';
import type { DnsAnswer, RecordType } from '../dns/types.js';
import { CLASS_IN, encodeOpt, encodeRecord, encodeResponse, FLAG, HEADER_OCTETS, RCODE, readMessage, recordTypeOf, TYPE_ANY, TYPE_CODES, type WireMessage } from '../dns/wire.js';
import type { ZoneResolver } from './zone-resolver.js';
import type { SignedAnswer, SignedZoneSet } from './signed.js';
import { encodeRawRecord } from '../dns/canonical.js';

export { MAX_CHARACTER_STRING_OCTETS, splitCharacterStrings, TYPE_CODES } from '../dns/wire.js';

/** RFC 1035 §4.2.1: a UDP message without EDNS carries at most 512 octets. */
export const CLASSIC_UDP_PAYLOAD = 512;
/**
 * The largest UDP payload this server sends and advertises in its OPT record (RFC 6891 §6.2.5).
 * 1232 octets fits the IPv6 minimum MTU without fragmentation (the DNS Flag Day 2020 value).
 */
export const SERVER_UDP_PAYLOAD = 1232;
/** Encoded answers kept for reuse (the zones never change while the server runs). */
export const RESPONSE_CACHE_ENTRIES = 10_000;
/** How many ephemeral ports to try when port 0 is asked for and TCP cannot take UDP's port. */
export const EPHEMERAL_PORT_ATTEMPTS = 20;
/** RFC 8482 §4.1: the RRset ANY gets, the first of these types the name has. */
export const ANY_TYPE_ORDER: readonly RecordType[] = ['CNAME', 'SOA', 'NS', 'MX', 'TXT', 'A', 'AAAA', 'PTR'];

/** Options of `startDnsServer`. */
export interface DnsServerOptions {
  /** Where the answers come from. */
  resolver: ZoneResolver;
  /** The address to listen on; 127.0.0.1 unless told. */
  host?: string;
  /** The port for both UDP and TCP; 0 (the default) picks a free one. */
  port?: number;
  /** Faults to inject from the start. */
  faults?: FaultPlan;
  /**
   * Names outside every loaded zone: `refused` (the default, what an authoritative server says), or
   * `nxdomain`, as if the server also held an empty root zone, so that the loaded zones are the whole
   * DNS (what the in-memory `ZoneResolver` assumes, and what tests and benchmarks that point a
   * stub client at this server need: the engine asks for names such as `_dmarc.example`).
   */
  outsideZones?: OutsideZones;
  /**
   * Signed zones served as RFC 4035 §3 says (RRSIGs with DO, DS from the parent's side, NSEC/NSEC3
   * proofs); they answer before `resolver` for the names they hold (`loadSignedZoneDirectory`).
   */
  signedZones?: SignedZoneSet;
}

/** How the server answers for names outside every loaded zone. */
export type OutsideZones = 'refused' | 'nxdomain';

/**
 * The SOA of the empty root zone `outsideZones: 'nxdomain'` stands for, so that its NXDOMAIN answers
 * can be cached like any other (RFC 2308 §5: five minutes, as the in-memory default).
 */
export const SYNTHETIC_ROOT_SOA = {
  ttl: 300,
  data: { mname: 'localhost', rname: 'hostmaster.invalid', serial: 1, refresh: 1800, retry: 900, expire: 604_800, minimum: 300 },
} as const;

/** Queries received, per transport. */
export interface DnsServerStats {
  udp: number;
  tcp: number;
}

/** A running server. */
export interface RunningDnsServer {
  address: { host: string; port: number };
  /** Stops listening, drops open TCP connections and pending delayed answers. */
  close(): Promise<void>;
  /** Replaces the fault plan for the queries that arrive from now on. */
  setFaults(plan: FaultPlan): void;
  /** Queries received so far. */
  stats(): DnsServerStats;
}

type Transport = 'udp' | 'tcp';
type Send = (response: Buffer) => void;

/**
 * Starts a DNS server answering from `options.resolver` on UDP and TCP, same port. Rejects only
 * when the port cannot be bound.
 */
export async function startDnsServer(options: DnsServerOptions): Promise<RunningDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const responder = new Responder(options.resolver, options.faults ?? [], options.outsideZones ?? 'refused', options.signedZones);
  const sockets = new Set<net.Socket>();
  const { udp, tcp, port } = await listenBoth(host, options.port ?? 0, responder, sockets);
  let closing: Promise<void> | undefined;
  return {
    address: { host, port },
    setFaults: (plan) => responder.setFaults(plan),
    stats: () => ({ ...responder.counts }),
    close: () => {
      closing ??= (async () => {
        responder.cancelPending();
        const udpClosed = new Promise<void>((resolve) => udp.close(() => resolve()));
        const tcpClosed = new Promise<void>((resolve) => tcp.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await Promise.all([udpClosed, tcpClosed]);
      })();
      return closing;
    },
  };
}

/**
 * The receive buffer asked for the server's UDP socket, in octets (the kernel caps it at
 * `net.core.rmem_max`): room for thousands of queued queries rather than a few hundred.
 */
export const SERVER_UDP_RECEIVE_BUFFER = 4 * 1024 * 1024;

/** Binds UDP, then TCP on the same port; with port 0, retries until both get the same free port. */
async function listenBoth(
  host: string,
  requestedPort: number,
  responder: Responder,
  sockets: Set<net.Socket>,
): Promise<{ udp: dgram.Socket; tcp: net.Server; port: number }> {
  let lastError: unknown;
  const attempts = requestedPort === 0 ? EPHEMERAL_PORT_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    // A burst of queries (a batch's DKIM probes, hundreds at once) waits in the socket's receive
    // buffer while the process is busy: the default (about 200 KB, some 270 datagrams) dropped
    // queries, and each drop cost its client a whole retry timeout.
    const udp = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', recvBufferSize: SERVER_UDP_RECEIVE_BUFFER });
    udp.on('message', (bytes, peer) =>
      responder.handle(bytes, 'udp', (response) => udp.send(response, peer.port, peer.address, () => {})),
    );
    try {
      await listening(udp, requestedPort, host);
    } catch (error) {
      udp.close();
      throw error;
    }
    const port = udp.address().port;
    const tcp = net.createServer((socket) => serveTcpConnection(socket, responder, sockets));
    try {
      await listening(tcp, port, host);
    } catch (error) {
      lastError = error;
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      continue;
    }
    // Errors after start-up (a client that resets, a failed send) must not crash the process.
    udp.on('error', () => {});
    tcp.on('error', () => {});
    return { udp, tcp, port };
  }
  throw lastError instanceof Error ? lastError : new Error(`could not listen on ${host}:${requestedPort}`);
}

/** RFC 7766 §8: length-prefixed messages, several per connection, answered in turn. */
function serveTcpConnection(socket: net.Socket, responder: Responder, sockets: Set<net.Socket>): void {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  socket.on('error', () => {});
  // Answers to pipelined queries (RFC 7766 §6.2.1.1) go out as they are ready: with Nagle's
  // algorithm, each would wait for the previous one's acknowledgement, which a client that has
  // nothing more to send delays (about 40 ms on Linux).
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  const send: Send = (response) => {
    if (socket.destroyed) return;
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(response.length);
    socket.write(Buffer.concat([prefix, response]));
  };
  socket.on('data', (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2) {
      const length = buffered.readUInt16BE(0);
      if (buffered.length < 2 + length) return;
      const message = buffered.subarray(2, 2 + length);
      buffered = buffered.subarray(2 + length);
      responder.handle(message, 'tcp', send);
    }
  });
}

/** Binds a UDP socket or listens with a TCP server on `port` and `host`; rejects with the bind's error (EADDRINUSE…). */
function listening(socket: dgram.Socket | net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    const ready = (): void => {
      socket.off('error', reject);
      resolve();
    };
    if (socket instanceof net.Server) socket.listen(port, host, ready);
    else socket.bind(port, host, ready);
  });
}

/** A query as read, with what the response needs from it. */
interface Query {
  message: WireMessage;
  id: number;
  /** RD as sent, copied into the response (RFC 1035 §4.1.1). */
  rd: boolean;
  opcode: number;
  edns: boolean;
  /** RFC 3225: the DO bit of the query's OPT record. */
  dnssecOk: boolean;
  /** RFC 4035 §3.2.2: CD, copied into the response (RFC 4035 §3.1.6). */
  cd: boolean;
}

/** Turns queries into response bytes, applying the fault plan. */
class Responder {
  readonly counts: DnsServerStats = { udp: 0, tcp: 0 };
  private readonly pending = new Set<NodeJS.Timeout>();
  /** Encoded full answers (id 0, RD clear) by question as sent and EDNS presence. */
  private readonly encoded = new Map<string, Buffer>();

  constructor(
    private readonly resolver: ZoneResolver,
    private plan: FaultPlan,
    private readonly outsideZones: OutsideZones,
    private readonly signed?: SignedZoneSet,
  ) {}

  setFaults(plan: FaultPlan): void {
    this.plan = plan;
  }

  cancelPending(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }

  handle(bytes: Buffer, transport: Transport, send: Send): void {
    this.counts[transport]++;
    if (bytes.length < HEADER_OCTETS) return; // not even a header: nothing to answer to
    const flags = bytes.readUInt16BE(2);
    if ((flags & FLAG.QR) !== 0) return; // RFC 1035 §4.1.1: a response is never answered.
    let message: WireMessage;
    try {
      message = readMessage(bytes);
    } catch {
      // RFC 1035 §4.1.1: FORMERR, "unable to interpret the query"; the header alone is echoed.
      send(encodeResponse({ id: bytes.readUInt16BE(0), flags: flags & 0x7900, rcode: RCODE.FORMERR }, Buffer.alloc(0), 0, [], [], []));
      return;
    }
    const query: Query = {
      message,
      id: message.id,
      rd: (flags & FLAG.RD) !== 0,
      opcode: (flags >> 11) & 0xf,
      edns: message.opt !== undefined,
      dnssecOk: message.opt?.do === true,
      cd: (flags & FLAG_CD) !== 0,
    };
    const question = message.questions[0];
    const fault = question ? faultFor(this.plan, question.name, recordTypeOf(question.type)) : undefined;
    if (fault?.kind === 'drop') return; // the client times out
    if (fault?.kind === 'delay') {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        this.reply(query, transport, undefined, send);
      }, fault.ms);
      this.pending.add(timer);
      return;
    }
    this.reply(query, transport, fault, send);
  }

  private reply(query: Query, transport: Transport, fault: Fault | undefined, send: Send): void {
    let response: Buffer;
    try {
      response = this.respond(query, transport, fault);
    } catch {
      // An answer that cannot be encoded is the server's failure, never a crash (RFC 1035 §4.1.1).
      response = errorResponse(query, RCODE.SERVFAIL);
    }
    send(response);
  }

  private respond(query: Query, transport: Transport, fault: Fault | undefined): Buffer {
    const { message } = query;
    if (query.opcode !== 0) return errorResponse(query, RCODE.NOTIMP); // RFC 1035 §4.1.1
    const question = message.questions[0];
    if (message.questions.length !== 1 || !question) return errorResponse(query, RCODE.FORMERR);
    // RFC 6891 §6.1.3: only EDNS version 0 exists; anything higher gets BADVERS.
    if (message.opt && message.opt.version > 0) return errorResponse(query, RCODE.BADVERS);
    const limit = transport === 'udp' ? udpLimit(message.opt?.udpPayloadSize) : Infinity;

    if (fault?.kind === 'servfail') return errorResponse(query, RCODE.SERVFAIL);
    if (fault?.kind === 'refused') return errorResponse(query, RCODE.REFUSED);
    if (fault?.kind === 'malformed') return malformedResponse(query);
    if (fault?.kind === 'truncate' && (transport === 'udp' || fault.tcp)) return truncatedResponse(query);
    if (question.class !== CLASS_IN) return errorResponse(query, RCODE.REFUSED);

    const key = `${question.asSent}\u0000${question.type}\u0000${query.edns ? 1 : 0}${query.dnssecOk ? 1 : 0}`;
    let full = this.encoded.get(key);
    if (!full) {
      const signed = this.signed?.answer(question.name, question.type, query.dnssecOk);
      full = signed ? this.encodeSigned(query, signed) : this.answer(query);
      if (this.encoded.size >= RESPONSE_CACHE_ENTRIES) this.encoded.clear();
      this.encoded.set(key, full);
    }
    // RFC 1035 §4.2.1, RFC 6891 §7: over UDP, an answer that does not fit is replaced by a truncated one.
    if (full.length > limit) return truncatedResponse(query);
    const response = Buffer.from(full);
    response.writeUInt16BE(query.id, 0);
    if (query.rd) response[2] = (response[2] ?? 0) | (FLAG.RD >> 8); // RFC 1035 §4.1.1: RD is copied
    if (query.cd) response[3] = (response[3] ?? 0) | FLAG_CD; // RFC 4035 §3.1.6: CD is copied; AD never set
    return response;
  }

  /** An answer from the signed zones (records as held; the question's own name as it was sent). */
  private encodeSigned(query: Query, signed: SignedAnswer): Buffer {
    const question = query.message.questions[0]!;
    const encode = (records: SignedAnswer['answer']): Buffer[] =>
      records.map((record) => encodeRawRecord(record, record.name === question.name ? question.asSent.replace(/\.$/, '') : record.name));
    return encodeResponse(
      { id: 0, flags: signed.authoritative ? FLAG.AA : 0, rcode: signed.rcode },
      query.message.questionBytes,
      1,
      encode(signed.answer),
      encode(signed.authority),
      query.edns ? [encodeOpt(SERVER_UDP_PAYLOAD, signed.rcode, query.dnssecOk)] : [],
    );
  }

  /** The full answer to the query's question, with id 0 and RD clear (patched per query). */
  private answer(query: Query): Buffer {
    const question = query.message.questions[0]!;
    const head = { id: 0, rd: false, opcode: 0, edns: query.edns, dnssecOk: false, cd: false, message: query.message };
    // RFC 1035 §4.1.1 (REFUSED, "for policy reasons"): we answer only for our own zones.
    if (this.outsideZones === 'refused' && !this.resolver.locate(question.name)) return errorResponse(head, RCODE.REFUSED);
    if (question.type === TYPE_ANY) return this.answerAny(head, question.asSent);
    const type = recordTypeOf(question.type);
    // A type we hold no data of is answered like A without the records: the CNAME chain and the
    // name's existence still hold (RFC 1034 §4.3.2).
    const found = this.resolver.resolveSync(question.name, type ?? 'A');
    const result: DnsAnswer =
      type || found.kind !== 'records' ? found : { kind: 'nodata', ...(found.cnames ? { cnames: found.cnames } : {}) };
    if (result.kind === 'error') {
      return errorResponse(head, result.reason === 'invalid-name' ? RCODE.FORMERR : RCODE.SERVFAIL);
    }
    const answers: Buffer[] = [];
    // RFC 1034 §4.3.2 step 3a: the CNAME chain comes first, each alias owned by the previous name;
    // the queried name goes out as it was asked.
    let owner = question.asSent;
    let ownerCanonical = question.name;
    for (const target of result.cnames ?? []) {
      const alias = this.resolver.resolveSync(ownerCanonical, 'CNAME');
      answers.push(encodeRecord(owner, 'CNAME', alias.kind === 'records' ? (alias.ttl ?? 0) : 0, target));
      owner = target;
      ownerCanonical = target;
      // A chain that leaves our zones stops here: the client asks for the rest (RFC 1034 §5.3.3).
      if (this.outsideZones === 'refused' && !this.resolver.locate(target)) return this.encode(head, RCODE.NOERROR, answers, []);
    }
    if (result.kind === 'records' && type) {
      for (const data of result.records) answers.push(encodeRecord(owner, type, result.ttl ?? 0, data));
      return this.encode(head, RCODE.NOERROR, answers, []);
    }
    return this.encode(head, result.kind === 'nxdomain' ? RCODE.NXDOMAIN : RCODE.NOERROR, answers, this.negativeAuthority(ownerCanonical));
  }

  /**
   * RFC 8482 §4.1: ANY gets one RRset of the name, the first of `ANY_TYPE_ORDER` it owns; a name
   * without any is NXDOMAIN or NODATA as for any other type. (The zones hold only those types, so
   * the §4.2 HINFO, for data a server cannot pick from cheaply, is never needed.)
   */
  private answerAny(head: Query, asSent: string): Buffer {
    const question = head.message.questions[0]!;
    for (const type of ANY_TYPE_ORDER) {
      const found = this.resolver.resolveSync(question.name, type);
      if (found.kind === 'nxdomain') return this.encode(head, RCODE.NXDOMAIN, [], this.negativeAuthority(question.name));
      if (found.kind === 'records' && !found.cnames) {
        const answers = found.records.map((data) => encodeRecord(asSent, type, found.ttl ?? 0, data));
        return this.encode(head, RCODE.NOERROR, answers, []);
      }
    }
    return this.encode(head, RCODE.NOERROR, [], this.negativeAuthority(question.name));
  }

  /** RFC 2308 §3: a negative answer carries the zone's SOA, with TTL min(SOA TTL, MINIMUM). */
  private negativeAuthority(name: string): Buffer[] {
    const zone = this.resolver.locate(name) ?? { origin: '', soa: SYNTHETIC_ROOT_SOA };
    if (!zone.soa) return [];
    return [encodeRecord(zone.origin, 'SOA', Math.min(zone.soa.ttl, zone.soa.data.minimum), zone.soa.data)];
  }

  private encode(head: Query, rcode: number, answers: Buffer[], authorities: Buffer[]): Buffer {
    const question = head.message.questions[0];
    return encodeResponse(
      { id: head.id, flags: FLAG.AA | (head.rd ? FLAG.RD : 0), rcode },
      head.message.questionBytes,
      question ? 1 : 0,
      answers,
      authorities,
      head.edns ? [encodeOpt(SERVER_UDP_PAYLOAD, rcode)] : [],
    );
  }
}

/** RFC 4035 §3.2.2: the CD bit of the header's low flag octet. */
const FLAG_CD = 0x10;

/** RFC 6891 §6.2.5: the requestor's payload size (512 at least), capped by ours. */
function udpLimit(advertised: number | undefined): number {
  if (advertised === undefined) return CLASSIC_UDP_PAYLOAD;
  return Math.min(Math.max(advertised, CLASSIC_UDP_PAYLOAD), SERVER_UDP_PAYLOAD);
}

/** A response without records: `rcode`, the question echoed, an OPT record when the query had one. */
function errorResponse(query: Query, rcode: number, extraFlags = 0): Buffer {
  const questions = query.message.questions.length;
  // RFC 6891 §6.1.3: an extended RCODE needs an OPT record to carry its high bits.
  const withOpt = query.edns || rcode > 0xf;
  return encodeResponse(
    { id: query.id, flags: (query.opcode << 11) | (query.rd ? FLAG.RD : 0) | extraFlags, rcode },
    query.message.questionBytes,
    questions,
    [],
    [],
    withOpt ? [encodeOpt(SERVER_UDP_PAYLOAD, rcode)] : [],
  );
}

/** RFC 2181 §9: TC set, the question kept, every record set dropped. */
function truncatedResponse(query: Query): Buffer {
  return errorResponse(query, RCODE.NOERROR, FLAG.TC | FLAG.AA);
}

/**
 * A reply that carries the query's id and question (so the client takes it as the answer) and then
 * an answer record whose RDLENGTH runs past the end of the message (RFC 1035 §4.1.3).
 */
function malformedResponse(query: Query): Buffer {
  const head = encodeResponse({ id: query.id, flags: query.rd ? FLAG.RD : 0, rcode: RCODE.NOERROR }, query.message.questionBytes, 1, [], [], []);
  head.writeUInt16BE(1, 6); // ANCOUNT 1
  const question = query.message.questions[0];
  const record = Buffer.alloc(12);
  record.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
  record.writeUInt16BE(question?.type ?? TYPE_CODES.A, 2);
  record.writeUInt16BE(CLASS_IN, 4);
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(200, 10); // 200 octets of RDATA announced, none sent
  return Buffer.concat([head, record]);
}
