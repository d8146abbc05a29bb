/**
 * Response compression: Brotli or gzip as the client's `Accept-Encoding` asks (RFC 9110 §12.5.3),
 * marked with `Content-Encoding` (RFC 9110 §8.4) and `Vary: Accept-Encoding` (RFC 9110 §12.5.5).
 *
 * One `onSend` hook over node:zlib, not `@fastify/compress`: that plugin brings 5 packages more
 * (accept-negotiator, mime-db, minipass, readable-stream and its polyfills), compresses every
 * response anew (the stylesheet and the home page would be compressed again on each request) and
 * pipes streams through zlib without flushing, so a batch's NDJSON lines would wait in the
 * compressor. This module is smaller and does what the service needs:
 * - compressible types only (text, JSON and problem+json, NDJSON, JavaScript, SVG, XML), at
 *   `COMPRESSION_THRESHOLD_BYTES` or more; never a body already encoded, a 204 or a 304 (a `HEAD` gets GET's headers, encoding included),
 *   nor a response marked `Cache-Control: no-transform`;
 * - Brotli when the client accepts it at least as much as gzip, else gzip, else identity (`*` counts
 *   for both; `q=0` refuses a coding);
 * - a route whose body is the same for every request (`config.constantBody`: the assets, the home
 *   page, /docs) is compressed once, at the highest settings, and kept in memory; any other body at
 *   moderate settings (`DYNAMIC_BROTLI_QUALITY`, `DYNAMIC_GZIP_LEVEL`) on libuv's thread pool, so
 *   the event loop is not blocked while it compresses;
 * - a streamed body (a batch's results) stays streamed: it goes through a compressing stream that
 *   flushes after every chunk the route writes, so each page of lines reaches the client at once.
 * BREACH (RFC 7457 §2.6) needs a secret in a compressed body beside attacker-chosen text, fetched
 * with ambient credentials: the service sets no cookies and reads keys from headers only.
 * Figures (bytes and CPU per request of the home page) are in docs/http-api.md.
 */
import { Readable, pipeline } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Bodies smaller than this (1 KiB) are sent as they are: the saving would not pay for the work and the headers. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
/**
 * Brotli quality of a body made per request: at 4 it costs about what gzip 6 costs and compresses
 * as well or a little better; 5 saves ~7 % more bytes for ~1.6× the CPU, 11 ~20 % for ~80×
 * (scripts/measure-compression.ts).
 */
export const DYNAMIC_BROTLI_QUALITY = 4;
/** gzip level of a body made per request (zlib's default). */
export const DYNAMIC_GZIP_LEVEL = 6;
/** Brotli quality of a constant body, compressed once per process: the best there is. */
export const CONSTANT_BROTLI_QUALITY = 11;
/** gzip level of a constant body, compressed once per process. */
export const CONSTANT_GZIP_LEVEL = 9;

/** A content coding the service sends (RFC 9110 §8.4.1): Brotli (RFC 7932), gzip (RFC 1952) or none. */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/** A `q` value (RFC 9110 §12.4.2): 0 to 1 with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The coding to answer with, from the request's `Accept-Encoding` (RFC 9110 §12.5.3): the accepted
 * coding with the highest `q`, Brotli on a tie; identity when the header is absent or empty, when
 * neither Brotli nor gzip is acceptable (`q=0`, or not listed and no `*`), or when the client
 * prefers identity outright. A member with a malformed `q` counts as not acceptable.
 */
export function negotiateEncoding(header: string | readonly string[] | undefined): ContentCoding {
  if (header === undefined) return 'identity';
  const weights = new Map<string, number>();
  for (const member of (typeof header === 'string' ? header : header.join(',')).split(',')) {
    const [codingPart, ...parameters] = member.split(';');
    const coding = (codingPart ?? '').trim().toLowerCase();
    if (coding === '') continue;
    let q = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=').map((part) => part.trim());
      if (name?.toLowerCase() !== 'q') continue;
      q = value !== undefined && QVALUE.test(value) ? Number(value) : 0;
    }
    // RFC 9110 §12.5.3: "x-gzip" is the same coding as "gzip"; a repeated coding keeps its best weight.
    const key = coding === 'x-gzip' ? 'gzip' : coding;
    weights.set(key, Math.max(weights.get(key) ?? 0, q));
  }
  const star = weights.get('*');
  const br = weights.get('br') ?? star ?? 0;
  const gzipWeight = weights.get('gzip') ?? star ?? 0;
  const best = Math.max(br, gzipWeight);
  if (best <= 0) return 'identity';
  const identity = weights.get('identity');
  if (identity !== undefined && identity > best) return 'identity';
  return br >= gzipWeight ? 'br' : 'gzip';
}

/** Media types worth compressing: text, JSON (incl. problem+json and NDJSON), JavaScript, SVG and XML. */
export function isCompressibleType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  // Server-sent events are read as they arrive; a compressor would hold them back.
  if (type === 'text/event-stream') return false;
  if (type.startsWith('text/')) return true;
  return (
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/x-ndjson' ||
    type === 'application/javascript' ||
    type === 'application/xml' ||
    type.endsWith('+xml')
  );
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Settings of one compression. */
interface Settings {
  brotliQuality: number;
  gzipLevel: number;
}
const DYNAMIC: Settings = { brotliQuality: DYNAMIC_BROTLI_QUALITY, gzipLevel: DYNAMIC_GZIP_LEVEL };
const CONSTANT: Settings = { brotliQuality: CONSTANT_BROTLI_QUALITY, gzipLevel: CONSTANT_GZIP_LEVEL };

function brotliOptions(bytes: number, quality: number): BrotliOptions {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      // The size is known: Brotli sizes its window to it.
      ...(bytes > 0 ? { [constants.BROTLI_PARAM_SIZE_HINT]: bytes } : {}),
    },
  };
}

/** Compresses a whole body with `coding` (never identity). */
function compressBody(body: Buffer, coding: 'br' | 'gzip', settings: Settings = DYNAMIC): Promise<Buffer> {
  return coding === 'br' ? brotliAsync(body, brotliOptions(body.length, settings.brotliQuality)) : gzipAsync(body, { level: settings.gzipLevel });
}

/** A compressing stream that flushes after every chunk written, so that a streamed body stays streamed. */
function compressingStream(coding: 'br' | 'gzip'): NodeJS.ReadWriteStream {
  if (coding === 'br') {
    return createBrotliCompress({ ...brotliOptions(0, DYNAMIC_BROTLI_QUALITY), flush: constants.BROTLI_OPERATION_FLUSH });
  }
  const options: ZlibOptions = { level: DYNAMIC_GZIP_LEVEL, flush: constants.Z_SYNC_FLUSH };
  return createGzip(options);
}

/** A constant route's body and its compressed forms, made once. */
interface ConstantEntry {
  body: string | Buffer;
  compressed: Partial<Record<'br' | 'gzip', Promise<Buffer>>>;
}

/** Adds `Accept-Encoding` to the response's `Vary` (RFC 9110 §12.5.5), keeping what is there. */
function varyOnAcceptEncoding(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const existing = current === undefined ? '' : Array.isArray(current) ? current.join(', ') : String(current);
  const members = existing.split(',').map((member) => member.trim().toLowerCase());
  if (members.includes('*') || members.includes('accept-encoding')) return;
  void reply.header('vary', existing.trim() === '' ? 'Accept-Encoding' : `${existing}, Accept-Encoding`);
}

function isStream(payload: unknown): payload is NodeJS.ReadableStream {
  return typeof payload === 'object' && payload !== null && typeof (payload as { pipe?: unknown }).pipe === 'function';
}

/**
 * The compression hook, for `app.addHook('onSend', …)` on the server's root scope, so that it
 * covers every route, error and not-found answer. Constant routes' compressed bodies are kept for
 * the life of the app (one entry per route).
 */
export function compressionHook(): (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> {
  const constantBodies = new Map<string, ConstantEntry>();

  return async (request, reply, payload) => {
    const contentType = reply.getHeader('content-type');
    const type = typeof contentType === 'string' ? contentType : undefined;
    // A type that is not compressible does not vary by encoding; every other answer says it does.
    if (type !== undefined && !isCompressibleType(type)) return payload;
    varyOnAcceptEncoding(reply);
    if (type === undefined || payload === null || payload === undefined) return payload;
    // RFC 9110 §15.3.5, §15.4.5: a 204 and a 304 have no body. A HEAD goes on: RFC 9110 §9.3.2 has
    // it answer with the header fields GET would send (Content-Encoding, the encoded length), and
    // the server then sends no body.
    if (reply.statusCode === 204 || reply.statusCode === 304) return payload;
    if (reply.hasHeader('content-encoding')) return payload;
    // RFC 9111 §5.2.2.6: no-transform asks that the content be left as it is.
    const cacheControl = reply.getHeader('cache-control');
    if (typeof cacheControl === 'string' && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cacheControl)) return payload;
    const coding = negotiateEncoding(request.headers['accept-encoding']);
    if (coding === 'identity') return payload;

    if (isStream(payload)) {
      void reply.header('content-encoding', coding).removeHeader('content-length');
      // pipeline() destroys both sides when either fails or the client goes away.
      return pipeline(payload as Readable, compressingStream(coding), () => undefined);
    }
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    if (bytes < COMPRESSION_THRESHOLD_BYTES) return payload;

    let compressed: Buffer;
    if (request.routeOptions.config.constantBody === true) {
      const key = `${request.method} ${request.routeOptions.url ?? ''}`;
      let entry = constantBodies.get(key);
      // A constant route whose body changed (made on first use) is compressed once more and kept.
      if (entry === undefined || entry.body !== payload) {
        entry = { body: payload, compressed: {} };
        constantBodies.set(key, entry);
      }
      const kept = entry;
      const made = (kept.compressed[coding] ??= compressBody(Buffer.from(payload), coding, CONSTANT).catch((error: unknown) => {
        // Not kept when it failed: the next request tries again.
        delete kept.compressed[coding];
        throw error;
      }));
      compressed = await made;
    } else {
      compressed = await compressBody(typeof payload === 'string' ? Buffer.from(payload) : payload, coding, DYNAMIC);
    }
    void reply.header('content-encoding', coding).removeHeader('content-length');
    return compressed;
  };
}

/** Compresses every response of `app` (its root scope) as the client asks. */
export function registerCompression(app: FastifyInstance): void {
  app.addHook('onSend', compressionHook());
}
