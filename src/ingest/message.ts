/**
 * A report message (RFC 5322, MIME) → the report files it carries, with `mailparser`.
 *
 * Reporters use every shape (research/reports.md §1.1, §3.1): a zip or gzip attachment beside a text
 * part (Google), the report as the whole single-part body (Mimecast), XML as `text/xml`, base64 or
 * quoted-printable, nested multipart, a message forwarded inside another (`message/rfc822`, opened
 * here up to MAX_MESSAGE_NESTING levels). Every non-text part is offered to the engine's unpacker, which decides by the
 * bytes, never by the label; the text and HTML parts of the message are not reports and are skipped.
 */
import { simpleParser, type AddressObject } from 'mailparser';

/** Bytes of one report message (RFC 7489 §7.2.1.1 calls ten megabytes a common receiver limit; mox takes 15 MB). */
export const MAX_REPORT_MESSAGE_BYTES = 25 * 1024 * 1024;
/** How deep messages forwarded inside messages (`message/rfc822`) are opened. */
export const MAX_MESSAGE_NESTING = 3;
/** Parts of one message offered to the unpacker (a report message has one or two). */
export const MAX_REPORT_PARTS = 16;

/** One part that may be a report. */
export interface MessagePart {
  /** The part's file name (a label only, never a path), or null. */
  fileName: string | null;
  contentType: string;
  bytes: Uint8Array;
}

/** What a report message carries. */
export interface ParsedReportMessage {
  /** The From address (the first), lower case, or null. */
  from: string | null;
  messageId: string | null;
  subject: string | null;
  /** The parts that may be reports, in message order (at most MAX_REPORT_PARTS). */
  parts: MessagePart[];
  /** Parts left out over MAX_REPORT_PARTS. */
  partsDropped: number;
}

/** Types of parts that are the message's own text, not a report. */
const TEXT_TYPES = new Set(['text/plain', 'text/html', 'message/delivery-status', 'text/rfc822-headers', 'message/feedback-report']);

function firstAddress(from: AddressObject | AddressObject[] | undefined): string | null {
  const list = Array.isArray(from) ? from : from ? [from] : [];
  for (const group of list) {
    for (const entry of group.value) {
      if (entry.address) return entry.address.toLowerCase();
    }
  }
  return null;
}

/**
 * Parses `raw` and returns the parts that may be reports. Never throws for a malformed message: what
 * mailparser could not read yields no part.
 */
export async function parseReportMessage(raw: Buffer, depth = 0): Promise<ParsedReportMessage> {
  const parsed = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
    // A report message is never read for its HTML.
    maxHtmlLengthToParse: 0,
  });
  const parts: MessagePart[] = [];
  let dropped = 0;
  for (const attachment of parsed.attachments) {
    const type = (attachment.contentType ?? 'application/octet-stream').toLowerCase();
    if (TEXT_TYPES.has(type) && !attachment.filename) continue;
    // A message forwarded inside this one: its parts are this message's (mailparser keeps it whole).
    if (type === 'message/rfc822' && depth < MAX_MESSAGE_NESTING) {
      const inner = await parseReportMessage(Buffer.from(attachment.content), depth + 1);
      for (const part of inner.parts) {
        if (parts.length >= MAX_REPORT_PARTS) dropped += 1;
        else parts.push(part);
      }
      dropped += inner.partsDropped;
      continue;
    }
    if (parts.length >= MAX_REPORT_PARTS) {
      dropped += 1;
      continue;
    }
    parts.push({ fileName: attachment.filename ?? null, contentType: type, bytes: new Uint8Array(attachment.content) });
  }
  // A report sent as the plain-text body itself (seen from small reporters): offered when it starts like one.
  if (parts.length === 0 && typeof parsed.text === 'string') {
    const text = parsed.text.trimStart();
    if (text.startsWith('<?xml') || text.startsWith('<feedback') || text.startsWith('{')) {
      parts.push({ fileName: null, contentType: 'text/plain', bytes: new TextEncoder().encode(text) });
    }
  }
  return {
    from: firstAddress(parsed.from),
    messageId: parsed.messageId ?? null,
    subject: parsed.subject ?? null,
    parts,
    partsDropped: dropped,
  };
}

/** One message of an mbox file, or why it was refused. */
export type MboxMessage = { ok: true; raw: Buffer; index: number } | { ok: false; index: number; reason: 'too-large'; detail: string };

/**
 * The messages of an mbox file (the `From ` line separates them; `>From ` quoting is undone, RFC
 * 4155), read in chunks so that a large mailbox never sits in memory whole. A message over
 * `maxMessageBytes` is skipped with a refusal, and the next one is read.
 */
export async function* readMbox(chunks: AsyncIterable<Buffer | string>, maxMessageBytes = MAX_REPORT_MESSAGE_BYTES): AsyncGenerator<MboxMessage> {
  let lines: Buffer[] = [];
  let size = 0;
  let oversize = false;
  let index = 0;
  let started = false;
  let pending = Buffer.alloc(0);
  const finish = function* (): Generator<MboxMessage> {
    if (!started) return;
    if (oversize) yield { ok: false, index, reason: 'too-large', detail: `message ${index + 1} of the mbox is over the ${maxMessageBytes}-byte cap` };
    else yield { ok: true, raw: Buffer.concat(lines), index };
    index += 1;
    lines = [];
    size = 0;
    oversize = false;
  };
  const takeLine = function* (line: Buffer): Generator<MboxMessage> {
    if (line.subarray(0, 5).toString('latin1') === 'From ') {
      yield* finish();
      started = true;
      return;
    }
    if (!started) {
      // Text before the first `From ` line: a single message given as .mbox, read as is.
      started = true;
    }
    if (oversize) return;
    // RFC 4155: `>From ` (any number of `>`) at the start of a line was quoted by the writer.
    const body = /^>+From /.test(line.subarray(0, 64).toString('latin1')) ? line.subarray(1) : line;
    size += body.length;
    if (size > maxMessageBytes) {
      oversize = true;
      lines = [];
      return;
    }
    lines.push(body);
  };
  for await (const chunk of chunks) {
    let buffer = pending.length > 0 ? Buffer.concat([pending, Buffer.from(chunk)]) : Buffer.from(chunk);
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf(0x0a, start);
      if (nl < 0) break;
      yield* takeLine(buffer.subarray(start, nl + 1));
      start = nl + 1;
    }
    pending = Buffer.from(buffer.subarray(start));
    buffer = Buffer.alloc(0);
    // A line longer than the cap cannot belong to a message we keep.
    if (pending.length > maxMessageBytes) {
      oversize = true;
      started = true;
      pending = Buffer.alloc(0);
    }
  }
  if (pending.length > 0) yield* takeLine(pending);
  yield* finish();
}
