import type { SpoofCheckResult } from '../result.js';
import type { SpfTermNode } from '../spf/index.js';

const MARK: Record<string, string> = { critical: '✗', warning: '!', info: '·', success: '✓' };

/**
 * The readable report of `spoof-checker check`: the answer first, then why, then what to change.
 * Plain text (no colours), so it reads the same in a terminal, a log or a pasted issue.
 */
export function formatReport(result: SpoofCheckResult): string {
  const lines: string[] = [];
  lines.push(`${result.domain}: ${result.verdict.replace('_', ' ')} (forged mail is ${result.inboxOutcome})`);
  lines.push(`  ${result.headline}`);
  lines.push(`  ${result.summary}`);
  lines.push('');
  lines.push(
    `  DMARC  ${result.dmarc.published ? `p=${result.dmarc.policy ?? '?'} sp=${result.dmarc.subdomainPolicy ?? '?'}${result.dmarc.percentage !== null && result.dmarc.percentage !== 100 ? ` pct=${result.dmarc.percentage}` : ''}` : 'not published'}`,
  );
  lines.push(`  SPF    ${result.spf.published ? `${result.spf.qualifier ?? 'no all'}, ${result.spf.lookupCount}/10 lookups` : 'not published'}`);
  lines.push(`  DKIM   ${result.dkim.published ? `selector ${result.dkim.selector}, ${result.dkim.keyLength}-bit key` : 'no usable key found'}`);
  lines.push(`  MX     ${result.mx.published ? (result.mx.provider ?? 'published') : 'none'}`);
  lines.push('');
  lines.push('  Reasons:');
  for (const reason of result.reasons) {
    lines.push(`   ${MARK[reason.severity] ?? '-'} [${reason.severity}] ${reason.title} (${reason.id})`);
    lines.push(...wrap(reason.detail, 6));
  }
  const tree = (result.details.spf as { tree?: SpfTermNode[] } | undefined)?.tree;
  if (result.spf.rawRecord && tree && tree.length > 0) {
    lines.push('');
    lines.push(`  SPF lookup tree (${result.spf.lookupCount} lookups):`);
    lines.push(`    ${result.domain}: ${result.spf.rawRecord}`);
    renderTree(tree, '    ', lines);
  }
  if (result.subdomainNote) {
    lines.push('');
    lines.push('  Subdomains:');
    lines.push(...wrap(result.subdomainNote, 4));
  }
  lines.push('');
  lines.push(`  Next step: ${result.nextStep.title}`);
  for (const line of result.nextStep.body.split('\n')) lines.push(`    ${line}`);
  lines.push(`    More: ${result.nextStep.href}`);
  return `${lines.join('\n')}\n`;
}

function renderTree(nodes: SpfTermNode[], indent: string, lines: string[]): void {
  nodes.forEach((node, i) => {
    const last = i === nodes.length - 1;
    const notes = [
      node.lookups > 0 ? `${node.lookups} lookup${node.lookups === 1 ? '' : 's'}` : '',
      node.voidLookups > 0 ? `${node.voidLookups} void` : '',
      node.flags.unreachable ? 'unreachable' : '',
      node.flags.ignored ? 'ignored' : '',
      node.flags.macro ? 'macro' : '',
      node.flags.repeated ? 'repeated' : '',
      node.flags.loop ? 'LOOP' : '',
      ...node.errors,
    ].filter(Boolean);
    lines.push(`${indent}${last ? '└─' : '├─'} ${node.raw}${notes.length > 0 ? `  (${notes.join('; ')})` : ''}`);
    if (node.children.length > 0) renderTree(node.children, indent + (last ? '   ' : '│  '), lines);
  });
}

function wrap(text: string, indent: number, width = 100): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && pad.length + line.length + word.length + 1 > width) {
      out.push(pad + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(pad + line);
  return out;
}
