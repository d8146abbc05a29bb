/**
 * A small DER reader (ITU-T X.690 §8, §10): tag, length, value; enough to read the certificate
 * extensions `node:crypto` does not expose (the RFC 9399 logotype, the EKU, SCTs, CRL points) and
 * the subject's mark attributes. Bounds-checked: a malformed encoding throws `DerError`, which the
 * caller turns into a problem.
 */

/** A malformed DER encoding. */
export class DerError extends Error {}

/** One TLV: its tag byte, where its value starts and ends. */
export interface Tlv {
  /** The identifier octet (class, constructed bit and tag number < 31). */
  tag: number;
  start: number;
  /** Offset of the first value byte. */
  valueStart: number;
  /** Offset after the last value byte. */
  end: number;
}

/** Most nested levels read (a certificate has fewer than 12). */
const MAX_DEPTH = 32;

/** The TLV at `pos`, within `limit`. */
export function readTlv(buf: Uint8Array, pos: number, limit = buf.length): Tlv {
  if (pos + 2 > limit) throw new DerError('truncated');
  const tag = buf[pos] as number;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not used here');
  let length = buf[pos + 1] as number;
  let valueStart = pos + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 4) throw new DerError('indefinite or oversized length');
    if (valueStart + octets > limit) throw new DerError('truncated length');
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + (buf[valueStart + i] as number);
    valueStart += octets;
  }
  const end = valueStart + length;
  if (end > limit) throw new DerError('a value runs past its container');
  return { tag, start: pos, valueStart, end };
}

/** The TLVs inside a constructed TLV. */
export function childrenOf(buf: Uint8Array, tlv: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let pos = tlv.valueStart; pos < tlv.end; ) {
    const child = readTlv(buf, pos, tlv.end);
    out.push(child);
    pos = child.end;
  }
  return out;
}

/** The value bytes of a TLV. */
export function valueOf(buf: Uint8Array, tlv: Tlv): Uint8Array {
  return buf.subarray(tlv.valueStart, tlv.end);
}

/** An OBJECT IDENTIFIER's dotted form (X.690 §8.19). */
export function oidOf(buf: Uint8Array, tlv: Tlv): string {
  if (tlv.tag !== 0x06) throw new DerError('not an OBJECT IDENTIFIER');
  const bytes = valueOf(buf, tlv);
  const parts: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** A string type's text (UTF8String, PrintableString, IA5String, BMPString as UTF-16BE). */
export function stringOf(buf: Uint8Array, tlv: Tlv): string {
  const bytes = valueOf(buf, tlv);
  if (tlv.tag === 0x1e) {
    let text = '';
    for (let i = 0; i + 1 < bytes.length; i += 2) text += String.fromCharCode(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
    return text;
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** Every TLV below `tlv` (depth-first) whose tag is `tag`. */
export function findAll(buf: Uint8Array, tlv: Tlv, tag: number, depth = 0): Tlv[] {
  if (depth > MAX_DEPTH) throw new DerError('nested too deep');
  const out: Tlv[] = [];
  if (!(tlv.tag & 0x20)) return out;
  for (const child of childrenOf(buf, tlv)) {
    if (child.tag === tag) out.push(child);
    if (child.tag & 0x20) out.push(...findAll(buf, child, tag, depth + 1));
  }
  return out;
}

/** One certificate extension (RFC 5280 §4.1.2.9). */
export interface Extension {
  oid: string;
  critical: boolean;
  /** The TLV of the extnValue OCTET STRING's content (the extension's own DER). */
  value: Tlv;
}

/** The pieces of a certificate read here (RFC 5280 §4.1). */
export interface CertificateParts {
  extensions: Extension[];
  /** The subject's attributes, OID → value (first of each). */
  subject: Map<string, string>;
  /** The subject Name's TLV (RFC 5280 §4.1.2.6), for name constraints; undefined when absent. */
  subjectName: Tlv | undefined;
}

/** Reads the extensions and subject attributes of a DER certificate. */
export function certificateParts(der: Uint8Array): CertificateParts {
  const cert = readTlv(der, 0);
  const [tbs] = childrenOf(der, cert);
  if (!tbs || tbs.tag !== 0x30) throw new DerError('no tbsCertificate');
  const fields = childrenOf(der, tbs);
  // RFC 5280 §4.1: [0] version, serial, signature, issuer, validity, subject, spki, [1], [2], [3] extensions.
  const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subjectTlv = fields[offset + 4];
  const subject = new Map<string, string>();
  if (subjectTlv?.tag === 0x30) {
    for (const rdn of childrenOf(der, subjectTlv)) {
      for (const atv of childrenOf(der, rdn)) {
        const [type, value] = childrenOf(der, atv);
        if (!type || !value) continue;
        const oid = oidOf(der, type);
        if (!subject.has(oid)) subject.set(oid, stringOf(der, value));
      }
    }
  }
  const extensions: Extension[] = [];
  const wrapper = fields.find((field) => field.tag === 0xa3);
  if (wrapper) {
    const [list] = childrenOf(der, wrapper);
    if (list) {
      for (const ext of childrenOf(der, list)) {
        const parts = childrenOf(der, ext);
        const oid = oidOf(der, parts[0] as Tlv);
        const critical = parts.length === 3 && parts[1]?.tag === 0x01 && der[(parts[1] as Tlv).valueStart] !== 0;
        const octets = parts[parts.length - 1] as Tlv;
        if (octets.tag !== 0x04) throw new DerError('an extension value is not an OCTET STRING');
        extensions.push({ oid, critical, value: readTlv(der, octets.valueStart, octets.end) });
      }
    }
  }
  return { extensions, subject, subjectName: subjectTlv?.tag === 0x30 ? subjectTlv : undefined };
}
