/**
 * The BIMI assertion record (draft-brand-indicators-for-message-identification-14 §4.3): which TXT
 * record at a name is THE record, and its tags. Pure: no DNS here.
 */
import { isIP } from 'node:net';
import type { BimiRecordParse, BimiTags } from './types.js';

/** The DNS label BIMI records live under (draft §4.2): `<selector>._bimi.<domain>`. */
export const BIMI_LABEL = '_bimi';
/** The selector used when none is given (draft §4.2). */
export const DEFAULT_BIMI_SELECTOR = 'default';
/** Draft §4.3: the record starts with exactly this (no fixing of case or spacing). */
const VERSION = 'v=BIMI1';
/** Draft §4.3 `lps`: each prefix 1*63(ALPHA / DIGIT / "-"). */
const LPS_PREFIX = /^[A-Za-z0-9-]{1,63}$/;
/** Draft §4.2: a selector is one or more DNS labels (RFC 1035 §2.3.1, letters, digits, hyphens). */
const SELECTOR_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** The name of the record for `selector` at `domain`. */
export function bimiRecordName(selector: string, domain: string): string {
  return `${selector}.${BIMI_LABEL}.${domain}`;
}

/** Why a selector cannot be used, or null (draft §4.2: dot-separated DNS labels). */
export function bimiSelectorProblem(selector: string): string | null {
  if (selector === '') return 'the BIMI selector is empty; leave it out for "default"';
  if (selector.length > 200) return 'the BIMI selector is longer than 200 characters';
  for (const label of selector.split('.')) {
    if (!SELECTOR_LABEL.test(label)) return `the BIMI selector "${selector}" is not made of DNS labels (letters, digits and inner hyphens, separated by dots)`;
  }
  return null;
}

/** True when a TXT record is a BIMI record at all: it starts with `v=BIMI1` then `;`, space or its end (draft §4.3). */
export function isBimiRecord(text: string): boolean {
  return text === VERSION || /^v=BIMI1[;\s]/.test(text);
}

/** A TXT record that looks like BIMI but is not one (wrong case, spaces, not first), for a finding. */
export function looksLikeBimi(text: string): boolean {
  return !isBimiRecord(text) && /v\s*=\s*bimi1/i.test(text);
}

/**
 * Which TXT record at a name is the BIMI record (draft §7.2 steps 4 and 9): records not starting
 * with `v=BIMI1` are discarded; zero or several leave none.
 */
export function selectBimiRecord(txt: readonly string[][]): { kind: 'none'; lookalike: string | null } | { kind: 'one'; text: string } | { kind: 'multiple'; count: number } {
  // RFC 7208 §3.3 style: a record's character-strings are joined with nothing between them.
  const texts = txt.map((strings) => strings.join(''));
  const records = texts.filter(isBimiRecord);
  if (records.length === 1) return { kind: 'one', text: records[0] as string };
  if (records.length > 1) return { kind: 'multiple', count: records.length };
  return { kind: 'none', lookalike: texts.find(looksLikeBimi) ?? null };
}

/**
 * Parses a BIMI record (draft §4.3). `l=` is required (empty is the declination); `l=` and a
 * non-empty `a=` must each be one HTTPS URL with a host name. Unknown tags are ignored (listed in
 * `unknown`); a tag given twice is a problem (receivers disagree on which one wins).
 */
export function parseBimiRecord(text: string): BimiRecordParse {
  if (!isBimiRecord(text)) return { ok: false, problem: `the record must begin with "${VERSION};" exactly (upper case BIMI, no spaces before it); receivers discard "${text.slice(0, 40)}"` };
  const parts = text.split(';').map((part) => part.replace(/^[ \t]+|[ \t]+$/g, ''));
  if (parts[0] !== VERSION) return { ok: false, problem: `the version must be exactly "${VERSION}", followed by ";"` };
  const seen = new Map<string, string>();
  const unknown: string[] = [];
  const warnings: string[] = [];
  for (const part of parts.slice(1)) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, problem: `"${part}" is not a tag (name=value)` };
    const name = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    if (seen.has(name)) return { ok: false, problem: `the tag ${name}= appears twice; publish it once` };
    seen.set(name, value);
    if (!['l', 'a', 'avp', 'lps'].includes(name)) unknown.push(name);
  }
  if (!seen.has('l')) return { ok: false, problem: 'the record has no l= tag; it is required (empty l= declines BIMI)' };
  const l = seen.get('l') as string;
  if (l !== '') {
    const problem = httpsUrlProblem(l, 'l=');
    if (problem) return { ok: false, problem };
    if (!/\.svgz?$/i.test(new URL(l).pathname)) warnings.push(`l= should name an SVG file (.svg or .svgz); "${l}" does not end in .svg`);
  }
  const aText = seen.has('a') ? (seen.get('a') as string) : null;
  // mailauth and the draft agree: l= stays required when a= is set; an empty l= is only a declination with a= empty.
  if (l === '' && aText) return { ok: false, problem: 'l= is empty but a= names a certificate; put the logo URL in l= (l= and a= both empty declines BIMI)' };
  if (aText) {
    const problem = httpsUrlProblem(aText, 'a=');
    if (problem) return { ok: false, problem };
  }
  let avp: BimiTags['avp'] = null;
  if (seen.has('avp')) {
    const value = (seen.get('avp') as string).toLowerCase();
    if (value === 'brand' || value === 'personal') avp = value;
    else warnings.push(`avp=${seen.get('avp')} is neither brand nor personal; receivers ignore it`);
  }
  let lps: string[] | null = null;
  if (seen.has('lps')) {
    const raw = seen.get('lps') as string;
    lps = raw === '' ? [] : raw.split(',').map((prefix) => prefix.trim());
    const bad = lps.filter((prefix) => !LPS_PREFIX.test(prefix));
    if (bad.length > 0) return { ok: false, problem: `lps= holds ${bad.map((b) => `"${b}"`).join(', ')}: each prefix is 1 to 63 letters, digits or hyphens` };
  }
  if (unknown.length > 0) warnings.push(`unknown tag(s) ignored: ${unknown.join(', ')}${unknown.includes('s') || unknown.includes('p') ? ' (the avatar preference is avp=)' : ''}`);
  return { ok: true, tags: { l, a: aText, avp, lps, unknown }, warnings };
}

/** Why `text` is not one HTTPS URL with a host name (draft §4.3: commas must be percent-encoded). */
export function httpsUrlProblem(text: string, tag: string): string | null {
  if (text.includes(',')) return `${tag} holds more than one URL ("${text}"); it takes exactly one (percent-encode a comma in it)`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${tag} "${text}" is not a URL`;
  }
  if (url.protocol !== 'https:') return `${tag} "${text}" must be an https:// URL`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return `${tag} "${text}" names an IP address; it must name a host by its domain name`;
  if (!host.includes('.')) return `${tag} "${text}" must name a fully qualified host`;
  if (url.username !== '' || url.password !== '') return `${tag} "${text}" must not carry a user name or password`;
  return null;
}

/** Draft §7.2 step 5: a local part is at most 63 characters once normalised. */
const MAX_LOCAL_PART = 63;

/**
 * Normalises a sender's local part for `lps` (draft §7.2 step 5): `+extension` dropped, `_` and `.`
 * become `-`, runs of `-` collapse, edge dashes are trimmed, lower case; null when what is left is
 * empty, too long, or holds other characters.
 */
export function normaliseLocalPart(localPart: string): string | null {
  const base = localPart.split('+')[0] ?? '';
  const dashed = base.replace(/[_.]/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').toLowerCase();
  if (dashed === '' || dashed.length > MAX_LOCAL_PART || !/^[a-z0-9-]+$/.test(dashed)) return null;
  return dashed;
}

/** Whether a normalised local part matches an `lps` list (draft §4.3: an empty list matches every local part). */
export function lpsMatches(lps: readonly string[], normalised: string): boolean {
  return lps.length === 0 || lps.some((prefix) => normalised.startsWith(prefix.toLowerCase()));
}
