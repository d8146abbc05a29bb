/**
 * The child process of the report parser pool (parse-pool.ts): takes one job at a time (the files of
 * a message, or one file, or a file's path to read), parses them with parse-files.ts under one
 * budget, and sends each file's outcome as soon as it has it, so that a job stopped at its deadline
 * keeps what was done. A report's stored form (rows, digest, document) goes in its wire form
 * ({@link WireParsedFile}, parse-files.ts `StoredWire`), made as the report is parsed. It exits when the
 * service goes away (its IPC channel closes).
 */
import type { AggregateReport, TlsReport } from '@spoof-checker/engine';
import { contentDigest, jobBudget, MAX_RECORDS_FORMED_IN_PARSER, parseReportDocuments, wireForm, type JobBudget, type ParsedDocument, type ParseRefusal, type ReportFileInput, type StoredWire } from './parse-files.js';

/** A job sent to the parser process. */
export interface ParseJobMessage {
  id: number;
  files: ReportFileInput[];
}

/**
 * A parsed document as it crosses the channel: its stored form in wire form (parse-files.ts
 * `StoredWire`: the rows as columns, the digest as JSON text), or (`stored` null) an aggregate report
 * of more than MAX_RECORDS_FORMED_IN_PARSER records whole, for the storing process to form.
 */
export interface WireDocument extends Omit<ParsedDocument, 'outcome'> {
  outcome: WireOutcome | ParseRefusal;
}

/** A parsed report as it crosses the channel. */
export type WireOutcome =
  | (Omit<Extract<ParsedDocument['outcome'], { ok: true }>, 'stored'> & { stored: StoredWire })
  | (Omit<Extract<ParsedDocument['outcome'], { ok: true }>, 'stored' | 'report'> & { report: AggregateReport | TlsReport; stored: null });

/** A parsed file as it crosses the channel. */
export type WireParsedFile = { ok: true; documents: WireDocument[] } | ParseRefusal;

/** What the parser process sends back: each file's outcome, the last one marked (one message a file, none more). */
export interface ParseWorkerReply {
  id: number;
  index: number;
  file: WireParsedFile;
  /** The job's last file: the job is over. */
  last: boolean;
  /**
   * Microseconds of CPU (user and system) this process spent since its previous reply (or since its
   * first job arrived: its start-up is not counted): parsing, forming, the previous reply's send, GC.
   */
  cpuMicros: number;
}

/** One file parsed, each report in its wire form, made as it is parsed (parse-files.ts `wireForm`). */
export function parseToWire(file: ReportFileInput, budget: JobBudget): WireParsedFile {
  return parseReportDocuments(file, budget, wireOutcome);
}

function wireOutcome(report: AggregateReport | TlsReport, warnings: string[]): WireOutcome {
  if (report.kind === 'aggregate' && report.records.length > MAX_RECORDS_FORMED_IN_PARSER) return { ok: true, report, stored: null, warnings, contentDigest: contentDigest(report) };
  const { report: head, stored, contentDigest: digest } = wireForm(report);
  return { ok: true, report: head, stored, warnings, contentDigest: digest };
}

/** The process's CPU at its previous reply (undefined until its first job). */
let cpuMark: NodeJS.CpuUsage | undefined;
/** Microseconds of CPU since the previous reply (or the first job). */
function cpuSinceLastReply(): number {
  // One reading a reply (a system call each), the difference taken here.
  const now = process.cpuUsage();
  const used = cpuMark === undefined ? 0 : now.user - cpuMark.user + (now.system - cpuMark.system);
  cpuMark = now;
  return used;
}

process.on('disconnect', () => process.exit(0));
process.on('message', (job: ParseJobMessage) => {
  if (cpuMark === undefined) cpuMark = process.cpuUsage();
  const budget = jobBudget();
  job.files.forEach((file, index) => {
    let parsed: WireParsedFile;
    try {
      parsed = parseToWire(file, budget);
    } catch (error) {
      // Only a bug lands here: still an answer.
      parsed = { ok: false, reason: 'parse-failed', detail: `the report could not be parsed: ${error instanceof Error ? error.message : String(error)}` };
    }
    process.send?.({ id: job.id, index, file: parsed, last: index === job.files.length - 1, cpuMicros: cpuSinceLastReply() } satisfies ParseWorkerReply);
  });
});
