/** The escaping template helper and the guides' Markdown subset, table-driven. */
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, isSafeHtml, keepHyphenatedWhole, toHtmlString, unsafeRaw } from '../../src/web/html.js';
import { GUIDE_DESCRIPTION_MAX_CHARS, renderInline, renderMarkdown } from '../../src/web/markdown.js';

describe('html``', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['"><img src=x onerror=alert(1)>', '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'],
    ["' onmouseover='x", '&#39; onmouseover=&#39;x'],
    ['a & b', 'a &amp; b'],
    ['`x`', '&#96;x&#96;'],
    ['&amp;', '&amp;amp;'],
    ['plain', 'plain'],
  ])('escapes %j', (value, expected) => {
    expect(toHtmlString(html`<p title="${value}">${value}</p>`)).toBe(`<p title="${expected}">${expected}</p>`);
    expect(escapeHtml(value)).toBe(expected);
  });

  it.each([
    [null, ''],
    [undefined, ''],
    [false, ''],
    [0, '0'],
    [true, 'true'],
    [['<a>', html`<b>x</b>`, ['<c>']], '&lt;a&gt;<b>x</b>&lt;c&gt;'],
  ] as const)('renders %j', (value, expected) => {
    expect(toHtmlString(html`${value}`)).toBe(expected);
  });

  it('inserts SafeHtml as is, and only html`` and unsafeRaw make it', () => {
    const inner = html`<em>${'<x>'}</em>`;
    expect(toHtmlString(html`<p>${inner}</p>`)).toBe('<p><em>&lt;x&gt;</em></p>');
    expect(toHtmlString(html`${unsafeRaw('<br>')}`)).toBe('<br>');
    // Something that merely looks like SafeHtml is escaped as text.
    const forged = { value: '<script>' } as unknown as string;
    expect(isSafeHtml(forged)).toBe(false);
    expect(toHtmlString(html`${forged}`)).toBe('[object Object]');
  });
});

describe('Markdown subset', () => {
  it.each([
    ['`<b>` code', '<code>&lt;b&gt;</code> code'],
    ['**bold** <i>', '<strong>bold</strong> &lt;i&gt;'],
    ['[guide](/guides/protected)', '<a href="/guides/protected">guide</a>'],
    ['[rfc](https://www.rfc-editor.org/rfc/rfc7489)', '<a href="https://www.rfc-editor.org/rfc/rfc7489">rfc</a>'],
    // A link to anything but a relative, http(s) or mailto address keeps only its label.
    ['[x](javascript:alert(1))', 'x)'],
    ['[x](//evil.example/)', 'x'],
    ['[x]("onmouseover=)', 'x'],
  ])('inline %j', (markdown, expected) => {
    expect(toHtmlString(renderInline(markdown))).toBe(expected);
  });

  it('renders headings, paragraphs, lists with continuation lines and code blocks', () => {
    const { title, body } = renderMarkdown(
      '# Title <x>\n\nFirst line\nsecond line.\n\n## Part\n\n1. one\n   more\n2. two\n\n- a\n- b\n\n```\nv=DMARC1; p=none\n```\n',
    );
    expect(title).toBe('Title <x>');
    expect(renderMarkdown('# T\n\nFirst `p=none` line\nwith **bold** and [a link](/x).\n\nSecond.\n').description).toBe('First p=none line with bold and a link.');
    expect(toHtmlString(body)).toBe(
      '<p>First line second line.</p><h2>Part</h2><ol><li>one more</li><li>two</li></ol><ul><li>a</li><li>b</li></ul><pre tabindex="0" class="record"><code>v=DMARC1; p=none</code></pre>',
    );
  });

  it('describes a guide by its first paragraph, cut at a word to at most GUIDE_DESCRIPTION_MAX_CHARS', () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const { description } = renderMarkdown(`# Title\n\n${long}\n`);
    expect(description.length).toBeLessThanOrEqual(GUIDE_DESCRIPTION_MAX_CHARS);
    expect(description).toMatch(/^word0 word1 .* word\d+…$/);
    expect(long.startsWith(description.slice(0, -1) + ' ')).toBe(true);
    // A guide with no paragraph is described by its title.
    expect(renderMarkdown('# Only a title\n\n- a list\n').description).toBe('Only a title');
  });
});

describe('keepHyphenatedWhole', () => {
  it.each([
    ['a domain in text', '<p>fakes as p-none.example today</p>', '<p>fakes as <span class="nb">p<span class="nh">-n</span>one.example</span> today</p>'],
    ['an address, and a word with two hyphens', '<p>you@spf-too-many-lookups.example</p>', '<p><span class="nb">you@spf<span class="nh">-t</span>oo<span class="nh">-m</span>any<span class="nh">-l</span>ookups.example</span></p>'],
    ['an escaped quote stays inside the word', '<p>&#39;p-none&#39;</p>', '<p><span class="nb">&#39;p<span class="nh">-n</span>one&#39;</span></p>'],
    ['attributes are not touched', '<a href="/check/p-none.example" data-x="a-b">go</a>', '<a href="/check/p-none.example" data-x="a-b">go</a>'],
    ['a form value is not touched', '<input value="p-none.example">', '<input value="p-none.example">'],
    ['title, script, style and textarea text is not touched', '<title>p-none.example</title><script>a-b</script><style>.a-b{}</style><textarea>x-y</textarea>', '<title>p-none.example</title><script>a-b</script><style>.a-b{}</style><textarea>x-y</textarea>'],
    ['text after a raw element is handled again', '<title>a-b</title><p>c-d</p>', '<title>a-b</title><p><span class="nb">c<span class="nh">-d</span></span></p>'],
    ['a dash between words or a leading minus is not a hyphenated word', '<p>a - b, -all and —</p>', '<p>a - b, -all and —</p>'],
    ['an IDN', '<p>bücher-laden.example</p>', '<p><span class="nb">bücher<span class="nh">-l</span>aden.example</span></p>'],
  ])('%s', (_label, input, expected) => {
    expect(keepHyphenatedWhole(unsafeRaw(input)).value).toBe(expected);
  });
});
