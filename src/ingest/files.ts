/**
 * Report files from the file system or standard input (`spoof-checker reports import`): report
 * files (`.xml`, `.xml.gz`, `.zip`, TLS-RPT `.json`, `.json.gz`; the engine decides by the bytes),
 * messages (`.eml`) and mailboxes (`.mbox`), and directories of them, walked in name order.
 * A report file is read by the parser process itself (its path is sent, never its bytes), and up to
 * REPORT_INGEST_IN_FLIGHT files are read at once, so the parsers keep busy while reports are stored;
 * what each file gave is told (`onInput`) and summed in the order the files were named.
 */
import { createReadStream } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Resolver } from '@spoof-checker/engine';
import { addTally, ingestReportFile, ingestReportMessage, rejectFile, unauthenticatedOrigin, type IngestTally, type ReportSink } from './ingest.js';
import { MAX_REPORT_MESSAGE_BYTES, readMbox } from './message.js';
import { REPORT_INGEST_IN_FLIGHT } from './report-writer.js';

/** Bytes read from one report file or message (above the engine's own cap, so that the engine names the refusal). */
export const MAX_IMPORT_FILE_BYTES = 64 * 1024 * 1024;
/** Files taken from one directory tree. */
export const MAX_IMPORT_FILES = 1_000_000;

/** What one input (a file, a message of a mailbox, standard input) gave. */
export interface ImportedInput {
  /** The path (or `-`, or `path#N` for the Nth message of a mailbox). */
  input: string;
  tally: IngestTally;
  /** A message or mailbox entry without any report (counted, not an error). */
  noReport: boolean;
}

/** Options of {@link importPaths}. */
export interface ImportOptions {
  sink: ReportSink;
  /** Authenticate messages through this resolver (`--zones`/`--resolver`); without it messages are not verified. */
  resolver?: Resolver;
  /** Standard input, for `-`. */
  stdin?: Readable;
  /** Called after each input (the CLI prints a line). */
  onInput?: (result: ImportedInput) => void;
}

type FileKind = 'message' | 'mbox' | 'report';

const FILE_ORIGIN = { channel: 'file', sender: null } as const;

/** gzip, zip, or XML/JSON text by the first bytes (the engine decides for good; this only tells reports from messages). */
function looksLikeReport(head: Uint8Array): boolean {
  if (head[0] === 0x1f && head[1] === 0x8b) return true;
  if (head[0] === 0x50 && head[1] === 0x4b) return true;
  const text = Buffer.from(head.subarray(0, 512)).toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  return text.startsWith('<') || text.startsWith('{');
}

/** Names that say "a report file": the engine reads these as reports, and refuses them with its reason when they are not. */
const REPORT_EXTENSIONS = ['.xml', '.xml.gz', '.gz', '.zip', '.json', '.json.gz'] as const;

/**
 * Whether `head` starts as a mail message does: a header field (RFC 5322 §2.2: a name of printable
 * characters but ':', then ':'), or the "From " line of an mbox. Anything else (empty, random bytes)
 * is neither a message nor a mailbox.
 */
export function looksLikeMessage(head: Uint8Array): boolean {
  const text = Buffer.from(head.subarray(0, 1024)).toString('latin1');
  return /^[\x21-\x39\x3b-\x7e]+[ \t]*:/.test(text) || text.startsWith('From ');
}

/**
 * The kind of a file by its name, else by its first bytes. A report file name (`.xml`, `.zip`…) is
 * always read as a report, so an empty or garbled one is refused with the engine's reason, never
 * called "a message without a report"; bytes that start like no message are read as a report too.
 */
function kindOf(name: string, head: Uint8Array): FileKind {
  return kindByName(name) ?? kindByHead(head);
}

/** The kind a file's name says, if it says one. */
function kindByName(name: string): FileKind | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.eml') || lower.endsWith('.msg.txt')) return 'message';
  if (lower.endsWith('.mbox') || lower.endsWith('.mbx')) return 'mbox';
  if (REPORT_EXTENSIONS.some((extension) => lower.endsWith(extension))) return 'report';
  return undefined;
}

/** The kind of a file whose name says none, by its first bytes. */
function kindByHead(head: Uint8Array): FileKind {
  if (looksLikeReport(head) || !looksLikeMessage(head)) return 'report';
  // A message (headers first), or an mbox when it starts with its separator.
  return Buffer.from(head.subarray(0, 5)).toString('latin1') === 'From ' ? 'mbox' : 'message';
}

async function readCapped(stream: AsyncIterable<Buffer | string>, cap: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.from(chunk);
    size += buffer.length;
    if (size > cap) return 'too-large';
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

async function readHead(path: string): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The regular files under `path`, in name order (symbolic links are not followed). */
async function* walk(path: string, budget: { left: number }): AsyncGenerator<string> {
  const info = await lstat(path);
  if (info.isDirectory()) {
    yield* walkDirectory(path, budget);
    return;
  }
  if (!info.isFile()) return;
  if (budget.left-- <= 0) throw new Error(`more than ${MAX_IMPORT_FILES} files under the paths given`);
  yield path;
}

/** The regular files under the directory `path`, by the types its listing gives (no lstat a file). */
async function* walkDirectory(path: string, budget: { left: number }): AsyncGenerator<string> {
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) yield* walkDirectory(child, budget);
    else if (entry.isFile()) {
      if (budget.left-- <= 0) throw new Error(`more than ${MAX_IMPORT_FILES} files under the paths given`);
      yield child;
    } else if (!entry.isSymbolicLink() && !entry.isFIFO() && !entry.isSocket() && !entry.isCharacterDevice() && !entry.isBlockDevice()) {
      // A file system whose listing gives no type: lstat says.
      yield* walk(child, budget);
    }
  }
}

async function importBytes(options: ImportOptions, input: string, name: string, bytes: Buffer, kind: FileKind): Promise<ImportedInput> {
  if (kind === 'message') {
    // A file called a message that does not start like one (empty, random bytes) is refused, not "no report".
    if (!looksLikeMessage(bytes)) {
      return { input, tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, name, 'not-a-message', bytes.length === 0 ? 'the file is empty' : 'the file is neither a report nor a mail message (it does not start with a header line such as "From: …")')] }, noReport: false };
    }
    const result = await ingestReportMessage(options.sink, bytes, { channel: 'file', ...(options.resolver ? { resolver: options.resolver } : {}) });
    return { input, tally: { reports: result.reports, rejected: result.rejected }, noReport: result.noReport };
  }
  const tally = await ingestReportFile(options.sink, { bytes, fileName: name }, unauthenticatedOrigin('file', null));
  return { input, tally: { reports: tally.reports, rejected: tally.rejected }, noReport: false };
}

async function* importMbox(options: ImportOptions, input: string, chunks: AsyncIterable<Buffer | string>): AsyncGenerator<ImportedInput> {
  for await (const message of readMbox(chunks, MAX_REPORT_MESSAGE_BYTES)) {
    const label = `${input}#${message.index + 1}`;
    if (!message.ok) {
      yield { input: label, tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, label, message.reason, message.detail)] }, noReport: false };
      continue;
    }
    yield await importBytes(options, label, label, message.raw, 'message');
  }
}

/**
 * What each input gave, taken in the order the inputs were named, while up to `limit` of them are
 * being read at once: the oldest is awaited when the window is full.
 */
class OrderedWindow {
  readonly #pending: Promise<ImportedInput>[] = [];
  readonly #limit: number;
  readonly #take: (result: ImportedInput) => void;

  constructor(limit: number, take: (result: ImportedInput) => void) {
    this.#limit = limit;
    this.#take = take;
  }

  /** Adds an input being read; waits (taking the oldest) while the window is full. */
  async add(result: Promise<ImportedInput>): Promise<void> {
    // Handled at once: a failure is taken in its turn, never unhandled meanwhile.
    result.catch(() => undefined);
    this.#pending.push(result);
    while (this.#pending.length >= this.#limit) this.#take(await this.#pending.shift()!);
  }

  /** Takes every input still being read, in order. */
  async drain(): Promise<void> {
    while (this.#pending.length > 0) this.#take(await this.#pending.shift()!);
  }
}

/** One file of a walk: a report file (read by the parser), a message, or a mailbox's messages; never rejects. */
async function importFile(options: ImportOptions, file: string, kind: FileKind | undefined): Promise<ImportedInput> {
  const name = basename(file);
  try {
    kind ??= kindByHead(await readHead(file));
    if (kind === 'report') {
      // The parser process reads the file (the same cap and refusal as below): its bytes never pass through here.
      const tally = await ingestReportFile(options.sink, { path: file, maxBytes: MAX_IMPORT_FILE_BYTES, fileName: name }, unauthenticatedOrigin('file', null));
      return { input: file, tally: { reports: tally.reports, rejected: tally.rejected }, noReport: false };
    }
    const bytes = await readCapped(createReadStream(file), MAX_IMPORT_FILE_BYTES);
    if (bytes === 'too-large') return { input: file, tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, name, 'too-large', `the file is over the ${MAX_IMPORT_FILE_BYTES}-byte cap`)] }, noReport: false };
    return await importBytes(options, file, name, bytes, kind);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { input: file, tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, name, 'unreadable', `cannot read ${file}: ${detail}`)] }, noReport: false };
  }
}

/**
 * Imports every path (a file, a directory walked recursively, or `-` for standard input), up to
 * REPORT_INGEST_IN_FLIGHT files at once (a mailbox, or standard input, after the files before it),
 * and returns the sum. A file that cannot be read is a rejection, not a crash.
 */
export async function importPaths(paths: readonly string[], options: ImportOptions): Promise<IngestTally & { inputs: number; noReport: number }> {
  const total: IngestTally & { inputs: number; noReport: number } = { reports: [], rejected: [], inputs: 0, noReport: 0 };
  const take = (result: ImportedInput): void => {
    total.inputs += 1;
    if (result.noReport) total.noReport += 1;
    addTally(total, result.tally);
    options.onInput?.(result);
  };
  const window = new OrderedWindow(REPORT_INGEST_IN_FLIGHT, take);
  const budget = { left: MAX_IMPORT_FILES };
  for (const path of paths) {
    if (path === '-') {
      await window.drain();
      const bytes = await readCapped(options.stdin ?? process.stdin, MAX_IMPORT_FILE_BYTES);
      if (bytes === 'too-large') {
        take({ input: '-', tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, '-', 'too-large', `standard input is over the ${MAX_IMPORT_FILE_BYTES}-byte cap`)] }, noReport: false });
        continue;
      }
      const kind = kindOf('-', bytes.subarray(0, 4096));
      if (kind === 'mbox') {
        for await (const result of importMbox(options, '-', (async function* () { yield bytes; })())) take(result);
      } else {
        take(await importBytes(options, '-', 'stdin', bytes, kind));
      }
      continue;
    }
    try {
      for await (const file of walk(path, budget)) {
        let kind = kindByName(basename(file));
        if (kind === undefined) {
          try {
            kind = kindByHead(await readHead(file));
          } catch {
            // Unreadable: importFile says why, in its turn.
          }
        }
        if (kind === 'mbox') {
          // A mailbox's messages are read one after the other, after the files before it.
          await window.drain();
          for await (const result of importMbox(options, file, createReadStream(file))) take(result);
          continue;
        }
        await window.add(importFile(options, file, kind));
      }
    } catch (error) {
      await window.drain();
      const detail = error instanceof Error ? error.message : String(error);
      take({ input: path, tally: { reports: [], rejected: [await rejectFile(options.sink, FILE_ORIGIN, basename(path), 'unreadable', `cannot read ${path}: ${detail}`)] }, noReport: false });
    }
  }
  await window.drain();
  return total;
}
