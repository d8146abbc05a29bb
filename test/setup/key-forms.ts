/**
 * How the leak tests read a log line or a stored row as an attacker would: every form a key could
 * be recovered from. Written apart from src/http/key-redaction.ts on purpose, so that the tests do
 * not judge the redaction by its own reading.
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

/** The `keys` that `text` still holds in any readable form: as written, percent-decoded, or base64-decoded. */
export function leakedKeys(text: string, keys: readonly string[]): string[] {
  const readable = percentDecodedForms(text);
  const forms = [...readable, ...readable.flatMap(base64DecodedForms), ...base64DecodedForms(text)];
  return keys.filter((key) => forms.some((form) => form.includes(key.toLowerCase())));
}
