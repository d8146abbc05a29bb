/** Small helpers that put record text into messages safely. */

/** "the character U+0096" / "a space", for messages. */
export function describeCharacter(code: number): string {
  if (code === 0x20) return 'a space';
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  if (code < 0x20 || code === 0x7f) return `the control character U+${hex}`;
  if (code > 0x7e) return `the non-ASCII character U+${hex}`;
  return `the character "${String.fromCharCode(code)}"`;
}

/** Long garbage terms are cut in messages so a 10,000-character term does not become the message. */
export const MAX_TERM_IN_MESSAGE = 80;

/**
 * `text` made safe for a one-line message: control and non-ASCII characters written as \uXXXX, and
 * cut to MAX_TERM_IN_MESSAGE characters with an ellipsis.
 */
export function truncateForMessage(text: string): string {
  const cut = text.length > MAX_TERM_IN_MESSAGE ? text.slice(0, MAX_TERM_IN_MESSAGE) : text;
  // eslint-disable-next-line no-control-regex
  const shown = cut.replace(/[^\x20-\x7e]/g, (character) => `\\u${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
  return cut === text ? shown : `${shown}…`;
}

/** The separator of a term path through includes and redirects (`include:x.example → +all`). */
export const TERM_PATH_SEPARATOR = ' → ';

/**
 * A term path made safe for a message: each term escaped and cut as `truncateForMessage` does, the
 * separators kept as they are (they are ours, not the DNS's).
 */
export function termPathForMessage(path: string): string {
  return path.split(TERM_PATH_SEPARATOR).map(truncateForMessage).join(TERM_PATH_SEPARATOR);
}
