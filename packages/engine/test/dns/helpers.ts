/**
 * Shared pieces of the DNS tests: one zone set, resolver wrappers that count and slow down queries,
 * and raw DNS messages for the wire-level server tests.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import type { DnsAnswer, RecordType, Resolver, SoaData } from '../../src/dns/types.js';
import type { Zone } from '../../src/zones/types.js';

export const SOA_COM: SoaData = {
  mname: 'ns1.example.com',
  rname: 'hostmaster.example.com',
  serial: 2024010101,
  refresh: 3600,
  retry: 600,
  expire: 86400,
  minimum: 60,
};
const SOA_ORG: SoaData = { ...SOA_COM, mname: 'ns1.example.org', rname: 'hostmaster.example.org', minimum: 120 };

/** 600 octets as a zone file must publish them: three character-strings of at most 255. */
export const LONG_TXT = ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(90)];
/** Text that is not ASCII: its UTF-8 octets must come back as the same text. */
export const UTF8_TXT = 'v=DKIM1; n=héllo ✓';

/** Two zones with every case the resolver expectations need. */
export const ZONES: Zone[] = [
  {
    origin: 'example.com',
    records: [
      { name: 'example.com', type: 'SOA', ttl: 3600, data: SOA_COM },
      { name: 'example.com', type: 'NS', ttl: 3600, data: 'ns1.example.com' },
      { name: 'example.com', type: 'TXT', ttl: 300, data: ['v=spf1 ', 'include:_spf.example.org -all'] },
      { name: 'example.com', type: 'TXT', ttl: 300, data: ['google-site-verification=abc'] },
      { name: 'example.com', type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mx1.example.com' } },
      { name: 'example.com', type: 'MX', ttl: 300, data: { preference: 20, exchange: 'mx2.example.org' } },
      { name: 'ns1.example.com', type: 'A', ttl: 3600, data: '192.0.2.53' },
      { name: 'mx1.example.com', type: 'A', ttl: 120, data: '192.0.2.1' },
      { name: 'mx1.example.com', type: 'AAAA', ttl: 120, data: '2001:db8::1' },
      { name: 'long.example.com', type: 'TXT', ttl: 300, data: LONG_TXT },
      { name: 'utf8.example.com', type: 'TXT', ttl: 300, data: [UTF8_TXT] },
      { name: 'nullmx.example.com', type: 'MX', ttl: 300, data: { preference: 0, exchange: '' } },
      { name: '*.wild.example.com', type: 'TXT', ttl: 300, data: ['wildcard'] },
      { name: 'alias.example.com', type: 'CNAME', ttl: 300, data: 'target.example.org' },
      { name: 'dangling.example.com', type: 'CNAME', ttl: 300, data: 'nothere.example.org' },
      { name: 'deep.sub.example.com', type: 'A', ttl: 300, data: '192.0.2.9' },
    ],
  },
  {
    origin: 'example.org',
    records: [
      { name: 'example.org', type: 'SOA', ttl: 3600, data: SOA_ORG },
      { name: 'example.org', type: 'NS', ttl: 3600, data: 'ns1.example.org' },
      { name: 'target.example.org', type: 'A', ttl: 60, data: '198.51.100.7' },
      { name: 'target.example.org', type: 'TXT', ttl: 60, data: ['at the end of the chain'] },
      { name: 'mx2.example.org', type: 'A', ttl: 60, data: '198.51.100.25' },
    ],
  },
  {
    origin: '2.0.192.in-addr.arpa',
    records: [
      { name: '2.0.192.in-addr.arpa', type: 'SOA', ttl: 3600, data: { ...SOA_COM, minimum: 30 } },
      { name: '1.2.0.192.in-addr.arpa', type: 'PTR', ttl: 300, data: 'mx1.example.com' },
    ],
  },
];

/** A promise with its resolve function outside, to release a fake's answers when a test says so. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Wraps a resolver, records every query it passes on and how many are in flight, and can hold
 * answers back (a fixed delay, or until `release()`), to test caches and limits.
 */
export class InstrumentedResolver implements Resolver {
  readonly calls: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private gate: Promise<void> | undefined;

  constructor(
    private readonly inner: Resolver,
    private readonly delayMs = 0,
  ) {}

  /** Holds every answer until the returned function is called. */
  hold(): () => void {
    const gate = deferred();
    this.gate = gate.promise;
    return () => {
      this.gate = undefined;
      gate.resolve();
    };
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.calls.push(`${type} ${name}`);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.gate) await this.gate;
      return await this.inner.resolve(name, type);
    } finally {
      this.inFlight--;
    }
  }
}

/** A resolver answering one fixed answer to everything, counting calls: for TTL rules. */
export class FixedResolver implements Resolver {
  calls = 0;
  constructor(public answer: DnsAnswer) {}
  async resolve<T extends RecordType>(): Promise<DnsAnswer<T>> {
    this.calls++;
    return this.answer as DnsAnswer<T>;
  }
}

/** A name in wire form, written here by hand so that the tests do not trust the code under test. */
function wireName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter((label) => label !== '');
  return Buffer.concat([...labels.map((label) => Buffer.concat([Buffer.from([Buffer.byteLength(label)]), Buffer.from(label)])), Buffer.from([0])]);
}

/**
 * A query message, encoded by hand (RFC 1035 §4.1). `edns` adds an OPT record advertising that UDP
 * payload size (RFC 6891 §6.1.2); `qr` sets the response bit, to test that responses are ignored.
 */
export function queryMessage(
  name: string,
  type: number,
  options: { id?: number; rd?: boolean; edns?: number; ednsVersion?: number; cls?: number; extraQuestion?: boolean; qr?: boolean } = {},
): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(options.id ?? 0x1234, 0);
  header.writeUInt16BE((options.qr ? 0x8000 : 0) | (options.rd === false ? 0 : 0x0100), 2);
  const questionCount = options.extraQuestion ? 2 : 1;
  header.writeUInt16BE(questionCount, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(options.cls ?? 1, 2);
  const question = Buffer.concat([wireName(name), tail]);
  const parts = [header, question];
  if (options.extraQuestion) parts.push(question);
  if (options.edns !== undefined) {
    header.writeUInt16BE(1, 10);
    const opt = Buffer.alloc(11);
    opt.writeUInt8(0, 0); // the root name
    opt.writeUInt16BE(41, 1); // OPT
    opt.writeUInt16BE(options.edns, 3); // CLASS = UDP payload size
    opt.writeUInt32BE(((options.ednsVersion ?? 0) & 0xff) << 16, 5); // extended RCODE 0, VERSION, flags 0
    opt.writeUInt16BE(0, 9); // no options
    parts.push(opt);
  }
  return Buffer.concat(parts);
}

/** Sends `message` over UDP and returns the raw reply (rejects after `timeoutMs`). */
export function udpExchange(port: number, message: Buffer, timeoutMs = 2000, host = '127.0.0.1'): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error('no UDP reply'));
    }, timeoutMs);
    socket.once('message', (reply) => {
      clearTimeout(timer);
      socket.close();
      resolve(reply);
    });
    socket.send(message, port, host);
  });
}

/** Sends `message` over TCP (RFC 1035 §4.2.2 length prefix) and returns the raw reply. */
export function tcpExchange(port: number, message: Buffer, timeoutMs = 2000, host = '127.0.0.1'): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no TCP reply'));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      reject(new Error('the server closed the connection without a reply'));
    });
    const length = Buffer.alloc(2);
    length.writeUInt16BE(message.length);
    socket.write(Buffer.concat([length, message]));
  });
}

/** One record as dns-packet decodes it (OPT records carry their own fields). */
export interface DecodedRecord {
  name: string;
  type: string;
  class?: string;
  ttl?: number;
  data?: unknown;
  udpPayloadSize?: number;
  extendedRcode?: number;
}

/** A message as dns-packet decodes it; the fields the tests read. */
export interface DecodedMessage {
  id: number;
  /** The header's 4-bit RCODE by name. */
  rcode: string;
  flag_qr: boolean;
  flag_aa: boolean;
  flag_tc: boolean;
  flag_rd: boolean;
  flag_ra: boolean;
  questions: { name: string; type: string; class: string }[];
  answers: DecodedRecord[];
  authorities: DecodedRecord[];
  additionals: DecodedRecord[];
}

/** dns-packet's whole-message decoder, as a reader of what the server sent independent of src/dns/wire.ts. */
export function parseMessage(bytes: Buffer): DecodedMessage {
  return dnsPacket.decode(bytes) as unknown as DecodedMessage;
}

export const WIRE_TYPE = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, ANY: 255 } as const;
