/**
 * SVG Tiny PS, table-driven: every rule broken once in an otherwise valid logo, with the 1-based
 * line it must be reported on; controls that must pass; hostile inputs (entities, gzip bombs).
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_SVG_BYTES, validateSvg } from '../../src/bimi/svg.js';

const ROOT = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.2" baseProfile="tiny-ps" viewBox="0 0 100 100">';
/** A valid logo; line 1 is the XML declaration, line 2 the <svg>, line 3 the title, body from line 4. */
const logo = (body = '<rect width="100" height="100" fill="#c00"/>', root = ROOT, title = '<title>Brand Ltd</title>'): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${root}\n${title}\n${body}\n</svg>\n`;
const run = (text: string | Uint8Array) => validateSvg(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);

describe('SVG Tiny PS: valid logos pass', () => {
  it.each([
    ['minimal', logo()],
    ['with <desc> and a gradient used through url(#g)', logo('<desc>Our mark</desc>\n<defs><linearGradient id="g"><stop offset="0" stop-color="#000"/></linearGradient></defs>\n<rect width="100" height="100" fill="url(#g)"/>')],
    ['url( "#g" ) with spaces and quotes in fill', logo('<rect width="10" height="10" fill="url( &quot;#g&quot; )"/>')],
    ['<use href="#a"> and <use xlink:href="#a">', logo('<defs><path id="a" d="M0 0h10v10z"/></defs>\n<use href="#a"/>\n<use xlink:href="#a"/>')],
    ['a prefixed root <s:svg>', `<s:svg xmlns:s="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 10 10"><s:title>Brand</s:title><s:rect width="10" height="10"/></s:svg>`],
    ['foreign metadata (RDF) inside <metadata>', logo('<metadata><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="https://x.example/"/></rdf:RDF></metadata>')],
    ['character references and CDATA in the title', logo(undefined, undefined, '<title>Brand &amp; Co &#169; <![CDATA[<Ltd>]]></title>')],
  ])('%s', (_name, text) => {
    const report = run(text);
    expect(report.violations).toEqual([]);
  });

  it('reads the title and the viewBox, and an SVGZ is inflated first', () => {
    const report = run(gzipSync(Buffer.from(logo())));
    expect(report).toMatchObject({ violations: [], title: 'Brand Ltd', viewBox: [0, 0, 100, 100], compressed: true });
  });
});

describe('SVG Tiny PS: each rule broken once, with its line', () => {
  const cases: [string, string, string, number][] = [
    ['version="1.1"', logo(undefined, ROOT.replace('1.2', '1.1')), 'version', 2],
    ['no version', logo(undefined, ROOT.replace(' version="1.2"', '')), 'version', 2],
    ['baseProfile="tiny"', logo(undefined, ROOT.replace('tiny-ps', 'tiny')), 'base-profile', 2],
    ['no baseProfile', logo(undefined, ROOT.replace(' baseProfile="tiny-ps"', '')), 'base-profile', 2],
    ['no <title>', logo(undefined, undefined, '<desc>d</desc>'), 'title', 2],
    ['an empty <title>', logo(undefined, undefined, '<title>  </title>'), 'title', 2],
    ['<title> not first', logo('<title>Late</title>', undefined, '<desc>first</desc>'), 'title', 4],
    ['two titles', logo('<title>Again</title>'), 'title', 4],
    ['x on the root', logo(undefined, ROOT.replace('version', 'x="0" version')), 'root-xy', 2],
    ['root attributes on several lines: reported on the <svg> line', logo(undefined, ROOT.replace(' version="1.2"', '\n  y="5"\n  version="1.2"')), 'root-xy', 2],
    ['<script>', logo('<script>alert(1)</script>'), 'script', 4],
    ['onload=', logo('<rect width="1" height="1"\n onload="alert(1)"/>'), 'event-handler', 5],
    ['<foreignObject>', logo('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'), 'foreign-object', 4],
    ['<image> with a data: PNG', logo('<image width="10" height="10" xlink:href="data:image/png;base64,iVBORw0KGgo="/>'), 'raster-image', 4],
    ['<use xlink:href> to another file', logo('<use xlink:href="https://evil.example/a.svg#a"/>'), 'external-reference', 4],
    ['<use href> to another file', logo('<use href="https://evil.example/a.svg"/>'), 'external-reference', 4],
    ['an aliased XLink prefix', logo('<use xmlns:l="http://www.w3.org/1999/xlink" l:href="https://evil.example/#a"/>'), 'external-reference', 4],
    ['fill="url(https://…)"', logo('<rect width="1" height="1" fill="url(https://evil.example/g.svg#g)"/>'), 'external-reference', 4],
    ['style="fill:url(https://…)"', logo('<rect width="1" height="1" style="fill:url(\'https://evil.example/#g\')"/>'), 'external-reference', 4],
    ['@import in a style attribute', logo('<g style="@import url(#x)"/>'), 'external-reference', 4],
    ['xml:base', logo('<g xml:base="https://evil.example/"/>'), 'external-reference', 4],
    ['a <style> element', logo('<style>rect{fill:red}</style>'), 'element', 4],
    ['<animate>', logo('<rect width="1" height="1"><animate attributeName="x" to="5"/></rect>'), 'element', 4],
    ['<set>', logo('<set attributeName="x" to="5"/>'), 'element', 4],
    ['<a>', logo('<a xlink:href="#x"><rect width="1" height="1"/></a>'), 'element', 4],
    ['<clipPath>', logo('<clipPath id="c"/>'), 'element', 4],
    ['<tspan> (SVG Tiny 1.2, not PS)', logo('<text>a<tspan>b</tspan></text>'), 'element', 4],
    ['an editor attribute (inkscape:label)', logo('<g xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" inkscape:label="Layer 1"/>'), 'attribute', 4],
    ['an attribute outside the profile', logo('<rect width="1" height="1" filter="url(#f)"/>'), 'attribute', 4],
    ['a foreign element outside <metadata>', logo('<x:thing xmlns:x="urn:x"/>'), 'namespace', 4],
    ['<?xml-stylesheet?>', logo().replace('\n<svg', '\n<?xml-stylesheet href="https://evil.example/s.css"?><svg'), 'processing-instruction', 2],
    ['zoomAndPan="magnify"', logo(undefined, ROOT.replace('version', 'zoomAndPan="magnify" version')), 'fixed-attribute', 2],
    ['an HTML root', '<html><body>logo</body></html>', 'root', 1],
    ['not XML', 'GIF89a\u0001\u0002', 'not-xml', 1],
    ['an unclosed element', logo('<g>\n<rect width="1" height="1"/>'), 'not-xml', 6],
    ['an undefined entity', logo('<desc>&nbsp;</desc>'), 'entity', 4],
    ['a character reference to NUL', logo('<desc>a\n&#0;</desc>'), 'not-xml', 5],
    ['a bare ampersand', logo('<desc>R&D</desc>'), 'not-xml', 4],
  ];
  it.each(cases)('%s → %s at line %i', (_name, text, rule, line) => {
    const report = run(text);
    expect(report.violations.map((v) => [v.rule, v.line])).toContainEqual([rule, line]);
  });

  it('a DOCTYPE with the billion laughs is refused on its line, its entities never read', () => {
    const lol = `<?xml version="1.0"?>\n<!DOCTYPE svg [\n<!ENTITY a "aaaaaaaaaa">\n<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n${ROOT}<title>&c;</title></svg>`;
    const report = run(lol);
    expect(report.violations.map((v) => [v.rule, v.line])).toEqual([['doctype', 2], ['entity', 7]]);
    // Kept literal: never expanded.
    expect(report.title).toBe('&c;');
  });

  it('a SYSTEM entity is never fetched: the DOCTYPE is skipped unread, the reference refused', () => {
    const report = run(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd"> <!-- it's ] > here -->]>${ROOT}<title>&x;</title></svg>`);
    expect(report.violations.map((v) => v.rule)).toEqual(['doctype', 'entity']);
    expect(report.title).toBe('&x;');
  });

  it('lists every violation of a logo at once: a DOCTYPE hides none of the rest (issue 42)', () => {
    const text = `<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="0 0 10 10">\n<rect width="10" height="10" style="fill:#c00"/>\n<script>alert(1)</script>\n</svg>\n`;
    const rules = run(text).violations.map((v) => [v.rule, v.line]);
    expect(rules).toEqual(expect.arrayContaining([['doctype', 2], ['version', 3], ['base-profile', 3], ['attribute', 4], ['script', 5], ['title', 3]]));
    expect(rules).toHaveLength(6);
  });

  it.each([
    ['the root', logo(undefined, ROOT.replace('<svg ', '<svg style="background:#fff" ')), 2],
    ['a group', logo('<g style="fill:#c00"><rect width="1" height="1"/></g>'), 4],
    ['a path', logo('<path d="M0 0h1v1z" style="stroke:none"/>'), 4],
    ['the title', logo(undefined, undefined, '<title style="display:none">Brand</title>'), 3],
  ])('style= is refused on %s: the BIMI schema has no style attribute (issue 42)', (_where, text, line) => {
    const violation = run(text).violations.find((v) => v.rule === 'attribute');
    expect(violation).toMatchObject({ line });
    expect(violation?.detail).toContain('style= is not an attribute of SVG Tiny PS: the BIMI schema has no style attribute on any element: write presentation attributes such as fill=');
  });

  it('32,768 bytes pass; 32,769 bytes as served are a violation, not a warning', () => {
    const base = logo('<desc>PAD</desc>');
    const at = (size: number) => base.replace('PAD', 'x'.repeat(size - Buffer.byteLength(base) + 3));
    expect(Buffer.byteLength(at(MAX_SVG_BYTES))).toBe(MAX_SVG_BYTES);
    expect(run(at(MAX_SVG_BYTES)).violations).toEqual([]);
    expect(run(at(MAX_SVG_BYTES + 1)).violations).toEqual([expect.objectContaining({ rule: 'size', line: 1 })]);
  });

  it('bytes count, not characters: a ™ counts three', () => {
    const base = logo('<desc>™PAD</desc>');
    const text = base.replace('PAD', 'x'.repeat(MAX_SVG_BYTES - Buffer.byteLength(base) + 3 - 1));
    expect(Buffer.byteLength(text)).toBe(MAX_SVG_BYTES - 1);
    expect(run(text).violations).toEqual([]);
  });

  it('an SVGZ bomb stops at the inflate cap', () => {
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
    const report = run(bomb);
    expect(report.violations.map((v) => v.rule)).toEqual(['compression']);
  });
});

describe('SVG Tiny PS: recommendations are warnings', () => {
  it('a wide viewBox, a missing viewBox, a placeholder title', () => {
    expect(run(logo(undefined, ROOT.replace('0 0 100 100', '0 0 200 100'))).warnings).toEqual([expect.objectContaining({ rule: 'square', line: 2 })]);
    expect(run(logo(undefined, ROOT.replace(' viewBox="0 0 100 100"', ''))).warnings.map((w) => w.rule)).toEqual(['square']);
    expect(run(logo(undefined, undefined, '<title>Untitled-1</title>'))).toMatchObject({ violations: [], warnings: [expect.objectContaining({ rule: 'placeholder-title' })] });
  });
});

describe('SVG Tiny PS: work stays linear in hostile files', () => {
  it('64 KiB of attributes on one element (a set, not a list, finds duplicates), 255 nested elements, and 300 (refused)', () => {
    const many = Buffer.from(`${ROOT.replace('>', ' ')}${Array.from({ length: 9000 }, (_, i) => `a${i}=""`).join(' ')}><title>x</title></svg>`);
    const nested = Buffer.from(`${ROOT}<title>x</title>${'<g>'.repeat(255)}${'</g>'.repeat(255)}</svg>`);
    expect(run(many).violations.length).toBe(100); // capped at MAX_SVG_VIOLATIONS
    expect(run(nested).violations).toEqual([]);
    expect(run(Buffer.from(`${ROOT}<title>x</title>${'<g>'.repeat(300)}${'</g>'.repeat(300)}</svg>`)).violations.map((v) => v.rule)).toEqual(['not-xml']);
  });
});
