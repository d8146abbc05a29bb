/**
 * An embedded DNS server over UDP and TCP on one port, answering from a `ZoneResolver` as a
 * recursive resolver would if the loaded zones were the whole DNS. It serves the end-to-end tests,
 * the benchmarks and the demo, and it can be told to misbehave (`FaultPlan`) so that the network
 * resolver's handling of every failure is tested against real sockets.
 *
 * Transport and message parsing come from dns2. Two things are done here rather than trusted to it:
 * - TXT character-strings longer than 255 octets: dns2 writes their length into one octet and so
 *   corrupts the message; they are split into 255-octet pieces first (RFC 1035 §3.3.14).
 * - The UDP size limit: dns2 does truncate, but only against the client's EDNS size; the response
 *   is fitted here against our own advertised size too, so truncation is decided (and tested) in
 *   one place.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dns2 from 'dns2';
import type { Packet as DnsPacket, Question as DnsQuestion, Resource as DnsResource } from 'dns2';
import { faultFor, type Fault, type FaultPlan } from './faults.js';
import type { DnsAnswer, RecordData, RecordType, SoaData } from './types.js';
import type { ZoneResolver } from './zone-resolver.js';

const { Packet } = dns2;

/** RFC 1035 §4.2.1: a UDP message without EDNS carries at most 512 octets. */
export const CLASSIC_UDP_PAYLOAD = 512;
/**
 * The largest UDP payload this server sends and advertises in its OPT record (RFC 6891 §6.2.5).
 * 1232 octets fits the IPv6 minimum MTU without fragmentation (the DNS Flag Day 2020 value).
 */
export const SERVER_UDP_PAYLOAD = 1232;
/** RFC 1035 §3.3: a <character-string> is one length octet followed by at most 255 octets. */
export const MAX_CHARACTER_STRING_OCTETS = 255;
/** Encoded answers kept for reuse (the zones never change while the server runs). */
export const RESPONSE_CACHE_ENTRIES = 10_000;
/** How many ephemeral ports to try when port 0 is asked for and TCP cannot take UDP's port. */
export const EPHEMERAL_PORT_ATTEMPTS = 20;

/** RFC 1035 §3.2.2 and RFC 3596 §2.1: the wire codes of the types the engine asks for. */
export const TYPE_CODES: Readonly<Record<RecordType, number>> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
};
const TYPE_BY_CODE = new Map<number, RecordType>(
  Object.entries(TYPE_CODES).map(([type, code]) => [code, type as RecordType]),
);

/** RFC 1035 §4.1.1 and RFC 6891 §9 response codes used here. */
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, BADVERS: 16 } as const;
/** RFC 1035 §3.2.4 */
const CLASS_IN = 1;
/** RFC 6891 §6.1.1 */
const TYPE_OPT = 41;

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
}

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
type Send = (response: Buffer) => unknown;

/**
 * Starts a DNS server answering from `options.resolver` on UDP and TCP, same port. Rejects only
 * when the port cannot be bound.
 */
export async function startDnsServer(options: DnsServerOptions): Promise<RunningDnsServer> {
  const host = options.host ?? '127.0.0.1';
  const responder = new Responder(options.resolver, options.faults ?? []);
  const { udp, tcp, port } = await listenBoth(host, options.port ?? 0, responder);
  const sockets = new Set<net.Socket>();
  tcp.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
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

/** Binds UDP, then TCP on the same port; with port 0, retries until both get the same free port. */
async function listenBoth(
  host: string,
  requestedPort: number,
  responder: Responder,
): Promise<{ udp: InstanceType<typeof dns2.UDPServer>; tcp: InstanceType<typeof dns2.TCPServer>; port: number }> {
  let lastError: unknown;
  const attempts = requestedPort === 0 ? EPHEMERAL_PORT_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const udp = new dns2.UDPServer({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    udp.on('request', (request: DnsPacket, send: Send) => responder.handle(request, 'udp', send));
    try {
      await bindUdp(udp, requestedPort, host);
    } catch (error) {
      udp.close();
      throw error;
    }
    const port = udp.address().port;
    const tcp = new dns2.TCPServer();
    tcp.on('request', (request: DnsPacket, send: Send) => responder.handle(request, 'tcp', send));
    try {
      await listenTcp(tcp, port, host);
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

function bindUdp(socket: dgram.Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}

function listenTcp(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Turns queries into response bytes, applying the fault plan. */
class Responder {
  readonly counts: DnsServerStats = { udp: 0, tcp: 0 };
  private readonly pending = new Set<NodeJS.Timeout>();
  /** Encoded full answers (id 0, RD clear) by question and EDNS presence. */
  private readonly encoded = new Map<string, Buffer>();

  constructor(
    private readonly resolver: ZoneResolver,
    private plan: FaultPlan,
  ) {}

  setFaults(plan: FaultPlan): void {
    this.plan = plan;
  }

  cancelPending(): void {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }

  handle(request: DnsPacket, transport: Transport, send: Send): void {
    this.counts[transport]++;
    if (request.header.qr) return; // RFC 1035 §4.1.1: a response is never answered.
    const question = request.questions[0];
    const fault = question ? faultFor(this.plan, question.name, TYPE_BY_CODE.get(question.type)) : undefined;
    if (fault?.kind === 'drop') return; // the client times out
    if (fault?.kind === 'delay') {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        this.reply(request, transport, undefined, send);
      }, fault.ms);
      this.pending.add(timer);
      return;
    }
    this.reply(request, transport, fault, send);
  }

  private reply(request: DnsPacket, transport: Transport, fault: Fault | undefined, send: Send): void {
    let response: Buffer;
    try {
      response = this.respond(request, transport, fault);
    } catch {
      // An answer that cannot be encoded is the server's failure, never a crash (RFC 1035 §4.1.1).
      response = encode(errorResponse(request, RCODE.SERVFAIL));
    }
    try {
      send(response);
    } catch {
      // The TCP client went away before its answer; nothing to do.
    }
  }

  private respond(request: DnsPacket, transport: Transport, fault: Fault | undefined): Buffer {
    if (request.header.opcode !== 0) return encode(errorResponse(request, RCODE.NOTIMP)); // RFC 1035 §4.1.1
    const question = request.questions[0];
    if (request.questions.length !== 1 || !question) return encode(errorResponse(request, RCODE.FORMERR));
    const opt = request.additionals.find((record) => record.type === TYPE_OPT);
    // RFC 6891 §6.1.3: only EDNS version 0 exists; anything higher gets BADVERS.
    if (opt && (opt.version ?? 0) > 0) return encode(errorResponse(request, RCODE.BADVERS));
    const limit = transport === 'udp' ? udpLimit(opt) : Infinity;

    if (fault?.kind === 'servfail') return encode(errorResponse(request, RCODE.SERVFAIL));
    if (fault?.kind === 'refused') return encode(errorResponse(request, RCODE.REFUSED));
    if (fault?.kind === 'malformed') return malformedResponse(request);
    if (fault?.kind === 'truncate' && (transport === 'udp' || fault.tcp)) {
      return encode(truncatedResponse(request));
    }
    if (question.class !== CLASS_IN) return encode(errorResponse(request, RCODE.REFUSED));

    const key = `${question.name}\u0000${question.type}\u0000${opt ? 1 : 0}`;
    let full = this.encoded.get(key);
    if (!full) {
      full = encode(this.answer(request, question));
      if (this.encoded.size >= RESPONSE_CACHE_ENTRIES) this.encoded.clear();
      this.encoded.set(key, full);
    }
    // RFC 1035 §4.2.1: over UDP, an answer that does not fit is replaced by a truncated one.
    if (full.length > limit) return encode(truncatedResponse(request));
    const response = Buffer.from(full);
    response.writeUInt16BE(request.header.id, 0);
    if (request.header.rd) response[2] = (response[2] ?? 0) | 0x01; // RFC 1035 §4.1.1: RD is copied
    return response;
  }

  /** The full answer to one question, with id 0 and RD clear (patched per query). */
  private answer(request: DnsPacket, question: DnsQuestion): DnsPacket {
    const response = baseResponse(request);
    response.header.id = 0;
    response.header.rd = 0;
    const type = TYPE_BY_CODE.get(question.type);
    // A type we hold no data of is answered like A without the records: the CNAME chain and the
    // name's existence still hold (RFC 1034 §4.3.2).
    const answer = this.resolver.resolveSync(question.name, type ?? 'A');
    const result: DnsAnswer =
      type || answer.kind !== 'records' ? answer : { kind: 'nodata', ...(answer.cnames ? { cnames: answer.cnames } : {}) };
    if (result.kind === 'error') {
      response.header.rcode = result.reason === 'refused' ? RCODE.REFUSED : result.reason === 'invalid-name' ? RCODE.FORMERR : RCODE.SERVFAIL;
      return response;
    }
    response.header.aa = this.resolver.locate(question.name) ? 1 : 0;
    // RFC 1034 §4.3.2 step 3a: the CNAME chain comes first, each alias owned by the previous name.
    let owner = question.name;
    for (const target of result.cnames ?? []) {
      const alias = this.resolver.resolveSync(owner, 'CNAME');
      const ttl = alias.kind === 'records' ? (alias.ttl ?? 0) : 0;
      response.answers.push(toWire(owner, 'CNAME', ttl, target));
      owner = target;
    }
    if (result.kind === 'records' && type) {
      for (const data of result.records) response.answers.push(toWire(owner, type, result.ttl ?? 0, data));
      return response;
    }
    if (result.kind === 'nxdomain') response.header.rcode = RCODE.NXDOMAIN;
    // RFC 2308 §3: a negative answer carries the zone's SOA, with TTL min(SOA TTL, MINIMUM).
    const zone = this.resolver.locate(owner);
    if (zone?.soa) {
      const ttl = Math.min(zone.soa.ttl, zone.soa.data.minimum);
      response.authorities.push(toWire(zone.origin, 'SOA', ttl, zone.soa.data));
    }
    return response;
  }
}

/** RFC 6891 §6.2.5: the requestor's payload size (512 at least), capped by ours. */
function udpLimit(opt: DnsResource | undefined): number {
  if (!opt) return CLASSIC_UDP_PAYLOAD;
  return Math.min(Math.max(opt.class, CLASSIC_UDP_PAYLOAD), SERVER_UDP_PAYLOAD);
}

/** A response header for `request`: QR set, id and RD copied, RA set so stub resolvers accept it. */
function baseResponse(request: DnsPacket): DnsPacket {
  const response = new Packet();
  response.header = new Packet.Header({
    id: request.header.id,
    qr: 1,
    opcode: request.header.opcode,
    rd: request.header.rd,
    ra: 1,
    rcode: RCODE.NOERROR,
  });
  response.questions = request.questions.slice(0, 1);
  // RFC 6891 §6.1.1: answer an EDNS query with an OPT record of our own.
  if (request.additionals.some((record) => record.type === TYPE_OPT)) {
    response.additionals.push(Packet.Resource.EDNS([], { udpPayloadSize: SERVER_UDP_PAYLOAD }));
  }
  return response;
}

function errorResponse(request: DnsPacket, rcode: number): DnsPacket {
  const response = baseResponse(request);
  response.header.rcode = rcode;
  if (rcode > 0xf && response.additionals.length === 0) {
    // RFC 6891 §6.1.3: an extended RCODE needs an OPT record to carry its high bits.
    response.additionals.push(Packet.Resource.EDNS([], { udpPayloadSize: SERVER_UDP_PAYLOAD }));
  }
  return response;
}

/** RFC 2181 §9: TC set, the question kept, every record set dropped. */
function truncatedResponse(request: DnsPacket): DnsPacket {
  const response = baseResponse(request);
  response.header.tc = 1;
  return response;
}

/**
 * A reply that carries the query's id and question (so the client takes it as the answer) and then
 * an answer record whose RDLENGTH runs past the end of the message (RFC 1035 §4.1.3).
 */
function malformedResponse(request: DnsPacket): Buffer {
  const questionOnly = baseResponse(request);
  questionOnly.additionals = [];
  const head = encode(questionOnly);
  head.writeUInt16BE(1, 6); // ANCOUNT 1
  const question = request.questions[0];
  const record = Buffer.alloc(12);
  record.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
  record.writeUInt16BE(question?.type ?? TYPE_CODES.A, 2);
  record.writeUInt16BE(CLASS_IN, 4);
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(200, 10); // 200 octets of RDATA announced, none sent
  return Buffer.concat([head, record]);
}

function encode(packet: DnsPacket): Buffer {
  return packet.toBuffer();
}

/** One record in dns2's shape. Names go out lower case except the queried name, echoed as asked. */
function toWire(owner: string, type: RecordType, ttl: number, data: RecordData): DnsResource {
  const base = { name: owner, type: TYPE_CODES[type], class: CLASS_IN, ttl };
  switch (type) {
    case 'A':
    case 'AAAA':
      return new Packet.Resource({ ...base, address: data as string });
    case 'CNAME':
    case 'PTR':
      return new Packet.Resource({ ...base, domain: data as string });
    case 'NS':
      return new Packet.Resource({ ...base, ns: data as string });
    case 'MX': {
      const mx = data as RecordData<'MX'>;
      return new Packet.Resource({ ...base, exchange: mx.exchange, priority: mx.preference });
    }
    case 'SOA': {
      const soa = data as SoaData;
      return new Packet.Resource({
        ...base,
        primary: soa.mname,
        admin: soa.rname,
        serial: soa.serial,
        refresh: soa.refresh,
        retry: soa.retry,
        expiration: soa.expire,
        minimum: soa.minimum,
      });
    }
    case 'TXT': {
      // dns2 encodes Buffers as given; the cast covers its narrower declared type.
      const pieces = splitCharacterStrings(data as string[]) as unknown as string[];
      return new Packet.Resource({ ...base, data: pieces });
    }
  }
}

/**
 * The character-strings of one TXT record as they go on the wire: each string's UTF-8 octets in
 * pieces of at most 255 (RFC 1035 §3.3.14), and one empty string for a record without any, since
 * TXT RDATA holds one or more character-strings.
 */
export function splitCharacterStrings(strings: readonly string[]): Buffer[] {
  const pieces: Buffer[] = [];
  for (const text of strings) {
    const octets = Buffer.from(text, 'utf8');
    if (octets.length === 0) pieces.push(octets);
    for (let start = 0; start < octets.length; start += MAX_CHARACTER_STRING_OCTETS) {
      pieces.push(octets.subarray(start, start + MAX_CHARACTER_STRING_OCTETS));
    }
  }
  if (pieces.length === 0) pieces.push(Buffer.alloc(0));
  return pieces;
}
