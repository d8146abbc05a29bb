/**
 * How the leak tests read a log line or a stored row as an attacker would: every form a key could
 * be recovered from. Written apart from src/http/key-redaction.ts on purpose, so that the tests do
 * not judge the redaction by its own reading.
 *
 * Issue 38 (item 9) added the spellings the redactor once missed: hex, base32, base64 of the
 * upper-cased key, base64 twice, line-wrapped base64, HTML character references, `\u` escapes, a
 * key dashed or cut in two (either half found on its own counts as a leak).
 */

/** `text` lower-cased and percent-decoded up to three times (each round a form). */
export function percentDecodedForms(text: string): string[] {
  const forms = [text.toLowerCase()];
  let current = text;
  for (let i = 0; i < 3; i++) {
    const next = current.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
    if (next === current) break;
    current = next;
    forms.push(current.toLowerCase());
  }
  return forms;
}

/** Each run of base64 characters in `text`, decoded from each of its first four characters (both alphabets, RFC 4648 §4, §5). */
export function base64DecodedForms(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(/[A-Za-z0-9+/_-]{12,}={0,2}/g)) {
    for (let start = 0; start < 4; start++) out.push(Buffer.from(run.slice(start).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('latin1').toLowerCase());
  }
  return out;
}

/** Each run of hex digits decoded at both alignments. */
function hexDecodedForms(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(/[0-9a-fA-F]{16,}/g)) for (const start of [0, 1]) out.push(Buffer.from(run.slice(start, run.length - ((run.length - start) % 2)), 'hex').toString('latin1'));
  return out;
}

/** Each run of base32 (RFC 4648 §6, one case) decoded from each of its first eight characters. */
function base32DecodedForms(text: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const out: string[] = [];
  for (const [run] of text.matchAll(/[A-Z2-7]{16,}|[a-z2-7]{16,}/g)) {
    for (let start = 0; start < 8; start++) {
      let bits = '';
      for (const char of run.slice(start).toUpperCase()) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
      const bytes = bits.match(/.{8}/g) ?? [];
      out.push(String.fromCharCode(...bytes.map((byte) => Number.parseInt(byte, 2))));
    }
  }
  return out;
}

/** HTML character references and `\u`/`\x` escapes (as written or escaped once more in JSON) resolved. */
function unescapedForms(text: string): string[] {
  const named: Record<string, string> = { lowbar: '_', amp: '&', hyphen: '-', period: '.', colon: ':', sol: '/', plus: '+', equals: '=' };
  const html = text.replace(/&#(x[0-9a-f]+|\d+);?|&([a-z]+);/gi, (whole, num?: string, name?: string) =>
    num !== undefined ? String.fromCodePoint(num[0] === 'x' || num[0] === 'X' ? Number.parseInt(num.slice(1), 16) : Number(num)) : (named[name!.toLowerCase()] ?? whole));
  const escapes = text.replace(/\\+u\{?([0-9a-f]{2,6})\}?|\\+x([0-9a-f]{2})/gi, (_whole, u?: string, x?: string) => String.fromCodePoint(Number.parseInt((u ?? x)!, 16)));
  return [html, escapes];
}

/** Separators taken out: a dashed or spaced key, line-wrapped base64 (real or escaped line breaks). */
const withoutSeparators = (text: string): string => text.replace(/\\+[nrt]|[\s-]/g, '');

/** Every form of `text` an attacker could read, three rounds deep. */
function readableForms(text: string): string[] {
  const all = new Set<string>([text]);
  let round = [text];
  for (let depth = 0; depth < 3; depth++) {
    const next: string[] = [];
    for (const form of round) {
      for (const decoded of [
        ...percentDecodedForms(form).slice(1),
        ...unescapedForms(form),
        withoutSeparators(form),
        ...hexDecodedForms(form),
        ...base32DecodedForms(form),
        ...base64DecodedForms(form),
      ]) {
        if (decoded.length >= 8 && !all.has(decoded) && all.size < 400) {
          all.add(decoded);
          next.push(decoded);
        }
      }
    }
    round = next;
  }
  return [...all].map((form) => form.toLowerCase());
}

/** The `keys` that `text` still holds in any readable form, whole or either half. */
export function leakedKeys(text: string, keys: readonly string[]): string[] {
  const forms = readableForms(text);
  return keys.filter((key) => {
    const lower = key.toLowerCase();
    const half = Math.floor(lower.length / 2);
    return forms.some((form) => form.includes(lower) || form.includes(lower.slice(0, half)) || form.includes(lower.slice(half)));
  });
}
