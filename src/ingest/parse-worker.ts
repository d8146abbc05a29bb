/**
 * The child process of the report parser pool (parse-pool.ts): takes one job at a time (the files of
 * a message, or one file), parses them with parse-files.ts under one budget, and sends each file's
 * outcome as soon as it has it, so that a job stopped at its deadline keeps what was done. It exits
 * when the service goes away (its IPC channel closes).
 */
import { jobBudget, parseReportFile, type ParsedFile, type ReportFileInput } from './parse-files.js';

/** A job sent to the parser process. */
export interface ParseJobMessage {
  id: number;
  files: ReportFileInput[];
}

/** What the parser process sends back: a file's outcome, then the end of the job. */
export type ParseWorkerReply = { id: number; index: number; file: ParsedFile } | { id: number; done: true };

process.on('disconnect', () => process.exit(0));
process.on('message', (job: ParseJobMessage) => {
  const budget = jobBudget();
  job.files.forEach((file, index) => {
    let parsed: ParsedFile;
    try {
      parsed = parseReportFile(file, budget);
    } catch (error) {
      // Only a bug lands here: still an answer.
      parsed = { ok: false, reason: 'parse-failed', detail: `the report could not be parsed: ${error instanceof Error ? error.message : String(error)}` };
    }
    process.send?.({ id: job.id, index, file: parsed } satisfies ParseWorkerReply);
  });
  process.send?.({ id: job.id, done: true } satisfies ParseWorkerReply);
});
