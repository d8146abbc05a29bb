/**
 * The child process of the report parser pool (parse-pool.ts): takes one job at a time (the files of
 * a message, or one file, or a file's path to read), parses them with parse-files.ts under one
 * budget, and sends each file's outcome as soon as it has it, so that a job stopped at its deadline
 * keeps what was done. A report's stored form (rows, digest, document) goes as one JSON text
 * ({@link WireParsedFile}): the storing process rebuilds it with one JSON.parse. It exits when the
 * service goes away (its IPC channel closes).
 */
import { jobBudget, parseReportFile, type ParsedDocument, type ParsedFile, type ParseRefusal, type ReportFileInput } from './parse-files.js';

/** A job sent to the parser process. */
export interface ParseJobMessage {
  id: number;
  files: ReportFileInput[];
}

/** A parsed document as it crosses the channel: its stored form as JSON text. */
export interface WireDocument extends Omit<ParsedDocument, 'outcome'> {
  outcome: (Omit<Extract<ParsedDocument['outcome'], { ok: true }>, 'stored'> & { stored: string }) | ParseRefusal;
}

/** A parsed file as it crosses the channel. */
export type WireParsedFile = { ok: true; documents: WireDocument[] } | ParseRefusal;

/** What the parser process sends back: each file's outcome, the last one marked (one message a file, none more). */
export interface ParseWorkerReply {
  id: number;
  index: number;
  file: WireParsedFile;
  /** The job's last file: the job is over. */
  last: boolean;
}

/** A parsed file in its wire form. */
export function toWire(parsed: ParsedFile): WireParsedFile {
  if (!parsed.ok) return parsed;
  return { ok: true, documents: parsed.documents.map((d) => ({ ...d, outcome: d.outcome.ok ? { ...d.outcome, stored: JSON.stringify(d.outcome.stored) } : d.outcome })) };
}

process.on('disconnect', () => process.exit(0));
process.on('message', (job: ParseJobMessage) => {
  const budget = jobBudget();
  job.files.forEach((file, index) => {
    let parsed: WireParsedFile;
    try {
      parsed = toWire(parseReportFile(file, budget));
    } catch (error) {
      // Only a bug lands here: still an answer.
      parsed = { ok: false, reason: 'parse-failed', detail: `the report could not be parsed: ${error instanceof Error ? error.message : String(error)}` };
    }
    process.send?.({ id: job.id, index, file: parsed, last: index === job.files.length - 1 } satisfies ParseWorkerReply);
  });
});
