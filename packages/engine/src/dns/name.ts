/**
 * DNS name rules shared by every layer: the canonical form used as a key everywhere
 * (lower case, no trailing dot, root = '') and the size limits of RFC 1035 §2.3.4.
 */

/** RFC 1035 §2.3.4: a label is at most 63 octets. */
export const MAX_LABEL_OCTETS = 63;
/** RFC 1035 §2.3.4 gives 255 octets on the wire, which is 253 in presentation form without the final dot. */
export const MAX_NAME_OCTETS = 253;

/** Lower case, without one trailing dot. `Example.COM.` → `example.com`; `.` → ''. */
export function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Why `name` cannot be sent as a query, or null when it can. The name is taken in presentation form,
 * with or without the trailing dot. The message says what is wrong in words a user can act on.
 */
export function dnsNameProblem(name: string): string | null {
  return canonicalNameProblem(canonicalName(name), name);
}

/**
 * `dnsNameProblem(name)` when the caller already holds `canonical = canonicalName(name)`, so the
 * per-lookup path lowers the case once. `name` is the spelling quoted in the message.
 */
export function canonicalNameProblem(canonical: string, name: string): string | null {
  if (canonical === '') return null; // the root
  if (canonical.length > MAX_NAME_OCTETS) {
    return `the name is ${canonical.length} octets long; DNS allows at most ${MAX_NAME_OCTETS}`;
  }
  // Label by label without splitting: this runs for every lookup, so it allocates nothing.
  let start = 0;
  for (;;) {
    const dot = canonical.indexOf('.', start);
    const end = dot === -1 ? canonical.length : dot;
    const length = end - start;
    if (length === 0) return `the name "${name}" has an empty label (two dots in a row, or a leading dot)`;
    if (length > MAX_LABEL_OCTETS) {
      return `the label "${canonical.slice(start, start + 20)}…" is ${length} octets long; DNS allows at most ${MAX_LABEL_OCTETS}`;
    }
    if (dot === -1) return null;
    start = dot + 1;
  }
}

/** The labels of a canonical name, most specific first. '' has none. */
export function labelsOf(canonical: string): string[] {
  return canonical === '' ? [] : canonical.split('.');
}

/** The parent of a canonical name; the parent of a TLD is the root ''. */
export function parentName(canonical: string): string {
  const dot = canonical.indexOf('.');
  return dot === -1 ? '' : canonical.slice(dot + 1);
}

/** True when `name` equals `ancestor` or lies below it (label-wise, not string-wise). */
export function isAtOrBelow(name: string, ancestor: string): boolean {
  if (ancestor === '') return true;
  return name === ancestor || name.endsWith(`.${ancestor}`);
}
