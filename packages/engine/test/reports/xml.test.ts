/**
 * The strict XML parser of reports: well-formed documents read, and every hostile or malformed input
 * refused with its reason (table-driven), never expanded, never read from a file.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { decodeXmlBytes, parseXml, type XmlElement } from '../../src/xml/reader.js';

const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<lolz>&lol1;</lolz>`;

describe('parseXml refuses', () => {
  it.each([
    ['an external entity (XXE)', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', 'doctype'],
    ['billion laughs', billionLaughs, 'doctype'],
    ['a lower-case doctype', '<!doctype r><r/>', 'doctype'],
    ['a DOCTYPE with no subset', '<!DOCTYPE feedback SYSTEM "http://evil.example/x.dtd"><feedback/>', 'doctype'],
    ['a parameter entity declaration outside a DTD', '<!ENTITY % x SYSTEM "file:///etc/passwd"><r/>', 'entity'],
    ['an undefined entity in text', '<r>&xxe;</r>', 'entity'],
    ['an undefined entity in an attribute', '<r a="&nbsp;"/>', 'entity'],
    ['a bare ampersand', '<r>AT&T</r>', 'malformed'],
    ['a character reference to NUL', '<r>&#0;</r>', 'malformed'],
    ['a character reference past Unicode', '<r>&#x110000;</r>', 'malformed'],
    ['a mismatched end tag', '<a><b></a></b>', 'malformed'],
    ['a broken end tag (kddi.com)', '<a><report_id>1/report_id></a>', 'malformed'],
    ['an unescaped address in text', '<email><bad-xml@bad-xml.net></email>', 'malformed'],
    ['a truncated document', '<feedback><report_metadata><org_name>x</org_name>', 'malformed'],
    ['a truncated tag', '<feedback><report_metad', 'malformed'],
    ['two root elements', '<a/><b/>', 'malformed'],
    ['text after the root', '<a/>junk', 'malformed'],
    ['no root', '<?xml version="1.0"?>  ', 'malformed'],
    ['a repeated attribute', '<a x="1" x="2"/>', 'malformed'],
    ['an unquoted attribute', '<a x=1/>', 'malformed'],
    ['"<" in an attribute value', '<a x="<"/>', 'malformed'],
    ['an unclosed comment', '<a><!-- x </a>', 'malformed'],
    ['an unclosed CDATA section', '<a><![CDATA[ x </a>', 'malformed'],
    ['too deep', '<a>'.repeat(100) + '</a>'.repeat(100), 'too-deep'],
  ])('%s', (_, xml, reason) => {
    const outcome = parseXml(xml);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.reason).toBe(reason);
      expect(outcome.detail).toMatch(/line \d+, column \d+/);
    }
  });

  it('too many nodes', () => {
    const outcome = parseXml(`<r>${'<x/>'.repeat(101)}</r>`, { maxNodes: 100 });
    expect(outcome).toMatchObject({ ok: false, reason: 'too-many-nodes' });
  });

  it('never reads the file an entity names', () => {
    // The parser has no file access at all; the refusal comes before any entity is looked at.
    const outcome = parseXml('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><r>&x;</r>');
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(hostname());
  });
});

describe('parseXml reads', () => {
  const text = (e: XmlElement | undefined) => e?.text;
  it.each([
    ['predefined entities and character references', '<r>&lt;a&gt; &amp; &quot;&apos; &#65;&#x42;&#x1F600;</r>', '<a> & "\' AB😀'],
    ['CDATA as text', '<r><![CDATA[<not> & markup]]></r>', '<not> & markup'],
    ['comments and processing instructions skipped', '<?xml version="1.0"?><!-- c --><r>a<!-- b -->c<?pi x?></r><!-- after -->', 'ac'],
    ['a stylesheet processing instruction, never fetched', '<?xml-stylesheet href="file:///etc/passwd"?><r>x</r>', 'x'],
    ['an XInclude, never processed (just an element)', '<r xmlns:xi="http://www.w3.org/2001/XInclude">x<xi:include href="file:///etc/passwd" parse="text"/></r>', 'x'],
    ['a BOM and whitespace before the declaration', '\uFEFF  \n<?xml version="1.0"?><r>x</r>', 'x'],
  ])('%s', (_, xml, expected) => {
    const outcome = parseXml(xml);
    expect(outcome.ok).toBe(true);
    if (outcome.ok) expect(text(outcome.root)).toBe(expected);
  });

  it('resolves namespaces: default, prefixed, nested, and unbound prefixes', () => {
    const outcome = parseXml('<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0" xmlns:e="urn:x"><e:ext a="1"/><record/><xs:schema/></feedback>');
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.root.namespace).toBe('urn:ietf:params:xml:ns:dmarc-2.0');
    expect(outcome.root.children.map((c) => [c.local, c.namespace])).toEqual([
      ['ext', 'urn:x'],
      ['record', 'urn:ietf:params:xml:ns:dmarc-2.0'],
      ['schema', null],
    ]);
    expect(outcome.root.children[0]!.attributes).toEqual({ a: '1' });
  });

  it('lets a caller drop elements as they close (flat memory)', () => {
    const seen: string[] = [];
    const outcome = parseXml('<r><record>1</record><record>2</record><other/></r>', {
      onClose: (element, depth) => {
        if (depth === 1 && element.local === 'record') {
          seen.push(element.text);
          return false;
        }
        return true;
      },
    });
    expect(seen).toEqual(['1', '2']);
    expect(outcome.ok && outcome.root.children.map((c) => c.local)).toEqual(['other']);
  });

  it('decodes by the declared encoding, and replaces invalid UTF-8 with a warning', () => {
    const latin1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><r>M\xfcller</r>', 'latin1');
    const a = parseXml(latin1);
    expect(a.ok && a.root.text).toBe('Müller');
    const broken = Buffer.concat([Buffer.from('<r>'), Buffer.from([0x91]), Buffer.from('</r>')]);
    const b = decodeXmlBytes(broken);
    expect(b.text).toBe('<r>\uFFFD</r>');
    expect(b.warnings[0]).toMatch(/not valid UTF-8/);
  });
});

describe('what the tree keeps is bounded (issue 38 item 5)', () => {
  it('whitespace between elements is never kept; text inside is', () => {
    const outcome = parseXml(`<r>\n  <a> x </a>\n${' \n'.repeat(1000)}<b/>\n</r>`);
    expect(outcome.ok && outcome.root.text).toBe('');
    expect(outcome.ok && outcome.root.children[0]!.text).toBe(' x ');
  });

  it('text over MAX_XML_TEXT is cut, with a warning naming the cap', () => {
    const outcome = parseXml(`<r>${'x<!---->'.repeat(200)}</r>`, { maxText: 100 });
    expect(outcome.ok && outcome.root.text.length).toBe(100);
    expect(outcome.ok && outcome.warnings.join()).toContain('MAX_XML_TEXT');
  });

  it('onOpen sees each element with its depth before its content', () => {
    const seen: string[] = [];
    parseXml('<r><a><b/></a></r>', { onOpen: (element, depth) => seen.push(`${element.local}${depth}`) });
    expect(seen).toEqual(['r0', 'a1', 'b2']);
  });
});

/**
 * End tags compared in place and text scanned in one loop (reader.ts `endTag`, `text`): the same
 * refusals, at the same place, and the same tree as a name read out and compared (pinned from the
 * reader before that change).
 */
describe('end tags and text, at their edges', () => {
  it.each([
    ['an end tag longer than the open name', '<a>x</ab>', 'the end tag </ab> does not match <a> (line 1, column 5)'],
    ['an end tag shorter than the open name', '<ab>x</a>', 'the end tag </a> does not match <ab> (line 1, column 6)'],
    ['a prefixed end tag longer than the open name', '<p:a xmlns:p="u">t</p:ab>', 'the end tag </p:ab> does not match <p:a> (line 1, column 19)'],
    ['an attribute in an end tag', '<a>x</a x>', 'the end tag </a> is not closed (line 1, column 9)'],
    ['an end tag cut at the end of input', '<a>x</a', 'the end tag </a> is not closed (line 1, column 8)'],
    ['an end tag cut after whitespace', '<a>x</a \n', 'the end tag </a> is not closed (line 2, column 1)'],
    ['"]]>" in text', '<a>x ]]> y</a>', '"]]>" outside a CDATA section (line 1, column 6)'],
    ['"]]>" after layout whitespace', '<a>\n ]]></a>', '"]]>" outside a CDATA section (line 2, column 2)'],
  ])('refuses %s', (_, xml, detail) => {
    expect(parseXml(xml)).toMatchObject({ ok: false, reason: 'malformed', detail });
  });

  it.each([
    ['whitespace before ">" of an end tag', '<a>x</a >', 'x'],
    ['a newline and a tab before ">" of an end tag', '<a>x</a\n\t>', 'x'],
    ['">" in an attribute value', '<a b="x>y">t</a>', 't'],
    ['CDATA, references and text together', '<a>t<![CDATA[ ]]&amp; ]]>&amp;&#x41;</a >', 't ]]&amp; &A'],
  ])('reads %s', (_, xml, text) => {
    const outcome = parseXml(xml);
    expect(outcome).toMatchObject({ ok: true, root: { text } });
  });

  it('keeps no layout between children, and the text of each', () => {
    const outcome = parseXml('<a><b/>\n  <b>&lt;</b >\n</a>');
    expect(outcome.ok).toBe(true);
    if (outcome.ok) {
      expect(outcome.root.text).toBe('');
      expect(outcome.root.children.map((c) => c.text)).toEqual(['', '<']);
    }
  });
});
