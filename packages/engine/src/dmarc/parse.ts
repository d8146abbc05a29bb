import type { AlignmentMode, DmarcParseResult, DmarcPolicy, DmarcRecord, DmarcRecordOutcome, DmarcTag, DmarcWarning, FailureReportOption, PolicyProblem, PsdFlag, ReportUri } from './types.js';
import { memoByText } from '../text-cache.js';
import { parseReportUri, sizeOutOfRange, splitUriList } from './uri.js';

/** RFC 7489 §6.3 `pct`: at most three digits, 0 to 100. */
export const MAX_PCT = 100;
/** RFC 7489 §6.3 `ri`: a 32-bit unsigned integer. */
export const MAX_RI_SECONDS = 2 ** 32 - 1;

/** Every tag RFC 7489 or RFC 9989 defines (RFC 9989 §9.3 registry, plus the three it made historic). */
export const KNOWN_TAGS = ['v', 'p', 'sp', 'np', 'psd', 't', 'adkim', 'aspf', 'fo', 'rua', 'ruf', 'pct', 'rf', 'ri'] as const;
type KnownTag = (typeof KNOWN_TAGS)[number];

// Every scan below is a hand-written loop, not a regular expression: record text comes from anyone's
// DNS, and a pattern such as /[ \t]+$/ backtracks quadratically on a long run of spaces.
const POLICIES: readonly DmarcPolicy[] = ['none', 'quarantine', 'reject'];
/** RFC 9989 §4.8 dmarc-version value, compared case-sensitively after the tag name. */
const VERSION_VALUE = 'DMARC1';

function isWsp(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function isAlpha(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isAlphaNumeric(code: number): boolean {
  return isAlpha(code) || (code >= 0x30 && code <= 0x39);
}

/** The first index at or after `index` that is not SP or HTAB. */
function skipWsp(text: string, index: number): number {
  while (index < text.length && isWsp(text.charCodeAt(index))) index++;
  return index;
}

/** Trims SP and HTAB only: RFC 5234 WSP, the only whitespace the grammar allows around tokens. */
function trimWsp(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isWsp(text.charCodeAt(start))) start++;
  while (end > start && isWsp(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * Reads `v *WSP "=" *WSP DMARC1` at `start` (RFC 9989 §4.7 `v`, §4.8 dmarc-version). The tag name is
 * an ABNF literal (any case); the value is case-sensitive unless `anyCaseValue`. Returns the index
 * just past "DMARC1", or -1.
 */
function readVersionTag(text: string, start: number, anyCaseValue: boolean): number {
  const code = text.charCodeAt(start);
  if (code !== 0x56 && code !== 0x76) return -1; // "V" / "v"
  let index = skipWsp(text, start + 1);
  if (text.charCodeAt(index) !== 0x3d) return -1; // "="
  index = skipWsp(text, index + 1);
  const value = text.slice(index, index + VERSION_VALUE.length);
  if (anyCaseValue ? value.toUpperCase() !== VERSION_VALUE : value !== VERSION_VALUE) return -1;
  return index + VERSION_VALUE.length;
}

/** The length of the version section (through its ";" when there is one), or -1 when `raw` has none. */
function versionLength(raw: string): number {
  const end = readVersionTag(raw, 0, false);
  if (end === -1) return -1;
  const after = skipWsp(raw, end);
  if (after === raw.length) return after;
  return raw.charCodeAt(after) === 0x3b ? after + 1 : -1; // ";"
}

/** RFC 9989 §4.8 dmarc-tag name: 1*ALPHA. */
function isTagName(text: string): boolean {
  if (text === '') return false;
  for (let index = 0; index < text.length; index++) if (!isAlpha(text.charCodeAt(index))) return false;
  return true;
}

/** RFC 5321 §4.1.2 Keyword = Ldh-str (letters, digits, inner hyphens), for the legacy `rf` list. */
function isKeyword(text: string): boolean {
  if (text === '') return false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isAlphaNumeric(code)) continue;
    if (code !== 0x2d || index === 0 || index === text.length - 1) return false; // "-" only inside
  }
  return true;
}

/** True when `text` is 1 to `maxDigits` ASCII digits. */
function isDigits(text: string, maxDigits: number): boolean {
  if (text === '' || text.length > maxDigits) return false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/**
 * True when `text` begins like a DMARC record: `v=DMARC1` first, followed by `;` or the end
 * (RFC 9989 §4.7 `v`). This is the test discovery uses to discard other TXT records.
 */
export function isDmarcRecord(text: string): boolean {
  return versionLength(text) !== -1;
}

/**
 * Parses one DMARC TXT record. `txt` is the record's character-strings (joined without separator,
 * RFC 9989 §4.5) or an already joined string. Pure: the result is a value, never an exception.
 *
 * A record that does not start with a valid version tag is `not-dmarc` (RFC 9989 §4.7 `v`: the record
 * MUST be ignored). Otherwise every syntax error after `v` is discarded in favour of the default
 * (RFC 9989 §4.8) and reported as a warning.
 */
export function parseDmarcRecord(txt: string | readonly string[]): DmarcParseResult {
  const raw = typeof txt === 'string' ? txt : txt.join('');
  const versionEnd = versionLength(raw);
  if (versionEnd === -1) return { kind: 'not-dmarc', reason: notDmarcReason(raw), raw };

  const warnings: DmarcWarning[] = [];
  const tags: DmarcTag[] = [];
  const counts = new Map<string, number>([['v', 1]]);
  const remainder = raw.slice(versionEnd);
  for (const piece of remainder.split(';')) {
    const text = trimWsp(piece);
    if (text === '') continue; // a trailing ";" is allowed (RFC 9989 §4.8 [dmarc-sep]); ";;" is harmless
    // RFC 9989 §4.8 dmarc-tag = name *WSP "=" *WSP value; the name ends at the first "=".
    const equals = text.indexOf('=');
    const name = equals === -1 ? '' : trimWsp(text.slice(0, equals));
    if (!isTagName(name)) {
      warnings.push({ code: 'malformed-tag', text });
      continue;
    }
    const lower = name.toLowerCase();
    counts.set(lower, (counts.get(lower) ?? 0) + 1);
    tags.push({ name: lower, value: text.slice(skipWsp(text, equals + 1)) });
  }

  // RFC 6376 §3.2 (the tag-list rules DMARC records follow, RFC 9989 §4.7): a duplicated tag makes the
  // tag-list invalid. We discard every occurrence of that tag, the least surprising reading of
  // "syntax errors ... MUST be discarded in favor of default values" (RFC 9989 §4.8).
  const duplicated = new Set<string>();
  for (const [name, count] of counts) {
    if (count > 1) {
      duplicated.add(name);
      warnings.push({ code: 'duplicate-tag', tag: name });
    }
  }

  const firstTag = tags[0];
  if (firstTag && firstTag.name !== 'p' && tags.some((tag) => tag.name === 'p')) {
    // RFC 7489 §6.4: dmarc-record = dmarc-version dmarc-sep [dmarc-request] ...: `p` comes second.
    warnings.push({ code: 'policy-not-second' });
  }

  const state = new RecordBuilder(raw, warnings);
  for (const tag of tags) {
    if (duplicated.has(tag.name)) continue;
    state.apply(tag);
  }
  return { kind: 'record', record: state.finish(tags, duplicated), warnings };
}

function notDmarcReason(raw: string): 'empty' | 'no-version' | 'version-not-first' | 'bad-version' | 'no-separator' {
  if (trimWsp(raw) === '') return 'empty';
  const first = raw.charCodeAt(0);
  if ((first === 0x56 || first === 0x76) && raw.charCodeAt(skipWsp(raw, 1)) === 0x3d) {
    // "v=DMARC1 p=none": the version value runs into the next tag without a separator.
    const end = readVersionTag(raw, 0, false);
    const next = end === -1 ? -1 : skipWsp(raw, end);
    const runsOn = next > end && next < raw.length && raw.charCodeAt(next) !== 0x3b;
    return runsOn ? 'no-separator' : 'bad-version';
  }
  // A version tag (any case) at the start or after a ";", but not first.
  for (let start = 0; ; ) {
    if (readVersionTag(raw, skipWsp(raw, start), true) !== -1) return 'version-not-first';
    const separator = raw.indexOf(';', start);
    if (separator === -1) return 'no-version';
    start = separator + 1;
  }
}

/** Accumulates the effective values while reading tags in order. */
class RecordBuilder {
  private p: { value: DmarcPolicy } | { invalid: string } | undefined;
  private sp: { value: DmarcPolicy } | { invalid: string } | undefined;
  private np: { value: DmarcPolicy } | { invalid: string } | undefined;
  private adkim: AlignmentMode = 'r';
  private aspf: AlignmentMode = 'r';
  private failureOptions: FailureReportOption[] = ['0'];
  private psd: PsdFlag = 'u';
  private testing = false;
  private rua: ReportUri[] = [];
  private ruf: ReportUri[] = [];
  private hasRuf = false;
  private hasFo = false;
  private pct: number | null = null;
  private rf: string[] | null = null;
  private ri: number | null = null;

  constructor(
    private readonly raw: string,
    private readonly warnings: DmarcWarning[],
  ) {}

  apply(tag: DmarcTag): void {
    const value = trimWsp(tag.value);
    const known = (KNOWN_TAGS as readonly string[]).includes(tag.name) ? (tag.name as KnownTag) : undefined;
    if (!known) {
      this.warnings.push({ code: 'unknown-tag', tag: tag.name });
      return;
    }
    switch (known) {
      case 'v':
        return; // only reachable as a duplicate, which is discarded before this
      case 'p':
      case 'sp':
      case 'np': {
        // RFC 9989 §4.8 dmarc-request: ABNF literals, so case-insensitive.
        const policy = POLICIES.find((candidate) => candidate === value.toLowerCase());
        const parsed = policy ? { value: policy } : { invalid: value };
        if (known === 'p') this.p = parsed;
        else if (known === 'sp') this.sp = parsed;
        else this.np = parsed;
        return;
      }
      case 'adkim':
      case 'aspf': {
        const mode = value.toLowerCase();
        if (mode === 'r' || mode === 's') {
          if (known === 'adkim') this.adkim = mode;
          else this.aspf = mode;
        } else {
          this.invalid(known, value, 'r');
        }
        return;
      }
      case 'psd': {
        const flag = value.toLowerCase();
        if (flag === 'y' || flag === 'n' || flag === 'u') this.psd = flag;
        else this.invalid('psd', value, 'u');
        return;
      }
      case 't': {
        const flag = value.toLowerCase();
        if (flag === 'y' || flag === 'n') this.testing = flag === 'y';
        else this.invalid('t', value, 'n');
        return;
      }
      case 'fo': {
        this.hasFo = true;
        const options = parseFailureOptions(value);
        if (options) this.failureOptions = options;
        else this.invalid('fo', value, '0');
        return;
      }
      case 'rua':
      case 'ruf': {
        if (known === 'ruf') this.hasRuf = true;
        const uris = this.readUris(known, value);
        if (known === 'rua') this.rua = uris;
        else this.ruf = uris;
        return;
      }
      case 'pct': {
        // RFC 7489 §6.3 `pct`: 1*3DIGIT in 0-100. RFC 9989 §A.6 dropped it; we still read it.
        this.warnings.push({ code: 'legacy-tag', tag: 'pct', value });
        const pct = isDigits(value, 3) ? Number(value) : NaN;
        if (pct >= 0 && pct <= MAX_PCT) this.pct = pct;
        else this.invalid('pct', value, String(MAX_PCT));
        return;
      }
      case 'ri': {
        this.warnings.push({ code: 'legacy-tag', tag: 'ri', value });
        const seconds = isDigits(value, 10) ? Number(value) : NaN;
        if (seconds >= 0 && seconds <= MAX_RI_SECONDS) this.ri = seconds;
        else this.invalid('ri', value, '86400');
        return;
      }
      case 'rf': {
        this.warnings.push({ code: 'legacy-tag', tag: 'rf', value });
        const formats = value.split(':').map(trimWsp);
        if (formats.every(isKeyword)) this.rf = formats.map((format) => format.toLowerCase());
        else this.invalid('rf', value, 'afrf');
        return;
      }
    }
  }

  finish(tags: DmarcTag[], duplicated: ReadonlySet<string>): DmarcRecord {
    if (this.hasFo && !this.hasRuf) this.warnings.push({ code: 'fo-without-ruf' });
    const problems: PolicyProblem[] = [];
    for (const tag of ['p', 'sp', 'np'] as const) {
      const parsed = this[tag];
      if (duplicated.has(tag)) problems.push({ tag, problem: 'duplicated' });
      else if (parsed && 'invalid' in parsed) problems.push({ tag, problem: 'invalid', value: parsed.invalid });
      else if (!parsed && tag === 'p') problems.push({ tag: 'p', problem: 'missing' });
    }
    const published = { p: valueOf(this.p), sp: valueOf(this.sp), np: valueOf(this.np) };

    // RFC 9989 §4.10.1 (RFC 7489 §6.6.3 step 6 for p and sp): an unusable p, sp or np makes the record
    // p=none when a valid rua exists, and no DMARC at all otherwise.
    let outcome: DmarcRecordOutcome = 'valid';
    if (problems.length > 0) {
      outcome = this.rua.length > 0 ? 'as-none' : 'no-dmarc';
      this.warnings.push({ code: 'unusable-policy', problems, outcome });
    }
    let policy: DmarcPolicy | null = null;
    let subdomainPolicy: DmarcPolicy | null = null;
    let nonExistentSubdomainPolicy: DmarcPolicy | null = null;
    if (outcome === 'valid' && published.p) {
      policy = published.p;
      subdomainPolicy = published.sp ?? policy; // RFC 9989 §4.7 `sp`: absent → p
      nonExistentSubdomainPolicy = published.np ?? subdomainPolicy; // RFC 9989 §4.7 `np`: absent → sp → p
    } else if (outcome === 'as-none') {
      policy = subdomainPolicy = nonExistentSubdomainPolicy = 'none';
    }
    return {
      raw: this.raw,
      outcome,
      policy,
      subdomainPolicy,
      nonExistentSubdomainPolicy,
      published,
      adkim: this.adkim,
      aspf: this.aspf,
      failureOptions: this.failureOptions,
      psd: this.psd,
      testing: this.testing,
      rua: this.rua,
      ruf: this.ruf,
      pct: this.pct,
      rf: this.rf,
      ri: this.ri,
      tags,
    };
  }

  private invalid(tag: string, value: string, fallback: string | null): void {
    this.warnings.push({ code: 'invalid-value', tag, value, fallback });
  }

  private readUris(tag: 'rua' | 'ruf', value: string): ReportUri[] {
    const uris: ReportUri[] = [];
    for (const entry of splitUriList(value)) {
      const parsed = parseReportUri(entry);
      if (!parsed.ok) {
        this.warnings.push({ code: 'invalid-uri', tag, uri: entry, problem: parsed.problem });
        continue;
      }
      const { uri } = parsed;
      if (uri.scheme !== 'mailto') this.warnings.push({ code: 'unsupported-scheme', tag, uri: uri.uri, scheme: uri.scheme });
      if (uri.sizeLimit) {
        const suffix = `!${uri.sizeLimit.digits}${uri.sizeLimit.unit ?? ''}`;
        this.warnings.push({ code: 'size-suffix', tag, uri: uri.uri, suffix, outOfRange: sizeOutOfRange(uri.sizeLimit) });
      }
      uris.push(uri);
    }
    return uris;
  }
}

function valueOf(parsed: { value: DmarcPolicy } | { invalid: string } | undefined): DmarcPolicy | null {
  return parsed && 'value' in parsed ? parsed.value : null;
}

/**
 * RFC 9989 §4.8 dmarc-fo: 0 or 1 (not both), d and s at most once each, colon-separated. Whitespace
 * around the colons is tolerated (RFC 7489 §6.4 allowed it). Returns null for an invalid list.
 */
export function parseFailureOptions(value: string): FailureReportOption[] | null {
  const options = value.split(':').map((option) => trimWsp(option).toLowerCase());
  const seen = new Set<string>();
  for (const option of options) {
    if (option !== '0' && option !== '1' && option !== 'd' && option !== 's') return null;
    if (seen.has(option)) return null;
    seen.add(option);
  }
  if (seen.has('0') && seen.has('1')) return null; // RFC 9989 §4.7 `fo`: "0" and "1" are mutually exclusive
  return options as FailureReportOption[];
}

/** How many distinct DMARC record texts stay parsed (`parseDmarcRecordCached`). */
export const DMARC_PARSE_CACHE_ENTRIES = 2000;
/** Longer texts are parsed every time. */
export const DMARC_PARSE_CACHE_MAX_TEXT = 4096;

const parseJoinedCached = memoByText((text: string) => parseDmarcRecord(text), { entries: DMARC_PARSE_CACHE_ENTRIES, maxText: DMARC_PARSE_CACHE_MAX_TEXT });

/**
 * `parseDmarcRecord(txt)`, from a bounded cache when the same text was parsed recently: discovery
 * reads a busy domain's record on every check. The result is shared, so it is frozen (read-only).
 */
export function parseDmarcRecordCached(txt: string | readonly string[]): DmarcParseResult {
  return parseJoinedCached(typeof txt === 'string' ? txt : txt.length === 1 ? txt[0]! : txt.join(''));
}
