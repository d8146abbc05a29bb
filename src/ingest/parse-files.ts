/**
 * Report files to parsed reports, with one budget for a whole job (a file, or every part of one
 * message): the engine unpacks each file (gzip, zip, XML, JSON by its bytes, decompression capped)
 * and parses each document (no DTD, no entity, depth and node caps, JSON depth checked before
 * `JSON.parse`), while the documents of the job together may hold at most `MAX_JOB_DOCUMENT_BYTES`.
 * RFC 9990 §"Report Contents as an Attack": one message of 16 small bombs must cost what one does.
 *
 * Pure and synchronous: the service runs it in a worker thread (parse-pool.ts), which adds the time
 * and heap budget; the same code runs in-thread where blocking is harmless.
 */
import { createHash } from 'node:crypto';
import {
  MAX_TOTAL_UNCOMPRESSED_BYTES,
  MAX_UNCOMPRESSED_BYTES,
  parseAggregateReport,
  parseTlsReport,
  unpackReportFile,
  type AggregateReport,
  type ReportKind,
  type TlsReport,
} from '@spoof-checker/engine';

/** Decompressed bytes of the documents of one job together (one message's parts share it). */
export const MAX_JOB_DOCUMENT_BYTES = MAX_TOTAL_UNCOMPRESSED_BYTES;

/** One file to parse. */
export interface ReportFileInput {
  bytes: Uint8Array;
  fileName: string | null;
  contentType?: string | null;
  /**
   * The kinds the path takes (the public TLS-RPT route: RFC 8460 §5.3 reports only): a document of
   * another kind is refused unread (`wrong-kind`), never parsed.
   */
  kinds?: readonly ReportKind[] | undefined;
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
  outcome: { ok: true; report: AggregateReport | TlsReport; warnings: string[]; contentDigest: string } | ParseRefusal;
}

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

/** Unpacks and parses one file, spending `budget`. Never throws. */
export function parseReportFile(file: ReportFileInput, budget: JobBudget): ParsedFile {
  if (budget.documentBytes <= 0) return overBudget();
  // Decompression stops where the job's budget ends (zlib's output cap), not at the document cap.
  const left = budget.documentBytes;
  const caps = left < MAX_UNCOMPRESSED_BYTES ? { maxUncompressedBytes: left, maxTotalUncompressedBytes: left } : {};
  const unpacked = unpackReportFile(file.bytes, { ...(file.fileName ? { filename: file.fileName } : {}), ...(file.contentType ? { contentType: file.contentType } : {}), caps });
  if (!unpacked.ok) {
    if (unpacked.reason === 'too-large' && left < MAX_UNCOMPRESSED_BYTES) {
      budget.documentBytes = 0;
      return overBudget();
    }
    return unpacked;
  }
  const documents: ParsedDocument[] = [];
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
    documents.push({ name, kind: document.kind, outcome: outcome.ok ? { ...outcome, contentDigest: contentDigest(outcome.report) } : outcome });
  }
  return { ok: true, documents };
}

/**
 * What a report says, as a digest of the parsed report (records included): the same report in any
 * container or layout has one digest; a forged copy under the same id that says something else has
 * another (issue 38 item 10: it cannot pre-empt the real one).
 */
export function contentDigest(report: AggregateReport | TlsReport): string {
  return createHash('sha256').update(JSON.stringify(report)).digest('hex');
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
