/**
 * The small Markdown subset the guides in docs/guides use, rendered to escaped HTML: `#` headings,
 * paragraphs, `-` and `1.` lists (with indented continuation lines), fenced code blocks, and inline
 * code, `**bold**` and `[links](href)`. Everything else is text. All text is escaped; a link whose
 * address is not relative, http(s) or mailto renders as plain text.
 */
import { html, unsafeRaw, escapeHtml, type SafeHtml } from './html.js';

/** Link addresses a guide may use. */
const ALLOWED_HREF = /^(?:\/(?!\/)|#|https?:\/\/|mailto:)/i;

type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'code'; text: string };

const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^[-*]\s+(.*)$/;
const NUMBERED = /^\d+[.)]\s+(.*)$/;
const FENCE = /^```/;

function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    if (FENCE.test(line)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !FENCE.test(lines[i]!)) body.push(lines[i++]!);
      i++; // the closing fence (or the end)
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ kind: 'heading', level: heading[1]!.length, text: heading[2]!.trim() });
      i++;
      continue;
    }
    if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = NUMBERED.test(line);
      const marker = ordered ? NUMBERED : BULLET;
      const items: string[] = [];
      while (i < lines.length) {
        const current = lines[i]!;
        const item = marker.exec(current);
        if (item) {
          items.push(item[1]!);
        } else if (/^\s+\S/.test(current) && items.length > 0) {
          items[items.length - 1] += ` ${current.trim()}`;
        } else {
          break;
        }
        i++;
      }
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    const text: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !HEADING.test(lines[i]!) && !FENCE.test(lines[i]!) && !BULLET.test(lines[i]!) && !NUMBERED.test(lines[i]!)) {
      text.push(lines[i++]!.trim());
    }
    blocks.push({ kind: 'paragraph', text: text.join(' ') });
  }
  return blocks;
}

/** Inline markup: code spans first (their content is literal), then bold and links in the rest. */
export function renderInline(text: string): SafeHtml {
  const parts = text.split(/(`[^`]*`)/);
  const out = parts.map((part) => {
    if (part.length >= 2 && part.startsWith('`') && part.endsWith('`')) return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
    return escapeHtml(part)
      .replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>')
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_all, label: string, href: string) =>
        // `href` is already escaped; unescape only to test its scheme.
        ALLOWED_HREF.test(href.replace(/&amp;/g, '&')) ? `<a href="${href}">${label}</a>` : label,
      );
  });
  // Every piece above was escaped before markup was added around it.
  return unsafeRaw(out.join(''));
}

/**
 * The longest description a guide's page gives search engines and link previews, in characters:
 * about what a result snippet shows before it cuts the text itself.
 */
export const GUIDE_DESCRIPTION_MAX_CHARS = 160;

/** Inline markup as the words a reader sees: code spans without their backticks, bold without its stars, links as their label. */
export function plainInline(text: string): string {
  return text
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*(.+?)\*\*/g, '$1')
    .replace(/\[([^\]]+)\]\([^)\s]+\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/** `text` cut to at most `max` characters at a word, with an ellipsis when it was cut. */
function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > 0 ? cut.slice(0, space) : cut).replace(/[\s,;:.(]+$/, '')}…`;
}

/**
 * The guide's title (its first heading), a description (its first paragraph as plain text, at most
 * GUIDE_DESCRIPTION_MAX_CHARS) and its body as HTML; headings shift down so that the page's h1 is
 * the title.
 */
export function renderMarkdown(markdown: string): { title: string; description: string; body: SafeHtml } {
  const blocks = parseBlocks(markdown);
  const first = blocks[0];
  const title = first?.kind === 'heading' ? first.text : 'Guide';
  const rest = first?.kind === 'heading' ? blocks.slice(1) : blocks;
  const lead = rest.find((block) => block.kind === 'paragraph');
  const description = cutAtWord(plainInline(lead?.text ?? title), GUIDE_DESCRIPTION_MAX_CHARS);
  const body = rest.map((block) => {
    switch (block.kind) {
      case 'heading': {
        const level = Math.min(6, Math.max(2, block.level));
        return unsafeRaw(`<h${level}>${renderInline(block.text).value}</h${level}>`);
      }
      case 'paragraph':
        return html`<p>${renderInline(block.text)}</p>`;
      case 'code':
        return html`<pre tabindex="0" class="record"><code>${block.text}</code></pre>`;
      case 'list': {
        const items = block.items.map((item) => html`<li>${renderInline(item)}</li>`);
        return block.ordered ? html`<ol>${items}</ol>` : html`<ul>${items}</ul>`;
      }
    }
  });
  return { title, description, body: html`${body}` };
}
