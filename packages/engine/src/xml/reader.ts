/**
 * The one strict XML reader for hostile input: DMARC aggregate reports (reports/) and BIMI SVG
 * logos (bimi/svg.ts). Elements, attributes, text, CDATA and namespaces (XML 1.0 §2–§3, Namespaces in
 * XML 1.0 §3–§6); comments are skipped.
 *
 * What it never does: a DOCTYPE is refused (XML 1.0 §2.8), not read (so no DTD, no external entity,
 * no file or network read, no entity expansion: XXE and billion laughs cannot start), and an entity
 * reference other than the five predefined ones (XML 1.0 §4.6) and character references (§4.1) is
 * refused. Depth, element count, attributes per element and text kept are capped. Malformed input
 * is refused with the line and column, never "recovered" into a silently wrong tree.
 *
 * A caller that lists every problem at once (the SVG validator) may instead be told of a DOCTYPE
 * (`onDoctype`: skipped to its end unread, its entities never declared), of an unknown entity
 * (`onUnknownEntity`: kept literal, never expanded) and of a processing instruction
 * (`onInstruction`), and may ask for line numbers (`lines`).
 */
/** Elements nested deeper than this are refused (a report needs 6). */
export const MAX_XML_DEPTH = 64;
/** Elements in one document (200,000 records of about 20 elements each fit). */
export const MAX_XML_NODES = 5_000_000;
/** Attributes on one element. */
export const MAX_XML_ATTRIBUTES = 64;
/**
 * Characters of text kept per element (a report field is read up to 1,000); the rest is left out with
 * a warning. Text arrives in pieces between elements and comments, and each piece kept costs memory:
 * millions of pieces under one element would otherwise be kept.
 */
export const MAX_XML_TEXT = 65_536;

/** One element: its names, attributes, child elements and text (the character data of its direct content, CDATA included). */
export interface XmlElement {
  /** The 1-based line of its start tag (with `lines`). */
  line?: number;
  /** The 1-based line of each attribute's name (with `lines`). */
  attributeLines?: Record<string, number>;
  /** The name as written (`xs:schema`). */
  name: string;
  /** The local part (`schema`). */
  local: string;
  /** The namespace URI its prefix (or the default namespace) is bound to; null for none or an unbound prefix. */
  namespace: string | null;
  /** Attributes by name as written, values decoded (one shared frozen empty object when there are none). */
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** Why a document was refused (see `ReportRejection` for the words). */
export type XmlRejection = 'doctype' | 'entity' | 'malformed' | 'too-deep' | 'too-many-nodes';

/** The outcome of `parseXml`. */
export type XmlOutcome = { ok: true; root: XmlElement; warnings: string[] } | { ok: false; reason: XmlRejection; detail: string; line: number };

/** Options of `parseXml`. */
export interface ParseXmlOptions {
  maxDepth?: number;
  maxNodes?: number;
  /**
   * Called when an element closes, with its depth (the root is 0). Returning false drops it from its
   * parent: a caller can convert large repeated elements as they close and keep memory flat.
   */
  onClose?: (element: XmlElement, depth: number) => boolean;
  /** Called when an element opens, with its depth (the root is 0), before its content is read. */
  onOpen?: (element: XmlElement, depth: number) => void;
  /** Characters of text kept per element (`MAX_XML_TEXT`). */
  maxText?: number;
  /** Attributes on one element (`MAX_XML_ATTRIBUTES`). */
  maxAttributes?: number;
  /** Record each element's line and its attributes' (`XmlElement.line`, `attributeLines`). */
  lines?: boolean;
  /** Each piece of character data inside an element as read (references decoded, CDATA included), with its line. */
  onText?: (text: string, line: number) => void;
  /** Given: a DOCTYPE is skipped to its end unread (its entities are never declared) after this is told; otherwise refused. */
  onDoctype?: (line: number) => void;
  /** Given: a reference to an entity other than the five is kept literal (never expanded) after this is told; otherwise refused. */
  onUnknownEntity?: (name: string, line: number) => void;
  /**
   * Told of each processing instruction (the XML declaration too) with its target, line and whether
   * it opens the text; a string returned refuses the document with that message. Skipped otherwise.
   */
  onInstruction?: (target: string, line: number, opensText: boolean) => string | undefined;
}

const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';
const NAME_START = /[A-Za-z_:\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/;

/** A–Z, a–z, "_" or ":". */
function isNameStartAscii(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a;
}
const NO_ATTRIBUTES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);
const NO_LINES: Record<string, number> = Object.freeze(Object.create(null) as Record<string, number>);
/** XML 1.0 §4.6: the predefined entities. */
const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

class XmlError extends Error {
  constructor(
    readonly reason: XmlRejection,
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/**
 * Decodes report bytes to text: a BOM or an `encoding` declaration picks the decoder (UTF-8 when
 * neither does); bytes that are not valid in it are replaced, with a warning.
 */
export function decodeXmlBytes(bytes: Uint8Array): { text: string; warnings: string[] } {
  const warnings: string[] = [];
  let encoding = 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) encoding = 'utf-16be';
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) encoding = 'utf-16le';
  else if (!(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)) {
    // The declaration is ASCII (XML 1.0 §4.3.3): read it from the first bytes.
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 200));
    const declared = /^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1]?.toLowerCase();
    if (declared !== undefined && declared !== 'utf-8' && declared !== 'utf8') {
      try {
        new TextDecoder(declared);
        encoding = declared;
      } catch {
        warnings.push(`unknown encoding "${declared}" declared: read as UTF-8`);
      }
    }
  }
  try {
    return { text: new TextDecoder(encoding, { fatal: true }).decode(bytes), warnings };
  } catch {
    warnings.push(`bytes that are not valid ${encoding.toUpperCase()} were replaced`);
    return { text: new TextDecoder(encoding).decode(bytes), warnings };
  }
}

/** Parses a whole document (bytes are decoded with `decodeXmlBytes`). Never throws. */
export function parseXml(input: string | Uint8Array, options: ParseXmlOptions = {}): XmlOutcome {
  let text: string;
  let warnings: string[] = [];
  if (typeof input === 'string') text = input;
  else ({ text, warnings } = decodeXmlBytes(input));
  try {
    const parser = new Parser(text, options);
    const root = parser.parse();
    return { ok: true, root, warnings: [...warnings, ...parser.warnings] };
  } catch (error) {
    if (error instanceof XmlError) return { ok: false, reason: error.reason, detail: `${error.message} (${position(text, error.offset)})`, line: lineOf(text, error.offset) };
    // Only a bug or an exhausted stack lands here; still an answer, not a crash.
    return { ok: false, reason: 'malformed', detail: `the XML could not be read: ${error instanceof Error ? error.message : String(error)}`, line: 1 };
  }
}

/** The 1-based line of `offset` in `text`. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function position(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

interface Frame {
  element: XmlElement;
  /** An element child opened inside it (whitespace after one is layout, never content). */
  hadChild: boolean;
  /** Prefix bindings in scope (inherited from the parent unless this element declares some). */
  namespaces: Map<string, string>;
}

class Parser {
  private i = 0;
  private nodes = 0;
  private readonly maxDepth: number;
  private readonly maxNodes: number;
  private readonly maxText: number;
  private readonly maxAttributes: number;
  private textCut = false;
  readonly warnings: string[] = [];
  private readonly stack: Frame[] = [];
  private root: XmlElement | null = null;
  private readonly rootNamespaces = new Map<string, string>([['xml', XML_NAMESPACE]]);
  /** Offsets of the line feeds, when lines are asked for (by `lines` or a callback that takes one). */
  private newlines: number[] | undefined;
  /** Where the content starts (after a byte-order mark). */
  private start = 0;

  constructor(
    private readonly s: string,
    private readonly options: ParseXmlOptions,
  ) {
    this.maxDepth = options.maxDepth ?? MAX_XML_DEPTH;
    this.maxNodes = options.maxNodes ?? MAX_XML_NODES;
    this.maxText = options.maxText ?? MAX_XML_TEXT;
    this.maxAttributes = options.maxAttributes ?? MAX_XML_ATTRIBUTES;
  }

  parse(): XmlElement {
    const s = this.s;
    // A BOM and whitespace before the declaration are tolerated (real reporters send both).
    if (s.charCodeAt(0) === 0xfeff) this.i = 1;
    this.start = this.i;
    while (this.i < s.length) {
      const lt = s.indexOf('<', this.i);
      if (lt !== this.i) {
        const end = lt === -1 ? s.length : lt;
        this.text(this.i, end);
        this.i = end;
        continue;
      }
      const next = s.charCodeAt(lt + 1);
      if (next === 0x3f /* ? */) this.processingInstruction();
      else if (next === 0x21 /* ! */) this.markup();
      else if (next === 0x2f /* / */) this.endTag();
      else this.startTag();
    }
    if (this.stack.length > 0) throw new XmlError('malformed', `the document ends inside <${this.stack.at(-1)!.element.name}> (truncated?)`, s.length);
    if (this.root === null) throw new XmlError('malformed', 'no root element', s.length);
    return this.root;
  }

  /** The 1-based line of an offset (a binary search over the line feeds, found once). */
  private lineAt(offset: number): number {
    if (this.newlines === undefined) {
      this.newlines = [];
      for (let i = this.s.indexOf('\n'); i !== -1; i = this.s.indexOf('\n', i + 1)) this.newlines.push(i);
    }
    const newlines = this.newlines;
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  }

  private text(start: number, end: number): void {
    const stack = this.stack;
    const top = stack[stack.length - 1];
    if (top === undefined || this.options.onText !== undefined) return this.textSliced(start, end, top);
    // One pass over the characters, nothing cut out before it is known to be kept: whether any is not
    // whitespace, where the first "]]>" is (XML 1.0 §2.4), whether a reference needs decoding.
    const s = this.s;
    let content = false;
    let reference = false;
    for (let i = start; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) continue;
      content = true;
      if (c === 0x26 /* & */) reference = true;
      else if (c === 0x5d /* ] */ && i + 2 < end && s.charCodeAt(i + 1) === 0x5d && s.charCodeAt(i + 2) === 0x3e) throw new XmlError('malformed', '"]]>" outside a CDATA section', i);
    }
    // Whitespace before the first text or between child elements is layout: never kept (5 M empty
    // elements with a newline between each would otherwise keep 5 M pieces of text).
    if (!content && (top.element.text === '' || top.hadChild)) return;
    const raw = s.slice(start, end);
    this.append(top, reference ? this.decodeReferences(raw, start) : raw);
  }

  /** `text` outside the root element, or with `onText` (each piece told as read, with its line). */
  private textSliced(start: number, end: number, top: Frame | undefined): void {
    const raw = this.s.slice(start, end);
    if (top === undefined) {
      const at = raw.search(/[^ \t\r\n]/);
      if (at !== -1) throw new XmlError('malformed', this.root === null ? 'text before the root element' : 'text after the root element', start + at);
      return;
    }
    // XML 1.0 §2.4: "]]>" does not stand in character data.
    const cdataEnd = raw.indexOf(']]>');
    if (cdataEnd !== -1) throw new XmlError('malformed', '"]]>" outside a CDATA section', start + cdataEnd);
    const decoded = raw.includes('&') ? this.decodeReferences(raw, start) : raw;
    this.options.onText!(decoded, this.lineAt(start));
    if ((top.element.text === '' || top.hadChild) && !/[^ \t\r\n]/.test(raw)) return;
    return this.append(top, decoded);
  }

  /** Appends text to an element, up to `maxText` characters. */
  private append(frame: Frame, piece: string): void {
    const room = this.maxText - frame.element.text.length;
    if (room <= 0 || piece.length > room) {
      if (room > 0) frame.element.text += piece.slice(0, room);
      if (!this.textCut) this.warnings.push(`the text of <${frame.element.name}> is over ${this.maxText} characters (MAX_XML_TEXT): the rest was left out`);
      this.textCut = true;
      return;
    }
    frame.element.text += piece;
  }

  private processingInstruction(): void {
    const end = this.s.indexOf('?>', this.i + 2);
    if (end === -1) throw new XmlError('malformed', 'a processing instruction is not closed', this.i);
    const told = this.options.onInstruction;
    if (told !== undefined) {
      const target = /^<\?([^\s?]*)/.exec(this.s.slice(this.i, end))?.[1] ?? '';
      const refused = told(target, this.lineAt(this.i), this.i === this.start);
      if (refused !== undefined) throw new XmlError('malformed', refused, this.i);
    }
    this.i = end + 2;
  }

  private markup(): void {
    const s = this.s;
    const at = this.i;
    if (s.startsWith('<!--', at)) {
      const end = s.indexOf('-->', at + 4);
      if (end === -1) throw new XmlError('malformed', 'a comment is not closed', at);
      this.i = end + 3;
      return;
    }
    if (s.startsWith('<![CDATA[', at)) {
      const end = s.indexOf(']]>', at + 9);
      if (end === -1) throw new XmlError('malformed', 'a CDATA section is not closed', at);
      const top = this.stack[this.stack.length - 1];
      if (top === undefined) throw new XmlError('malformed', 'a CDATA section outside the root element', at);
      this.options.onText?.(s.slice(at + 9, end), this.lineAt(at));
      this.append(top, s.slice(at + 9, end));
      this.i = end + 3;
      return;
    }
    const word = s.slice(at + 2, at + 9).toUpperCase();
    if (word.startsWith('DOCTYPE') && this.options.onDoctype !== undefined) {
      if (this.root !== null) throw new XmlError('malformed', 'a DOCTYPE declaration after the root element', at);
      this.options.onDoctype(this.lineAt(at));
      this.i = doctypeEnd(s, at);
      return;
    }
    if (word.startsWith('DOCTYPE')) throw new XmlError('doctype', 'the document has a DOCTYPE: refused, never processed (a report needs no DTD; DTDs are how external entities and entity expansion attacks start)', at);
    if (word.startsWith('ENTITY')) throw new XmlError('entity', 'the document declares an entity: refused, never expanded', at);
    throw new XmlError('malformed', `unexpected markup "${s.slice(at, at + 12)}"`, at);
  }

  private readName(what: string): string {
    const s = this.s;
    const start = this.i;
    let i = start;
    // XML 1.0 §2.3 Name: ASCII checked exactly; any character above U+007F is taken as a name character.
    const first = s.charCodeAt(i);
    if (!(isNameStartAscii(first) || first >= 0xc0)) {
      const shown = s.slice(i, i + 20);
      throw new XmlError('malformed', `expected ${what}, found "${shown}"${NAME_START.test(shown) ? '' : ' (an unescaped "<" in text?)'}`, i);
    }
    i++;
    for (let c = s.charCodeAt(i); isNameStartAscii(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c >= 0xb7; c = s.charCodeAt(++i));
    this.i = i;
    return s.slice(start, i);
  }

  private skipWhitespace(): number {
    const s = this.s;
    const start = this.i;
    let i = start;
    for (let c = s.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d; c = s.charCodeAt(++i));
    this.i = i;
    return i - start;
  }

  private startTag(): void {
    const s = this.s;
    const at = this.i;
    this.i++;
    const name = this.readName('an element name');
    if (this.root !== null && this.stack.length === 0) throw new XmlError('malformed', `a second root element <${name}>`, at);
    if (this.stack.length >= this.maxDepth) throw new XmlError('too-deep', `elements nested deeper than ${this.maxDepth}`, at);
    if (++this.nodes > this.maxNodes) throw new XmlError('too-many-nodes', `more than ${this.maxNodes} elements`, at);
    // Most elements have none: they share one frozen empty object, so no allocation per element.
    let attributes: Record<string, string> = NO_ATTRIBUTES;
    let attributeLines: Record<string, number> | undefined;
    let count = 0;
    let selfClosing = false;
    for (;;) {
      const spaced = this.skipWhitespace() > 0;
      const c = s.charCodeAt(this.i);
      if (c === 0x3e /* > */) {
        this.i++;
        break;
      }
      if (c === 0x2f /* / */ && s.charCodeAt(this.i + 1) === 0x3e) {
        this.i += 2;
        selfClosing = true;
        break;
      }
      if (Number.isNaN(c)) throw new XmlError('malformed', `the document ends inside the tag <${name}> (truncated?)`, this.i);
      if (!spaced) throw new XmlError('malformed', `expected whitespace, ">" or "/>" in <${name}>`, this.i);
      const attributeAt = this.i;
      const attribute = this.readName('an attribute name');
      this.skipWhitespace();
      if (s.charCodeAt(this.i) !== 0x3d /* = */) throw new XmlError('malformed', `attribute "${attribute}" of <${name}> has no value`, this.i);
      this.i++;
      this.skipWhitespace();
      const quote = s[this.i];
      if (quote !== '"' && quote !== "'") throw new XmlError('malformed', `attribute "${attribute}" of <${name}> is not quoted`, this.i);
      const end = s.indexOf(quote, this.i + 1);
      if (end === -1) throw new XmlError('malformed', `attribute "${attribute}" of <${name}> is not closed (truncated?)`, this.i);
      const raw = s.slice(this.i + 1, end);
      if (raw.includes('<')) throw new XmlError('malformed', `"<" in the value of attribute "${attribute}"`, this.i);
      if (attributes === NO_ATTRIBUTES) attributes = Object.create(null) as Record<string, string>;
      if (attribute in attributes) throw new XmlError('malformed', `attribute "${attribute}" repeated in <${name}>`, attributeAt);
      if (++count > this.maxAttributes) throw new XmlError('too-many-nodes', `more than ${this.maxAttributes} attributes on <${name}>`, attributeAt);
      attributes[attribute] = raw.includes('&') ? this.decodeReferences(raw, this.i + 1) : raw;
      if (this.options.lines) (attributeLines ??= Object.create(null) as Record<string, number>)[attribute] = this.lineAt(attributeAt);
      this.i = end + 1;
    }
    const parent = this.stack[this.stack.length - 1];
    let namespaces = parent?.namespaces ?? this.rootNamespaces;
    if (attributes !== NO_ATTRIBUTES) for (const attribute in attributes) {
      // Namespaces in XML 1.0 §3: xmlns="uri" sets the default namespace, xmlns:p="uri" binds p.
      if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) {
        if (namespaces === (parent?.namespaces ?? this.rootNamespaces)) namespaces = new Map(namespaces);
        namespaces.set(attribute === 'xmlns' ? '' : attribute.slice(6), attributes[attribute]!);
      }
    }
    const colon = name.indexOf(':');
    const prefix = colon === -1 ? '' : name.slice(0, colon);
    const element: XmlElement = {
      name,
      local: colon === -1 ? name : name.slice(colon + 1),
      namespace: namespaces.get(prefix) || null,
      attributes,
      children: [],
      text: '',
    };
    if (this.options.lines) {
      element.line = this.lineAt(at);
      element.attributeLines = attributeLines ?? NO_LINES;
    }
    if (parent !== undefined) {
      parent.element.children.push(element);
      parent.hadChild = true;
    } else this.root = element;
    this.options.onOpen?.(element, this.stack.length);
    if (selfClosing) this.close(element, this.stack.length, parent);
    else this.stack.push({ element, namespaces, hadChild: false });
  }

  private endTag(): void {
    const at = this.i;
    const s = this.s;
    const stack = this.stack;
    const open = stack[stack.length - 1];
    // The end tag of the open element (nearly always): its name compared in place, not cut out.
    if (open !== undefined) {
      const name = open.element.name;
      const after = at + 2 + name.length;
      const c = s.charCodeAt(after);
      if (s.startsWith(name, at + 2) && (c === 0x3e || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d)) {
        this.i = after;
        this.skipWhitespace();
        if (s.charCodeAt(this.i) !== 0x3e) throw new XmlError('malformed', `the end tag </${name}> is not closed`, this.i);
        this.i++;
        stack.pop();
        this.close(open.element, stack.length, stack[stack.length - 1]);
        return;
      }
    }
    this.i += 2;
    const name = this.readName('an element name after "</"');
    this.skipWhitespace();
    if (s.charCodeAt(this.i) !== 0x3e) throw new XmlError('malformed', `the end tag </${name}> is not closed`, this.i);
    this.i++;
    const frame = stack.pop();
    if (frame === undefined) throw new XmlError('malformed', `an end tag </${name}> without a start tag`, at);
    if (frame.element.name !== name) throw new XmlError('malformed', `the end tag </${name}> does not match <${frame.element.name}>`, at);
    this.close(frame.element, stack.length, stack[stack.length - 1]);
  }

  private close(element: XmlElement, depth: number, parent: Frame | undefined): void {
    if (this.options.onClose !== undefined && !this.options.onClose(element, depth) && parent !== undefined) parent.element.children.pop();
  }

  /** XML 1.0 §4.1, §4.6: the five predefined entities and character references; anything else is refused. */
  private decodeReferences(raw: string, offset: number): string {
    let out = '';
    let from = 0;
    for (let amp = raw.indexOf('&'); amp !== -1; amp = raw.indexOf('&', from)) {
      out += raw.slice(from, amp);
      const semi = raw.indexOf(';', amp + 1);
      if (semi === -1 || semi - amp > 12) throw new XmlError('malformed', 'a "&" that starts no reference (write it as &amp;)', offset + amp);
      const name = raw.slice(amp + 1, semi);
      if (name.startsWith('#')) {
        const code = /^#x[0-9A-Fa-f]+$/.test(name) ? Number.parseInt(name.slice(2), 16) : /^#[0-9]+$/.test(name) ? Number.parseInt(name.slice(1), 10) : NaN;
        // XML 1.0 §2.2 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
        const valid = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
        if (!valid) throw new XmlError('malformed', `"&${name};" is not a valid character reference`, offset + amp);
        out += String.fromCodePoint(code);
      } else {
        const value = PREDEFINED[name];
        if (value === undefined && this.options.onUnknownEntity !== undefined) {
          this.options.onUnknownEntity(name, this.lineAt(offset + amp));
          out += raw.slice(amp, semi + 1);
        } else if (value === undefined) {
          throw new XmlError('entity', `the entity "&${name};" is not one of the five predefined ones: refused, never expanded`, offset + amp);
        } else out += value;
      }
      from = semi + 1;
    }
    return out + raw.slice(from);
  }
}

/** The index just past the DOCTYPE declaration that starts at `start` (XML 1.0 §2.8), linear in its length; quotes, comments and the [internal subset] are followed, nothing in it is read. */
function doctypeEnd(text: string, start: number): number {
  let quote = '';
  let depth = 0;
  for (let i = start + 9; i < text.length; i++) {
    const c = text[i];
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '<' && text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4); // a comment in the internal subset may hold quotes
      if (end === -1) break;
      i = end + 2;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    else if (c === '>' && depth === 0) return i + 1;
  }
  throw new XmlError('doctype', 'a DOCTYPE declaration is not closed with ">"', start);
}

/** The first child element with this local name, or undefined. */
export function child(element: XmlElement, local: string): XmlElement | undefined {
  for (const c of element.children) if (c.local === local) return c;
  return undefined;
}

/** Every child element with this local name. */
export function childrenNamed(element: XmlElement, local: string): XmlElement[] {
  return element.children.filter((c) => c.local === local);
}
