/**
 * API keys never reach a log or a stored record, whatever field they were put in and however they
 * were written (issue 29): the key a request presented (valid or not) and every key this process
 * knows in clear (the startup keys, the seed's, and each key that has authenticated since start)
 * are replaced by `[REDACTED]` wherever they occur inside a value: in any letter case, and
 * percent-encoded (RFC 3986 §2.1, once or twice, any mix of encoded and plain characters, upper or
 * lower-case hex).
 *
 * A value that still decodes to something holding a key after that (an encoding the pattern does
 * not follow) is replaced whole. So is a value holding a key base64-encoded (RFC 4648 §4, and the
 * URL-safe alphabet of §5), at any offset within what was encoded (`Basic` credentials, a token
 * that embeds the key): base64 keeps the case, so the key is searched for as it was written.
 *
 * Issue 38 (item 9): the logs no longer lean on this list of spellings (they keep an allow-list of
 * validated fields, ./audit.ts); what is still read here is a refusal test, `keyReadings`: a value
 * is read as an attacker would read it (percent-decoded, HTML references and `\u` escapes resolved,
 * separators and line breaks removed, hex, base32 and base64 runs decoded, each reading read again,
 * breadth first, to `MAX_KEY_READINGS` readings), and holds a key when any reading holds
 * `MIN_KEY_FRAGMENT_CHARS` consecutive characters of one (a key split in two, or dashed, still
 * counts). A value that does is refused where it would be stored or sent on, and replaced whole in
 * whatever is logged.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { NewReport, ReportRejection, ReportStore } from '../store/reports.js';

/** What a redacted value is replaced with (the record log's marker). */
export const KEY_REDACTED = '[REDACTED]';
/**
 * Shorter candidate keys are not searched for in other values: they would match ordinary text. A
 * key the service accepts is longer than this.
 */
export const MIN_REDACTED_KEY_CHARS = 8;
/** Longest candidate searched for (longer presented values are refused as keys anyway). */
export const MAX_REDACTED_KEY_CHARS = 512;
/**
 * Most keys remembered in clear (the most recently used are kept): every value written to a log is
 * searched for each, so the set stays small. Startup and seed keys count here too.
 */
export const MAX_REMEMBERED_KEYS = 256;
/** Most percent-decoding rounds tried on a value before it is compared (a key encoded twice is still found). */
const MAX_DECODE_ROUNDS = 3;
/** How deep a value is walked. */
const MAX_DEPTH = 16;
/**
 * Base64 characters a key's encoding must keep, at the least, to be searched for: each offset's
 * encoding loses up to three characters at its ends (those that also carry the neighbouring bytes).
 */
const MIN_BASE64_CORE_CHARS = 8;
/** The first four characters of `text` from `at` as one number (base64 is ASCII; others only collide, and every hit is checked). */
function prefixCode(text: string, at: number): number {
  return ((text.charCodeAt(at) & 0x7f) << 21) | ((text.charCodeAt(at + 1) & 0x7f) << 14) | ((text.charCodeAt(at + 2) & 0x7f) << 7) | (text.charCodeAt(at + 3) & 0x7f);
}

/** A run of base64 characters, either alphabet (RFC 4648 §4, §5), with its padding. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{8,}={0,2}/g;
/** The same without `/`, which also separates a path's segments. */
const BASE64_RUN_WITHOUT_SLASH = /[A-Za-z0-9+_-]{8,}={0,2}/g;

/**
 * What `key` (as written) looks like inside any base64 text (RFC 4648 §4 and §5): for each of the
 * three offsets the key can start at within a 3-octet group, the characters that depend on the key's
 * octets alone (the first one or two carry bits of the octet before it, the last of the octet after).
 */
function base64Cores(key: string): string[] {
  const bytes = Buffer.from(key, 'utf8');
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Characters before `skip` hold bits of the octets in front; those from `end` on, of the octets after.
    const skip = offset === 0 ? 0 : offset + 1;
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(skip, end);
    if (core.length < MIN_BASE64_CORE_CHARS) continue;
    cores.add(core);
    cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...cores];
}

/**
 * A value holding this many consecutive characters of a key (in any reading) holds the key: half of
 * the shortest key the service accepts (32, src/store/api-key-strength.ts), so a key split in two
 * halves is still found.
 */
export const MIN_KEY_FRAGMENT_CHARS = 16;
/** Most readings of one value (each decoding of each earlier reading, breadth first). */
export const MAX_KEY_READINGS = 64;
/** Longest chain of decodings followed: double base64, line-wrapped, is three. */
export const MAX_KEY_READING_DEPTH = 3;
/** Characters of a value that are read (the rest is searched as written only): bounds the work per value. */
export const MAX_KEY_READ_CHARS = 8 * 1024;
/** Most characters of all the readings of one value together (decoding from several offsets multiplies them). */
export const MAX_KEY_READINGS_CHARS = 8 * MAX_KEY_READ_CHARS;

/** HTML named references that spell characters of a key or its encodings (WHATWG HTML §13.5). */
const HTML_NAMED: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", lowbar: '_', underbar: '_', hyphen: '-', dash: '-', minus: '-', period: '.', colon: ':',
  sol: '/', plus: '+', equals: '=', num: '#', percnt: '%', excl: '!', quest: '?', comma: ',', semi: ';', nbsp: ' ', tab: '\t', newline: '\n',
};

function codePoint(value: number): string {
  return value >= 0 && value <= 0x10ffff ? String.fromCodePoint(value) : '';
}

/** Each run of `run` decoded by `decode` from each of `offsets` starting characters, joined (one reading). */
function decodedRuns(text: string, run: RegExp, offsets: number, decode: (part: string) => string): string | undefined {
  const parts: string[] = [];
  for (const [match] of text.matchAll(run)) for (let start = 0; start < offsets && match.length - start >= MIN_KEY_FRAGMENT_CHARS / 2; start++) parts.push(decode(match.slice(start)));
  return parts.length === 0 ? undefined : parts.join('\n');
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** RFC 4648 §6, either case; bits that do not fill an octet are dropped. */
function base32Decode(text: string): string {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.toUpperCase()) {
    const index = BASE32_ALPHABET.indexOf(char);
    if (index === -1) continue;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >> bits) & 0xff);
    }
  }
  return Buffer.from(out).toString('latin1');
}

/** The readings one decoding step makes of `text` (none when no decoding applies). */
function decodingsOf(text: string): string[] {
  const out: string[] = [];
  // RFC 3986 §2.1.
  if (/%[0-9a-f]{2}/i.test(text)) {
    out.push(text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
      }
    }));
  }
  // HTML character references, decimal, hex or named, the `;` optional as browsers read them.
  if (/&(?:#|[a-z]+;)/i.test(text)) {
    out.push(text.replace(/&#x([0-9a-f]{1,6});?|&#([0-9]{1,7});?|&([a-z]+);/gi, (whole, hex?: string, decimal?: string, name?: string) =>
      hex !== undefined ? codePoint(Number.parseInt(hex, 16)) : decimal !== undefined ? codePoint(Number.parseInt(decimal, 10)) : (HTML_NAMED[name!.toLowerCase()] ?? whole)));
  }
  // JavaScript and JSON escapes: \u0041, \u{41}, \x41.
  if (/\\(?:u|x)/i.test(text)) {
    out.push(text.replace(/\\u\{([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})/gi, (_whole, braced?: string, four?: string, two?: string) => codePoint(Number.parseInt((braced ?? four ?? two)!, 16))));
  }
  // Separators and line breaks (a dashed or spaced key, line-wrapped base64, written or escaped).
  if (/[\s-]|\\[nrt]/.test(text)) out.push(text.replace(/\\[nrt]|[\s-]/g, ''));
  if (/[\s.:_-]|\\[nrt]/.test(text)) out.push(text.replace(/\\[nrt]|[\s.:_-]/g, ''));
  // RFC 4648 §8 (hex, either case), both alignments.
  const hex = decodedRuns(text, /[0-9a-f]{16,}/gi, 2, (part) => Buffer.from(part.length % 2 ? part.slice(0, -1) : part, 'hex').toString('latin1'));
  if (hex !== undefined) out.push(hex);
  // RFC 4648 §6 (base32, one case throughout), from each of the first eight characters (every octet alignment).
  const base32 = decodedRuns(text, /[A-Z2-7]{16,}=*|[a-z2-7]{16,}=*/g, 8, base32Decode);
  if (base32 !== undefined) out.push(base32);
  // RFC 4648 §4 and §5, from each of the first four characters (every octet alignment).
  const base64 = decodedRuns(text, /[A-Za-z0-9+/_-]{12,}={0,2}/g, 4, (part) => Buffer.from(part.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1'));
  if (base64 !== undefined) out.push(base64);
  return out;
}

/**
 * `text` as an attacker could read a key out of it: as written, then each decoding of each reading,
 * breadth first, at most MAX_KEY_READING_DEPTH deep and MAX_KEY_READINGS in all, lower case.
 */
export function keyReadings(text: string): string[] {
  const first = text.length > MAX_KEY_READ_CHARS ? text.slice(0, MAX_KEY_READ_CHARS) : text;
  const seen = new Set<string>([first]);
  let level = [first];
  let chars = first.length;
  for (let depth = 0; depth < MAX_KEY_READING_DEPTH && level.length > 0 && seen.size < MAX_KEY_READINGS; depth++) {
    const next: string[] = [];
    for (const reading of level) {
      for (const decoded of decodingsOf(reading)) {
        if (seen.size >= MAX_KEY_READINGS) break;
        if (decoded.length < MIN_KEY_FRAGMENT_CHARS || seen.has(decoded)) continue;
        if (chars + decoded.length > MAX_KEY_READINGS_CHARS) break;
        chars += decoded.length;
        seen.add(decoded);
        next.push(decoded);
      }
    }
    level = next;
  }
  return [...seen].map((reading) => reading.toLowerCase());
}

/** Each MIN_KEY_FRAGMENT_CHARS-character window of `key`, lower case, as written and without separators. */
function keyFragments(key: string): string[] {
  const out = new Set<string>();
  for (const spelled of [key.toLowerCase(), key.toLowerCase().replace(/[\s.:_-]/g, '')]) {
    for (let at = 0; at + MIN_KEY_FRAGMENT_CHARS <= spelled.length; at++) out.add(spelled.slice(at, at + MIN_KEY_FRAGMENT_CHARS));
  }
  return [...out];
}

/** Whether any reading holds one of `fragments`. */
function readingsHold(readings: readonly string[], fragments: ReadonlySet<string>): boolean {
  if (fragments.size === 0) return false;
  for (const reading of readings) {
    for (let at = 0; at + MIN_KEY_FRAGMENT_CHARS <= reading.length; at++) if (fragments.has(reading.slice(at, at + MIN_KEY_FRAGMENT_CHARS))) return true;
  }
  return false;
}

const usable = (candidate: string): boolean => candidate.length >= MIN_REDACTED_KEY_CHARS && candidate.length <= MAX_REDACTED_KEY_CHARS;

/**
 * The credentials a request presented, whether or not they are valid: the `Authorization` value
 * after its scheme (any scheme, and the whole value), and each `x-api-key` value.
 */
export function presentedSecrets(headers: IncomingHttpHeaders): string[] {
  const out = new Set<string>();
  const add = (value: string | undefined): void => {
    const text = value?.trim();
    if (text !== undefined && usable(text)) out.add(text);
  };
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const credentials = authorization.trim().split(/\s+/).slice(1);
    for (const part of credentials) add(part);
    add(credentials.join(' '));
  }
  const apiKey = headers['x-api-key'];
  for (const value of Array.isArray(apiKey) ? apiKey : [apiKey]) add(value);
  return [...out];
}

/** A regular expression that matches `key` in any case, each character plain or percent-encoded (once or twice). */
function keyPattern(key: string): RegExp {
  let source = '';
  for (const char of key) {
    const alternatives = [char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')];
    // Each case of the character, encoded: %41 is "A", %61 is "a".
    for (const variant of new Set([char.toLowerCase(), char.toUpperCase()])) {
      const bytes = [...Buffer.from(variant, 'utf8')].map((byte) => byte.toString(16).padStart(2, '0'));
      alternatives.push(bytes.map((hex) => `%${hex}`).join(''), bytes.map((hex) => `%25${hex}`).join(''));
    }
    source += `(?:${alternatives.join('|')})`;
  }
  return new RegExp(source, 'giu');
}

/** `text` percent-decoded up to MAX_DECODE_ROUNDS times (`+` read as a space, as in a query), lower case. */
function decodedForms(text: string): string[] {
  const forms = [text.toLowerCase()];
  let current = text;
  for (let round = 0; round < MAX_DECODE_ROUNDS && current.includes('%'); round++) {
    let next: string;
    try {
      next = decodeURIComponent(current.replace(/\+/g, ' '));
    } catch {
      // A stray % (not an escape): decode the escapes that are well formed.
      next = current.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
    }
    if (next === current) break;
    current = next;
    forms.push(current.toLowerCase());
  }
  return forms;
}

/** What a value is searched for: the remembered keys (through their index) and the request's own (lower case). */
interface Search {
  extra: readonly string[];
  /** The request's own keys' base64 forms, each with the key (lower case) it stands for. */
  extraEncoded: readonly (readonly [core: string, key: string])[];
}

/**
 * Characters at the end of each remembered key that index it: a value is scanned once, whatever the
 * number of keys (keys often share a prefix such as `sk_live_`, rarely an ending).
 */
const TAIL_CHARS = MIN_REDACTED_KEY_CHARS;

const NO_HITS: readonly string[] = Object.freeze([]);

/** Up to this many remembered keys, each is searched for directly; past it, the tail index is used. */
const SCAN_KEYS_DIRECTLY = 16;

/** Finds and redacts keys in text and in values of any shape. */
export class KeyRedactor {
  /** Lower-cased key → its pattern; insertion order is recency (the oldest is forgotten first). */
  readonly #known = new Map<string, RegExp>();
  /** Each remembered key's base64 forms (`base64Cores` of the key as written), by the lower-cased key. */
  readonly #encoded = new Map<string, readonly string[]>();
  readonly #patterns = new Map<string, RegExp>();
  /** The remembered keys by their last TAIL_CHARS characters (rebuilt after a change). */
  #index: Map<string, string[]> | undefined;
  /** Every MIN_KEY_FRAGMENT_CHARS-character window of every remembered key (rebuilt after a change). */
  #fragments: Set<string> | undefined;
  /** A presented key's windows, remembered for the next requests. */
  readonly #presentedFragments = new Map<string, ReadonlySet<string>>();

  constructor(keys: Iterable<string> = []) {
    for (const key of keys) this.remember(key);
  }

  /** Adds a key known in clear (a startup or seed key, a key that has just authenticated). */
  remember(key: string): void {
    const lower = key.trim().toLowerCase();
    if (!usable(lower)) return;
    const held = this.#known.get(lower);
    if (held === undefined) {
      this.#index = undefined;
      this.#fragments = undefined;
    }
    this.#known.delete(lower);
    this.#known.set(lower, held ?? keyPattern(lower));
    // Base64 keeps the case: each spelling the key was remembered in is searched for.
    const cores = this.#encoded.get(lower) ?? [];
    const added = base64Cores(key.trim()).filter((core) => !cores.includes(core));
    if (added.length > 0 || !this.#encoded.has(lower)) {
      this.#encoded.set(lower, [...cores, ...added]);
      this.#encodedByPrefix = undefined;
    }
    while (this.#known.size > MAX_REMEMBERED_KEYS) {
      const oldest = this.#known.keys().next().value;
      if (oldest === undefined) break;
      this.#known.delete(oldest);
      this.#encoded.delete(oldest);
      this.#index = undefined;
      this.#fragments = undefined;
      this.#encodedByPrefix = undefined;
    }
  }

  /** How many keys are remembered. */
  get size(): number {
    return this.#known.size;
  }

  #pattern(lower: string): RegExp {
    const known = this.#known.get(lower);
    if (known) return known;
    let pattern = this.#patterns.get(lower);
    if (!pattern) {
      pattern = keyPattern(lower);
      // A small memo of the presented (unknown) keys' patterns: a wrong key is usually sent again.
      if (this.#patterns.size >= MAX_REMEMBERED_KEYS) this.#patterns.delete(this.#patterns.keys().next().value as string);
      this.#patterns.set(lower, pattern);
    }
    return pattern;
  }

  #search(extra: readonly string[]): Search {
    const keys = extra.filter(usable);
    return { extra: keys.map((key) => key.toLowerCase()), extraEncoded: keys.flatMap((key) => this.#extraCores(key)) };
  }

  /** A presented key's base64 forms, remembered for the next requests (a key is usually sent again). */
  readonly #presentedCores = new Map<string, readonly (readonly [core: string, key: string])[]>();

  #extraCores(key: string): readonly (readonly [core: string, key: string])[] {
    let cores = this.#presentedCores.get(key);
    if (cores === undefined) {
      const lower = key.toLowerCase();
      cores = base64Cores(key).map((core) => [core, lower] as const);
      if (this.#presentedCores.size >= MAX_REMEMBERED_KEYS) this.#presentedCores.delete(this.#presentedCores.keys().next().value as string);
      this.#presentedCores.set(key, cores);
    }
    return cores;
  }

  /**
   * The remembered keys' base64 forms by their first four characters, and which first two characters
   * any of them starts with (rebuilt after a change).
   */
  #encodedByPrefix: { pairs: Uint8Array; byPrefix: Map<number, (readonly [core: string, key: string])[]> } | undefined;

  #encodedIndex(): { pairs: Uint8Array; byPrefix: Map<number, (readonly [core: string, key: string])[]> } {
    if (this.#encodedByPrefix === undefined) {
      const pairs = new Uint8Array(128 * 128);
      const byPrefix = new Map<number, (readonly [core: string, key: string])[]>();
      for (const [key, cores] of this.#encoded) {
        for (const core of cores) {
          pairs[(core.charCodeAt(0) << 7) | core.charCodeAt(1)] = 1;
          const prefix = prefixCode(core, 0);
          const bucket = byPrefix.get(prefix);
          if (bucket) bucket.push([core, key]);
          else byPrefix.set(prefix, [[core, key]]);
        }
      }
      this.#encodedByPrefix = { pairs, byPrefix };
    }
    return this.#encodedByPrefix;
  }

  #indexed(): Map<string, string[]> {
    if (this.#index === undefined) {
      this.#index = new Map();
      for (const key of this.#known.keys()) {
        const tail = key.slice(-TAIL_CHARS);
        const bucket = this.#index.get(tail);
        if (bucket) bucket.push(key);
        else this.#index.set(tail, [key]);
      }
    }
    return this.#index;
  }

  /** The keys (lower case) found in `text`, in any of its decoded forms. */
  #hits(text: string, search: Search): readonly string[] {
    const known = this.#known.size;
    if (text.length < MIN_REDACTED_KEY_CHARS || (known === 0 && search.extra.length === 0)) return NO_HITS;
    const index = known > SCAN_KEYS_DIRECTLY ? this.#indexed() : undefined;
    let found = this.#scan(text.toLowerCase(), index, search, undefined);
    if (text.includes('%')) for (const form of decodedForms(text).slice(1)) found = this.#scan(form, index, search, found);
    // Base64 forms, in the text as written (base64 keeps the case): one pass over the text, whatever
    // the number of keys, through the index of the forms' first characters.
    if (text.length >= MIN_BASE64_CORE_CHARS) {
      const { pairs, byPrefix } = this.#encodedIndex();
      if (byPrefix.size > 0) {
        for (let at = 0, last = text.length - MIN_BASE64_CORE_CHARS; at <= last; at++) {
          // Most positions end at the first two characters (no form starts with them), with no string made.
          const first = text.charCodeAt(at);
          const second = text.charCodeAt(at + 1);
          if (first >= 128 || second >= 128 || pairs[(first << 7) | second] === 0) continue;
          const bucket = byPrefix.get(prefixCode(text, at));
          if (bucket) for (const [core, key] of bucket) if (text.startsWith(core, at)) (found ??= new Set()).add(key);
        }
      }
      for (const [core, key] of search.extraEncoded) if (text.includes(core)) (found ??= new Set()).add(key);
    }
    return found === undefined ? NO_HITS : [...found];
  }

  /** Adds the keys found in `form` (lower case) to `found`. */
  #scan(form: string, index: Map<string, string[]> | undefined, search: Search, found: Set<string> | undefined): Set<string> | undefined {
    if (index === undefined) {
      // A few keys: one fast substring search each.
      for (const key of this.#known.keys()) if (form.includes(key)) (found ??= new Set()).add(key);
    } else {
      for (let end = TAIL_CHARS; end <= form.length; end++) {
        const bucket = index.get(form.slice(end - TAIL_CHARS, end));
        if (bucket) for (const key of bucket) if (end >= key.length && form.startsWith(key, end - key.length)) (found ??= new Set()).add(key);
      }
    }
    for (const key of search.extra) if (form.includes(key)) (found ??= new Set()).add(key);
    return found;
  }

  /** Whether some reading of `text` (`keyReadings`) holds a window of a remembered key or of one of `search.extra`. */
  #readsKey(text: string, search: Search): boolean {
    if (text.length < MIN_KEY_FRAGMENT_CHARS) return false;
    if (this.#fragments === undefined) this.#fragments = new Set([...this.#known.keys()].flatMap(keyFragments));
    const sets: ReadonlySet<string>[] = this.#fragments.size > 0 ? [this.#fragments] : [];
    for (const key of search.extra) {
      let windows = this.#presentedFragments.get(key);
      if (windows === undefined) {
        windows = new Set(keyFragments(key));
        if (this.#presentedFragments.size >= MAX_REMEMBERED_KEYS) this.#presentedFragments.delete(this.#presentedFragments.keys().next().value as string);
        this.#presentedFragments.set(key, windows);
      }
      sets.push(windows);
    }
    if (sets.length === 0) return false;
    const readings = keyReadings(text);
    return sets.some((windows) => readingsHold(readings, windows));
  }

  /**
   * Whether `text` holds a remembered key or one of `extra` in any reading (`keyReadings`): hex,
   * base32, base64 (the key upper-cased, encoded twice, line-wrapped), HTML references, `\u`
   * escapes, dashed or split (half a key is enough). For fields that are stored or sent on.
   */
  readsKey(text: string, extra: readonly string[] = []): boolean {
    return this.#readsKey(text, this.#search(extra));
  }

  /** Whether `text`, in any case or percent-encoding, holds a remembered key or one of `extra`. */
  holdsKey(text: string, extra: readonly string[] = []): boolean {
    return this.#hits(text, this.#search(extra)).length > 0;
  }

  /**
   * `text` with every key (remembered, or in `extra`) replaced by `[REDACTED]`; `read`: replaced whole
   * too when a reading of it (`keyReadings`) holds a key.
   */
  redactText(text: string, extra: readonly string[] = [], read = false): string {
    return this.#redact(text, this.#search(extra), read);
  }

  /**
   * `read`: also replace a value whole when a reading of it (`keyReadings`) holds a key, for text
   * that is stored or shown again (tens of microseconds a value: not for every log line, whose
   * request text is no longer free, ./log-redaction.ts).
   */
  #redact(text: string, search: Search, read: boolean): string {
    const hits = this.#hits(text, search);
    if (hits.length === 0) return read && this.#readsKey(text, search) ? KEY_REDACTED : text;
    let out = text;
    for (const key of hits) out = out.replace(this.#pattern(key), KEY_REDACTED);
    // A key in base64: the run of base64 characters that holds it goes; first without the slash (a
    // path's separator), then with it (the standard alphabet's 64th character).
    for (const runs of [BASE64_RUN_WITHOUT_SLASH, BASE64_RUN]) {
      if (this.#hits(out, search).length === 0) break;
      out = out.replace(runs, (run) => (this.#hits(run, search).length > 0 ? KEY_REDACTED : run));
    }
    // Whatever encoding neither followed (hex, base32, escapes, a key in pieces…): the whole value goes.
    return this.#hits(out, search).length > 0 || (read && this.#readsKey(out, search)) ? KEY_REDACTED : out;
  }

  /**
   * A copy of `value` with every string in it (object keys included) redacted; other values as they
   * are. `read`: each string is also read (`keyReadings`) and replaced whole when it holds a key.
   */
  redactDeep<T>(value: T, extra: readonly string[] = [], read = false): T {
    const candidates = this.#search(extra);
    if (this.#known.size === 0 && candidates.extra.length === 0) return value;
    const walk = (inner: unknown, depth: number): unknown => {
      if (typeof inner === 'string') return this.#redact(inner, candidates, read);
      if (depth > MAX_DEPTH || inner === null || typeof inner !== 'object') return inner;
      if (Array.isArray(inner)) return inner.map((item) => walk(item, depth + 1));
      if (inner instanceof Error) {
        // A copy of the same class, its message, stack and own fields redacted (a logged `err`).
        const copy = Object.create(Object.getPrototypeOf(inner) as object) as Error & Record<string, unknown>;
        for (const [name, item] of Object.entries(inner)) copy[name] = walk(item, depth + 1);
        Object.defineProperty(copy, 'message', { value: this.#redact(inner.message, candidates, read), writable: true, configurable: true });
        if (inner.stack !== undefined) Object.defineProperty(copy, 'stack', { value: this.#redact(inner.stack, candidates, read), writable: true, configurable: true });
        if (inner.cause !== undefined) Object.defineProperty(copy, 'cause', { value: walk(inner.cause, depth + 1), writable: true, configurable: true });
        return copy;
      }
      const prototype = Object.getPrototypeOf(inner) as unknown;
      // Other objects (buffers, dates, streams) are not plain data: left as they are.
      if (prototype !== Object.prototype && prototype !== null) return inner;
      const out: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(inner)) out[this.#redact(name, candidates, read)] = walk(item, depth + 1);
      return out;
    };
    return walk(value, 0) as T;
  }

  /**
   * The path (`a.b[2]`) of the first string in `value` that holds a key in any reading, or
   * `(the body, across fields)` when its strings hold one only put together (a key split in two
   * fields), or undefined.
   */
  findKey(value: unknown, extra: readonly string[] = []): string | undefined {
    const candidates = this.#search(extra);
    if (this.#known.size === 0 && candidates.extra.length === 0) return undefined;
    const strings: string[] = [];
    const holds = (text: string): boolean => this.#hits(text, candidates).length > 0 || this.#readsKey(text, candidates);
    const walk = (inner: unknown, path: string, depth: number): string | undefined => {
      if (typeof inner === 'string') {
        strings.push(inner);
        return holds(inner) ? path || '(the body)' : undefined;
      }
      if (depth > MAX_DEPTH || inner === null || typeof inner !== 'object') return undefined;
      if (Array.isArray(inner)) {
        for (let i = 0; i < inner.length; i++) {
          const found = walk(inner[i], `${path}[${i}]`, depth + 1);
          if (found !== undefined) return found;
        }
        return undefined;
      }
      for (const [name, item] of Object.entries(inner)) {
        // A field named with a key is reported without its name.
        strings.push(name);
        if (holds(name)) return path === '' ? '(a field name)' : `${path}.(a field name)`;
        const here = path === '' ? name : `${path}.${name}`;
        const found = walk(item, here, depth + 1);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    const found = walk(value, '', 0);
    if (found !== undefined || strings.length < 2) return found;
    // The pieces of a key in separate fields: a window spans the joint only when put together.
    const joined = strings.join('').slice(0, MAX_KEY_READ_CHARS);
    return holds(joined) ? '(the body, across fields)' : undefined;
  }
}

/** `text`, or `KEY_REDACTED` when it holds a key `keys` knows (or one of `extra`) in any reading. */
export function withoutKeys(text: string, keys: KeyRedactor, extra?: readonly string[]): string;
export function withoutKeys(text: string | null, keys: KeyRedactor, extra?: readonly string[]): string | null;
export function withoutKeys(text: string | null, keys: KeyRedactor, extra: readonly string[] = []): string | null {
  if (text === null) return null;
  return keys.holdsKey(text, extra) || keys.readsKey(text, extra) ? KEY_REDACTED : text;
}

/** JSON text with each string (names too) that holds a key replaced by `KEY_REDACTED`; untouched when none does. */
function jsonWithoutKeys(json: string, keys: KeyRedactor): string {
  if (keys.size === 0) return json;
  let value: unknown;
  try {
    value = JSON.parse(json) as unknown;
  } catch {
    return withoutKeys(json, keys);
  }
  // Each string read on its own (the reading bound applies per string, not to the whole document).
  return keys.findKey(value) === undefined ? json : JSON.stringify(keys.redactDeep(value, [], true));
}

/**
 * `store` with what a report says about itself (free text from whoever sent it: `org_name`, the
 * file name, the report id, the document and each record's detail, a refused file's name and
 * detail) checked for keys in every reading before it is stored, and so before it is shown (issue
 * 38, item 9). The deduplication identity, when it holds one, is kept as its SHA-256 digest.
 */
export function keyFreeReportStore(store: ReportStore, keys: KeyRedactor): ReportStore {
  // An identity (or an unauthenticated report's identity base) that holds a key is kept as its digest: equal ones stay equal.
  const keyFreeIdentity = (identity: string): string => (withoutKeys(identity, keys) === identity ? identity : `sha256:${createHash('sha256').update(identity).digest('hex')}`);
  const clean = (report: NewReport): NewReport => ({
    ...report,
    identity: keyFreeIdentity(report.identity),
    orgName: withoutKeys(report.orgName, keys),
    reportId: withoutKeys(report.reportId, keys),
    origin: { ...report.origin, fileName: withoutKeys(report.origin.fileName, keys), ...(report.origin.identityBase !== undefined ? { identityBase: keyFreeIdentity(report.origin.identityBase) } : {}) },
    document: jsonWithoutKeys(report.document, keys),
    records: report.records.map((record) => ({ ...record, detail: jsonWithoutKeys(record.detail, keys) })),
  });
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'add') return (report: NewReport) => target.add(clean(report));
      if (property === 'addMany') return (reports: readonly NewReport[]) => target.addMany(reports.map(clean));
      if (property === 'reject') return (rejection: ReportRejection) => target.reject({ ...rejection, fileName: withoutKeys(rejection.fileName, keys), detail: withoutKeys(rejection.detail, keys) });
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
