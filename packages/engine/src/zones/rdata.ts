/**
 * The RDATA of the record types a real zone export holds beside the ones the checks read (issue 42):
 * CAA (RFC 8659 §4.1.1), SRV (RFC 2782), TLSA and SMIMEA (RFC 6698 §2.2, RFC 8162), DS and CDS
 * (RFC 4034 §5.3, RFC 7344), DNSKEY and CDNSKEY (RFC 4034 §2.2), RRSIG (§3.2), NSEC (§4.2), NSEC3 and
 * NSEC3PARAM (RFC 5155 §3.3, §4.3), SVCB and HTTPS (RFC 9460 §2.1), DNAME (RFC 6672 §2.1), SSHFP
 * (RFC 4255 §3.2), HINFO (RFC 1035 §3.3.2), NAPTR (RFC 3403 §4), OPENPGPKEY (RFC 7929 §2.3), URI
 * (RFC 7553 §4.4), and any type in the RFC 3597 §5 generic form `\# <length> <hex>`.
 *
 * Each is read from its presentation form into its wire form (uncompressed, names canonical), so a
 * zone loads whole and a server could answer them; the checks themselves read only `RecordType`.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { typeCode, typeCodesOf, typeName } from '../dns/record-types.js';
import { base32hexDecode, nameToWire, typeBitmap } from '../dns/canonical.js';

/** The types read here, by mnemonic, with their IANA codes (RFC 6895 §3.1 registry; the one table, dns/record-types.ts). */
export const OTHER_RECORD_TYPES: Readonly<Record<string, number>> = typeCodesOf([
  'HINFO', 'SRV', 'NAPTR', 'DNAME', 'DS', 'SSHFP', 'RRSIG', 'NSEC', 'DNSKEY', 'NSEC3', 'NSEC3PARAM', 'TLSA',
  'SMIMEA', 'CDS', 'CDNSKEY', 'OPENPGPKEY', 'SVCB', 'HTTPS', 'URI', 'CAA',
]);

/** Registered types with no presentation reader here: accepted only in the RFC 3597 `\#` form. */
export const GENERIC_ONLY_RECORD_TYPES: Readonly<Record<string, number>> = typeCodesOf([
  'MD', 'MF', 'MB', 'MG', 'MR', 'NULL', 'WKS', 'MINFO', 'RP', 'AFSDB', 'X25', 'NSAP', 'SIG', 'KEY', 'LOC', 'KX',
  'CERT', 'APL', 'IPSECKEY', 'DHCID', 'HIP', 'CSYNC', 'ZONEMD', 'EUI48', 'EUI64', 'RT', 'DLV',
]);

/** RFC 9460 §14.3.2: the SvcParamKeys with a name. */
const SVC_PARAM_KEYS: Readonly<Record<string, number>> = {
  mandatory: 0, alpn: 1, 'no-default-alpn': 2, port: 3, ipv4hint: 4, ech: 5, ipv6hint: 6, dohpath: 7, ohttp: 8,
};

/** RFC 3597 §5: `\# <length> <hex>` carries at most an RDLENGTH's worth of octets. */
export const MAX_GENERIC_RDATA_OCTETS = 65_535;

/** The code of a type mnemonic or `TYPEnnn` (RFC 3597 §5), or undefined; its mnemonic, or `TYPEnnn`. */
export { typeCode as recordTypeCode, typeName as recordTypeName };

/** One field of the record as the parser read it (escapes decoded in `value`). */
export interface RdataField {
  value: string;
  raw: string;
  quoted: boolean;
}

/** What the reader needs from the zone parser: names resolved against the origin, and failing at a field. */
export interface RdataContext {
  /** A domain name field, canonical (lower case, no trailing dot, '' for the root). */
  name(field: RdataField, what: string): string;
  fail(field: RdataField | undefined, reason: string): never;
}

/** RFC 3597 §5: the generic form's octets, checked against its stated length. */
export function genericRdata(fields: readonly RdataField[], ctx: RdataContext): Buffer {
  const lengthField = fields[1];
  if (!lengthField || lengthField.quoted || !/^\d{1,5}$/.test(lengthField.value) || Number(lengthField.value) > MAX_GENERIC_RDATA_OCTETS) {
    ctx.fail(lengthField ?? fields[0], `expected the RDATA length after "\\#" (RFC 3597 §5: \\# <length> <hex>, a number from 0 to ${MAX_GENERIC_RDATA_OCTETS}), found ${lengthField ? `"${lengthField.raw}"` : 'the end of the record'}`);
  }
  const length = Number(lengthField.value);
  const hexText = fields.slice(2).map((f) => f.value).join('');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hexText)) ctx.fail(fields[2], `expected hexadecimal octets after "\\# ${length}" (RFC 3597 §5), found "${hexText.slice(0, 40)}"`);
  if (hexText.length / 2 !== length) ctx.fail(fields[2] ?? lengthField, `expected ${length} octets of hexadecimal data after "\\# ${length}" (RFC 3597 §5), found ${hexText.length / 2}`);
  return Buffer.from(hexText, 'hex');
}

/** Reads the RDATA of one of `OTHER_RECORD_TYPES` from its presentation fields. */
export function otherRdata(type: string, fields: readonly RdataField[], ctx: RdataContext): Buffer {
  let index = 0;
  const take = (what: string): RdataField => {
    const field = fields[index++];
    if (!field) ctx.fail(fields[fields.length - 1], `expected ${what} in this ${type} record, found the end of the record`);
    return field;
  };
  const rest = (what: string, allowEmpty = false): RdataField[] => {
    const left = fields.slice(index);
    if (left.length === 0 && !allowEmpty) ctx.fail(fields[fields.length - 1], `expected ${what} in this ${type} record, found the end of the record`);
    index = fields.length;
    return left;
  };
  const int = (field: RdataField, what: string, max: number): number => {
    if (!field.quoted && /^\d{1,10}$/.test(field.value) && Number(field.value) <= max) return Number(field.value);
    ctx.fail(field, `expected ${what} (a number from 0 to ${max}) in this ${type} record, found "${field.raw}"`);
  };
  const u8 = (what: string) => Buffer.from([int(take(what), what, 255)]);
  const u16 = (what: string) => uint(int(take(what), what, 65_535), 2);
  const u32 = (what: string) => uint(int(take(what), what, 4_294_967_295), 4);
  const name = (what: string) => nameToWire(ctx.name(take(what), what));
  const hexOf = (parts: RdataField[], what: string): Buffer => {
    const text = parts.map((p) => p.value).join('');
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) ctx.fail(parts[0], `expected ${what} in hexadecimal (an even number of digits) in this ${type} record, found "${text.slice(0, 40)}"`);
    return Buffer.from(text, 'hex');
  };
  const base64Of = (parts: RdataField[], what: string): Buffer => {
    const text = parts.map((p) => p.value).join('');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) ctx.fail(parts[0], `expected ${what} in base64 in this ${type} record, found "${text.slice(0, 40)}"`);
    return Buffer.from(text, 'base64');
  };
  const characterString = (field: RdataField, what: string): Buffer => {
    const octets = Buffer.from(field.value, 'utf8');
    // RFC 1035 §3.3: one length octet, at most 255 octets.
    if (octets.length > 255) ctx.fail(field, `expected ${what} of at most 255 octets in this ${type} record, found ${octets.length}`);
    return Buffer.concat([Buffer.from([octets.length]), octets]);
  };
  const typeList = (parts: RdataField[]): Buffer => {
    const codes = parts.map((p) => {
      const code = p.quoted ? undefined : typeCode(p.value);
      if (code === undefined) ctx.fail(p, `expected a record type in the type bit map of this ${type} record, found "${p.raw}"`);
      return code;
    });
    return typeBitmap(codes);
  };

  let out: Buffer;
  switch (type) {
    case 'CAA': {
      // RFC 8659 §4.1.1: flags, a tag of letters and digits, a value (a character-string, up to the end).
      const flags = u8('the CAA flags (0 or 128)');
      const tag = take('the CAA tag (issue, issuewild, iodef…)');
      if (tag.quoted || !/^[A-Za-z0-9]{1,255}$/.test(tag.value)) ctx.fail(tag, `expected a CAA tag of letters and digits (issue, issuewild, iodef), found "${tag.raw}"`);
      const value = Buffer.from(take('the CAA value ("ca.example")').value, 'utf8');
      out = Buffer.concat([flags, Buffer.from([tag.value.length]), Buffer.from(tag.value, 'ascii'), value]);
      break;
    }
    case 'SRV': // RFC 2782: priority weight port target
      out = Buffer.concat([u16('the SRV priority'), u16('the SRV weight'), u16('the SRV port'), name('the SRV target')]);
      break;
    case 'TLSA':
    case 'SMIMEA': // RFC 6698 §2.2: usage selector matching-type data
      out = Buffer.concat([u8('the certificate usage'), u8('the selector'), u8('the matching type'), hexOf(rest('the certificate association data'), 'the certificate association data')]);
      break;
    case 'DS':
    case 'CDS': // RFC 4034 §5.3: key-tag algorithm digest-type digest; RFC 8078 §4: CDS "0 0 0 00" deletes
      out = Buffer.concat([u16('the key tag'), u8('the algorithm'), u8('the digest type'), hexOf(rest('the digest'), 'the digest')]);
      break;
    case 'DNSKEY':
    case 'CDNSKEY': // RFC 4034 §2.2: flags protocol algorithm public-key
      out = Buffer.concat([u16('the DNSKEY flags'), u8('the protocol (3)'), u8('the algorithm'), base64Of(rest('the public key'), 'the public key')]);
      break;
    case 'RRSIG': {
      // RFC 4034 §3.2: covered algorithm labels original-TTL expiration inception key-tag signer signature
      const coveredField = take('the type covered');
      const covered = coveredField.quoted ? undefined : typeCode(coveredField.value);
      if (covered === undefined) ctx.fail(coveredField, `expected the type covered by this RRSIG, found "${coveredField.raw}"`);
      const head = Buffer.concat([uint(covered, 2), u8('the algorithm'), u8('the label count'), u32('the original TTL')]);
      const expiration = signatureTime(take('the signature expiration'), ctx);
      const inception = signatureTime(take('the signature inception'), ctx);
      out = Buffer.concat([head, uint(expiration, 4), uint(inception, 4), u16('the key tag'), name("the signer's name"), base64Of(rest('the signature'), 'the signature')]);
      break;
    }
    case 'NSEC': // RFC 4034 §4.2: next-name type-list
      out = Buffer.concat([name('the next owner name'), typeList(rest('', true))]);
      break;
    case 'NSEC3':
    case 'NSEC3PARAM': {
      // RFC 5155 §3.3, §4.3: algorithm flags iterations salt [next-hashed-owner type-list]
      const head = Buffer.concat([u8('the hash algorithm'), u8('the flags'), u16('the iterations')]);
      const saltField = take('the salt (hex, or "-" for none)');
      const salt = saltField.value === '-' ? Buffer.alloc(0) : hexOf([saltField], 'the salt');
      if (salt.length > 255) ctx.fail(saltField, `expected a salt of at most 255 octets, found ${salt.length}`);
      const parts = [head, Buffer.from([salt.length]), salt];
      if (type === 'NSEC3') {
        const nextField = take('the next hashed owner name (base32hex)');
        const next = base32hexDecode(nextField.value);
        if (next === undefined || next.length === 0 || next.length > 255) ctx.fail(nextField, `expected the next hashed owner name in base32hex (RFC 4648 §7), found "${nextField.raw}"`);
        parts.push(Buffer.from([next.length]), next, typeList(rest('', true)));
      }
      out = Buffer.concat(parts);
      break;
    }
    case 'SVCB':
    case 'HTTPS':
      out = Buffer.concat([u16('the SvcPriority'), name('the TargetName'), svcParams(rest('', true), ctx, type)]);
      break;
    case 'DNAME': // RFC 6672 §2.1
      out = name('the target name');
      break;
    case 'SSHFP': // RFC 4255 §3.2: algorithm fp-type fingerprint
      out = Buffer.concat([u8('the algorithm'), u8('the fingerprint type'), hexOf(rest('the fingerprint'), 'the fingerprint')]);
      break;
    case 'HINFO': // RFC 1035 §3.3.2: CPU OS
      out = Buffer.concat([characterString(take('the CPU'), 'the CPU'), characterString(take('the OS'), 'the OS')]);
      break;
    case 'NAPTR': // RFC 3403 §4: order preference flags services regexp replacement
      out = Buffer.concat([
        u16('the order'), u16('the preference'), characterString(take('the flags'), 'the flags'),
        characterString(take('the services'), 'the services'), characterString(take('the regexp'), 'the regexp'), name('the replacement'),
      ]);
      break;
    case 'OPENPGPKEY': // RFC 7929 §2.3
      out = base64Of(rest('the key'), 'the key');
      break;
    case 'URI': {
      // RFC 7553 §4.4: priority weight "target"
      const head = Buffer.concat([u16('the priority'), u16('the weight')]);
      out = Buffer.concat([head, Buffer.from(take('the target URI').value, 'utf8')]);
      break;
    }
    default:
      ctx.fail(fields[0], `expected the RFC 3597 form "\\# <length> <hex>" for a ${type} record, found "${fields[0]?.raw ?? ''}"`);
  }
  const extra = fields[index];
  if (extra) ctx.fail(extra, `expected the end of this ${type} record, found "${extra.raw}"`);
  if (out.length > MAX_GENERIC_RDATA_OCTETS) ctx.fail(fields[0], `expected at most ${MAX_GENERIC_RDATA_OCTETS} octets of data in one record (RFC 1035 §3.2.1), found ${out.length}`);
  return out;
}

/** RFC 9460 §2.1: `key=value` pairs (or a bare key), sorted by key on the wire, each key once (§2.2). */
function svcParams(fields: readonly RdataField[], ctx: RdataContext, type: string): Buffer {
  const params = new Map<number, Buffer>();
  for (const field of fields) {
    const equals = field.value.indexOf('=');
    const keyText = (equals === -1 ? field.value : field.value.slice(0, equals)).toLowerCase();
    let value = equals === -1 ? undefined : field.value.slice(equals + 1);
    if (value !== undefined && value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    const generic = /^key(\d{1,5})$/.exec(keyText);
    const key = SVC_PARAM_KEYS[keyText] ?? (generic ? Number(generic[1]) : undefined);
    if (key === undefined || key > 65_535) ctx.fail(field, `expected a SvcParam (alpn=…, port=…, ipv4hint=…, keyNNNNN=…) in this ${type} record, found "${field.raw}"`);
    if (params.has(key)) ctx.fail(field, `expected each SvcParamKey once in this ${type} record (RFC 9460 §2.2), found "${keyText}" twice`);
    const list = (): string[] => {
      if (value === undefined || value === '') ctx.fail(field, `expected a value after "${keyText}=" in this ${type} record`);
      return value.split(',');
    };
    let wire: Buffer;
    switch (key) {
      case 0: // mandatory: a list of keys
        wire = Buffer.concat(list().map((k) => {
          const code = SVC_PARAM_KEYS[k.toLowerCase()] ?? (/^key(\d{1,5})$/.exec(k.toLowerCase()) ? Number(k.slice(3)) : undefined);
          if (code === undefined) ctx.fail(field, `expected SvcParamKeys in "mandatory=", found "${k}"`);
          return uint(code, 2);
        }));
        break;
      case 1: // alpn: a list of character-strings
        wire = Buffer.concat(list().map((id) => Buffer.concat([Buffer.from([Buffer.byteLength(id)]), Buffer.from(id, 'utf8')])));
        break;
      case 2: // no-default-alpn: no value
        if (value !== undefined) ctx.fail(field, `expected "no-default-alpn" without a value in this ${type} record, found "${field.raw}"`);
        wire = Buffer.alloc(0);
        break;
      case 3: {
        const port = list()[0] ?? '';
        if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) ctx.fail(field, `expected a port from 0 to 65535, found "${field.raw}"`);
        wire = uint(Number(port), 2);
        break;
      }
      case 4:
        wire = Buffer.concat(list().map((a) => {
          if (!isIPv4(a)) ctx.fail(field, `expected IPv4 addresses in "ipv4hint=", found "${a}"`);
          return Buffer.from(a.split('.').map(Number));
        }));
        break;
      case 6:
        wire = Buffer.concat(list().map((a) => {
          if (!isIPv6(a) || a.includes('%')) ctx.fail(field, `expected IPv6 addresses in "ipv6hint=", found "${a}"`);
          return ipv6Octets(a);
        }));
        break;
      case 5: {
        const text = value ?? '';
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) ctx.fail(field, `expected base64 in "ech=", found "${text.slice(0, 40)}"`);
        wire = Buffer.from(text, 'base64');
        break;
      }
      default:
        wire = Buffer.from(value ?? '', 'utf8');
    }
    if (wire.length > 65_535) ctx.fail(field, `expected a SvcParamValue of at most 65535 octets, found ${wire.length}`);
    params.set(key, wire);
  }
  const keys = [...params.keys()].sort((a, b) => a - b);
  return Buffer.concat(keys.flatMap((key) => {
    const value = params.get(key)!;
    return [uint(key, 2), uint(value.length, 2), value];
  }));
}

/** RFC 4034 §3.2: YYYYMMDDHHmmSS (UTC) or seconds since 1970, in serial arithmetic (mod 2^32). */
function signatureTime(field: RdataField, ctx: RdataContext): number {
  const text = field.value;
  if (/^\d{14}$/.test(text)) {
    const t = Date.UTC(+text.slice(0, 4), +text.slice(4, 6) - 1, +text.slice(6, 8), +text.slice(8, 10), +text.slice(10, 12), +text.slice(12, 14));
    if (Number.isFinite(t) && t >= 0) return Math.floor(t / 1000) % 2 ** 32;
  } else if (/^\d{1,10}$/.test(text) && Number(text) < 2 ** 32) {
    return Number(text);
  }
  ctx.fail(field, `expected a signature time (YYYYMMDDHHmmSS in UTC, RFC 4034 §3.2), found "${field.raw}"`);
}

/** An unsigned big-endian integer of `octets` octets. */
function uint(value: number, octets: 2 | 4): Buffer {
  const out = Buffer.alloc(octets);
  if (octets === 2) out.writeUInt16BE(value);
  else out.writeUInt32BE(value >>> 0);
  return out;
}

function ipv6Octets(text: string): Buffer {
  const [head = '', tail] = text.split('::');
  const groupsOf = (s: string): number[] => {
    if (s === '') return [];
    return s.split(':').flatMap((g) => (g.includes('.') ? (() => { const [a = 0, b = 0, c = 0, d = 0] = g.split('.').map(Number); return [(a << 8) | b, (c << 8) | d]; })() : [parseInt(g, 16)]));
  };
  const h = groupsOf(head);
  const t = tail === undefined ? [] : groupsOf(tail);
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
