/**
 * Report files (their bytes, or a path the parser reads itself) to parsed reports, with one budget for a whole job (a file, or every part of one
 * message): the engine unpacks each file (gzip, zip, XML, JSON by its bytes, decompression capped)
 * and parses each document (no DTD, no entity, depth and node caps, JSON depth checked before
 * `JSON.parse`), while the documents of the job together may hold at most `MAX_JOB_DOCUMENT_BYTES`.
 * RFC 9990 §"Report Contents as an Attack": one message of 16 small bombs must cost what one does.
 *
 * Each report leaves here in the form the store takes ({@link StoredForm}: its records as rows, the
 * engine's digest, its document as JSON), computed where it was parsed: in the parser process, off the
 * storing process's event loop (which only checks the form: `storedFormFromWire`).
 *
 * Synchronous: the service runs it in a parser process (parse-pool.ts), which adds the time and heap
 * budget; the same code runs in-thread where blocking is harmless.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import {
  digestReports,
  MAX_TOTAL_UNCOMPRESSED_BYTES,
  MAX_UNCOMPRESSED_BYTES,
  parseAggregateReport,
  parseTlsReport,
  unpackReportFile,
  type AggregateRecord,
  type AggregateReport,
  type ReportKind,
  type SenderDigestEntry,
  type TlsReport,
} from '@spoof-checker/engine';
import type { ReportRecordRow } from '../store/reports.js';

/** Decompressed bytes of the documents of one job together (one message's parts share it). */
export const MAX_JOB_DOCUMENT_BYTES = MAX_TOTAL_UNCOMPRESSED_BYTES;

/** What every file to parse says besides its bytes. */
interface ReportFileCommon {
  fileName: string | null;
  contentType?: string | null;
  /**
   * The kinds the path takes (the public TLS-RPT route: RFC 8460 §5.3 reports only): a document of
   * another kind is refused unread (`wrong-kind`), never parsed.
   */
  kinds?: readonly ReportKind[] | undefined;
}

/** A file whose bytes the caller holds (an upload, a message's part, standard input). */
export interface ReportBytesInput extends ReportFileCommon {
  bytes: Uint8Array;
}

/**
 * A file on disk (`reports import`): the parser reads it itself, so its bytes never pass through the
 * storing process; more than `maxBytes` is refused unread (`too-large`).
 */
export interface ReportPathInput extends ReportFileCommon {
  path: string;
  maxBytes: number;
}

/** One file to parse. */
export type ReportFileInput = ReportBytesInput | ReportPathInput;

/** A report's metadata as parsed: an aggregate report without its records (they travel as rows, {@link StoredForm}), a TLS report whole. */
export type ReportHead = Omit<AggregateReport, 'records'> | TlsReport;

/** A report as the store takes it (`NewReport`'s document, records and digest), made where it was parsed. */
export interface StoredForm {
  /** The parsed report without its records (aggregate) or whole (TLS), as JSON text. */
  document: string;
  /** The aggregate records as stored rows (none for a TLS report). */
  records: ReportRecordRow[];
  /** The engine's digest of the records for the report's domain (`digestReports([report], domain).senders`); none for TLS. */
  digest: SenderDigestEntry[];
}

/** A refusal: the engine's reason (`malformed`, `too-deep`, `ratio-exceeded`, …) or the job's (`job-budget`, `parse-deadline`, `parse-memory`, `parse-failed`). */
export interface ParseRefusal {
  ok: false;
  reason: string;
  detail: string;
}

/** One document of a file, parsed or refused. */
export interface ParsedDocument {
  name: string;
  kind: ReportKind;
  outcome: { ok: true; report: ReportHead; stored: StoredForm; warnings: string[]; contentDigest: string } | ParseRefusal;
}

/** A parsed document's outcome. */
export type ParsedOutcome = ParsedDocument['outcome'];

/** One file: the documents it held, or why it gave none (`unknown-format` and `empty` included, for the caller to judge). */
export type ParsedFile = { ok: true; documents: ParsedDocument[] } | ParseRefusal;

/** What is left of a job's budget. */
export interface JobBudget {
  documentBytes: number;
}

/** A fresh budget for one job. */
export function jobBudget(): JobBudget {
  return { documentBytes: MAX_JOB_DOCUMENT_BYTES };
}

/**
 * Aggregate reports with more records than this leave a parser process whole, and the storing process
 * forms them (`formStored`): a report's stored form and its JSON text, made beside the parsed report,
 * take about three times the report's memory (200,000 records: 134 MB parsed, 560 MB at the peak),
 * more than the parser's heap budget (REPORT_PARSE_HEAP_MB in parse-pool.ts) holds. Below it, the
 * form is made where the report was parsed (the storing process's cheaper path).
 */
export const MAX_RECORDS_FORMED_IN_PARSER = 20_000;

/** A parsed document before its stored form is made: the engine's report whole. */
export interface WholeDocument {
  name: string;
  kind: ReportKind;
  outcome: { ok: true; report: AggregateReport | TlsReport; warnings: string[]; contentDigest: string } | ParseRefusal;
}

/** Unpacks and parses one file, spending `budget`. Never throws. */
export function parseReportFile(file: ReportFileInput, budget: JobBudget): ParsedFile {
  const whole = parseReportFileWhole(file, budget);
  return whole.ok ? { ok: true, documents: whole.documents.map(formDocument) } : whole;
}

/** A whole document with its stored form made. */
export function formDocument(document: WholeDocument): ParsedDocument {
  const { outcome } = document;
  return { ...document, outcome: outcome.ok ? { ...formStored(outcome.report), warnings: outcome.warnings, contentDigest: outcome.contentDigest } : outcome };
}

/** Unpacks and parses one file, spending `budget`, its reports kept whole. Never throws. */
export function parseReportFileWhole(file: ReportFileInput, budget: JobBudget): { ok: true; documents: WholeDocument[] } | ParseRefusal {
  return parseReportDocuments(file, budget, (report, warnings) => ({ ok: true, report, warnings, contentDigest: contentDigest(report) }));
}

/**
 * Unpacks and parses one file, spending `budget`; each report parsed is handed to `finish` (with its
 * warnings), which makes the document's outcome (the parser process makes its wire form there, in one
 * pass: parse-worker.ts). Never throws but for `finish`.
 */
export function parseReportDocuments<T>(
  file: ReportFileInput,
  budget: JobBudget,
  finish: (report: AggregateReport | TlsReport, warnings: string[]) => T,
): { ok: true; documents: { name: string; kind: ReportKind; outcome: T | ParseRefusal }[] } | ParseRefusal {
  if (budget.documentBytes <= 0) return overBudget();
  const bytes = 'path' in file ? readReportPath(file.path, file.maxBytes) : file.bytes;
  if (!(bytes instanceof Uint8Array)) return bytes;
  // Decompression stops where the job's budget ends (zlib's output cap), not at the document cap.
  const left = budget.documentBytes;
  const caps = left < MAX_UNCOMPRESSED_BYTES ? { maxUncompressedBytes: left, maxTotalUncompressedBytes: left } : {};
  const unpacked = unpackReportFile(bytes, { ...(file.fileName ? { filename: file.fileName } : {}), ...(file.contentType ? { contentType: file.contentType } : {}), caps });
  if (!unpacked.ok) {
    if (unpacked.reason === 'too-large' && left < MAX_UNCOMPRESSED_BYTES) {
      budget.documentBytes = 0;
      return overBudget();
    }
    return unpacked;
  }
  const documents: { name: string; kind: ReportKind; outcome: T | ParseRefusal }[] = [];
  for (const document of unpacked.documents) {
    const name = document.name || file.fileName || 'report';
    if (document.bytes.length > budget.documentBytes) {
      budget.documentBytes = 0;
      documents.push({ name, kind: document.kind, outcome: overBudget() });
      continue;
    }
    budget.documentBytes -= document.bytes.length;
    if (file.kinds && !file.kinds.includes(document.kind)) {
      // The one place a path that takes one kind refuses the other (the public TLS-RPT route: RFC 8460 §5.3 reports only).
      documents.push({ name, kind: document.kind, outcome: { ok: false, reason: 'wrong-kind', detail: wrongKind(document.kind, file.kinds) } });
      continue;
    }
    const outcome = document.kind === 'aggregate' ? parseAggregateReport(document.bytes) : parseTlsReport(document.bytes);
    documents.push({ name, kind: document.kind, outcome: outcome.ok ? finish(outcome.report, outcome.warnings) : outcome });
  }
  return { ok: true, documents };
}

/**
 * The bytes of the file at `path`, at most `maxBytes` (more is refused unread, as the storing process
 * refused it when it read the file itself), or why it cannot be read. Only a regular file is read.
 */
export function readReportPath(path: string, maxBytes: number): Uint8Array | ParseRefusal {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const info = fstatSync(fd);
    if (!info.isFile()) return { ok: false, reason: 'unreadable', detail: `cannot read ${path}: not a regular file` };
    if (info.size > maxBytes) return tooLarge(maxBytes);
    // One byte more than the cap is asked for: a file that grew since fstat is still refused.
    const buffer = Buffer.allocUnsafe(Math.min(info.size, maxBytes) + 1);
    let size = 0;
    for (let read = -1; read !== 0 && size < buffer.length; size += read) read = readSync(fd, buffer, size, buffer.length - size, null);
    if (size > maxBytes) return tooLarge(maxBytes);
    return buffer.subarray(0, size);
  } catch (error) {
    return { ok: false, reason: 'unreadable', detail: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The refusal of a file over `maxBytes` (the import's MAX_IMPORT_FILE_BYTES). */
export function tooLarge(maxBytes: number): ParseRefusal {
  return { ok: false, reason: 'too-large', detail: `the file is over the ${maxBytes}-byte cap` };
}

/** An aggregate record as stored: the columns queries group by, and the rest as JSON. */
export function recordRow(record: AggregateRecord): ReportRecordRow {
  const { sourceIp, count, headerFrom, disposition } = record;
  return { sourceIp, count, headerFrom, disposition, dkimAligned: record.dkimResult === 'pass', spfAligned: record.spfResult === 'pass', detail: recordDetail(record) };
}

/**
 * A record's detail column: the record but its four columns, as JSON text, its fields named in
 * AggregateRecord's (readRecord's) order (a literal: an object rest copy is V8's slow path).
 */
function recordDetail(record: AggregateRecord): string {
  return JSON.stringify({ dkimResult: record.dkimResult, spfResult: record.spfResult, envelopeFrom: record.envelopeFrom, envelopeTo: record.envelopeTo, auth: record.auth, reasons: record.reasons });
}

/**
 * The policy domain a report is about: a DMARC aggregate report's policy_published domain (RFC 7489
 * Appendix C); for a TLS report (RFC 8460 §4) the first policy's, which files it.
 */
export function reportDomain(report: ReportHead): string {
  return report.kind === 'aggregate' ? report.policyPublished.domain : (report.policies[0]?.policy.domain ?? '');
}

/** A parsed report split into what the storing process reads (its head) and what it stores as given (its stored form). */
export function formStored(report: AggregateReport | TlsReport): { ok: true; report: ReportHead; stored: StoredForm } {
  if (report.kind !== 'aggregate') return { ok: true, report, stored: { document: JSON.stringify(report), records: [], digest: [] } };
  const { records, ...head } = report;
  // The engine's per-source, per-day digest, stored with the report in its transaction (summaries read it, never the rows).
  return { ok: true, report: head, stored: { document: JSON.stringify(head), records: records.map(recordRow), digest: digestReports([report], reportDomain(report)).senders } };
}

/**
 * What a report says, as a digest of the parsed report (records included): the same report in any
 * container or layout has one digest; a forged copy under the same id that says something else has
 * another (issue 38 item 10: it cannot pre-empt the real one).
 */
export function contentDigest(report: AggregateReport | TlsReport): string {
  return createHash('sha256').update(JSON.stringify(report)).digest('hex');
}

/**
 * A stored form as it crosses from the parser process (parse-worker.ts): the rows as columns, arrays of
 * strings, numbers and booleans that the channel's structured clone copies as they are (no JSON
 * escaping of each row's detail text on one side, no unescaping on the other, no row objects built
 * twice), the digest as JSON text (one JSON.parse). `storedFormFromWire` checks it and makes the rows.
 */
export interface StoredWire {
  document: string;
  sourceIp: string[];
  count: number[];
  headerFrom: string[];
  disposition: string[];
  dkimAligned: boolean[];
  spfAligned: boolean[];
  detail: string[];
  /** `StoredForm.digest` as JSON text. */
  digest: string;
}

/** A parsed report's head, its stored form in wire form and its content digest, made in one pass (the parser process's). */
export interface WireForm {
  report: ReportHead;
  stored: StoredWire;
  contentDigest: string;
}

/**
 * `formStored` and `contentDigest` of a report parsed by `parseAggregateReport` or `parseTlsReport`,
 * in one pass: the digest's text, `JSON.stringify(report)`, is put together from the texts the stored
 * form already has (the head's document, each row's detail) rather than made again; it is the same text
 * (test/ingest/parse-wire.test.ts holds the two equal), so duplicates are found as before.
 */
export function wireForm(report: AggregateReport | TlsReport): WireForm {
  if (report.kind !== 'aggregate') {
    const document = JSON.stringify(report);
    const stored: StoredWire = { document, sourceIp: [], count: [], headerFrom: [], disposition: [], dkimAligned: [], spfAligned: [], detail: [], digest: '[]' };
    return { report, stored, contentDigest: createHash('sha256').update(document).digest('hex') };
  }
  const { records, ...head } = report;
  const document = JSON.stringify(head);
  const n = records.length;
  // JSON.stringify(report) has the head's keys, then `records` (parseAggregateReport's order); a report
  // of another order is stringified whole.
  let lastKey: string | undefined;
  for (const key in report) lastKey = key;
  const inOrder = lastKey === 'records';
  const stored: StoredWire = {
    document,
    sourceIp: new Array<string>(n),
    count: new Array<number>(n),
    headerFrom: new Array<string>(n),
    disposition: new Array<string>(n),
    dkimAligned: new Array<boolean>(n),
    spfAligned: new Array<boolean>(n),
    detail: new Array<string>(n),
    digest: JSON.stringify(digestReports([report], reportDomain(report)).senders),
  };
  const whole: string[] = [document.slice(0, -1), ',"records":['];
  for (let i = 0; i < n; i++) {
    const record = records[i]!;
    const detail = recordDetail(record);
    stored.sourceIp[i] = record.sourceIp;
    stored.count[i] = record.count;
    stored.headerFrom[i] = record.headerFrom;
    stored.disposition[i] = record.disposition;
    stored.dkimAligned[i] = record.dkimResult === 'pass';
    stored.spfAligned[i] = record.spfResult === 'pass';
    stored.detail[i] = detail;
    if (i > 0) whole.push(',');
    if (inOrder) whole.push(recordText(record, detail));
  }
  whole.push(']}');
  return { report: head, stored, contentDigest: inOrder ? createHash('sha256').update(whole.join('')).digest('hex') : contentDigest(report) };
}

/** The key that follows `headerFrom` in a record (readRecord's order), as it opens its place in the detail text. */
const AFTER_HEADER_FROM = ',"envelopeFrom":';
/** An AggregateRecord's keys in readRecord's order (the order `JSON.stringify(record)` writes them in). */
const RECORD_KEYS: readonly string[] = ['sourceIp', 'count', 'disposition', 'dkimResult', 'spfResult', 'headerFrom', 'envelopeFrom', 'envelopeTo', 'auth', 'reasons'];

/**
 * `JSON.stringify(record)` from its detail (`recordDetail`): the record's keys in readRecord's order,
 * `sourceIp, count, disposition, dkimResult, spfResult, headerFrom, envelopeFrom, …`, of which the
 * detail holds all but the four columns. A quote inside a JSON string is escaped, so the first
 * `,"envelopeFrom":` of the detail is its key. A record of another shape is stringified whole.
 */
function recordText(record: AggregateRecord, detail: string): string {
  const at = detail.indexOf(AFTER_HEADER_FROM);
  let k = 0;
  for (const key in record) if (key !== RECORD_KEYS[k++]) return JSON.stringify(record);
  if (at === -1 || k !== RECORD_KEYS.length || typeof record.sourceIp !== 'string' || typeof record.disposition !== 'string' || typeof record.headerFrom !== 'string' || !Number.isFinite(record.count)) return JSON.stringify(record);
  return `{"sourceIp":${JSON.stringify(record.sourceIp)},"count":${JSON.stringify(record.count)},"disposition":${JSON.stringify(record.disposition)},${detail.slice(1, at)},"headerFrom":${JSON.stringify(record.headerFrom)}${detail.slice(at)}`;
}

/**
 * A stored form back from its wire form (`StoredWire`): it comes from our own child, yet its shape is
 * checked (every column as long as the others, each value of its type, each digest entry's day and
 * source text, its counts numbers and its lists lists): a form that is not one is refused (undefined).
 */
export function storedFormFromWire(value: unknown): StoredForm | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const wire = value as Partial<Record<keyof StoredWire, unknown>>;
  if (typeof wire.document !== 'string' || typeof wire.digest !== 'string') return undefined;
  const { sourceIp, count, headerFrom, disposition, dkimAligned, spfAligned, detail } = wire;
  if (!Array.isArray(sourceIp) || !Array.isArray(count) || !Array.isArray(headerFrom) || !Array.isArray(disposition) || !Array.isArray(dkimAligned) || !Array.isArray(spfAligned) || !Array.isArray(detail)) return undefined;
  const n = sourceIp.length;
  if (count.length !== n || headerFrom.length !== n || disposition.length !== n || dkimAligned.length !== n || spfAligned.length !== n || detail.length !== n) return undefined;
  const records: ReportRecordRow[] = new Array<ReportRecordRow>(n);
  for (let i = 0; i < n; i++) {
    const row: ReportRecordRow = { sourceIp: sourceIp[i], count: count[i], headerFrom: headerFrom[i], disposition: disposition[i], dkimAligned: dkimAligned[i], spfAligned: spfAligned[i], detail: detail[i] };
    if (!isRecordRow(row)) return undefined;
    records[i] = row;
  }
  let digest: unknown;
  try {
    digest = JSON.parse(wire.digest);
  } catch {
    return undefined;
  }
  if (!Array.isArray(digest)) return undefined;
  for (const entry of digest as unknown[]) if (!isDigestEntry(entry)) return undefined;
  return { document: wire.document, records, digest: digest as SenderDigestEntry[] };
}

/** Why a document of `kind` is refused where only `kinds` are taken. */
export function wrongKind(kind: ReportKind, kinds: readonly ReportKind[]): string {
  const named = (k: ReportKind) => (k === 'tls' ? 'an SMTP TLS report (RFC 8460 JSON)' : 'a DMARC aggregate report (XML)');
  const where = kinds.length === 1 && kinds[0] === 'tls' ? 'DMARC aggregate reports go to the mailto: address of the rua tag of the DMARC record (RFC 7489 §7.2), or to the API upload with a key' : 'send it where that kind is taken';
  return `this is ${named(kind)}, and this path takes ${kinds.map(named).join(' or ')} only: ${where}`;
}

function overBudget(): ParseRefusal {
  return {
    ok: false,
    reason: 'job-budget',
    detail: `the report files of this message together decompress to more than ${MAX_JOB_DOCUMENT_BYTES} bytes (MAX_JOB_DOCUMENT_BYTES, one budget for all its parts): this one was not read`,
  };
}

/** Parses the files of one job in order, one budget for all. */
export function parseReportFiles(files: readonly ReportFileInput[]): ParsedFile[] {
  const budget = jobBudget();
  return files.map((file) => parseReportFile(file, budget));
}

function isRecordRow(value: unknown): value is ReportRecordRow {
  const row = value as Partial<Record<keyof ReportRecordRow, unknown>> | null;
  return (
    typeof row === 'object' &&
    row !== null &&
    typeof row.sourceIp === 'string' &&
    typeof row.count === 'number' &&
    typeof row.headerFrom === 'string' &&
    typeof row.disposition === 'string' &&
    typeof row.dkimAligned === 'boolean' &&
    typeof row.spfAligned === 'boolean' &&
    typeof row.detail === 'string'
  );
}

const DIGEST_COUNTS = ['messages', 'spfAligned', 'dkimAligned', 'dmarcPass', 'failing', 'forwardedFailing', 'brokenNoSelector'] as const;
const DIGEST_LISTS = ['selectors', 'dkimDomains', 'spfDomains', 'verified', 'ownFailed', 'broken'] as const;

/** The fields the store's merge reads as keys and counts (the lists it only unions, checked as lists). */
function isDigestEntry(value: unknown): value is SenderDigestEntry {
  const entry = value as Partial<Record<keyof SenderDigestEntry, unknown>> | null;
  if (typeof entry !== 'object' || entry === null || typeof entry.day !== 'string' || typeof entry.source !== 'string') return false;
  return DIGEST_COUNTS.every((key) => typeof entry[key] === 'number') && DIGEST_LISTS.every((key) => Array.isArray(entry[key]));
}
