/**
 * The BIMI logo: read by the engine's one strict XML reader (xml/reader.ts), which never expands an
 * entity (a DOCTYPE is reported and skipped, never read), and checked against the SVG Tiny Portable/Secure profile (draft-svg-tiny-ps-abrotman-12 §2, the
 * `SVG_PS-latest.rnc` schema it defers to, and draft-fetch-validation-vmc-wchuang "SVG Indicators":
 * no script, no external resource reference). Every violation carries its rule id and the 1-based
 * line of the served file; attributes of the root are reported on the `<svg>` line.
 *
 * Hostile input: the file comes from a stranger. Nothing here follows a reference, loads a
 * stylesheet or expands an entity; work is linear in the (capped) size of the file.
 */
import { gunzipSync } from 'node:zlib';
import { parseXml } from '../xml/reader.js';
import type { SvgReport, SvgViolation } from './types.js';

/** Draft svg-tiny-ps §2 (and Gmail, Mail::BIMI): the logo is at most 32 KiB as served. */
export const MAX_SVG_BYTES = 32_768;
/** An SVGZ is inflated to at most this (a gzip bomb stops here and is a violation). */
export const MAX_SVG_INFLATED_BYTES = 1024 * 1024;
/** Elements nested deeper than this are refused (no recursion here, but the report stays small). */
export const MAX_SVG_DEPTH = 256;
/** Violations listed per file at most (the rest are counted in the last one). */
export const MAX_SVG_VIOLATIONS = 100;

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

/**
 * The rule ids a violation or warning can carry (an API: ids keep their meaning).
 * Violations: `not-xml`, `doctype`, `entity`, `processing-instruction`, `root`, `version`,
 * `base-profile`, `title`, `root-xy`, `element`, `script`, `foreign-object`, `raster-image`,
 * `namespace`, `attribute`, `event-handler`, `external-reference`, `fixed-attribute`, `size`,
 * `compression`. Warnings: `square`, `placeholder-title`.
 */
export const SVG_RULES = [
  'not-xml', 'doctype', 'entity', 'processing-instruction', 'root', 'version', 'base-profile', 'title', 'root-xy', 'element', 'script', 'foreign-object', 'raster-image',
  'namespace', 'attribute', 'event-handler', 'external-reference', 'fixed-attribute', 'size', 'compression', 'square', 'placeholder-title',
] as const;

/** The 24 elements of the profile (SVG_PS-latest.rnc): no tspan, tbreak, image, script, a, switch, style, clipPath, mask, pattern, filter, animation. */
export const SVG_PS_ELEMENTS: ReadonlySet<string> = new Set([
  'circle', 'defs', 'desc', 'ellipse', 'font', 'font-face', 'g', 'glyph', 'hkern', 'line', 'linearGradient', 'metadata',
  'path', 'polygon', 'polyline', 'radialGradient', 'rect', 'solidColor', 'stop', 'svg', 'text', 'textArea', 'title', 'use',
]);

/**
 * Attributes without a namespace the profile's elements carry (SVG Tiny 1.2 core, conditional,
 * presentation, geometry, gradient, font and RDFa attributes of the schema). One set for all
 * elements: an attribute of another element of the profile is not flagged. `style` is not among
 * them: the BIMI Group's schema (SVG_PS-latest.rnc, what Mail::BIMI validates with) has no style
 * attribute on any element (issue 42), so a logo must use presentation attributes (`fill=`).
 */
export const SVG_PS_ATTRIBUTES: ReadonlySet<string> = new Set([
  // core, RDFa and conditional processing
  'id', 'class', 'role', 'rel', 'rev', 'typeof', 'content', 'datatype', 'resource', 'about', 'property', 'requiredFonts', 'requiredFeatures', 'requiredExtensions', 'requiredFormats', 'systemLanguage',
  // the root
  'version', 'baseProfile', 'width', 'height', 'viewBox', 'preserveAspectRatio', 'contentScriptType', 'externalResourcesRequired', 'focusable', 'playbackOrder', 'snapshotTime', 'timelineBegin', 'zoomAndPan',
  // presentation
  'fill', 'fill-opacity', 'fill-rule', 'stroke', 'stroke-dasharray', 'stroke-dashoffset', 'stroke-linecap', 'stroke-linejoin', 'stroke-miterlimit', 'stroke-width', 'stroke-opacity', 'opacity',
  'color', 'color-rendering', 'vector-effect', 'direction', 'unicode-bidi', 'solid-color', 'solid-opacity', 'display-align', 'line-increment', 'stop-color', 'stop-opacity',
  'font-family', 'font-size', 'font-style', 'font-variant', 'font-weight', 'text-anchor', 'text-align', 'display', 'visibility', 'image-rendering', 'shape-rendering', 'text-rendering',
  'pointer-events', 'buffered-rendering', 'viewport-fill', 'viewport-fill-opacity',
  // geometry
  'x', 'y', 'rx', 'ry', 'cx', 'cy', 'r', 'x1', 'y1', 'x2', 'y2', 'd', 'pathLength', 'points', 'transform', 'rotate', 'editable',
  // gradients
  'gradientUnits', 'gradientTransform', 'spreadMethod', 'fx', 'fy', 'offset',
  // fonts
  'horiz-adv-x', 'horiz-origin-x', 'font-stretch', 'unicode-range', 'units-per-em', 'panose-1', 'stemv', 'stemh', 'slope', 'cap-height', 'x-height', 'accent-height', 'ascent', 'descent',
  'widths', 'bbox', 'ideographic', 'alphabetic', 'mathematical', 'hanging', 'underline-position', 'underline-thickness', 'strikethrough-position', 'strikethrough-thickness',
  'overline-position', 'overline-thickness', 'unicode', 'glyph-name', 'arabic-form', 'lang', 'u1', 'g1', 'u2', 'g2', 'k',
]);

/** What to write instead of an attribute the schema refuses that drawing tools often leave in. */
const ATTRIBUTE_FIXES: Readonly<Record<string, string>> = {
  style: 'the BIMI schema has no style attribute on any element: write presentation attributes such as fill="#c00" and stroke-width="2" instead',
};

/** XLink attributes (any prefix bound to the XLink namespace); `href` must point inside the document. */
const XLINK_ATTRIBUTES: ReadonlySet<string> = new Set(['href', 'type', 'role', 'arcrole', 'title', 'show', 'actuate']);
/** xml: attributes; `xml:base` is refused (it would make relative references external). */
const XML_ATTRIBUTES: ReadonlySet<string> = new Set(['id', 'lang', 'space']);

/** Draft svg-tiny-ps §2.3: these root attributes SHOULD be absent; if present, exactly these values. */
const FIXED_VALUES: Record<string, string> = {
  zoomAndPan: 'disable',
  externalResourcesRequired: 'false',
  focusable: 'false',
  snapshotTime: 'none',
  playbackOrder: 'all',
  timelineBegin: 'onLoad',
};

/** Titles drawing tools and generators leave behind (checkdmarc #242): a warning, not a violation. */
const PLACEHOLDER_TITLES = /^(untitled.*|bimi-svg-tiny-12-ps|svg|logo|layer ?\d*|title)$/i;

interface RawAttribute {
  name: string;
  value: string;
  line: number;
}

type XmlEvent =
  | { kind: 'start'; name: string; attributes: RawAttribute[]; line: number }
  | { kind: 'end'; name: string }
  | { kind: 'text'; text: string; line: number };

/**
 * Reads `text` with the engine's one strict XML reader (xml/reader.ts: XML 1.0 without a DTD) into
 * start, end and text events with their lines. A DOCTYPE is reported and skipped unread (its
 * entities are never declared, so never expanded), and the rest of the file is still checked, so
 * every violation is listed at once; a reference other than the five predefined entities and
 * character references is reported (`entity`) and kept literal; a processing instruction is
 * reported. Returns the events, or the violation that stopped the reading (`not-xml`, `doctype`).
 */
function readEvents(text: string, report: (rule: string, line: number, detail: string) => void): XmlEvent[] | { rule: 'not-xml' | 'doctype'; line: number; detail: string } {
  const events: XmlEvent[] = [];
  const outcome = parseXml(text, {
    maxDepth: MAX_SVG_DEPTH,
    // Every attribute is checked and reported (up to MAX_SVG_VIOLATIONS): the size caps them, not a count.
    maxAttributes: MAX_SVG_INFLATED_BYTES,
    lines: true,
    onDoctype: (line) => report('doctype', line, 'a DOCTYPE declaration: the profile allows none, and its entities are never read'),
    onUnknownEntity: (name, line) => report('entity', line, `the entity reference &${name}; is not one of XML's five; entities are never expanded (and a DOCTYPE is not allowed)`),
    onInstruction: (target, line, opensText) => {
      if (target.toLowerCase() === 'xml') return opensText ? undefined : 'the XML declaration may only open the file';
      report('processing-instruction', line, `the processing instruction <?${target}?> is not allowed (a stylesheet or other instruction to the renderer)`);
      return undefined;
    },
    onText: (piece, line) => events.push({ kind: 'text', text: piece, line }),
    onOpen: (element) => {
      const lines = element.attributeLines ?? {};
      const attributes = Object.entries(element.attributes).map(([name, value]) => ({
        name,
        // XML 1.0 §3.3.3: white space characters in a value are normalised to spaces.
        value: value.replace(/[\t\n\r]/g, ' '),
        line: lines[name] ?? element.line ?? 1,
      }));
      events.push({ kind: 'start', name: element.name, attributes, line: element.line ?? 1 });
    },
    onClose: (element) => {
      events.push({ kind: 'end', name: element.name });
      return false; // the events are what is checked: no tree is kept
    },
  });
  if (outcome.ok) return events;
  return { rule: outcome.reason === 'doctype' ? 'doctype' : 'not-xml', line: outcome.line, detail: outcome.detail };
}

/** `url(…)` targets in a value (CSS syntax: optional quotes and spaces). */
function urlTargets(value: string): string[] {
  const targets: string[] = [];
  const pattern = /url\s*\(\s*(?:"([^"]*)"|'([^']*)'|([^)]*?))\s*\)/gi;
  for (let match = pattern.exec(value); match !== null; match = pattern.exec(value)) targets.push((match[1] ?? match[2] ?? match[3] ?? '').trim());
  return targets;
}

/** Parses a viewBox: four numbers separated by white space and/or a comma. */
export function parseViewBox(value: string | undefined): [number, number, number, number] | null {
  if (value === undefined) return null;
  const parts = value.trim().split(/[\s,]+/);
  if (parts.length !== 4) return null;
  const numbers = parts.map(Number);
  return numbers.every(Number.isFinite) ? (numbers as [number, number, number, number]) : null;
}

/**
 * Validates a served logo against SVG Tiny PS. `served` is the file as it arrived; an SVGZ (gzip)
 * is inflated with a cap first. Every outcome is a value.
 */
export function validateSvg(served: Uint8Array): SvgReport & { compressed: boolean } {
  const violations: SvgViolation[] = [];
  const warnings: SvgViolation[] = [];
  const report = (rule: string, line: number, detail: string): void => {
    if (violations.length < MAX_SVG_VIOLATIONS) violations.push({ rule, line, detail });
  };
  const warn = (rule: string, line: number, detail: string): void => {
    warnings.push({ rule, line, detail });
  };
  const outcome = (title: string | null = null, viewBox: [number, number, number, number] | null = null, compressed = false) => ({ violations, warnings, title, viewBox, compressed });

  // The size as served (draft svg-tiny-ps §2; Gmail): more than 32 KiB is a violation, not a warning.
  if (served.length > MAX_SVG_BYTES) report('size', 1, `the file is ${served.length} bytes as served; the profile allows at most ${MAX_SVG_BYTES}`);
  let bytes: Uint8Array = served;
  const compressed = served.length >= 2 && served[0] === 0x1f && served[1] === 0x8b;
  if (compressed) {
    try {
      bytes = gunzipSync(served, { maxOutputLength: MAX_SVG_INFLATED_BYTES });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      report('compression', 1, code === 'ERR_BUFFER_TOO_LARGE' ? `the SVGZ inflates to more than ${MAX_SVG_INFLATED_BYTES} bytes` : `the SVGZ does not inflate (${code ?? 'bad gzip data'})`);
      return outcome(null, null, true);
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    report('not-xml', 1, 'the file is not UTF-8 text');
    return outcome(null, null, compressed);
  }
  const events = readEvents(text, report);
  if (!Array.isArray(events)) {
    report(events.rule, events.line, events.detail);
    return outcome(null, null, compressed);
  }
  const checked = checkProfile(events, report, warn);
  return outcome(checked.title, checked.viewBox, compressed);
}

/** The profile's rules over the token stream. */
function checkProfile(
  events: XmlEvent[],
  report: (rule: string, line: number, detail: string) => void,
  warn: (rule: string, line: number, detail: string) => void,
): { title: string | null; viewBox: [number, number, number, number] | null } {
  const scopes: Map<string, string>[] = [new Map([['xml', XML_NS]])];
  // Per open element: its namespace and local name, and whether its subtree is exempt or already refused.
  const open: { ns: string | null; local: string; skip: boolean; metadata: boolean }[] = [];
  let title: string | null = null;
  let viewBox: [number, number, number, number] | null = null;
  let rootLine = 1;
  let rootChildren = 0;
  let firstChild = '';
  let titles = 0;
  let inRootTitle = false;
  let titleText = '';

  const resolve = (prefix: string | null, forAttribute: boolean): string | null | undefined => {
    if (prefix === null && forAttribute) return null; // unprefixed attributes are in no namespace
    const key = prefix ?? '';
    for (let i = scopes.length - 1; i >= 0; i--) {
      const held = (scopes[i] as Map<string, string>).get(key);
      if (held !== undefined) return held === '' ? null : held;
    }
    return prefix === null ? null : undefined;
  };

  for (const event of events) {
    if (event.kind === 'text') {
      if (inRootTitle) titleText += event.text;
      continue;
    }
    if (event.kind === 'end') {
      const closed = open.pop();
      scopes.pop();
      if (inRootTitle && open.length === 1 && closed?.local === 'title') {
        inRootTitle = false;
        title = titleText.trim();
      }
      continue;
    }
    // Namespace declarations first (they apply to the element's own name).
    const scope = new Map<string, string>();
    for (const attribute of event.attributes) {
      if (attribute.name === 'xmlns') scope.set('', attribute.value);
      else if (attribute.name.startsWith('xmlns:')) scope.set(attribute.name.slice(6), attribute.value);
    }
    scopes.push(scope);
    const [prefix, local] = splitName(event.name);
    const ns = resolve(prefix, false);
    const parent = open[open.length - 1];
    const isRoot = open.length === 0;
    const line = event.line;
    if (ns === undefined) report('not-xml', line, `the prefix "${prefix}" of <${event.name}> is not declared`);

    if (parent?.skip) {
      open.push({ ns: ns ?? null, local, skip: true, metadata: parent.metadata });
      continue;
    }
    if (isRoot) {
      rootLine = line;
      if (local !== 'svg' || ns !== SVG_NS) {
        report('root', line, ns === SVG_NS || local !== 'svg' ? `the root element is <${event.name}>, not <svg>` : `the root <svg> is not in the SVG namespace (xmlns="${SVG_NS}")`);
      }
    } else if (open.length === 1) {
      rootChildren++;
      if (local === 'title' && ns === SVG_NS) {
        titles++;
        if (titles === 2) report('title', line, 'a second <title> directly in <svg>; the profile allows one');
        if (rootChildren !== 1 && titles === 1) report('title', line, `<title> must be the first element inside <svg>, before <${firstChild}>`);
        if (titles === 1) {
          inRootTitle = true;
          titleText = '';
        }
      }
      if (rootChildren === 1) firstChild = event.name;
    }

    // Elements.
    let skip = false;
    const inMetadata = parent?.metadata ?? false;
    if (ns !== SVG_NS) {
      if (!inMetadata && !isRoot) report('namespace', line, `<${event.name}> is not an SVG element${ns ? ` (namespace ${ns})` : ''}; foreign elements are allowed only inside <metadata>`);
      skip = true; // foreign content: inside metadata it is data, elsewhere it is refused once
    } else if (!SVG_PS_ELEMENTS.has(local)) {
      if (local === 'script') report('script', line, '<script> is not allowed: the logo must not run code');
      else if (local === 'foreignObject') report('foreign-object', line, '<foreignObject> is not allowed: it embeds non-SVG content');
      else if (local === 'image') report('raster-image', line, '<image> is not allowed: the logo must be vector paths, not an embedded or linked raster image');
      else report('element', line, `<${local}> is not an element of SVG Tiny PS${local === 'style' ? ' (use presentation attributes such as fill=)' : ''}`);
      skip = true;
    }
    open.push({ ns: ns ?? null, local, skip, metadata: inMetadata || (ns === SVG_NS && local === 'metadata') });

    // Attributes: root attributes on the <svg> line.
    for (const attribute of event.attributes) {
      if (attribute.name === 'xmlns' || attribute.name.startsWith('xmlns:')) continue;
      const at = isRoot ? rootLine : attribute.line;
      const [aPrefix, aLocal] = splitName(attribute.name);
      const aNs = resolve(aPrefix, true);
      const value = attribute.value;
      if (/^on/i.test(aLocal)) {
        report('event-handler', at, `the event handler ${attribute.name}= is not allowed: the logo must not run code`);
        continue;
      }
      if (aLocal === 'href' && (aNs === null || aNs === XLINK_NS || aNs === undefined)) {
        if (!value.trim().startsWith('#')) report('external-reference', at, `${attribute.name}="${clip(value)}" points outside the document; only #id references are allowed`);
        continue;
      }
      if (aNs === XML_NS && aLocal === 'base') {
        report('external-reference', at, 'xml:base is not allowed: it turns references into external ones');
        continue;
      }
      for (const target of urlTargets(value)) {
        if (!target.startsWith('#')) report('external-reference', at, `url(${clip(target)}) in ${attribute.name}= points outside the document; only url(#id) is allowed`);
      }
      if (/@import/i.test(value)) report('external-reference', at, `@import in ${attribute.name}= loads an external stylesheet`);
      if (aNs === undefined) report('attribute', at, `the prefix of ${attribute.name} is not declared`);
      else if (aNs === null) {
        if (!SVG_PS_ATTRIBUTES.has(aLocal)) report('attribute', at, `${attribute.name}= is not an attribute of SVG Tiny PS${ATTRIBUTE_FIXES[aLocal] ? `: ${ATTRIBUTE_FIXES[aLocal]}` : ''}`);
      } else if (aNs === XML_NS) {
        if (!XML_ATTRIBUTES.has(aLocal)) report('attribute', at, `${attribute.name}= is not allowed`);
      } else if (aNs === XLINK_NS) {
        if (!XLINK_ATTRIBUTES.has(aLocal)) report('attribute', at, `${attribute.name}= is not an XLink attribute`);
      } else if (!inMetadata) {
        report('attribute', at, `${attribute.name}= (namespace ${aNs}) is not an attribute of SVG Tiny PS; remove the editor's attributes`);
      }
    }
    if (isRoot && local === 'svg') {
      const attrs = new Map(event.attributes.map((a) => [a.name, a.value]));
      const version = attrs.get('version');
      if (version !== '1.2') report('version', line, version === undefined ? '<svg> has no version; set version="1.2"' : `<svg version="${clip(version)}">; it must be version="1.2"`);
      const profile = attrs.get('baseProfile');
      if (profile !== 'tiny-ps') report('base-profile', line, profile === undefined ? '<svg> has no baseProfile; set baseProfile="tiny-ps"' : `<svg baseProfile="${clip(profile)}">; it must be baseProfile="tiny-ps"`);
      if (attrs.has('x') || attrs.has('y')) report('root-xy', line, `<svg> carries ${['x', 'y'].filter((n) => attrs.has(n)).join(' and ')}=; the profile does not allow them on the root`);
      for (const [name, fixed] of Object.entries(FIXED_VALUES)) {
        const given = attrs.get(name);
        if (given !== undefined && given !== fixed) report('fixed-attribute', line, `${name}="${clip(given)}" on <svg>; leave it out, or write ${name}="${fixed}"`);
      }
      viewBox = parseViewBox(attrs.get('viewBox'));
      if (viewBox === null) warn('square', line, attrs.has('viewBox') ? `the viewBox "${clip(attrs.get('viewBox') ?? '')}" is not four numbers` : '<svg> has no viewBox; a square viewBox (such as "0 0 100 100") is recommended');
      else if (viewBox[2] !== viewBox[3]) warn('square', line, `the viewBox is ${viewBox[2]} by ${viewBox[3]}; mailbox providers show the logo in a square (or circle): make it square`);
    }
  }
  if (titles === 0) report('title', rootLine, '<svg> has no <title>; add <title>Your brand</title> as its first element');
  else if (title === '') report('title', rootLine, 'the <title> is empty; it must name the brand');
  else if (title !== null && PLACEHOLDER_TITLES.test(title)) warn('placeholder-title', rootLine, `the title "${clip(title)}" looks like a placeholder; name the brand`);
  return { title, viewBox };
}

function splitName(name: string): [string | null, string] {
  const colon = name.indexOf(':');
  return colon === -1 ? [null, name] : [name.slice(0, colon), name.slice(colon + 1)];
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
