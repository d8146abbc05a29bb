/**
 * Reads signed zone files as `ldns-signzone` and `dnssec-signzone -O full` write them (RFC 1035 §5,
 * one record per line, `(` `)` joined) into raw records: the DNSSEC types (DNSKEY, RRSIG, NSEC, NSEC3,
 * NSEC3PARAM, DS: RFC 4034 §2.2–5.3, RFC 5155 §3.3, §4.3), TLSA (RFC 6698 §2.2) and the ordinary
 * ones (SOA, NS, A, AAAA, MX, TXT, CNAME, PTR, SRV), plus RFC 3597 `\# n hex`. `$ORIGIN`, `$TTL`,
 * `@` and relative names are read; `$INCLUDE` is not. An error names the record. The words come from
 * the one master-file tokenizer (lexer.ts), which zones/parse.ts reads with too.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { base32hexDecode, lowerName, nameToWire, type RawRecord, TYPE, typeBitmap, typeCode, WireFormatError } from '../dns/canonical.js';
import { Lexer, ZoneSyntaxError } from './lexer.js';

/** A line of a zone file that cannot be read. */
export class SignedZoneSyntaxError extends Error {}

/** What a loaded zone file gives: its origin (the SOA's owner) and its records. */
export interface SignedZoneFile {
  origin: string;
  records: RawRecord[];
}

/** The entries of a zone file as words (quotes and escapes as written), through the one tokenizer (lexer.ts); a blank owner is ''. */
function tokenize(text: string, file: string): string[][] {
  const lexer = new Lexer(text, file);
  const lines: string[][] = [];
  try {
    for (let entry = lexer.next(); entry; entry = lexer.next()) {
      const words = entry.tokens.map((token) => token.raw);
      lines.push(entry.blankOwner ? ['', ...words] : words);
    }
  } catch (error) {
    if (error instanceof ZoneSyntaxError) throw new SignedZoneSyntaxError(error.message);
    throw error;
  }
  return lines;
}

/** A character-string's octets from its presentation form (quoted or not, `\X` and `\DDD` escapes). */
function characterString(token: string): Buffer {
  const body = token.startsWith('"') ? token.slice(1, -1) : token;
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') {
      const digits = /^\d{3}/.exec(body.slice(i + 1, i + 4));
      if (digits) {
        out.push(Number(digits[0]));
        i += 3;
      } else {
        out.push(...Buffer.from(body[i + 1] ?? '', 'utf8'));
        i += 1;
      }
    } else {
      out.push(...Buffer.from(body[i] as string, 'utf8'));
    }
  }
  if (out.length > 255) throw new SignedZoneSyntaxError('a character-string longer than 255 octets');
  return Buffer.concat([Buffer.from([out.length]), Buffer.from(out)]);
}

/** RFC 4034 §3.2: YYYYMMDDHHmmSS (UTC) or a plain number of seconds. */
export function parseSignatureTime(token: string): number {
  if (/^\d{14}$/.test(token)) {
    const t = Date.UTC(+token.slice(0, 4), +token.slice(4, 6) - 1, +token.slice(6, 8), +token.slice(8, 10), +token.slice(10, 12), +token.slice(12, 14));
    return Math.floor(t / 1000) >>> 0;
  }
  if (/^\d{1,10}$/.test(token)) return Number(token) >>> 0;
  throw new SignedZoneSyntaxError(`"${token}" is not a signature time`);
}

/** RFC 4648 §7 base32hex decoding (case-insensitive, no padding). */
function base32hex(text: string): Buffer {
  const octets = base32hexDecode(text);
  if (octets === undefined) throw new SignedZoneSyntaxError(`"${text}" is not base32hex`);
  return octets;
}

function hex(tokens: string[]): Buffer {
  const text = tokens.join('');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) throw new SignedZoneSyntaxError(`"${text.slice(0, 20)}" is not hexadecimal`);
  return Buffer.from(text, 'hex');
}

function base64(tokens: string[]): Buffer {
  const text = tokens.join('');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new SignedZoneSyntaxError(`"${text.slice(0, 20)}" is not base64`);
  return Buffer.from(text, 'base64');
}

function u8(token: string | undefined): Buffer {
  const n = Number(token);
  if (!Number.isInteger(n) || n < 0 || n > 255) throw new SignedZoneSyntaxError(`"${token}" is not an 8-bit number`);
  return Buffer.from([n]);
}
function u16(token: string | undefined): Buffer {
  const n = Number(token);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new SignedZoneSyntaxError(`"${token}" is not a 16-bit number`);
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function types(tokens: string[]): number[] {
  return tokens.map((t) => {
    const code = typeCode(t);
    if (code === undefined) throw new SignedZoneSyntaxError(`unknown type "${t}" in a type bit map`);
    return code;
  });
}

/** The RDATA of one record from its presentation tokens. */
function rdataOf(type: number, tokens: string[], absolute: (name: string) => string): Buffer {
  const name = (token: string | undefined): Buffer => nameToWire(absolute(token ?? ''));
  if (tokens[0] === '\\#') return hex(tokens.slice(2)); // RFC 3597 §5
  switch (type) {
    case TYPE.A:
      if (!isIPv4(tokens[0] ?? '')) throw new SignedZoneSyntaxError(`"${tokens[0]}" is not an IPv4 address`);
      return Buffer.from((tokens[0] as string).split('.').map(Number));
    case TYPE.AAAA: {
      if (!isIPv6(tokens[0] ?? '')) throw new SignedZoneSyntaxError(`"${tokens[0]}" is not an IPv6 address`);
      return ipv6Octets(tokens[0] as string);
    }
    case TYPE.NS: case TYPE.CNAME: case TYPE.PTR: case TYPE.DNAME:
      return name(tokens[0]);
    case TYPE.MX:
      return Buffer.concat([u16(tokens[0]), name(tokens[1])]);
    case TYPE.SRV:
      return Buffer.concat([u16(tokens[0]), u16(tokens[1]), u16(tokens[2]), name(tokens[3])]);
    case TYPE.TXT:
      return Buffer.concat(tokens.map(characterString));
    case TYPE.SOA:
      return Buffer.concat([name(tokens[0]), name(tokens[1]), ...tokens.slice(2, 7).map((t) => u32(Number(t)))]);
    case TYPE.DS:
      return Buffer.concat([u16(tokens[0]), u8(tokens[1]), u8(tokens[2]), hex(tokens.slice(3))]);
    case TYPE.DNSKEY:
      return Buffer.concat([u16(tokens[0]), u8(tokens[1]), u8(tokens[2]), base64(tokens.slice(3))]);
    case TYPE.RRSIG: {
      const covered = typeCode(tokens[0] ?? '');
      if (covered === undefined) throw new SignedZoneSyntaxError(`unknown type covered "${tokens[0]}"`);
      return Buffer.concat([
        u16(String(covered)), u8(tokens[1]), u8(tokens[2]), u32(Number(tokens[3])),
        u32(parseSignatureTime(tokens[4] ?? '')), u32(parseSignatureTime(tokens[5] ?? '')), u16(tokens[6]),
        name(tokens[7]), base64(tokens.slice(8)),
      ]);
    }
    case TYPE.NSEC:
      return Buffer.concat([name(tokens[0]), typeBitmap(types(tokens.slice(1)))]);
    case TYPE.NSEC3: {
      const salt = tokens[3] === '-' ? Buffer.alloc(0) : hex([tokens[3] ?? '']);
      const next = base32hex(tokens[4] ?? '');
      return Buffer.concat([u8(tokens[0]), u8(tokens[1]), u16(tokens[2]), Buffer.from([salt.length]), salt, Buffer.from([next.length]), next, typeBitmap(types(tokens.slice(5)))]);
    }
    case TYPE.NSEC3PARAM: {
      const salt = tokens[3] === '-' ? Buffer.alloc(0) : hex([tokens[3] ?? '']);
      return Buffer.concat([u8(tokens[0]), u8(tokens[1]), u16(tokens[2]), Buffer.from([salt.length]), salt]);
    }
    case TYPE.TLSA:
      return Buffer.concat([u8(tokens[0]), u8(tokens[1]), u8(tokens[2]), hex(tokens.slice(3))]);
    default:
      throw new SignedZoneSyntaxError(`type ${type} needs the RFC 3597 form (\\# length hex)`);
  }
}

function ipv6Octets(text: string): Buffer {
  const [head = '', tail] = text.split('::');
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** Reads one zone file's text. `origin` is the starting `$ORIGIN` (the SOA's owner decides otherwise). */
export function parseSignedZone(text: string, options: { origin?: string; file?: string } = {}): SignedZoneFile {
  let origin = lowerName((options.origin ?? '').replace(/\.$/, ''));
  let defaultTtl = 3600;
  let previous = '';
  let zoneOrigin: string | undefined;
  const records: RawRecord[] = [];
  const absolute = (n: string): string => {
    if (n === '@') return origin;
    if (n.endsWith('.') && !n.endsWith('\\.')) return n === '.' ? '' : n.slice(0, -1);
    return origin === '' ? n : `${n}.${origin}`;
  };
  tokenize(text, options.file ?? '<zone>').forEach((tokens, index) => {
    try {
      if (tokens[0] === '$ORIGIN') {
        origin = lowerName(absolute(tokens[1] ?? '.'));
        return;
      }
      if (tokens[0] === '$TTL') {
        defaultTtl = Number(tokens[1]);
        return;
      }
      if (tokens[0]?.startsWith('$')) throw new SignedZoneSyntaxError(`${tokens[0]} is not supported here`);
      const owner = tokens[0] === '' ? previous : lowerName(absolute(tokens[0] as string));
      previous = owner;
      let at = 1;
      let ttl = defaultTtl;
      for (let k = 0; k < 2; k++) {
        const t = tokens[at];
        if (t !== undefined && /^\d+$/.test(t)) {
          ttl = Number(t);
          at++;
        } else if (t !== undefined && /^IN$/i.test(t)) {
          at++;
        }
      }
      const type = typeCode(tokens[at] ?? '');
      if (type === undefined) throw new SignedZoneSyntaxError(`unknown type "${tokens[at]}"`);
      const rdata = rdataOf(type, tokens.slice(at + 1), absolute);
      if (type === TYPE.SOA && zoneOrigin === undefined) zoneOrigin = owner;
      records.push({ name: owner, type, class: 1, ttl, rdata });
    } catch (error) {
      if (error instanceof SignedZoneSyntaxError || error instanceof WireFormatError) {
        throw new SignedZoneSyntaxError(`${options.file ?? '<zone>'}: record ${index + 1}: ${error.message}`);
      }
      throw error;
    }
  });
  if (zoneOrigin === undefined) throw new SignedZoneSyntaxError(`${options.file ?? '<zone>'}: no SOA record`);
  return { origin: zoneOrigin, records };
}
