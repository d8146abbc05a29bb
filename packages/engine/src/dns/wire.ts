/**
 * The DNS message codec shared by the network resolver and the embedded server, on top of
 * dns-packet: records are encoded by dns-packet's encoders (queries, one name and an OPT record, are
 * written directly); messages are read record by record here, with dns-packet's name and RDATA decoders, so that every record's RDLENGTH is checked
 * against what its decoder consumed (dns-packet alone trusts each decoder and would read a record
 * with a short or long RDATA as something else).
 */
import dnsPacket from 'dns-packet';
import { canonicalName } from './name.js';
import type { MxData, RecordData, RecordType, SoaData } from './types.js';
import { META_TYPE_CODES, typeCodesOf } from './record-types.js';
import { MAX_WIRE_NAME_OCTETS, readWireName, type LabelSink } from './canonical.js';

/** RFC 1035 §3.2.2 and RFC 3596 §2.1: the wire codes of the types the engine asks for (from the one table, record-types.ts). */
export const TYPE_CODES: Readonly<Record<RecordType, number>> = typeCodesOf(['A', 'NS', 'CNAME', 'SOA', 'PTR', 'MX', 'TXT', 'AAAA'] satisfies RecordType[]);
/** RFC 1035 §3.2.4: class IN. */
export const CLASS_IN = 1;
/** RFC 6891 §6.1.1: the OPT pseudo-record. */
export const TYPE_OPT = META_TYPE_CODES.OPT;
/** RFC 1035 §3.2.3: QTYPE * (ANY); RFC 8482 says how to answer it. */
export const TYPE_ANY = META_TYPE_CODES.ANY;
/** RFC 1035 §4.1.1 header size. */
export const HEADER_OCTETS = 12;

/** RFC 1035 §4.1.1 and RFC 6891 §9 response codes. */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, BADVERS: 16 } as const;

/** RFC 1035 §4.1.1 header flag bits (of the 16-bit flags word), and RFC 4035 §3.2.2 CD. */
export const FLAG = { QR: 0x8000, AA: 0x0400, TC: 0x0200, RD: 0x0100, RA: 0x0080, CD: 0x0010 } as const;

const TYPE_BY_CODE = new Map<number, RecordType>(Object.entries(TYPE_CODES).map(([type, code]) => [code, type as RecordType]));

/** The engine's name for a wire type code, or undefined for a type it never asks for. */
export function recordTypeOf(code: number): RecordType | undefined {
  return TYPE_BY_CODE.get(code);
}

/** dns-packet's per-type codecs, which its type declarations do not list. */
interface RdataCodec<D> {
  decode: ((buf: Buffer, offset: number) => D) & { bytes: number };
}
interface NameCodec {
  decode: ((buf: Buffer, offset: number, options?: { mail?: boolean }) => string) & { bytes: number };
}
/** One record as dns-packet's encoder takes it. */
type PacketAnswer = NonNullable<Parameters<typeof dnsPacket.encode>[0]['answers']>[number];
const codecs = dnsPacket as unknown as {
  name: NameCodec;
  a: RdataCodec<string>;
  aaaa: RdataCodec<string>;
  ns: RdataCodec<string>;
  cname: RdataCodec<string>;
  ptr: RdataCodec<string>;
  mx: RdataCodec<{ preference: number; exchange: string }>;
  txt: RdataCodec<Buffer[]>;
  soa: RdataCodec<{ mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number }>;
  answer: { encode: (record: PacketAnswer) => Buffer };
};
const answerCodec = codecs.answer;

/** One question, as sent. */
export interface WireQuestion {
  /** Canonical (lower case, no trailing dot). */
  name: string;
  /** As it was sent, case kept: a server echoes it (RFC 1035 §4.1.1; the 0x20 trick relies on it). */
  asSent: string;
  type: number;
  class: number;
}

/** One resource record as read: `data` is set for the types the engine knows, undefined otherwise. */
export interface WireRecord {
  /** Canonical owner name. */
  name: string;
  type: number;
  class: number;
  ttl: number;
  /** Decoded RDATA for the engine's types in class IN; undefined for anything else (skipped, not misread). */
  data: RecordData | undefined;
}

/** A message read in full. */
export interface WireMessage {
  id: number;
  flags: number;
  /** The 4-bit RCODE, extended by the OPT record's high bits when there is one (RFC 6891 §6.1.3). */
  rcode: number;
  questions: WireQuestion[];
  /** The octets of the question section, as sent (a server copies them into its answer). */
  questionBytes: Buffer;
  answers: WireRecord[];
  authorities: WireRecord[];
  /** The OPT record's UDP payload size, version and DO bit (RFC 3225), when the message carries one. */
  opt: { udpPayloadSize: number; version: number; do?: boolean } | undefined;
}

/** Why a message could not be read: the rule it breaks, in words. */
export class MalformedMessage extends Error {}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A TXT character-string as text: its octets as UTF-8 when they are valid UTF-8, else one character
 * per octet (Latin-1), so no octet is lost or replaced (RFC 1035 §3.3.14 puts no encoding on them).
 */
export function textOfOctets(octets: Buffer): string {
  return textOfRange(octets, 0, octets.length);
}

/** `textOfOctets` of `buf[start, end)`, without a Buffer for the range when it is ASCII. */
function textOfRange(buf: Buffer, start: number, end: number): string {
  let ascii = true;
  for (let index = start; index < end; index++) {
    if ((buf[index] as number) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return buf.toString('latin1', start, end);
  try {
    return strictUtf8.decode(buf.subarray(start, end));
  } catch {
    return buf.toString('latin1', start, end);
  }
}

/**
 * RFC 1035 §3.3.14: TXT RDATA (after its RDLENGTH at `offset`) as one or more character-strings,
 * read as dns-packet's decoder reads it (same error when a string runs past the RDATA), each
 * string straight to text.
 */
function readTxt(buf: Buffer, offset: number): string[] {
  let remaining = buf.readUInt16BE(offset);
  let at = offset + 2;
  const strings: string[] = [];
  while (remaining > 0) {
    const length = buf[at++] as number;
    remaining--;
    if (remaining < length) throw new Error('Buffer overflow');
    strings.push(textOfRange(buf, at, at + length));
    at += length;
    remaining -= length;
  }
  rdataOctetsRead = at - offset;
  return strings;
}

/** Where `readName` gathers a name's octets before making one string of them (a name's text is at most 254 octets). */
const nameScratch = Buffer.allocUnsafe(MAX_WIRE_NAME_OCTETS + 1);
/** How many octets the last `readName` consumed at its offset (as dns-packet's `name.decode.bytes`). */
let nameOctetsRead = 0;
/** How many octets the last `readSoa` or `readTxt` consumed, RDLENGTH included (as dns-packet's `decode.bytes`). */
let rdataOctetsRead = 0;
/** The state of the name being gathered by `gatherLabel`. */
let gathered = 0;
let gatherCanonical = false;
let gatherMail = false;
let gatheredPlain = true;

/** Appends one label to `nameScratch` ('.' between labels), lower-cased when canonical. */
const gatherLabel: LabelSink = (buf, at, length) => {
  if (gathered > 0) nameScratch[gathered++] = 0x2e; // '.'
  for (let index = at; index < at + length; index++) {
    let octet = buf[index] as number;
    if (octet >= 0x80 || (gatherMail && octet === 0x2e)) gatheredPlain = false;
    if (gatherCanonical && octet >= 0x41 && octet <= 0x5a) octet += 0x20; // A-Z: String.toLowerCase on ASCII
    nameScratch[gathered++] = octet;
  }
};

/**
 * The name at `offset`, walked by the one wire-name reader (`readWireName`, RFC 1035 §4.1.4),
 * canonical (lower case, no trailing dot) when `canonical` is set, with dns-packet's text for it.
 * It gathers the labels' octets and makes one string: this runs for every name of every message.
 * A name with octets outside ASCII, or (`mail`) a dot inside a label, is left to dns-packet's
 * per-label UTF-8 decoding and escaping, which this does not repeat.
 */
function readName(buf: Buffer, start: number, canonical: boolean, mail = false): string {
  gathered = 0;
  gatherCanonical = canonical;
  gatherMail = mail;
  gatheredPlain = true;
  nameOctetsRead = readWireName(buf, start, gatherLabel);
  let length = gathered;
  if (!gatheredPlain) {
    const text = codecs.name.decode(buf, start, { mail });
    return canonical ? canonicalName(text) : text;
  }
  if (length === 0) return canonical ? '' : '.';
  // canonicalName drops one trailing dot: one that ended the last label's own octets.
  if (canonical && nameScratch[length - 1] === 0x2e) length--;
  return nameScratch.toString('latin1', 0, length);
}

/** RFC 1035 §3.3.13: SOA RDATA (after its RDLENGTH at `offset`), as dns-packet's decoder reads it (RNAME as a mailbox), canonical names. */
function readSoa(buf: Buffer, offset: number): SoaData {
  let at = offset + 2;
  const mname = readName(buf, at, true);
  at += nameOctetsRead;
  const rname = readName(buf, at, true, true);
  at += nameOctetsRead;
  const data: SoaData = {
    mname,
    rname,
    serial: buf.readUInt32BE(at),
    refresh: buf.readUInt32BE(at + 4),
    retry: buf.readUInt32BE(at + 8),
    expire: buf.readUInt32BE(at + 12),
    minimum: buf.readUInt32BE(at + 16),
  };
  rdataOctetsRead = at + 20 - offset;
  return data;
}

/** The RDATA of one record of a type the engine knows, checked against RDLENGTH (RFC 1035 §3.2.1). */
function readRdata(buf: Buffer, offset: number, type: RecordType, rdlength: number): RecordData {
  let data: RecordData;
  let consumed: number;
  switch (type) {
    case 'A':
    case 'AAAA': {
      // RFC 1035 §3.4.1, RFC 3596 §2.2: exactly 4 or 16 octets.
      if (rdlength !== (type === 'A' ? 4 : 16)) throw new MalformedMessage(`${type} RDATA of ${rdlength} octets`);
      const codec = type === 'A' ? codecs.a : codecs.aaaa;
      data = codec.decode(buf, offset);
      consumed = codec.decode.bytes;
      break;
    }
    case 'NS':
    case 'CNAME':
    case 'PTR': {
      const codec = type === 'NS' ? codecs.ns : type === 'CNAME' ? codecs.cname : codecs.ptr;
      data = canonicalName(codec.decode(buf, offset));
      consumed = codec.decode.bytes;
      break;
    }
    case 'MX': {
      const mx = codecs.mx.decode(buf, offset);
      data = { preference: mx.preference, exchange: canonicalName(mx.exchange) } satisfies MxData;
      consumed = codecs.mx.decode.bytes;
      break;
    }
    case 'TXT': {
      // RFC 1035 §3.3.14: one or more <character-string>s.
      if (rdlength === 0) throw new MalformedMessage('TXT RDATA without a character-string');
      data = readTxt(buf, offset);
      consumed = rdataOctetsRead;
      break;
    }
    case 'SOA': {
      data = readSoa(buf, offset);
      consumed = rdataOctetsRead;
      break;
    }
  }
  // Every decoder counts the RDLENGTH field itself; the RDATA must be exactly what it announced.
  if (consumed !== rdlength + 2) throw new MalformedMessage(`${type} RDATA of ${consumed - 2} octets where RDLENGTH says ${rdlength}`);
  return data;
}

/** Reads `count` records from `offset` into `out` (OPT records into `opts`); returns the offset after them. */
function readRecords(buf: Buffer, offset: number, count: number, out: WireRecord[], opts: WireRecord[] | undefined): number {
  for (let index = 0; index < count; index++) {
    const name = readName(buf, offset, true);
    offset += nameOctetsRead;
    if (offset + 10 > buf.length) throw new MalformedMessage('a record runs past the end of the message');
    const type = buf.readUInt16BE(offset);
    const cls = buf.readUInt16BE(offset + 2);
    const ttl = buf.readUInt32BE(offset + 4);
    const rdlength = buf.readUInt16BE(offset + 8);
    if (offset + 10 + rdlength > buf.length) throw new MalformedMessage("a record's RDATA runs past the end of the message");
    if (type === TYPE_OPT && opts) {
      // RFC 6891 §6.1.2: CLASS is the UDP payload size, TTL the extended RCODE and flags.
      opts.push({ name, type, class: cls, ttl, data: undefined });
    } else {
      const known = recordTypeOf(type);
      out.push({
        name,
        type,
        class: cls,
        ttl: ttl > 0x7fffffff ? 0 : ttl, // RFC 2181 §8: a TTL with the top bit set is read as 0
        data: known && cls === CLASS_IN ? readRdata(buf, offset + 8, known, rdlength) : undefined,
      });
    }
    offset += 10 + rdlength;
  }
  return offset;
}

/**
 * Reads a whole message. Throws `MalformedMessage` when it is shorter than its header says, when a
 * name or record runs past the end, or when a record's RDATA does not match its type's format.
 */
export function readMessage(buf: Buffer): WireMessage {
  try {
    if (buf.length < HEADER_OCTETS) throw new MalformedMessage(`${buf.length} octets, shorter than a DNS header`);
    const id = buf.readUInt16BE(0);
    const flags = buf.readUInt16BE(2);
    const qdcount = buf.readUInt16BE(4);
    const ancount = buf.readUInt16BE(6);
    const nscount = buf.readUInt16BE(8);
    const arcount = buf.readUInt16BE(10);
    let offset = HEADER_OCTETS;
    const questions: WireQuestion[] = [];
    for (let index = 0; index < qdcount; index++) {
      const asSent = readName(buf, offset, false);
      offset += nameOctetsRead;
      if (offset + 4 > buf.length) throw new MalformedMessage('the question runs past the end of the message');
      questions.push({ name: canonicalName(asSent), asSent, type: buf.readUInt16BE(offset), class: buf.readUInt16BE(offset + 2) });
      offset += 4;
    }
    const questionBytes = buf.subarray(HEADER_OCTETS, offset);
    const answers: WireRecord[] = [];
    const authorities: WireRecord[] = [];
    const additionals: WireRecord[] = [];
    const opts: WireRecord[] = [];
    offset = readRecords(buf, offset, ancount, answers, undefined);
    offset = readRecords(buf, offset, nscount, authorities, undefined);
    readRecords(buf, offset, arcount, additionals, opts);
    const optRecord = opts[0];
    let rcode = flags & 0x000f;
    let opt: WireMessage['opt'];
    if (optRecord) {
      // RFC 6891 §6.1.3: TTL = EXTENDED-RCODE (8) | VERSION (8) | DO (1) | Z (15).
      rcode |= (optRecord.ttl >>> 24) << 4;
      opt = { udpPayloadSize: optRecord.class, version: (optRecord.ttl >>> 16) & 0xff, do: (optRecord.ttl & 0x8000) !== 0 };
    }
    return { id, flags, rcode, questions, questionBytes, answers, authorities, opt };
  } catch (error) {
    if (error instanceof MalformedMessage) throw error;
    // dns-packet's decoders and Buffer reads throw plain errors on truncated or looping names.
    throw new MalformedMessage(error instanceof Error ? error.message : String(error));
  }
}

/** Options of `encodeQuery`. */
export interface QueryOptions {
  id: number;
  /** Recursion desired (RFC 1035 §4.1.1); a stub asking a recursive resolver sets it. */
  rd: boolean;
  /** The UDP payload size advertised in an OPT record (RFC 6891 §6.2.5); none means no EDNS. */
  ednsUdpPayload: number | undefined;
}

/** RFC 6891 §6.1.2: an OPT record is 11 octets without options. */
const OPT_OCTETS = 11;

/**
 * A query for one question (RFC 1035 §4.1), written directly: it is one header, one uncompressed
 * name and at most one OPT record, and dns-packet's general encoder costs about 15 µs for it.
 * `name` is a canonical name that passed `dnsNameProblem` ('' is the root).
 */
export function encodeQuery(name: string, type: RecordType, options: QueryOptions): Buffer {
  const edns = options.ednsUdpPayload !== undefined;
  // The name is written whole, then each dot becomes the length of the label after it (a dot is
  // never part of a multi-octet UTF-8 sequence): one write, no split into labels.
  const textOctets = name === '' ? 0 : Buffer.byteLength(name);
  const nameEnd = HEADER_OCTETS + (textOctets === 0 ? 0 : textOctets + 1); // where the root label goes
  const buf = Buffer.allocUnsafe(nameEnd + 1 + 4 + (edns ? OPT_OCTETS : 0));
  buf.writeUInt16BE(options.id, 0);
  buf.writeUInt16BE(options.rd ? FLAG.RD : 0, 2);
  buf.writeUInt16BE(1, 4); // QDCOUNT
  buf.writeUInt32BE(0, 6); // ANCOUNT, NSCOUNT
  buf.writeUInt16BE(edns ? 1 : 0, 10); // ARCOUNT
  if (textOctets > 0) {
    buf.write(name, HEADER_OCTETS + 1, textOctets, 'utf8');
    let lengthAt = HEADER_OCTETS;
    for (let index = HEADER_OCTETS + 1; index < nameEnd; index++) {
      if (buf[index] !== 0x2e) continue;
      buf[lengthAt] = index - lengthAt - 1;
      lengthAt = index;
    }
    buf[lengthAt] = nameEnd - lengthAt - 1;
  }
  let offset = nameEnd;
  buf[offset++] = 0; // the root label ends the name
  buf.writeUInt16BE(TYPE_CODES[type], offset);
  buf.writeUInt16BE(CLASS_IN, offset + 2);
  offset += 4;
  if (edns) {
    // RFC 6891 §6.1.2: owner root, TYPE 41, CLASS = payload size, TTL 0 (version 0, DO clear), no RDATA.
    buf[offset] = 0;
    buf.writeUInt16BE(TYPE_OPT, offset + 1);
    buf.writeUInt16BE(options.ednsUdpPayload as number, offset + 3);
    buf.writeUInt32BE(0, offset + 5);
    buf.writeUInt16BE(0, offset + 9);
  }
  return buf;
}

/** RFC 1035 §3.3: a <character-string> is one length octet followed by at most 255 octets. */
export const MAX_CHARACTER_STRING_OCTETS = 255;

/**
 * The character-strings of one TXT record as they go on the wire: each string's UTF-8 octets in
 * pieces of at most 255 (RFC 1035 §3.3.14; dns-packet writes the length into one octet and would
 * corrupt a longer one), and one empty string for a record without any, since TXT RDATA holds one
 * or more character-strings.
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

/** One resource record in wire form (uncompressed), owned by `owner` as given. */
export function encodeRecord(owner: string, type: RecordType, ttl: number, data: RecordData): Buffer {
  const name = owner === '' ? '.' : owner;
  const base = { name, class: 'IN' as const, ttl };
  switch (type) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'PTR':
    case 'NS':
      return answerCodec.encode({ ...base, type, data: (data as string) || '.' });
    case 'MX': {
      const mx = data as MxData;
      return answerCodec.encode({ ...base, type, data: { preference: mx.preference, exchange: mx.exchange || '.' } });
    }
    case 'SOA': {
      const soa = data as SoaData;
      return answerCodec.encode({ ...base, type, data: { ...soa, mname: soa.mname || '.', rname: soa.rname || '.' } });
    }
    case 'TXT':
      return answerCodec.encode({ ...base, type, data: splitCharacterStrings(data as string[]) });
  }
}

/** RFC 6891 §6.1.2: an OPT record with our UDP payload size and the high bits of an extended RCODE. */
export function encodeOpt(udpPayloadSize: number, rcode: number, dnssecOk = false): Buffer {
  return answerCodec.encode({
    name: '.',
    type: 'OPT',
    udpPayloadSize,
    extendedRcode: rcode >> 4,
    ednsVersion: 0,
    flags: dnssecOk ? 0x8000 : 0, // RFC 3225 §3: DO is echoed in the response
    flag_do: dnssecOk,
    options: [],
  });
}

/** The parts of a response header (RFC 1035 §4.1.1). */
export interface ResponseHeader {
  id: number;
  /** Header flag bits other than QR and RCODE (AA, TC, RD, RA). */
  flags: number;
  /** The full RCODE; its high bits go in the OPT record, which the caller must then add. */
  rcode: number;
}

/**
 * A response: header, the question octets as the query sent them, then already-encoded records.
 * QR is set and opcode 0 (QUERY).
 */
export function encodeResponse(
  header: ResponseHeader,
  questionBytes: Buffer,
  questionCount: number,
  answers: readonly Buffer[],
  authorities: readonly Buffer[],
  additionals: readonly Buffer[],
): Buffer {
  const head = Buffer.alloc(HEADER_OCTETS);
  head.writeUInt16BE(header.id, 0);
  head.writeUInt16BE(FLAG.QR | (header.flags & ~FLAG.QR & 0x7ff0) | (header.rcode & 0xf), 2);
  head.writeUInt16BE(questionCount, 4);
  head.writeUInt16BE(answers.length, 6);
  head.writeUInt16BE(authorities.length, 8);
  head.writeUInt16BE(additionals.length, 10);
  return Buffer.concat([head, questionBytes, ...answers, ...authorities, ...additionals]);
}
