import { fileURLToPath } from 'node:url';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import { DEFAULT_GUIDE_BASE_URL, GUIDE_TOPICS } from '@spoof-checker/engine';
import type { SpfTermNode } from '@spoof-checker/engine';
import { ADDRESS_CLASS_TEXT, classifyAddress, formatIpv6Count } from '@spoof-checker/engine';
import type { BimiResult, DnssecResult, TransportResult } from '@spoof-checker/engine';

/** Columns the report's prose is wrapped at (records to publish are never cut). */
export const REPORT_WIDTH = 100;

const MARK: Record<string, string> = { critical: '✗', warning: '!', info: '·', success: '✓' };

/**
 * The readable report of `spoof-checker check`: the answer first, then why, then what to change.
 * Plain text (no colours), so it reads the same in a terminal, a log or a pasted issue.
 */
export function formatReport(result: SpoofCheckResult): string {
  const lines: string[] = [];
  // An IDN is named as people write it, with the A-label form the DNS uses beside it.
  const name = result.details.displayDomain !== result.domain ? `${result.details.displayDomain} (${result.domain})` : result.domain;
  lines.push(`${name}: ${result.verdict.replace('_', ' ')} (forged mail is ${result.inboxOutcome})`);
  // Zone files are stand-ins (fixtures/zones has a google.com): say so before any sentence about the domain.
  if (result.source === 'fixture-zones') lines.push(...wrap(FIXTURE_ZONES_LINE, 2));
  lines.push(...wrap(result.headline, 2));
  lines.push(...wrap(result.summary, 2));
  lines.push('');
  lines.push(
    `  DMARC  ${result.dmarc.published ? `p=${result.dmarc.policy ?? '?'} sp=${result.dmarc.subdomainPolicy ?? '?'}${result.dmarc.percentage !== null && result.dmarc.percentage !== 100 ? ` pct=${result.dmarc.percentage}` : ''}` : 'not published'}`,
  );
  lines.push(`  SPF    ${result.spf.published ? `${result.spf.qualifier ?? 'no all'}, ${result.spf.lookupCount}/10 lookups` : 'not published'}`);
  // A failed lookup is "could not be checked", never "none" (the summary's published is null then).
  const dkimFailed = result.details.dkim.failed.length;
  lines.push(
    `  DKIM   ${
      result.dkim.published === null
        ? `could not be checked (${dkimFailed} selector lookup${dkimFailed === 1 ? '' : 's'} failed)`
        : result.dkim.published
          ? `selector ${result.dkim.selector}, ${result.dkim.keyLength}-bit key`
          : 'no usable key found'
    }`,
  );
  lines.push(`  MX     ${result.mx.published === null ? 'could not be checked (the MX lookup failed)' : result.mx.published ? (result.mx.provider ?? 'published') : 'none'}`);
  lines.push('');
  lines.push('  Reasons:');
  for (const reason of result.reasons) {
    lines.push(`   ${MARK[reason.severity] ?? '-'} [${reason.severity}] ${reason.title} (${reason.id})`);
    lines.push(...wrap(reason.detail, 6));
  }
  const tree = result.details.spf.tree;
  if (result.spf.rawRecord && tree.length > 0) {
    lines.push('');
    lines.push(`  SPF lookup tree (${result.spf.lookupCount} lookup${result.spf.lookupCount === 1 ? '' : 's'}):`);
    lines.push(`    ${result.domain}: ${result.spf.rawRecord}`);
    renderTree(tree, '    ', lines);
  }
  const shared = result.details.spf.sharedInfrastructure;
  if (shared && shared.exposures.length > 0) {
    lines.push('');
    lines.push(`  Shared infrastructure that passes SPF (provider data ${shared.data.date}${shared.data.stale ? `, STALE: ${shared.data.ageDays} days old` : ''}):`);
    for (const e of shared.exposures) {
      const counts = [e.ipv4Addresses > 0 ? `${e.ipv4Addresses.toLocaleString('en-US')} IPv4` : '', e.ipv6Addresses > 0 ? `${formatIpv6Count(e.ipv6Addresses)} IPv6` : ''].filter(Boolean).join(' + ');
      lines.push(`    ${MARK[e.severity]} ${e.label}: ${counts} through ${e.path}${e.recordDomain !== e.checkedDomain ? ` (at ${e.recordDomain})` : ''}`);
    }
  }
  // The note is said once: it is also the detail of the subdomain reason above, when there is one.
  if (result.subdomainNote && !result.reasons.some((reason) => reason.detail === result.subdomainNote)) {
    lines.push('');
    lines.push('  Subdomains:');
    lines.push(...wrap(result.subdomainNote, 4));
  }
  lines.push('');
  lines.push(`  Next step: ${result.nextStep.title}`);
  // Prose is wrapped; indented lines (the record to publish) are kept whole, so they can be copied.
  for (const line of result.nextStep.body.split('\n')) {
    if (/^\s/.test(line)) lines.push(`    ${line}`);
    else lines.push(...wrap(line, 4));
  }
  lines.push(`    More: ${guideLocation(result.nextStep.href)}`);
  if (result.dnssec && result.dnssec.status !== 'not-checked') lines.push('', ...formatDnssec(result.dnssec));
  if (result.transport) lines.push('', ...formatTransport(result.transport));
  if (result.bimi) lines.push('', ...formatBimi(result.bimi));
  return `${lines.join('\n')}\n`;
}

/** The line a report from zone files carries (`"source": "fixture-zones"`). */
export const FIXTURE_ZONES_LINE =
  'Source: fixture zones. These answers come from zone files loaded in memory (--zones), not from the live DNS: they are stand-in records, and say nothing about the real domain.';

/** An address's class in the address guard's words, for an address the probe refused ("an address reserved for documentation"). */
function refusedAddressWords(address: TransportResult['mx'][number]['addresses'][number]): string {
  return ADDRESS_CLASS_TEXT[address.addressClass ?? classifyAddress(address.address)];
}

/** The DNSSEC lines: the overall state with its reason, then each RRset that is not secure. */
export function formatDnssec(dnssec: DnssecResult): string[] {
  const code = (reason: DnssecResult['reason']): string => (reason.code === null ? '' : ` (EDE ${reason.code})`);
  const lines = [`  DNSSEC: ${dnssec.status}${code(dnssec.reason)}`, ...wrapKeepingIndented(dnssec.reason.text, 4)];
  for (const rrset of dnssec.rrsets) {
    lines.push(`    ${rrset.name} ${rrset.type}: ${rrset.status}${code(rrset.reason)}`);
  }
  const next = dnssec.status === 'bogus' ? DNSSEC_NEXT_STEP[dnssec.reason.code ?? -1] : undefined;
  if (next) lines.push(...wrap(`Next step: ${next}`, 4));
  return lines;
}

/** The BIMI section: the logo receivers may show, graded apart from the verdict; the next step first. */
export function formatBimi(bimi: BimiResult): string[] {
  const lines: string[] = [];
  lines.push(`  BIMI (brand logo): ${bimi.grade}`);
  lines.push(`    Record   ${bimi.record ? `${bimi.record.name}: ${bimi.record.text}` : `none (selector ${bimi.selector}; ${bimi.queries.map((q) => `${q.name} ${q.outcome}`).join(', ')})`}`);
  lines.push(...wrap(`DMARC    ${bimi.dmarc.eligible === null ? 'could not be checked' : bimi.dmarc.eligible ? 'eligible' : `not strict enough for a logo: ${bimi.dmarc.blockedBy.map((b) => b.detail).join('; ')}`}`, 4));
  if (bimi.logo) {
    const logo = bimi.logo;
    const state = logo.fetch ? `not fetched: ${logo.fetch.error}${logo.fetch.httpStatus !== null ? ` (HTTP ${logo.fetch.httpStatus})` : ''}` : `${logo.bytes} bytes, ${logo.violations.length === 0 ? 'valid SVG Tiny PS' : `${logo.violations.length} violation(s)`}`;
    lines.push(`    Logo     ${logo.url}: ${state}`);
    for (const v of logo.violations) lines.push(...wrap(`line ${v.line} [${v.rule}] ${v.detail}`, 6));
  }
  if (bimi.certificate) {
    const c = bimi.certificate;
    const state = c.fetch
      ? `not fetched: ${c.fetch.error}`
      : `${c.kind ?? 'unknown kind'}, chain ${c.chain.trusted ? `trusted (${c.chain.anchor})` : 'NOT trusted'}, BIMI EKU ${c.bimiEku ? 'yes' : 'NO'}, SAN ${c.sanMatch ? 'matches' : `does NOT match (${c.san.join(', ')})`}, logo hash ${c.logotype ? (c.logotype.hashOk ? 'equal' : 'DIFFERS') : 'absent'}, until ${c.notAfter?.slice(0, 10) ?? '?'}`;
    lines.push(...wrap(`Certificate ${c.url}: ${state}`, 4));
    for (const problem of c.chain.problems) lines.push(...wrap(`- ${problem}`, 6));
  }
  const p = bimi.providers;
  for (const [name, provider] of [['Gmail', p.gmail], ['Apple', p.apple], ['Yahoo', p.yahoo]] as const) {
    lines.push(...wrap(`${name.padEnd(8)} ${provider.eligible ? 'eligible' : 'not eligible'}: ${provider.why}`, 4));
  }
  if (bimi.nextSteps.length > 0) {
    lines.push('    Next steps:');
    bimi.nextSteps.forEach((step, i) => lines.push(...wrap(`${i + 1}. ${step}`, 6)));
  }
  return lines;
}

/** What to do about a bogus zone, by RFC 8914 code (the reason says which zone and record). */
const DNSSEC_NEXT_STEP: Readonly<Record<number, string>> = {
  6: 'a signature does not verify: the data was changed after signing, or the signer is broken. Re-sign the zone from the records you publish.',
  7: 'the signatures expired: re-sign the zone now, and fix the re-signing job (validating resolvers and DANE senders reject the domain until then).',
  8: "the signatures are not valid yet: the signer's clock is ahead. Re-sign with the right time.",
  9: 'the DS at the registrar does not match the keys the zone serves (or the zone lost its DNSKEY records): publish the DS of the current key-signing key at the registrar, or remove the DS to go unsigned.',
  10: 'records are published without signatures in a signed zone: re-sign the zone.',
  12: 'a denial (no such name or no such record) comes without its NSEC/NSEC3 proof: re-sign the zone, or check the DNS server serves the proofs.',
};

/** The transport section: mail sent TO the domain, with its own verdict. */
export function formatTransport(transport: TransportResult): string[] {
  const lines: string[] = [];
  lines.push(`  Mail sent to you: ${transport.verdict}`);
  const sts = transport.mtaSts;
  const policy = sts.policy ? ` (max_age ${sts.policy.maxAge}; mx ${sts.policy.mx.join(', ') || 'none'})` : '';
  const fetch = sts.fetch && sts.fetch.error ? `; policy fetch: ${sts.fetch.error}${sts.fetch.httpStatus !== null ? ` (HTTP ${sts.fetch.httpStatus})` : ''}` : '';
  lines.push(`    MTA-STS  ${sts.status}${sts.id ? `, id ${sts.id}` : ''}${policy}${fetch}`);
  lines.push(`    TLS-RPT  ${transport.tlsRpt.status}${transport.tlsRpt.rua.length > 0 ? ` (${transport.tlsRpt.rua.join(', ')})` : ''}`);
  if (transport.dane) lines.push(`    DANE     ${transport.dane}`);
  for (const mx of transport.mx) {
    const covered = mx.mtaStsCovered === null ? '' : mx.mtaStsCovered ? ', in the policy' : ', NOT in the policy';
    lines.push(`    MX ${mx.preference} ${mx.host}${covered}`);
    if (mx.tlsa) lines.push(`      TLSA ${mx.tlsa.status}${mx.tlsa.usable ? ', usable' : ''}${mx.tlsa.records.length > 0 ? `: ${mx.tlsa.records.join('; ')}` : ''}`);
    if (mx.addresses.length === 0) lines.push('      (not probed)');
    for (const a of mx.addresses) {
      const cert = a.certificate ? `; certificate ${a.certificate.san.slice(0, 3).join(', ') || a.certificate.subject}${a.certificate.san.length > 3 ? ', …' : ''}, issuer ${a.certificate.issuer}, until ${a.certificate.notAfter.slice(0, 10)}` : '';
      // A refused address is named by the address guard's class, in the same words as its finding
      // ("an address reserved for documentation"), never by the outcome's code name.
      const outcome = a.outcome === 'refused-private' ? `not probed, ${refusedAddressWords(a)}` : a.outcome;
      lines.push(`      ${a.address}: ${outcome}${a.tlsVersion ? ` (${a.tlsVersion})` : ''}${a.dane ? `; DANE ${a.dane}` : ''}${cert}`);
    }
  }
  if (transport.findings.length > 0) {
    lines.push('    Findings:');
    for (const finding of transport.findings) {
      lines.push(`     ${MARK[finding.severity] ?? '-'} [${finding.severity}] ${finding.title} (${finding.id})`);
      // Prose wrapped; indented lines (a policy to serve) kept whole, so they can be copied.
      for (const line of finding.detail.split('\n')) {
        if (/^\s/.test(line)) lines.push(`        ${line}`);
        else lines.push(...wrap(line, 8));
      }
    }
  }
  return lines;
}

/** The package's guides, which `serve` renders at /guides/<topic> (two folders up from src/cli and dist/cli). */
const GUIDES_DIR = new URL('../../docs/guides/', import.meta.url);

/**
 * Where a terminal user reads the guide `href` points at: a relative `/guides/<topic>` link means
 * nothing outside the web page, so it becomes the guide's file in the package; other links stay.
 */
export function guideLocation(href: string): string {
  const topic = new RegExp(`^${DEFAULT_GUIDE_BASE_URL}/([a-z-]+)(?:[?#]|$)`).exec(href)?.[1];
  if (topic === undefined || !(GUIDE_TOPICS as readonly string[]).includes(topic)) return href;
  return fileURLToPath(new URL(`${topic}.md`, GUIDES_DIR));
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

/** Prose wrapped; its indented lines (a record to publish) kept whole, so they can be copied as they are. */
export function wrapKeepingIndented(text: string, indent: number): string[] {
  return text.split('\n').flatMap((line) => (/^\s/.test(line) ? [`${' '.repeat(indent)}${line}`] : wrap(line, indent)));
}

/** The report of an input that could not be checked: what failed, then the message, wrapped. */
export function formatFailure(input: string, code: string, message: string): string {
  return `${[`${input}: cannot check (${code})`, ...wrap(message, 2)].join('\n')}\n`;
}

/**
 * The words of `text`, a quoted string (`"v=BIMI1; l=https://…;"`, a record to publish) kept as one
 * word with its spaces, so that wrapping never cuts a record: it goes whole on a line of its own.
 */
export function wrapWords(text: string): string[] {
  return text.match(/(?:[^\s"]*"[^"]*")+[^\s"]*|\S+/g) ?? [];
}

/** `text` wrapped at `width` columns, each line indented by `indent` spaces; a quoted record is never cut. */
export function wrap(text: string, indent: number, width = REPORT_WIDTH): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  let line = '';
  for (const word of wrapWords(text)) {
    if (line && pad.length + line.length + word.length + 1 > width) {
      out.push(pad + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(pad + line);
  return out;
}
