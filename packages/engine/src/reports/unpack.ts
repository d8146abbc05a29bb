/**
 * A report file's bytes → its report documents. The container is decided by the first bytes (magic),
 * never by the file name or MIME type, which real reporters get wrong (a zip labelled
 * `application/gzip`, a gzip followed by CRLF): gzip (RFC 1952), zip (PKWARE APPNOTE 6.3: stored and
 * deflate entries through the central directory), raw XML, or JSON.
 *
 * Decompression is capped (RFC 9990 §"Report Contents as an Attack": zip and XML bombs): each document
 * at `MAX_UNCOMPRESSED_BYTES`, an archive's documents together at `MAX_TOTAL_UNCOMPRESSED_BYTES`, and
 * the ratio of output to input at `MAX_COMPRESSION_RATIO` once the output passes
 * `RATIO_FLOOR_BYTES`. zlib stops at the cap (`maxOutputLength`), so a bomb is never allocated.
 */
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import type { ReportDocument, ReportKind, UnpackCaps, UnpackFailureReason, UnpackOutcome } from './types.js';

/** Bytes of a report file as received (RFC 7489 §7.2.1.1: "a commonly observed receiver limit is ten megabytes"; mox takes 15 MB). */
export const MAX_INPUT_BYTES = 25 * 1024 * 1024;
/** Decompressed bytes of one report document (parsedmarc's largest sample is 0.9 MB for 2,286 records). */
export const MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024;
/** Decompressed bytes of every document of one archive together. */
export const MAX_TOTAL_UNCOMPRESSED_BYTES = 50 * 1024 * 1024;
/** Decompressed bytes per compressed byte; real reports compress 10-50:1, deflate's maximum is about 1,032:1. */
export const MAX_COMPRESSION_RATIO = 200;
/** Output under this size is never refused for its ratio. */
export const RATIO_FLOOR_BYTES = 1024 * 1024;
/** Entries in one zip (a report zip holds one; a few are tolerated). */
export const MAX_ZIP_ENTRIES = 32;

/** The default caps, as named above. */
export const DEFAULT_UNPACK_CAPS: Readonly<UnpackCaps> = Object.freeze({
  maxInputBytes: MAX_INPUT_BYTES,
  maxUncompressedBytes: MAX_UNCOMPRESSED_BYTES,
  maxTotalUncompressedBytes: MAX_TOTAL_UNCOMPRESSED_BYTES,
  maxCompressionRatio: MAX_COMPRESSION_RATIO,
  ratioFloorBytes: RATIO_FLOOR_BYTES,
  maxZipEntries: MAX_ZIP_ENTRIES,
});

/** Options of `unpackReportFile`. */
export interface UnpackOptions {
  /** The file or attachment name (a label for the documents; the container is still sniffed). */
  filename?: string;
  /** The MIME type it came with. Informational only: the bytes decide (reporters mislabel zip as gzip). */
  contentType?: string;
  caps?: Partial<UnpackCaps>;
}

type Sniffed = 'gzip' | 'zip' | 'xml' | 'json' | null;

const fail = (reason: UnpackFailureReason, detail: string): UnpackOutcome => ({ ok: false, reason, detail });

/** The container of `bytes` by its first bytes (a BOM and whitespace before XML or JSON are skipped). */
export function sniffContainer(bytes: Uint8Array): Sniffed {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && ((bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06))) return 'zip';
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  // UTF-16 with a BOM: only XML is plausible.
  if ((bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe)) return 'xml';
  while (i < bytes.length && i < 4096 && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  if (bytes[i] === 0x3c /* < */) return 'xml';
  if (bytes[i] === 0x7b /* { */) return 'json';
  return null;
}

/**
 * Unpacks one report file: gzip, zip, XML or JSON by its first bytes. Never throws; a refusal names
 * its reason and says what was wrong.
 */
export function unpackReportFile(bytes: Uint8Array, options: UnpackOptions = {}): UnpackOutcome {
  const caps: UnpackCaps = { ...DEFAULT_UNPACK_CAPS, ...options.caps };
  const name = baseName(options.filename ?? 'report');
  if (bytes.length === 0) return fail('empty', 'the file is empty');
  if (bytes.length > caps.maxInputBytes) return fail('too-large', `the file has ${bytes.length} bytes, over the ${caps.maxInputBytes}-byte cap`);
  const container = sniffContainer(bytes);
  switch (container) {
    case 'xml':
      if (bytes.length > caps.maxUncompressedBytes) return fail('too-large', `the XML has ${bytes.length} bytes, over the ${caps.maxUncompressedBytes}-byte cap`);
      return { ok: true, container, documents: [{ name, kind: 'aggregate', bytes }], skipped: [] };
    case 'json':
      if (bytes.length > caps.maxUncompressedBytes) return fail('too-large', `the JSON has ${bytes.length} bytes, over the ${caps.maxUncompressedBytes}-byte cap`);
      return { ok: true, container, documents: [{ name, kind: 'tls', bytes }], skipped: [] };
    case 'gzip': {
      const out = gunzip(bytes, caps, caps.maxUncompressedBytes);
      if (!out.ok) return out;
      const inner = sniffContainer(out.bytes);
      if (inner === 'gzip' || inner === 'zip') return fail('nested-archive', `the gzip holds a ${inner} archive: one level of compression only`);
      const kind = kindOf(inner);
      if (kind === null) return fail('unknown-format', 'the gzip does not hold XML or JSON');
      return { ok: true, container, documents: [{ name: name.replace(/\.gz(ip)?$/i, ''), kind, bytes: out.bytes }], skipped: [] };
    }
    case 'zip':
      return unzip(bytes, caps);
    default:
      return fail('unknown-format', 'not a report file: neither gzip, zip, XML nor JSON by its first bytes');
  }
}

function kindOf(sniffed: Sniffed): ReportKind | null {
  return sniffed === 'xml' ? 'aggregate' : sniffed === 'json' ? 'tls' : null;
}

/** The last path segment: entry names are labels, never paths (`../x.xml` → `x.xml`). */
function baseName(name: string): string {
  const last = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  return last.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255) || 'report';
}

/** The output cap for `inputLength` compressed bytes: the size cap, lowered by the ratio cap above the floor. */
function outputCap(inputLength: number, caps: UnpackCaps, sizeCap: number): { cap: number; byRatio: boolean } {
  const byRatio = Math.max(caps.ratioFloorBytes, inputLength * caps.maxCompressionRatio);
  return byRatio < sizeCap ? { cap: byRatio, byRatio: true } : { cap: sizeCap, byRatio: false };
}

function capFailure(inputLength: number, limit: { cap: number; byRatio: boolean }, what: string): UnpackOutcome & { ok: false } {
  return limit.byRatio
    ? { ok: false, reason: 'ratio-exceeded', detail: `${what} decompresses to more than ${limit.cap} bytes from ${inputLength}: over the ${Math.round(limit.cap / Math.max(1, inputLength))}:1 ratio cap (a decompression bomb?); stopped at the cap` }
    : { ok: false, reason: 'too-large', detail: `${what} decompresses to more than ${limit.cap} bytes, the cap; stopped at the cap` };
}

type Inflated = { ok: true; bytes: Uint8Array } | (UnpackOutcome & { ok: false });

/** Trailing bytes after the last gzip member that are tolerated (Mimecast appends CRLF: parsedmarc#429). */
const MAX_TRAILING_JUNK = 8;

/** RFC 1952: every member, CRC-checked by zlib; up to `MAX_TRAILING_JUNK` CR, LF, space or NUL bytes after the last member are dropped. */
function gunzip(bytes: Uint8Array, caps: UnpackCaps, sizeCap: number): Inflated {
  const limit = outputCap(bytes.length, caps, sizeCap);
  const attempt = (input: Uint8Array): Inflated => {
    try {
      return { ok: true, bytes: gunzipSync(input, { maxOutputLength: limit.cap }) };
    } catch (error) {
      return zlibFailure(error, bytes.length, limit, 'the gzip');
    }
  };
  const whole = attempt(bytes);
  if (whole.ok || whole.reason !== 'corrupt') return whole;
  // The trailer's ISIZE may itself end in such a byte, so each shorter length is tried, shortest cut first.
  for (let cut = 1; cut <= MAX_TRAILING_JUNK && bytes.length - cut > 18; cut++) {
    const last = bytes[bytes.length - cut];
    if (last !== 0x0a && last !== 0x0d && last !== 0x20 && last !== 0x00) break;
    const trimmed = attempt(bytes.subarray(0, bytes.length - cut));
    if (trimmed.ok) return trimmed;
  }
  return whole;
}

function zlibFailure(error: unknown, inputLength: number, limit: { cap: number; byRatio: boolean }, what: string): UnpackOutcome & { ok: false } {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) return capFailure(inputLength, limit, what);
  if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(message)) return { ok: false, reason: 'truncated', detail: `${what} ends before its end (truncated in transit?): ${message}` };
  return { ok: false, reason: 'corrupt', detail: `${what} does not decompress: ${message}` };
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** APPNOTE 4.3.16: the end record is 22 bytes plus a comment of up to 65,535. */
const EOCD_MAX_DISTANCE = 22 + 0xffff;

/** APPNOTE 4.3: find the end of central directory record, walk the central directory, inflate each entry. */
function unzip(bytes: Uint8Array, caps: UnpackCaps): UnpackOutcome {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - EOCD_MAX_DISTANCE); i--) {
    if (view.getUint32(i, true) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd === -1) return fail('truncated', 'the zip has no end of central directory record (truncated, or not a whole zip)');
  const disk = view.getUint16(eocd + 4, true);
  const entries = view.getUint16(eocd + 10, true);
  const directorySize = view.getUint32(eocd + 12, true);
  const directoryOffset = view.getUint32(eocd + 16, true);
  if (disk !== 0 || view.getUint16(eocd + 6, true) !== 0) return fail('unsupported', 'a split (multi-disk) zip');
  if (entries === 0xffff || directoryOffset === 0xffffffff || directorySize === 0xffffffff) return fail('unsupported', 'a zip64 archive (not needed for reports)');
  if (entries > caps.maxZipEntries) return fail('too-many-entries', `the zip has ${entries} entries, over the cap of ${caps.maxZipEntries}`);
  if (directoryOffset + directorySize > eocd) return fail('corrupt', 'the zip central directory lies outside the file');
  const documents: ReportDocument[] = [];
  const skipped: { name: string; reason: string }[] = [];
  let total = 0;
  let at = directoryOffset;
  for (let n = 0; n < entries; n++) {
    if (at + 46 > eocd || view.getUint32(at, true) !== CENTRAL_SIGNATURE) return fail('corrupt', `zip central directory entry ${n + 1} is damaged`);
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const crc = view.getUint32(at + 16, true);
    const compressedSize = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const localOffset = view.getUint32(at + 42, true);
    const rawName = new TextDecoder((flags & 0x800) !== 0 ? 'utf-8' : 'latin1').decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
    const name = baseName(rawName);
    if (rawName.endsWith('/')) {
      skipped.push({ name: rawName, reason: 'a directory' });
      continue;
    }
    // APPNOTE 4.4.4 bit 0: encrypted; bit 6: strong encryption.
    if ((flags & 0x41) !== 0) return fail('encrypted', `zip entry "${name}" is encrypted`);
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff) return fail('unsupported', `zip entry "${name}" uses zip64 sizes`);
    if (method !== 0 && method !== 8) return fail('unsupported', `zip entry "${name}" uses compression method ${method} (only stored and deflate are read)`);
    if (localOffset + 30 > bytes.length || view.getUint32(localOffset, true) !== LOCAL_SIGNATURE) return fail('corrupt', `zip entry "${name}" has no local header where the directory says`);
    const dataStart = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    if (dataStart + compressedSize > bytes.length) return fail('truncated', `zip entry "${name}" runs past the end of the file (truncated?)`);
    const data = bytes.subarray(dataStart, dataStart + compressedSize);
    const remaining = caps.maxTotalUncompressedBytes - total;
    const sizeCap = Math.min(caps.maxUncompressedBytes, remaining);
    // The declared size is checked against what comes out, never trusted for the allocation.
    if (size > sizeCap) return capFailure(compressedSize, { cap: sizeCap, byRatio: false }, `zip entry "${name}"`);
    let content: Uint8Array;
    if (method === 0) content = data;
    else {
      const limit = outputCap(compressedSize, caps, sizeCap);
      if (size > limit.cap) return capFailure(compressedSize, limit, `zip entry "${name}"`);
      try {
        // One byte over the declared size is enough to catch a size that lies.
        content = inflateRawSync(data, { maxOutputLength: Math.min(limit.cap, size + 1) || 1 });
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
          return size + 1 <= limit.cap ? fail('corrupt', `zip entry "${name}" decompresses to more than its declared ${size} bytes`) : capFailure(compressedSize, limit, `zip entry "${name}"`);
        }
        return zlibFailure(error, compressedSize, limit, `zip entry "${name}"`);
      }
    }
    if (content.length !== size) return fail('corrupt', `zip entry "${name}" has ${content.length} bytes, not the ${size} its header declares`);
    if (crc32(content) !== crc) return fail('corrupt', `zip entry "${name}" fails its CRC-32 check`);
    total += content.length;
    const inner = sniffContainer(content);
    if (inner === 'gzip' || inner === 'zip') return fail('nested-archive', `zip entry "${name}" is itself a ${inner} archive: one level of compression only`);
    const kind = kindOf(inner);
    if (kind === null) {
      skipped.push({ name, reason: 'neither XML nor JSON' });
      continue;
    }
    documents.push({ name, kind, bytes: content });
  }
  if (documents.length === 0) return fail('no-report', `the zip holds no XML or JSON report${skipped.length > 0 ? ` (only ${skipped.map((s) => s.name).join(', ')})` : ''}`);
  return { ok: true, container: 'zip', documents, skipped };
}
