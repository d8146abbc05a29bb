/**
 * Pure parsers for MTA-STS (RFC 8461 §3.1, §3.2) and TLS-RPT (RFC 8460 §3): string in, record or
 * problem out, linear in the input. The grammars are in ./types.ts.
 *
 * Both RFCs say parsers MUST accept records and policies that are syntactically valid but carry
 * extra key/value pairs, and that unknown fields SHALL be ignored; a repeated field keeps its
 * first value. Those rules are followed here, unlike checkdmarc, which rejects unknown fields.
 */
import type { RecordSelection, StsMode, StsPolicyParse, StsRecordParse, TlsRptParse } from './types.js';

/** RFC 8461 §3.2: `max_age` may be at most 31557600 seconds (about a year). */
export const MAX_STS_MAX_AGE = 31_557_600;
/** RFC 8461 §3.2: `1*10DIGIT`. */
export const MAX_STS_MAX_AGE_DIGITS = 10;
/** RFC 8461 §3.1: `sts-id = 1*32(ALPHA / DIGIT)`. */
export const MAX_STS_ID_LENGTH = 32;

// RFC 8461 §3.1 / RFC 8460 §3: extension names and values.
const EXT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
const EXT_VALUE = /^[\x21-\x3a\x3c\x3e-\x7e]+$/;
const STS_ID = new RegExp(`^[A-Za-z0-9]{1,${MAX_STS_ID_LENGTH}}$`);
// RFC 5321 §4.1.2: Domain = sub-domain *("." sub-domain); sub-domain = Let-dig [Ldh-str].
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** RFC 8461 §3.1: the version prefix a record must begin with ("v=STSv1" then the field delimiter). */
const STS_PREFIX = /^v=STSv1[ \t]*;/;
/** RFC 8460 §3: the version prefix of a TLS-RPT record. */
const TLSRPT_PREFIX = /^v=TLSRPTv1[ \t]*;/;

/**
 * Picks THE record among the TXT records at a name (each given as its strings): the strings are
 * joined without spaces (RFC 8461 §3.1, RFC 8460 §3), records not beginning with the version are
 * discarded, and anything but exactly one is no record. A discarded record that looks like the
 * right one (the version in the wrong case, a missing ";") makes the selection `invalid` rather
 * than `absent`, so the user learns why senders ignore it.
 */
export function selectRecord(txt: readonly string[][], kind: 'mta-sts' | 'tlsrpt'): RecordSelection {
  const prefix = kind === 'mta-sts' ? STS_PREFIX : TLSRPT_PREFIX;
  const lookalike = kind === 'mta-sts' ? /^\s*v\s*=\s*sts/i : /^\s*v\s*=\s*tlsrpt/i;
  const version = kind === 'mta-sts' ? 'v=STSv1;' : 'v=TLSRPTv1;';
  const texts = txt.map((strings) => strings.join(''));
  const candidates = texts.filter((text) => prefix.test(text));
  if (candidates.length === 1) return { kind: 'one', text: candidates[0] as string };
  if (candidates.length > 1) {
    return { kind: 'invalid', problem: `${candidates.length} records begin with "${version}"; there must be exactly one, so senders act as if there were none`, text: null };
  }
  const near = texts.find((text) => lookalike.test(text));
  if (near !== undefined) {
    return { kind: 'invalid', problem: `the record "${near}" does not begin with "${version}" exactly (case-sensitive, then ";"), so senders discard it`, text: near };
  }
  return { kind: 'absent' };
}

/**
 * Splits `v=…; a=b; c=d` into fields after the version (RFC 8461 §3.1 / RFC 8460 §3 field-delim =
 * *WSP ";" *WSP; a trailing delimiter is allowed). Returns the fields or a problem.
 */
function fields(text: string, version: string): { name: string; value: string }[] | string {
  const parts = text.split(';').map((part) => part.replace(/^[ \t]+|[ \t]+$/g, ''));
  if (parts[0] !== version) return `it must begin with "${version}"`;
  const rest = parts.slice(1);
  if (rest.length > 0 && rest[rest.length - 1] === '') rest.pop(); // [field-delim] at the end
  if (rest.length === 0) return 'it has no field after the version';
  const out: { name: string; value: string }[] = [];
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (part === '' || eq <= 0) return `"${part}" is not a name=value field`;
    out.push({ name: part.slice(0, eq), value: part.slice(eq + 1) });
  }
  return out;
}

/** Parses one `_mta-sts` record (RFC 8461 §3.1): `id` is required; extensions are ignored. */
export function parseStsRecord(text: string): StsRecordParse {
  const parsed = fields(text, 'v=STSv1');
  if (typeof parsed === 'string') return { ok: false, problem: `the _mta-sts record is not valid: ${parsed}` };
  let id: string | null = null;
  for (const { name, value } of parsed) {
    if (name === 'id') {
      if (id !== null) continue; // a repeated field keeps its first value
      if (!STS_ID.test(value)) return { ok: false, problem: `id "${value}" is not 1 to ${MAX_STS_ID_LENGTH} letters and digits (RFC 8461 §3.1)` };
      id = value;
    } else if (!EXT_NAME.test(name) || !EXT_VALUE.test(value)) {
      return { ok: false, problem: `"${name}=${value}" is not a valid field (RFC 8461 §3.1 extension syntax)` };
    }
    // Unknown fields SHALL be ignored (RFC 8461 §3.1).
  }
  if (id === null) return { ok: false, problem: 'the record has no id field, which is required (RFC 8461 §3.1)' };
  return { ok: true, id };
}

/** Parses one `_smtp._tls` record (RFC 8460 §3): `rua` with mailto:/https: URIs is required. */
export function parseTlsRptRecord(text: string): TlsRptParse {
  const parsed = fields(text, 'v=TLSRPTv1');
  if (typeof parsed === 'string') return { ok: false, problem: `the _smtp._tls record is not valid: ${parsed}` };
  let rua: string[] | null = null;
  for (const { name, value } of parsed) {
    if (name === 'rua') {
      if (rua !== null) continue; // first value
      const uris = value.split(',').map((uri) => uri.replace(/^[ \t]+|[ \t]+$/g, ''));
      for (const uri of uris) {
        const problem = reportUriProblem(uri);
        if (problem) return { ok: false, problem: `rua "${uri}" ${problem}` };
      }
      rua = uris;
    } else if (!EXT_NAME.test(name) || !EXT_VALUE.test(value)) {
      return { ok: false, problem: `"${name}=${value}" is not a valid field (RFC 8460 §3 extension syntax)` };
    }
  }
  if (rua === null) return { ok: false, problem: 'the record has no rua field, which is required (RFC 8460 §3)' };
  return { ok: true, rua };
}

/** Why a TLS-RPT report URI is not one (RFC 8460 §3: mailto: or https:), or null. */
function reportUriProblem(uri: string): string | null {
  if (uri === '') return 'is empty';
  if (/[!\s]/.test(uri)) return 'contains a space or "!", which must be percent-encoded (RFC 8460 §3)';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (scheme === 'mailto') {
    return /^[^@\s]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/.test(uri.slice('mailto:'.length).split('?')[0] ?? '') ? null : 'is not a mailto: URI with an address';
  }
  if (scheme === 'https') {
    try {
      const url = new URL(uri);
      return url.hostname === '' ? 'has no host' : null;
    } catch {
      return 'is not a valid https: URI';
    }
  }
  return 'must be a mailto: or https: URI (RFC 8460 §3)';
}

/**
 * Parses a policy body (RFC 8461 §3.2). Lines end in LF or CRLF; each is `key ":" *WSP value`.
 * version, mode and max_age are required; mx at least once unless the mode is none; a repeated
 * field keeps its first value (mx repeats by design); unknown keys are ignored and listed.
 */
export function parseStsPolicy(body: string): StsPolicyParse {
  let version: string | null = null;
  let mode: StsMode | null = null;
  let maxAge: number | null = null;
  const mx: string[] = [];
  const ignored: string[] = [];
  const lines = body.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  // A final sts-policy-term leaves one empty line at the end.
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const where = `line ${index + 1}`;
    const colon = line.indexOf(':');
    const key = colon > 0 ? line.slice(0, colon) : '';
    if (!EXT_NAME.test(key)) return { ok: false, problem: `${where} ("${line.slice(0, 80)}") is not a "key: value" field (RFC 8461 §3.2)` };
    const value = line.slice(colon + 1).replace(/^[ \t]+/, '').replace(/[ \t]+$/, '');
    switch (key) {
      case 'version':
        if (version === null) version = value;
        break;
      case 'mode':
        if (mode !== null) break;
        if (value !== 'enforce' && value !== 'testing' && value !== 'none') return { ok: false, problem: `${where}: mode "${value}" is not enforce, testing or none (RFC 8461 §3.2, case-sensitive)` };
        mode = value;
        break;
      case 'max_age': {
        if (maxAge !== null) break;
        if (!new RegExp(`^\\d{1,${MAX_STS_MAX_AGE_DIGITS}}$`).test(value)) return { ok: false, problem: `${where}: max_age "${value}" is not a number of seconds (1 to ${MAX_STS_MAX_AGE_DIGITS} digits)` };
        const seconds = Number(value);
        if (seconds > MAX_STS_MAX_AGE) return { ok: false, problem: `${where}: max_age ${seconds} exceeds the maximum ${MAX_STS_MAX_AGE} (RFC 8461 §3.2)` };
        maxAge = seconds;
        break;
      }
      case 'mx': {
        const pattern = value.toLowerCase().replace(/\.$/, '');
        const domain = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
        if (!DOMAIN.test(domain)) return { ok: false, problem: `${where}: mx "${value}" is not a host name or "*." and a domain (RFC 8461 §3.2; IDNs as A-labels)` };
        mx.push(pattern);
        break;
      }
      default:
        ignored.push(key); // RFC 8461 §3.2: unknown fields SHALL be ignored
    }
  }
  if (version === null) return { ok: false, problem: 'the policy has no version field (RFC 8461 §3.2)' };
  if (version !== 'STSv1') return { ok: false, problem: `version "${version}" is not STSv1 (RFC 8461 §3.2)` };
  if (mode === null) return { ok: false, problem: 'the policy has no mode field (RFC 8461 §3.2)' };
  if (maxAge === null) return { ok: false, problem: 'the policy has no max_age field (RFC 8461 §3.2)' };
  if (mx.length === 0 && mode !== 'none') return { ok: false, problem: `a policy in ${mode} mode needs at least one mx field (RFC 8461 §3.2)` };
  return { ok: true, policy: { mode, maxAge, mx }, ignored };
}
