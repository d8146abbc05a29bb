/**
 * The one tokenizer of RFC 1035 §5.1 master files, for both zone-file readers: the zone parser
 * (parse.ts) and the signed-zone reader (signed-zonefile.ts). It reads one entry (a logical line,
 * `(` `)` joined, `;` comments dropped) at a time; words and quoted character-strings with their
 * `\X` and `\DDD` escapes decoded (RFC 1035 §5.1), each with its line and column, so that every
 * error names where it is (`ZoneSyntaxError`).
 */

/**
 * A zone file that cannot be loaded. `message` is `file:line:column: what was expected, what was
 * found`; the parts are kept apart for tools. The first error aborts the parse: nothing half-loads.
 */
export class ZoneSyntaxError extends Error {
  override readonly name = 'ZoneSyntaxError' as const;
  /** The file as named to the parser (an included file is named by its path). */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, counted in characters (a tab is one column). */
  readonly column: number;
  /** The message without its location. */
  readonly reason: string;

  constructor(file: string, line: number, column: number, reason: string) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.file = file;
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}

// ---------------------------------------------------------------------------------------------
// One pass over the text, one "entry" (a logical line, parentheses joined) at a time.

/** One word or quoted string of an entry. */
export interface Token {
  /** The text with escapes decoded (and without the quotes of a quoted string). */
  value: string;
  /** The text as written, for messages. */
  raw: string;
  quoted: boolean;
  /** A `\.` (or `\046`) escape made a dot inside a label. */
  escapedDot: boolean;
  /** Length of `value` in octets (UTF-8). */
  octets: number;
  line: number;
  column: number;
}

/** A logical line: a directive or a record. */
export interface Entry {
  tokens: Token[];
  /** The line starts with white space: the owner is the previous one (RFC 1035 §5.1). */
  blankOwner: boolean;
}

const LF = 10;
const CR = 13;
export const SPACE = 32;
const TAB = 9;
const QUOTE = 34;
const SEMICOLON = 59;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const BACKSLASH = 92;

export const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Ends a word: white space, a comment or a parenthesis (RFC 1035 §5.1). */
function isDelimiter(code: number): boolean {
  return code === SPACE || code === TAB || code === LF || code === CR || code === SEMICOLON || code === OPEN_PAREN || code === CLOSE_PAREN;
}

export function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export class Lexer {
  private pos = 0;
  private line = 1;
  private lineStart = 0;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {
    if (text.charCodeAt(0) === 0xfeff) this.pos = this.lineStart = 1; // a byte-order mark is not content
  }

  /** The next entry, or undefined at the end of the text. */
  next(): Entry | undefined {
    const text = this.text;
    const length = text.length;
    const tokens: Token[] = [];
    let blankOwner = false;
    let openParen: { line: number; column: number } | undefined;
    while (this.pos < length) {
      const code = text.charCodeAt(this.pos);
      if (code === LF) {
        if (openParen === undefined && tokens.length > 0) {
          const entry: Entry = { tokens, blankOwner };
          this.newLine();
          return entry;
        }
        this.newLine();
        if (openParen === undefined) blankOwner = false; // a blank or comment-only line ends nothing
      } else if (code === SPACE || code === TAB || code === CR) {
        // RFC 1035 §5.1: a blank owner is a line that begins with white space.
        if (this.pos === this.lineStart && tokens.length === 0 && openParen === undefined) blankOwner = true;
        this.pos++;
      } else if (code === SEMICOLON) {
        const end = text.indexOf('\n', this.pos);
        this.pos = end === -1 ? length : end;
      } else if (code === OPEN_PAREN) {
        if (openParen !== undefined) {
          this.fail(this.line, this.column(), `expected ")" to close the "(" of line ${openParen.line}, found a second "("`);
        }
        openParen = { line: this.line, column: this.column() };
        this.pos++;
      } else if (code === CLOSE_PAREN) {
        if (openParen === undefined) this.fail(this.line, this.column(), 'expected a "(" before this ")", found none');
        openParen = undefined;
        this.pos++;
      } else {
        tokens.push(code === QUOTE ? this.readQuoted() : this.readWord());
      }
    }
    if (openParen !== undefined) {
      this.fail(openParen.line, openParen.column, 'expected ")" to close this "(", found the end of the file');
    }
    if (tokens.length === 0) return undefined;
    return { tokens, blankOwner };
  }

  /** Where the text ends, for whole-file messages. */
  end(): { line: number; column: number } {
    return { line: this.line, column: this.column() };
  }

  private column(): number {
    return this.pos - this.lineStart + 1;
  }

  private newLine(): void {
    this.pos++;
    this.line++;
    this.lineStart = this.pos;
  }

  private readWord(): Token {
    const text = this.text;
    const start = this.pos;
    const column = this.column();
    let escaped = false;
    while (this.pos < text.length) {
      const code = text.charCodeAt(this.pos);
      if (isDelimiter(code)) break;
      if (code === QUOTE) {
        // RFC 9460 §2.1: a SvcParam's value may be quoted right after its "=" (alpn="h2,h3").
        const close = text.charCodeAt(this.pos - 1) === 61 /* = */ ? this.quotedEnd(this.pos) : -1;
        if (close === -1) {
          this.fail(this.line, this.column(), `expected white space before the opening quote, found it inside the word "${clip(text.slice(start, this.pos))}"`);
        }
        this.pos = close + 1;
        continue;
      }
      if (code === BACKSLASH) {
        escaped = true;
        this.pos++;
        const next = text.charCodeAt(this.pos);
        if (Number.isNaN(next) || next === LF || next === CR) {
          this.fail(this.line, this.column() - 1, 'expected a character after "\\", found the end of the line');
        }
      }
      this.pos++;
    }
    const raw = text.slice(start, this.pos);
    return this.token(raw, raw, false, escaped, column);
  }

  /** The index of the quote closing the one at `open` on the same line, or -1. */
  private quotedEnd(open: number): number {
    const text = this.text;
    for (let i = open + 1; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === LF) return -1;
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) return i;
    }
    return -1;
  }

  private readQuoted(): Token {
    const text = this.text;
    const line = this.line;
    const column = this.column();
    const start = this.pos;
    this.pos++; // the opening quote
    let escaped = false;
    for (;;) {
      const code = text.charCodeAt(this.pos);
      if (Number.isNaN(code) || code === LF) {
        this.fail(line, column, `expected a closing quote for this string, found the end of the ${Number.isNaN(code) ? 'file' : 'line'}`);
      }
      if (code === QUOTE) break;
      if (code === BACKSLASH) {
        escaped = true;
        this.pos++;
        const next = text.charCodeAt(this.pos);
        if (Number.isNaN(next) || next === LF) {
          this.fail(this.line, this.column() - 1, 'expected a character after "\\", found the end of the line');
        }
      }
      this.pos++;
    }
    this.pos++; // the closing quote
    const after = text.charCodeAt(this.pos);
    if (!Number.isNaN(after) && !isDelimiter(after) && after !== QUOTE) {
      this.fail(this.line, this.column(), `expected white space after the closing quote, found "${text[this.pos]}"`);
    }
    if (after === QUOTE) {
      this.fail(this.line, this.column(), 'expected white space between two quoted strings, found a quote right after the closing one');
    }
    const raw = text.slice(start, this.pos);
    return this.token(raw, raw.slice(1, -1), true, escaped, column);
  }

  /** Builds a token; `body` is the text between the quotes (or the word), decoded when it has escapes. */
  private token(raw: string, body: string, quoted: boolean, escaped: boolean, column: number): Token {
    const line = this.line;
    if (!escaped) return { value: body, raw, quoted, escapedDot: false, octets: Buffer.byteLength(body, 'utf8'), line, column };
    const bodyColumn = quoted ? column + 1 : column;
    const octets: number[] = [];
    let escapedDot = false;
    for (let i = 0; i < body.length; i++) {
      const code = body.charCodeAt(i);
      if (code !== BACKSLASH) {
        pushUtf8(octets, body, i);
        if (code >= 0xd800 && code <= 0xdbff) i++; // the pair was encoded together
        continue;
      }
      const next = body.charCodeAt(i + 1);
      if (isDigit(next)) {
        // RFC 1035 §5.1: \DDD is the octet whose value is the decimal number DDD.
        const digits = body.slice(i + 1, i + 4);
        if (!/^\d{3}$/.test(digits)) {
          this.fail(line, bodyColumn + i, `expected three decimal digits after "\\" (\\DDD), found "\\${clip(digits)}"`);
        }
        const octet = Number(digits);
        if (octet > 255) this.fail(line, bodyColumn + i, `expected an octet from \\000 to \\255, found "\\${digits}"`);
        if (octet === 46) escapedDot = true;
        octets.push(octet);
        i += 3;
      } else {
        // RFC 1035 §5.1: \X is X itself, for any X that is not a digit.
        if (next === 46) escapedDot = true;
        pushUtf8(octets, body, i + 1);
        i += next >= 0xd800 && next <= 0xdbff ? 2 : 1;
      }
    }
    let value: string;
    try {
      value = utf8.decode(Uint8Array.from(octets));
    } catch {
      this.fail(line, column, `expected text that is valid UTF-8 once escapes are decoded, found ${quoted ? 'the string' : 'the word'} ${clip(raw)}`);
    }
    return { value, raw, quoted, escapedDot, octets: octets.length, line, column };
  }

  private fail(line: number, column: number, reason: string): never {
    throw new ZoneSyntaxError(this.file, line, column, reason);
  }
}

/** Appends the UTF-8 octets of the character at `index` (a surrogate pair counts as one). */
function pushUtf8(octets: number[], text: string, index: number): void {
  const point = text.codePointAt(index)!;
  if (point < 0x80) octets.push(point);
  else if (point < 0x800) octets.push(0xc0 | (point >> 6), 0x80 | (point & 63));
  else if (point < 0x10000) octets.push(0xe0 | (point >> 12), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63));
  else octets.push(0xf0 | (point >> 18), 0x80 | ((point >> 12) & 63), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63));
}

/** Shortens text for a message. */
export function clip(text: string, max = 40): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A token as messages show it. */
export function shown(token: Token): string {
  return token.quoted ? `the quoted string ${clip(token.raw)}` : `"${clip(token.raw)}"`;
}

