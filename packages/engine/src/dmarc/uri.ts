import type { ReportSizeLimit, ReportUri, ReportUriProblem, SizeUnit } from './types.js';

/** RFC 7489 §6.4: the size limit must fit an unsigned 64-bit integer (mox enforces the same bound). */
export const MAX_REPORT_SIZE_BYTES = 2n ** 64n - 1n;

/** Multipliers of the obsolete size units (RFC 7489 §6.4: k, m, g, t are powers of 2^10). */
const UNIT_BYTES: Record<SizeUnit, bigint> = { k: 2n ** 10n, m: 2n ** 20n, g: 2n ** 30n, t: 2n ** 40n };

// RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):(.+)$/s;
// RFC 3986 §2: unreserved / reserved / "%". RFC 9989 §4.8: "," and "!" MUST be percent-encoded, so
// they are not in the set; ";" never reaches here because it separates tags.
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@$&'()*+=%]+$/;
// RFC 9989 §4.8 obs-dmarc-report-size = "!" 1*DIGIT [ "k" / "m" / "g" / "t" ] (literals: any case).
const SIZE_SUFFIX = /^(.*)!([0-9]+)([kmgtKMGT]?)$/s;
// RFC 1035 §2.3.1 with RFC 1123 §2.1 (labels may start with a digit).
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The result of reading one entry of a `rua`/`ruf` list. */
export type ReportUriParse = { ok: true; uri: ReportUri } | { ok: false; problem: ReportUriProblem };

/**
 * Splits a `dmarc-urilist` on commas with optional whitespace around them (RFC 9989 §4.8). Empty
 * entries are kept, so that `rua=a,,b` reports the empty one.
 */
export function splitUriList(value: string): string[] {
  return value.split(',').map(trimWsp);
}

/** SP and HTAB trimmed by a loop: /[ \t]+$/ backtracks quadratically on a long inner run of spaces. */
function trimWsp(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--;
  return text.slice(start, end);
}

/**
 * Reads one DMARC report URI (RFC 9989 §4.8 `dmarc-uri` / `obs-dmarc-uri`). Pure; never throws.
 * A `mailto:` URI must carry an address with a valid domain; other schemes need a valid RFC 3986
 * shape only (receivers ignore schemes they do not support, RFC 9989 §4.7 `rua`).
 */
export function parseReportUri(entry: string): ReportUriParse {
  if (entry === '') return { ok: false, problem: 'empty' };
  let text = entry;
  let sizeLimit: ReportSizeLimit | null = null;
  const size = SIZE_SUFFIX.exec(entry);
  if (size) {
    text = size[1] ?? '';
    sizeLimit = readSize(size[2] ?? '', (size[3] ?? '').toLowerCase());
  }
  if (/[ \t]/.test(text)) return { ok: false, problem: 'bad-character' };
  const scheme = SCHEME.exec(text);
  if (!scheme) return { ok: false, problem: 'no-scheme' };
  if (!URI_CHARACTERS.test(text)) {
    // An unencoded "!" that is not a valid size suffix lands here too (RFC 9989 §4.8).
    return { ok: false, problem: text.includes('!') || entry.includes('!') ? 'bad-size-suffix' : 'bad-character' };
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(text)) return { ok: false, problem: 'bad-percent-encoding' };
  const schemeName = (scheme[1] ?? '').toLowerCase();
  const rest = scheme[2] ?? '';
  if (schemeName === 'mailto') {
    const mailbox = mailtoAddress(rest);
    if (!mailbox) return { ok: false, problem: 'bad-mailto-address' };
    return { ok: true, uri: { uri: text, scheme: schemeName, address: mailbox.address, domain: mailbox.domain, sizeLimit } };
  }
  return { ok: true, uri: { uri: text, scheme: schemeName, address: null, domain: authorityHost(rest), sizeLimit } };
}

/** True when `name` is a host name of LDH labels (RFC 1123 §2.1), the form a report domain must take. */
export function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => HOST_LABEL.test(label));
}

function readSize(digits: string, unit: string): ReportSizeLimit {
  const sizeUnit = unit === '' ? null : (unit as SizeUnit);
  const bytes = BigInt(digits) * (sizeUnit ? UNIT_BYTES[sizeUnit] : 1n);
  const fits = bytes <= MAX_REPORT_SIZE_BYTES && bytes <= BigInt(Number.MAX_SAFE_INTEGER);
  return { digits, unit: sizeUnit, bytes: fits ? Number(bytes) : null };
}

/** The bytes a size suffix stands for does not fit an unsigned 64-bit integer (RFC 7489 §6.4). */
export function sizeOutOfRange(limit: ReportSizeLimit): boolean {
  const bytes = BigInt(limit.digits) * (limit.unit ? UNIT_BYTES[limit.unit] : 1n);
  return bytes > MAX_REPORT_SIZE_BYTES;
}

/** RFC 6068 §2: mailto:addr-spec[?hfields]; one address (a comma would have split the list). */
function mailtoAddress(rest: string): { address: string; domain: string } | null {
  const to = rest.split('?')[0] ?? '';
  let decoded: string;
  try {
    decoded = decodeURIComponent(to);
  } catch {
    return null;
  }
  const at = decoded.lastIndexOf('@');
  if (at <= 0) return null;
  const domain = decoded.slice(at + 1).toLowerCase().replace(/\.$/, '');
  if (!isHostName(domain)) return null;
  return { address: decoded, domain };
}

/** The host of `//authority/...` (RFC 3986 §3.2.2), lower case, or null when the URI has no host name. */
function authorityHost(rest: string): string | null {
  if (!rest.startsWith('//')) return null;
  const authority = rest.slice(2).split(/[/?#]/)[0] ?? '';
  const host = (authority.split('@').pop() ?? '').replace(/:[0-9]*$/, '').toLowerCase();
  return isHostName(host) ? host : null;
}
