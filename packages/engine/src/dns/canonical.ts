/**
 * The wire as DNSSEC needs it: records kept as raw RDATA octets (never re-encoded from decoded
 * objects, which does not round-trip), the canonical form and order of RFC 4034 §6, a message
 * reader and writer for the validator's queries and the signed-zone server, and the raw query port
 * (`RawQuery`) the network resolver answers and the validator asks through. It lives in the DNS
 * layer, so the resolver does not import the validator's folder; names are read by the one wire-name
 * reader (`readWireName`, RFC 1035 §4.1.4) and types named by the one table (record-types.ts).
 *
 * Names are held in presentation form, lower case, without the trailing dot ('' is the root); an
 * octet that is not a printable character other than '.' and '\' is written `\DDD` (RFC 1035 §5.1),
 * so every wire name round-trips.
 */

import { typeCode, typeCodesOf, typeName } from './record-types.js';

/** One resource record with its RDATA as octets (names inside it uncompressed). */
export interface RawRecord {
  /** Canonical owner name (lower case, no trailing dot). */
  name: string;
  type: number;
  class: number;
  ttl: number;
  rdata: Buffer;
}

/** RFC 1035 §3.2.2, RFC 3596, RFC 4034, RFC 5155, RFC 6698: the type codes DNSSEC needs (from the one table, record-types.ts). */
export const TYPE = typeCodesOf([
  'A', 'NS', 'CNAME', 'SOA', 'PTR', 'MX', 'TXT', 'AAAA', 'SRV', 'DNAME', 'OPT',
  'DS', 'RRSIG', 'NSEC', 'DNSKEY', 'NSEC3', 'NSEC3PARAM', 'TLSA', 'ANY',
]);

export { typeCode, typeName };

/** RFC 1035 §2.3.4: a name is at most 255 octets on the wire. */
export const MAX_WIRE_NAME_OCTETS = 255;

/** Thrown by the readers on a message or name that breaks the format; callers turn it into a value. */
export class WireFormatError extends Error {}

/** The labels of a presentation name as octets, most specific first ('' has none). */
export function nameLabels(name: string): Buffer[] {
  if (name === '' || name === '.') return [];
  const labels: Buffer[] = [];
  let current: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const ch = name.charCodeAt(i);
    if (ch === 0x5c /* \ */) {
      const digits = /^\d{3}/.exec(name.slice(i + 1, i + 4));
      if (digits) {
        current.push(Number(digits[0]) & 0xff);
        i += 3;
      } else {
        current.push(name.charCodeAt(i + 1));
        i += 1;
      }
    } else if (ch === 0x2e /* . */) {
      if (i === name.length - 1) break; // trailing dot
      labels.push(Buffer.from(current));
      current = [];
    } else {
      current.push(ch & 0xff);
    }
  }
  labels.push(Buffer.from(current));
  return labels;
}

/** A label's octets in presentation form (lower case is the caller's business). */
export function labelText(octets: Buffer): string {
  let text = '';
  for (const byte of octets) {
    if (byte === 0x2e || byte === 0x5c) text += `\\${String.fromCharCode(byte)}`;
    else if (byte > 0x20 && byte < 0x7f) text += String.fromCharCode(byte);
    else text += `\\${String(byte).padStart(3, '0')}`;
  }
  return text;
}

/** Lower case ASCII letters only (RFC 4034 §6.2: "uppercase US-ASCII letters … replaced by … lowercase"). */
export function lowerName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The uncompressed wire form of a presentation name, case kept. */
export function nameToWire(name: string): Buffer {
  const labels = nameLabels(name);
  const parts: Buffer[] = [];
  let total = 1;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) throw new WireFormatError(`the name "${name}" has a label of ${label.length} octets`);
    parts.push(Buffer.from([label.length]), label);
    total += label.length + 1;
  }
  if (total > MAX_WIRE_NAME_OCTETS) throw new WireFormatError(`the name "${name}" is longer than 255 octets`);
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** RFC 1035 §4.1.4: the top two bits of a length octet that mark a compression pointer. */
const POINTER_BITS = 0xc0;

/** Receives one label of a name being read: its octets are `buf[at, at + length)`. */
export type LabelSink = (buf: Buffer, at: number, length: number) => void;

/**
 * The one reader of names on the wire (RFC 1035 §3.1 labels, §4.1.4 compression), for the message
 * codec (wire.ts) and the DNSSEC codec (here): walks the name at `start`, hands each label to
 * `label`, and returns how many octets the name takes at `start` (up to its first pointer or its
 * root label). A pointer must point before the labels it continues ("a prior occurrence"), so no
 * name loops; a label type other than 00 and 11, a name past the end of the buffer or longer than
 * 255 octets (§2.3.4) is a `WireFormatError`.
 */
export function readWireName(buf: Buffer, start: number, label: LabelSink): number {
  let offset = start;
  let floor = start;
  let octets = 1;
  let consumed = -1;
  for (;;) {
    if (offset >= buf.length) throw new WireFormatError('a name runs past the end of the message');
    const length = buf[offset] as number;
    if (length === 0) {
      return consumed === -1 ? offset + 1 - start : consumed;
    }
    if ((length & POINTER_BITS) === POINTER_BITS) {
      if (offset + 1 >= buf.length) throw new WireFormatError('a compression pointer runs past the end');
      const target = ((length & 0x3f) << 8) | (buf[offset + 1] as number);
      if (target >= floor) throw new WireFormatError('a compression pointer that does not point back (a loop?)');
      if (consumed === -1) consumed = offset + 2 - start;
      offset = floor = target;
      continue;
    }
    if ((length & POINTER_BITS) !== 0) throw new WireFormatError('a label with an unknown type');
    if (offset + 1 + length > buf.length) throw new WireFormatError('a label runs past the end of the message');
    octets += length + 1;
    if (octets > MAX_WIRE_NAME_OCTETS) throw new WireFormatError('a name longer than 255 octets');
    label(buf, offset + 1, length);
    offset += 1 + length;
  }
}

let presentationLabels: string[] = [];
const presentationLabel: LabelSink = (buf, at, length) => {
  presentationLabels.push(labelText(buf.subarray(at, at + length)));
};

/** Reads a (possibly compressed) name at `offset` (`readWireName`): its presentation form (case kept) and where it ends. */
export function readName(buf: Buffer, offset: number): { name: string; end: number } {
  presentationLabels = [];
  const octets = readWireName(buf, offset, presentationLabel);
  return { name: presentationLabels.join('.'), end: offset + octets };
}

/** The number of labels of a name, the root being 0 (RFC 4034 §3.1.3 does not count a leading `*`: the caller does). */
export function labelCount(name: string): number {
  return nameLabels(name).length;
}

/** The parent of a name ('' for a TLD and for the root). */
export function parentOf(name: string): string {
  const labels = splitLabels(name);
  return labels.slice(1).join('.');
}

/** The presentation labels of a name (escapes kept), most specific first. */
export function splitLabels(name: string): string[] {
  if (name === '') return [];
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '\\') {
      i += /^\d{3}/.test(name.slice(i + 1, i + 4)) ? 3 : 1;
    } else if (name[i] === '.') {
      out.push(name.slice(start, i));
      start = i + 1;
    }
  }
  out.push(name.slice(start));
  return out;
}

/** True when `name` is `ancestor` or below it (label-wise). */
export function isSubdomain(name: string, ancestor: string): boolean {
  if (ancestor === '') return true;
  return name === ancestor || name.endsWith(`.${ancestor}`);
}

/** The `count` rightmost labels of `name`. */
export function lastLabels(name: string, count: number): string {
  const labels = splitLabels(name);
  return labels.slice(labels.length - count).join('.');
}

/** RFC 4034 §6.1: canonical DNS name order (label by label from the right, octets of lower-cased labels). */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  const la = nameLabels(lowerName(a));
  const lb = nameLabels(lowerName(b));
  let i = la.length - 1;
  let j = lb.length - 1;
  while (i >= 0 && j >= 0) {
    const c = Buffer.compare(la[i] as Buffer, lb[j] as Buffer);
    if (c !== 0) return c;
    i--;
    j--;
  }
  return (i >= 0 ? 1 : 0) - (j >= 0 ? 1 : 0);
}

/** Lower-cases the ASCII letters of an uncompressed wire name at `offset`; returns where it ends. */
function lowerWireName(buf: Buffer, offset: number): number {
  let at = offset;
  while (at < buf.length) {
    const length = buf[at] as number;
    if (length === 0) return at + 1;
    for (let k = at + 1; k <= at + length && k < buf.length; k++) {
      const c = buf[k] as number;
      if (c >= 0x41 && c <= 0x5a) buf[k] = c + 0x20;
    }
    at += 1 + length;
  }
  return at;
}

/** Where the uncompressed wire name at `offset` ends. */
function skipWireName(buf: Buffer, offset: number): number {
  let at = offset;
  while (at < buf.length && buf[at] !== 0) at += 1 + (buf[at] as number);
  return at + 1;
}

/**
 * RFC 4034 §6.2 (as corrected by RFC 6840 §5.1: not NSEC's next name): the RDATA with the ASCII
 * letters of its embedded names lower-cased, for the types that carry names there.
 */
export function canonicalRdata(type: number, rdata: Buffer): Buffer {
  let names: number[] | undefined; // offsets of names, computed as we go
  const out = Buffer.from(rdata);
  switch (type) {
    case TYPE.NS: case 3: case 4: case TYPE.CNAME: case 7: case 8: case 9: case TYPE.PTR: case TYPE.DNAME:
      lowerWireName(out, 0);
      return out;
    case TYPE.SOA: case 14 /* MINFO */: case 17 /* RP */: {
      const second = lowerWireName(out, 0);
      lowerWireName(out, second);
      return out;
    }
    case TYPE.MX: case 18 /* AFSDB */: case 21 /* RT */: case 36 /* KX */:
      lowerWireName(out, 2);
      return out;
    case TYPE.SRV:
      lowerWireName(out, 6);
      return out;
    case TYPE.RRSIG:
      lowerWireName(out, 18);
      return out;
    default:
      void names;
      return out;
  }
}

/** Types whose RDATA may hold compressed names (RFC 3597 §4: only RFC 1035's well-known types). */
const COMPRESSIBLE = new Set<number>([TYPE.NS, 3, 4, TYPE.CNAME, TYPE.SOA, 7, 8, 9, TYPE.PTR, 14, TYPE.MX]);

/** The RDATA of a record read at `offset` (length `rdlength`) with compressed names expanded. */
function readRdata(buf: Buffer, type: number, offset: number, rdlength: number): Buffer {
  const raw = buf.subarray(offset, offset + rdlength);
  if (!COMPRESSIBLE.has(type)) return Buffer.from(raw);
  const end = offset + rdlength;
  const parts: Buffer[] = [];
  let at = offset;
  const name = (): void => {
    const read = readName(buf, at);
    if (read.end > end) throw new WireFormatError(`a ${typeName(type)} name runs past its RDATA`);
    parts.push(nameToWire(read.name));
    at = read.end;
  };
  const fixed = (count: number): void => {
    if (at + count > end) throw new WireFormatError(`${typeName(type)} RDATA too short`);
    parts.push(buf.subarray(at, at + count));
    at += count;
  };
  switch (type) {
    case TYPE.SOA: name(); name(); fixed(20); break;
    case 14: name(); name(); break;
    case TYPE.MX: fixed(2); name(); break;
    default: name();
  }
  if (at !== end) throw new WireFormatError(`${typeName(type)} RDATA of the wrong length`);
  return Buffer.concat(parts);
}

/** A message as the validator reads it. */
export interface RawMessage {
  id: number;
  flags: number;
  rcode: number;
  question: { name: string; type: number; class: number } | undefined;
  answer: RawRecord[];
  authority: RawRecord[];
  additional: RawRecord[];
  /** The OPT record's fields, when there is one (RFC 6891 §6.1.3), and its Extended DNS Error (RFC 8914 §2). */
  opt: { udpPayloadSize: number; version: number; do: boolean; ede?: { code: number; text: string } } | undefined;
}

/** Reads a whole message; throws `WireFormatError` on any malformation. */
export function readRawMessage(buf: Buffer): RawMessage {
  try {
    if (buf.length < 12) throw new WireFormatError('shorter than a DNS header');
    const flags = buf.readUInt16BE(2);
    const counts = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)] as const;
    let at = 12;
    let question: RawMessage['question'];
    for (let q = 0; q < counts[0]; q++) {
      const read = readName(buf, at);
      at = read.end;
      if (at + 4 > buf.length) throw new WireFormatError('the question runs past the end');
      if (q === 0) question = { name: lowerName(read.name), type: buf.readUInt16BE(at), class: buf.readUInt16BE(at + 2) };
      at += 4;
    }
    const sections: RawRecord[][] = [[], [], []];
    let opt: RawMessage['opt'];
    let rcode = flags & 0xf;
    for (let s = 0; s < 3; s++) {
      for (let r = 0; r < (counts[s + 1] as number); r++) {
        const read = readName(buf, at);
        at = read.end;
        if (at + 10 > buf.length) throw new WireFormatError('a record runs past the end');
        const type = buf.readUInt16BE(at);
        const cls = buf.readUInt16BE(at + 2);
        const ttl = buf.readUInt32BE(at + 4);
        const rdlength = buf.readUInt16BE(at + 8);
        at += 10;
        if (at + rdlength > buf.length) throw new WireFormatError("a record's RDATA runs past the end");
        if (type === TYPE.OPT) {
          rcode |= (ttl >>> 24) << 4;
          opt = { udpPayloadSize: cls, version: (ttl >>> 16) & 0xff, do: (ttl & 0x8000) !== 0 };
          // RFC 6891 §6.1.2 options; RFC 8914 §2: option 15 is INFO-CODE (16 bits) and EXTRA-TEXT.
          for (let o = at; o + 4 <= at + rdlength; ) {
            const code = buf.readUInt16BE(o);
            const length = buf.readUInt16BE(o + 2);
            if (code === 15 && length >= 2 && o + 4 + length <= at + rdlength) {
              opt.ede = { code: buf.readUInt16BE(o + 4), text: buf.subarray(o + 6, o + 4 + length).toString('utf8') };
            }
            o += 4 + length;
          }
        } else {
          (sections[s] as RawRecord[]).push({ name: lowerName(read.name), type, class: cls, ttl: ttl > 0x7fffffff ? 0 : ttl, rdata: readRdata(buf, type, at, rdlength) });
        }
        at += rdlength;
      }
    }
    return { id: buf.readUInt16BE(0), flags, rcode, question, answer: sections[0] as RawRecord[], authority: sections[1] as RawRecord[], additional: sections[2] as RawRecord[], opt };
  } catch (error) {
    if (error instanceof WireFormatError) throw error;
    throw new WireFormatError(error instanceof Error ? error.message : String(error));
  }
}

/** One record in uncompressed wire form. */
export function encodeRawRecord(record: RawRecord, owner: string = record.name): Buffer {
  const name = nameToWire(owner);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(record.type, 0);
  fixed.writeUInt16BE(record.class, 2);
  fixed.writeUInt32BE(record.ttl >>> 0, 4);
  fixed.writeUInt16BE(record.rdata.length, 8);
  return Buffer.concat([name, fixed, record.rdata]);
}

/** A query with EDNS (RFC 6891), DO (RFC 3225) and CD (RFC 4035 §3.2.2) as asked. */
export function encodeRawQuery(id: number, name: string, type: number, options: { rd: boolean; do: boolean; cd: boolean; udpPayload: number }): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(id, 0);
  head.writeUInt16BE((options.rd ? 0x0100 : 0) | (options.cd ? 0x0010 : 0), 2); // RFC 1035 §4.1.1 RD, RFC 4035 §3.2.2 CD
  head.writeUInt16BE(1, 4);
  head.writeUInt16BE(1, 10);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(TYPE.OPT, 1);
  opt.writeUInt16BE(options.udpPayload, 3);
  opt.writeUInt32BE(options.do ? 0x8000 : 0, 5);
  return Buffer.concat([head, nameToWire(name), tail, opt]);
}

/** A set of records of one owner, type and class. */
export interface RawRRset {
  name: string;
  type: number;
  class: number;
  ttl: number;
  rdatas: Buffer[];
}

/**
 * Groups records into RRsets, in order of first appearance, dropping duplicate RDATA (RFC 2181 §5:
 * an RRset holds each record once). Linear: each RDATA is looked up by its octets in a hash set, not
 * compared with every other (2,700 records once cost 3.6 million comparisons).
 */
export function groupRRsets(records: readonly RawRecord[]): RawRRset[] {
  const sets = new Map<string, { set: RawRRset; seen: Set<string> }>();
  for (const record of records) {
    const key = `${record.name}\u0000${record.type}\u0000${record.class}`;
    let entry = sets.get(key);
    if (!entry) {
      entry = { set: { name: record.name, type: record.type, class: record.class, ttl: record.ttl, rdatas: [] }, seen: new Set() };
      sets.set(key, entry);
    }
    const octets = record.rdata.toString('latin1');
    if (!entry.seen.has(octets)) {
      entry.seen.add(octets);
      entry.set.rdatas.push(record.rdata);
    }
    entry.set.ttl = Math.min(entry.set.ttl, record.ttl);
  }
  return [...sets.values()].map((entry) => entry.set);
}

/** A response to one raw query, or why there is none. */
export type RawResponse = { kind: 'response'; message: RawMessage } | { kind: 'error'; detail: string };

/**
 * The port the validator asks through: one question with EDNS DO and CD set (RFC 4035 §4.9.2,
 * RFC 6840 §5.9), the whole message back with its records as raw octets.
 */
export type RawQuery = (name: string, type: number) => Promise<RawResponse>;

/** RFC 4034 §4.1.2 (and RFC 5155 §3.2.1): the windowed type bit map of a set of type codes (duplicates count once). */
export function typeBitmap(codes: readonly number[]): Buffer {
  const windows = new Map<number, Set<number>>();
  for (const code of codes) {
    const bits = windows.get(code >> 8) ?? new Set<number>();
    bits.add(code & 0xff);
    windows.set(code >> 8, bits);
  }
  const parts: Buffer[] = [];
  for (const window of [...windows.keys()].sort((a, b) => a - b)) {
    const bits = [...windows.get(window)!];
    const map = Buffer.alloc((Math.max(...bits) >> 3) + 1);
    for (const bit of bits) map[bit >> 3]! |= 0x80 >> (bit & 7);
    parts.push(Buffer.from([window, map.length]), map);
  }
  return Buffer.concat(parts);
}

/** RFC 4648 §7: the base32hex alphabet (RFC 5155 §3.3 writes hashed owner names in it). */
const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** RFC 4648 §7 base32hex without padding, lower case (as NSEC3 owner labels are written). */
export function base32hexEncode(octets: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of octets) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32HEX[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 4648 §7 base32hex decoding (case-insensitive, no padding); undefined when the text is not base32hex. */
export function base32hexDecode(text: string): Buffer | undefined {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text.toLowerCase()) {
    const v = BASE32HEX.indexOf(ch);
    if (v < 0) return undefined;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
