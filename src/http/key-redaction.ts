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
 */
import type { IncomingHttpHeaders } from 'node:http';

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

  constructor(keys: Iterable<string> = []) {
    for (const key of keys) this.remember(key);
  }

  /** Adds a key known in clear (a startup or seed key, a key that has just authenticated). */
  remember(key: string): void {
    const lower = key.trim().toLowerCase();
    if (!usable(lower)) return;
    const held = this.#known.get(lower);
    if (held === undefined) this.#index = undefined;
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

  /** Whether `text`, in any case or percent-encoding, holds a remembered key or one of `extra`. */
  holdsKey(text: string, extra: readonly string[] = []): boolean {
    return this.#hits(text, this.#search(extra)).length > 0;
  }

  /** `text` with every key (remembered, or in `extra`) replaced by `[REDACTED]`. */
  redactText(text: string, extra: readonly string[] = []): string {
    return this.#redact(text, this.#search(extra));
  }

  #redact(text: string, search: Search): string {
    const hits = this.#hits(text, search);
    if (hits.length === 0) return text;
    let out = text;
    for (const key of hits) out = out.replace(this.#pattern(key), KEY_REDACTED);
    // A key in base64: the run of base64 characters that holds it goes; first without the slash (a
    // path's separator), then with it (the standard alphabet's 64th character).
    for (const runs of [BASE64_RUN_WITHOUT_SLASH, BASE64_RUN]) {
      if (this.#hits(out, search).length === 0) break;
      out = out.replace(runs, (run) => (this.#hits(run, search).length > 0 ? KEY_REDACTED : run));
    }
    // Whatever encoding neither followed: the whole value goes.
    return this.#hits(out, search).length > 0 ? KEY_REDACTED : out;
  }

  /** A copy of `value` with every string in it (object keys included) redacted; other values as they are. */
  redactDeep<T>(value: T, extra: readonly string[] = []): T {
    const candidates = this.#search(extra);
    if (this.#known.size === 0 && candidates.extra.length === 0) return value;
    const walk = (inner: unknown, depth: number): unknown => {
      if (typeof inner === 'string') return this.#redact(inner, candidates);
      if (depth > MAX_DEPTH || inner === null || typeof inner !== 'object') return inner;
      if (Array.isArray(inner)) return inner.map((item) => walk(item, depth + 1));
      if (inner instanceof Error) {
        // A copy of the same class, its message, stack and own fields redacted (a logged `err`).
        const copy = Object.create(Object.getPrototypeOf(inner) as object) as Error & Record<string, unknown>;
        for (const [name, item] of Object.entries(inner)) copy[name] = walk(item, depth + 1);
        Object.defineProperty(copy, 'message', { value: this.#redact(inner.message, candidates), writable: true, configurable: true });
        if (inner.stack !== undefined) Object.defineProperty(copy, 'stack', { value: this.#redact(inner.stack, candidates), writable: true, configurable: true });
        if (inner.cause !== undefined) Object.defineProperty(copy, 'cause', { value: walk(inner.cause, depth + 1), writable: true, configurable: true });
        return copy;
      }
      const prototype = Object.getPrototypeOf(inner) as unknown;
      // Other objects (buffers, dates, streams) are not plain data: left as they are.
      if (prototype !== Object.prototype && prototype !== null) return inner;
      const out: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(inner)) out[this.#redact(name, candidates)] = walk(item, depth + 1);
      return out;
    };
    return walk(value, 0) as T;
  }

  /** The path (`a.b[2]`) of the first string in `value` that holds a key, or undefined. */
  findKey(value: unknown, extra: readonly string[] = []): string | undefined {
    const candidates = this.#search(extra);
    if (this.#known.size === 0 && candidates.extra.length === 0) return undefined;
    const walk = (inner: unknown, path: string, depth: number): string | undefined => {
      if (typeof inner === 'string') return this.#hits(inner, candidates).length > 0 ? path || '(the body)' : undefined;
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
        if (this.#hits(name, candidates).length > 0) return path === '' ? '(a field name)' : `${path}.(a field name)`;
        const here = path === '' ? name : `${path}.${name}`;
        const found = walk(item, here, depth + 1);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    return walk(value, '', 0);
  }
}
