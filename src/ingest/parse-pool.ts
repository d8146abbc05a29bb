/**
 * Report parsing off the service's event loop: a small pool of parser processes (parse-worker.ts),
 * each with a heap budget (`--max-old-space-size`) and each job with a deadline after which its
 * process is killed. Processes, not worker threads: a worker thread that runs out of heap during one
 * large allocation (a 50 MB string) ends the whole service with V8's fatal out-of-memory error; a
 * parser process that does only ends itself. A hostile report (RFC 9990 §"Report Contents as an Attack": a small gzip of millions of
 * elements or nested arrays) then costs at most one worker's budget, and `/healthz`, the API and the
 * SMTP receiver keep answering while it is read.
 *
 * One job is one file, or every part of one message: the parts share the job's deadline and its
 * decompressed-bytes budget (parse-files.ts). The service's own process holds only the bytes it
 * sends (none for a file on disk: its path is sent, and the parser reads it) and the reports it gets
 * back, each in the form the store takes (parse-files.ts `StoredForm`); each parser process is bounded by `REPORT_PARSE_HEAP_MB` of
 * old generation plus `REPORT_PARSE_YOUNG_MB` and its buffers (at most `MAX_JOB_DOCUMENT_BYTES`
 * decompressed, and `MAX_REPORT_PARSE_AHEAD_BYTES` of the jobs sent ahead to it): about 2 × (256 + 16 + 76) MiB for the pool. A legitimate 41 MB report of 90,000 records parses within these budgets (14 s on a loaded 2-core machine).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formStored, MAX_JOB_DOCUMENT_BYTES, parseReportFiles, storedFormFromWire, type ParsedDocument, type ParsedFile, type ParseRefusal, type ReportFileInput } from './parse-files.js';
import type { ParseWorkerReply, WireDocument, WireParsedFile } from './parse-worker.js';

/** Parser processes at once (the machine's other cores serve requests). */
export const REPORT_PARSE_WORKERS = 2;
/**
 * Jobs sent ahead to a busy parser process, behind the one it parses (each parser process reads its
 * jobs in order, one at a time): when it answers one it starts the next at once, without waiting for
 * this process to read its answer and send another. SQLite writes a batch of reports on this thread
 * without yielding (20–30 ms for 10–20 reports): with one job a process, both parsers sat idle for
 * that time, then this process idled while they parsed (docs/benchmarks.md, "Ingestion, seventh
 * pass": each parser busy 36 % of the import). Six jobs of about 2–3 ms each cover such a batch.
 */
export const REPORT_PARSE_JOBS_AHEAD = 6;
/**
 * Bytes of the jobs sent ahead to one parser process (a job with bytes: an upload, a message's
 * parts; a path costs none, its file is read when its job starts): a job whose bytes would pass it
 * waits here for an idle process, so a parser process holds at most this much beside its own job's.
 */
export const MAX_REPORT_PARSE_AHEAD_BYTES = 1024 * 1024;
/**
 * Wall time one job (a file, or all the parts of a message) may take before its process is killed,
 * counted from when it starts (a job sent ahead: from when this process reads the answer before it).
 */
export const REPORT_PARSE_DEADLINE_MS = 60_000;
/** Old-generation heap of one parser process (`--max-old-space-size`): past it the process dies and the job is refused. */
export const REPORT_PARSE_HEAP_MB = 256;
/** Young-generation semi-space of one parser process (`--max-semi-space-size`). */
export const REPORT_PARSE_YOUNG_MB = 16;

/**
 * Bytes of report files waiting for a parser process (not yet started) that a bounded caller (an
 * HTTP upload) may add to: past it the job is refused at once, `PARSER_FULL`, instead of holding its
 * bytes in the service's memory behind the others. Four uploads of the largest size
 * (MAX_REPORT_MESSAGE_BYTES, 25 MiB) wait at most; mail (SMTP, IMAP) is never refused by it, its
 * senders retry on their own.
 */
export const MAX_REPORT_PARSE_QUEUED_BYTES = 100 * 1024 * 1024;
/** What a caller refused by the bound is told to wait, in seconds (a job's parse is seconds). */
export const REPORT_PARSE_RETRY_AFTER_SECONDS = 10;
/** The reason of a job refused because the queue holds MAX_REPORT_PARSE_QUEUED_BYTES already. */
export const PARSER_FULL = 'parser-full';

/** How one job is queued. */
export interface ParseJobOptions {
  /** Refuse the job (every file `PARSER_FULL`) when the waiting bytes would pass MAX_REPORT_PARSE_QUEUED_BYTES. */
  bounded?: boolean;
}

/** Parses report files: the pool, or in-thread (tests, the library). */
export interface ReportParser {
  /** Parses the files of one job (one budget for all); one outcome per file, in order. Never rejects. */
  parse(files: readonly ReportFileInput[], options?: ParseJobOptions): Promise<ParsedFile[]>;
}

/** Parses in the calling thread (blocking it): for tools where nothing else waits. */
export const inThreadReportParser: ReportParser = {
  parse: async (files) => parseReportFiles(files),
};

/** Options of {@link ReportParserPool}; the defaults are the named constants. */
export interface ReportParserPoolOptions {
  workers?: number;
  deadlineMs?: number;
  heapMb?: number;
  maxQueuedBytes?: number;
}

interface Job {
  id: number;
  files: readonly ReportFileInput[];
  /** The files' bytes, counted in #queuedBytes while the job waits. */
  bytes: number;
  results: (ParsedFile | undefined)[];
  resolve: (files: ParsedFile[]) => void;
}

interface Slot {
  worker: ChildProcess | undefined;
  /** The end of the process's standard error (V8 says there why it died). */
  stderr: string;
  /** The job the process parses (the oldest sent and not yet answered). */
  job: Job | undefined;
  /** Jobs sent ahead behind it, in the order sent (REPORT_PARSE_JOBS_AHEAD), not yet started: their bytes still count as waiting. */
  ahead: Job[];
  timer: NodeJS.Timeout | undefined;
}

/**
 * Where the worker's module is, and how to load it: compiled (`.js`, as installed), or from source
 * (tests, `tsx`): then tsx compiles it and `@spoof-checker/engine` is mapped to the engine's source,
 * as the vitest alias and tsconfig paths do for the main thread.
 */
function workerModule(): { url: URL; execArgv: string[] } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { url: new URL('./parse-worker.js', here), execArgv: [] };
  const tsx = pathToFileURL(createRequire(here).resolve('tsx')).href;
  const engine = new URL('../../packages/engine/src/index.ts', here).href;
  const hooks = `export async function resolve(specifier, context, next) { return next(specifier === '@spoof-checker/engine' ? ${JSON.stringify(engine)} : specifier, context); }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return { url: new URL('./parse-worker.ts', here), execArgv: ['--import', tsx, '--import', `data:text/javascript,${encodeURIComponent(register)}`] };
}

/** The pool. Idle workers do not keep the process alive; a busy one does until its job ends. */
export class ReportParserPool implements ReportParser {
  readonly #slots: Slot[];
  readonly #queue: Job[] = [];
  readonly #deadlineMs: number;
  readonly #heapMb: number;
  readonly #maxQueuedBytes: number;
  /** Bytes of the jobs waiting to start: in #queue, or sent ahead to a busy process (`Slot.ahead`). */
  #queuedBytes = 0;
  #nextId = 1;
  #closed = false;
  /**
   * Jobs ended by their deadline, by the heap budget, or by a worker that failed (the operator's
   * counters); `cpuMicros`: the CPU the parser processes said they spent on their replies (their
   * start-up not counted), and `replies`: the files answered (bench/reports.ts divides one by the reports);
   * `ahead`: the jobs that started as their process answered the one before (sent ahead: it did not
   * wait for work), of `jobs`.
   */
  readonly counters = { jobs: 0, deadline: 0, memory: 0, failed: 0, full: 0, cpuMicros: 0, replies: 0, ahead: 0 };

  constructor(options: ReportParserPoolOptions = {}) {
    this.#slots = Array.from({ length: Math.max(1, options.workers ?? REPORT_PARSE_WORKERS) }, () => ({ worker: undefined, stderr: '', job: undefined, ahead: [], timer: undefined }));
    this.#deadlineMs = options.deadlineMs ?? REPORT_PARSE_DEADLINE_MS;
    this.#heapMb = options.heapMb ?? REPORT_PARSE_HEAP_MB;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? MAX_REPORT_PARSE_QUEUED_BYTES;
  }

  /** Bytes of the jobs waiting for a parser process. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  parse(files: readonly ReportFileInput[], options: ParseJobOptions = {}): Promise<ParsedFile[]> {
    if (files.length === 0) return Promise.resolve([]);
    // A path holds nothing in this process: only bytes count against the bound.
    const bytes = files.reduce((sum, file) => sum + ('bytes' in file ? file.bytes.length : 0), 0);
    return new Promise((resolve) => {
      const job: Job = { id: this.#nextId++, files, bytes, results: files.map(() => undefined), resolve };
      if (this.#closed) {
        this.#finish(undefined, job, refusal('parse-failed', 'the report parser is shut down'));
        return;
      }
      // Bounded: a job that must wait (no process free) and would take the waiting bytes past the bound is refused now.
      const mustWait = this.#queue.length > 0 || this.#slots.every((slot) => slot.job !== undefined);
      if (options.bounded && mustWait && this.#queuedBytes + bytes > this.#maxQueuedBytes) {
        this.counters.full += 1;
        this.#finish(undefined, job, refusal(PARSER_FULL, `${this.#queuedBytes} bytes of reports already wait for the parser (MAX_REPORT_PARSE_QUEUED_BYTES, ${this.#maxQueuedBytes}): send this one again in ${REPORT_PARSE_RETRY_AFTER_SECONDS} s`));
        return;
      }
      this.#queue.push(job);
      this.#queuedBytes += bytes;
      this.#dispatch();
    });
  }

  /** Terminates every worker; jobs still waiting are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queuedBytes = 0;
    for (const job of this.#queue.splice(0)) this.#finish(undefined, job, refusal('parse-failed', 'the report parser is shut down'));
    await Promise.all(
      this.#slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = undefined;
        for (const job of slot.ahead.splice(0)) this.#finish(undefined, job, refusal('parse-failed', 'the report parser is shut down'));
        if (slot.job) this.#finish(slot, slot.job, refusal('parse-failed', 'the report parser is shut down'));
        worker?.kill('SIGKILL');
      }),
    );
  }

  /**
   * Gives the waiting jobs to the processes: first each idle one a job, then, oldest first, jobs sent
   * ahead to the busy ones (the least loaded first), within REPORT_PARSE_JOBS_AHEAD and
   * MAX_REPORT_PARSE_AHEAD_BYTES each.
   */
  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job !== undefined) continue;
      const job = this.#queue.shift();
      if (job === undefined) return;
      this.#queuedBytes -= job.bytes;
      this.#start(slot, job);
    }
    while (this.#queue.length > 0) {
      const job = this.#queue[0]!;
      let best: Slot | undefined;
      for (const slot of this.#slots) {
        if (slot.worker === undefined || slot.ahead.length >= REPORT_PARSE_JOBS_AHEAD) continue;
        if (job.bytes > 0 && slot.ahead.reduce((sum, j) => sum + j.bytes, job.bytes) > MAX_REPORT_PARSE_AHEAD_BYTES) continue;
        if (best === undefined || slot.ahead.length < best.ahead.length) best = slot;
      }
      if (best === undefined) return;
      this.#queue.shift();
      best.ahead.push(job);
      this.#send(best.worker!, job);
    }
  }

  /** `job` starts in `slot`: it was sent now, or ahead (`Slot.ahead`), when the process answered the one before. */
  #start(slot: Slot, job: Job, sent = false): void {
    slot.job = job;
    this.counters.jobs += 1;
    const worker = slot.worker ?? this.#spawn(slot);
    worker.ref();
    worker.channel?.ref();
    slot.timer = setTimeout(() => {
      this.counters.deadline += 1;
      this.#kill(slot);
      this.#finish(slot, job, refusal('parse-deadline', `parsing took longer than ${this.#deadlineMs / 1000} s (REPORT_PARSE_DEADLINE_MS, one budget for a file or all the parts of a message): stopped and refused`));
    }, this.#deadlineMs);
    if (!sent) this.#send(worker, job);
  }

  /**
   * Sends `job` to `worker`. A send that fails found the process ending (its channel closed): its
   * `close` settles its jobs, the one it parsed with the reason it died of (an `error` event here
   * would refuse that one as a failure before its `close` could say it ran out of memory).
   */
  #send(worker: ChildProcess, job: Job): void {
    worker.send(
      {
        id: job.id,
        files: job.files.map((f) => ({ ...('bytes' in f ? { bytes: f.bytes } : { path: f.path, maxBytes: f.maxBytes }), fileName: f.fileName, contentType: f.contentType ?? null, ...(f.kinds ? { kinds: f.kinds } : {}) })),
      },
      () => undefined,
    );
  }

  #spawn(slot: Slot): ChildProcess {
    const module = workerModule();
    const worker = fork(fileURLToPath(module.url), [], {
      execArgv: [...module.execArgv, `--max-old-space-size=${this.#heapMb}`, `--max-semi-space-size=${Math.max(1, Math.floor(REPORT_PARSE_YOUNG_MB / 2))}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    slot.worker = worker;
    slot.stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => {
      slot.stderr = (slot.stderr + chunk.toString('utf8')).slice(-4096);
    });
    // The pipe never keeps the process alive on its own: the child (while busy) does.
    (worker.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    worker.on('message', (reply: ParseWorkerReply) => {
      const job = slot.job;
      if (slot.worker !== worker || job === undefined || typeof reply !== 'object' || reply === null || reply.id !== job.id) return;
      this.counters.replies += 1;
      if (Number.isFinite(reply.cpuMicros) && reply.cpuMicros >= 0) this.counters.cpuMicros += reply.cpuMicros;
      // An answer for no file of the job is dropped (an index past the files would make `results` sparse and long).
      if (Number.isInteger(reply.index) && reply.index >= 0 && reply.index < job.files.length) job.results[reply.index] = parsedFileFromWire(reply.file);
      if (reply.last === true) this.#finish(slot, job, refusal('parse-failed', 'the parser gave no answer for this file'));
    });
    // A process that cannot start or be signalled: its job fails, the pool goes on. `close`, not
    // `exit`: it comes once the channel has given every answer the process sent (a job sent ahead may
    // have started, and failed, before this process read the answer to the one before it).
    worker.on('error', () => this.#ended(slot, worker, false));
    worker.on('close', (_code, signal) => this.#ended(slot, worker, signal === 'SIGABRT' || signal === 'SIGTRAP' || /heap out of memory|heap limit/i.test(slot.stderr)));
    return worker;
  }

  /** A parser process ended: the job it had is refused (out of memory, or failed); those sent ahead wait again. */
  #ended(slot: Slot, worker: ChildProcess, outOfMemory: boolean): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    this.#requeueAhead(slot);
    const job = slot.job;
    if (job === undefined) {
      if (!this.#closed) this.#dispatch();
      return;
    }
    if (outOfMemory) {
      this.counters.memory += 1;
      this.#finish(slot, job, refusal('parse-memory', `parsing needed more than ${this.#heapMb} MiB of memory (REPORT_PARSE_HEAP_MB): stopped and refused`));
    } else {
      this.counters.failed += 1;
      this.#finish(slot, job, refusal('parse-failed', 'the report parser stopped before it answered'));
    }
  }

  #kill(slot: Slot): void {
    const worker = slot.worker;
    slot.worker = undefined;
    this.#requeueAhead(slot);
    worker?.kill('SIGKILL');
  }

  /** The jobs sent ahead to a process that ended, never started: first in the queue again, for the next process. */
  #requeueAhead(slot: Slot): void {
    this.#queue.unshift(...slot.ahead.splice(0));
  }

  /** Ends a job: files without an outcome get `missing`; the slot starts the job sent ahead, or takes the next one. */
  #finish(slot: Slot | undefined, job: Job, missing: ParseRefusal): void {
    if (slot !== undefined) {
      if (slot.job !== job) return;
      clearTimeout(slot.timer);
      slot.timer = undefined;
      slot.job = undefined;
      const next = slot.worker === undefined ? undefined : slot.ahead.shift();
      if (next !== undefined) {
        // The process started it as it sent the answer to this one.
        this.#queuedBytes -= next.bytes;
        this.counters.ahead += 1;
        this.#start(slot, next, true);
      } else {
        slot.worker?.unref();
        slot.worker?.channel?.unref();
      }
    }
    job.resolve(job.results.map((file) => file ?? missing));
    if (slot !== undefined && !this.#closed) this.#dispatch();
  }
}

/**
 * A parsed file from its wire form: each stored form rebuilt and checked. It comes from our own child,
 * yet what is not a wire form is refused, never thrown (this runs in the IPC channel's listener, where
 * a throw would end the service): a malformed document refuses that document, a malformed file the file.
 */
export function parsedFileFromWire(file: WireParsedFile): ParsedFile {
  if (typeof file !== 'object' || file === null) return refusal('parse-failed', MALFORMED_FILE);
  if (!file.ok) return typeof file.reason === 'string' && typeof file.detail === 'string' ? file : refusal('parse-failed', MALFORMED_FILE);
  if (!Array.isArray(file.documents) || !file.documents.every((d) => typeof d === 'object' && d !== null)) return refusal('parse-failed', MALFORMED_FILE);
  return { ok: true, documents: file.documents.map(documentFromWire) };
}

/** The refusal of a file whose answer from the parser was not one. */
const MALFORMED_FILE = "the report parser's answer for this file was malformed";

function documentFromWire(document: WireDocument): ParsedDocument {
  const malformed = { ...document, outcome: refusal('parse-failed', "the report parser's answer for this report was malformed") };
  try {
    const outcome = document.outcome;
    if (!outcome.ok) return { ...document, outcome };
    if (outcome.stored === null) {
      // A large aggregate report came whole (MAX_RECORDS_FORMED_IN_PARSER): formed here.
      const report = outcome.report;
      return report.kind === 'aggregate' && Array.isArray(report.records) ? { ...document, outcome: { ...outcome, ...formStored(report) } } : malformed;
    }
    const stored = storedFormFromWire(outcome.stored);
    return stored ? { ...document, outcome: { ...outcome, stored } } : malformed;
  } catch {
    // Not of the shape its type says (formStored or a property read threw).
    return malformed;
  }
}

function refusal(reason: string, detail: string): ParseRefusal {
  return { ok: false, reason, detail };
}

let shared: ReportParserPool | undefined;

/** The process's pool, made on first use (every path into the store parses through it). */
export function defaultReportParser(): ReportParser {
  shared ??= new ReportParserPool();
  return shared;
}

export { MAX_JOB_DOCUMENT_BYTES };
