import { createSmtpProbe, findLookalikes, isSpoofCheckError, type LookalikeOptions, type LookalikeReport } from '@spoof-checker/engine';
import { parseCommandOrExit, RESOLVER_OPTIONS, usageExit, UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, type CliIo, type Command } from './io.js';
import { formatFailure, REPORT_WIDTH } from './report.js';
import { resolverFromFlags } from './resolver-options.js';

const USAGE = `Usage: spoof-checker lookalikes <domain> [options]

Generates the names that look like <domain> (typos, look-alike letters, IDN homographs: the dnstwist
fuzzers), asks DNS which of them exist, and grades what each can do with mail:
critical (receives mail and its SPF authorises senders), high (receives mail, or authorises senders),
medium (resolves, no mail set-up), unknown (a lookup failed), protected (parked: null MX, SPF -all,
DMARC p=reject). Names that do not resolve are counted, not listed ("not resolving" is not "available").

Options:
  --deep               also two look-alike letters, the word list and the swap to ~70 common TLDs
                       (up to 2,500 names; the default is a few hundred)
  --zones DIR          answer from the *.zone files in DIR (the loaded zones are the whole DNS)
  --demo-zones         answer from the fixture zones shipped with spoof-checker (found wherever it is
                       installed; nothing is sent to any DNS server)
  --resolver IP[:PORT] ask this DNS server instead of the system's resolvers (comma-separated list)
  --timeout MS         per-query timeout for --resolver and the system resolvers
  --faults FILE        inject the DNS faults listed in FILE
  --smtp-probe         ask each lookalike's MX whether it accepts mail for a random address (opens SMTP
                       to third parties: EHLO, MAIL FROM:<>, RCPT TO, QUIT; never sends a message)
  --json               the report as one JSON line
  -h, --help           this text

Exit status: 0 when the run finished, 1 when the input is not a registrable domain, 2 on a usage error.
`;

/** `spoof-checker lookalikes <domain>`: the graded lookalikes of one domain. */
export const lookalikes: Command = async (args, io) => {
  const parsed = parseCommandOrExit('lookalikes', USAGE, io, args, { ...RESOLVER_OPTIONS, faults: { type: 'string' }, deep: { type: 'boolean' }, json: { type: 'boolean' }, 'smtp-probe': { type: 'boolean' } }, true);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return usage(io, new UsageError('give exactly one domain'));
  const input = positionals[0]!;
  let built;
  try {
    built = await resolverFromFlags({ zones: values.zones, demoZones: values['demo-zones'], resolver: values.resolver, timeout: values.timeout, faults: values.faults });
  } catch (error) {
    return usage(io, error);
  }
  const resolver = built.resolverFor(input);
  const options: LookalikeOptions = { resolver, deep: values.deep === true };
  if (values['smtp-probe']) options.smtpProbe = createSmtpProbe({ resolver });
  let report: LookalikeReport;
  try {
    report = await findLookalikes(input, options);
  } catch (error) {
    if (!isSpoofCheckError(error)) throw error;
    if (values.json) io.out(`${JSON.stringify({ input, error: { code: error.code, message: `${error.message} ${error.fix}` } })}\n`);
    else io.out(formatFailure(input, error.code, `${error.message} ${error.fix}`));
    return EXIT_FAILED;
  }
  io.out(values.json ? `${JSON.stringify(report)}\n` : formatLookalikes(report));
  return EXIT_OK;
};

const GRADE_TEXT: Record<string, string> = {
  critical: 'CRITICAL',
  high: 'high',
  medium: 'medium',
  unknown: 'unknown',
  protected: 'protected',
};

/** The readable report: one line per lookalike, worst first, the counts, then the next steps. */
export function formatLookalikes(report: LookalikeReport): string {
  const lines: string[] = [];
  const name = report.unicode !== report.domain ? `${report.unicode} (${report.domain})` : report.domain;
  const listed = report.lookalikes.length;
  lines.push(`${name}: ${listed} lookalike${listed === 1 ? '' : 's'} resolve${listed === 1 ? 's' : ''} (of ${report.generated} names tried${report.deep ? ', deep' : ''})`);
  if (report.looksLike) lines.push(`  ${report.unicode} itself looks like ${report.looksLike}: it may be a lookalike someone sent you.`);
  lines.push(
    `  ${['critical', 'high', 'medium', 'unknown', 'protected'].map((g) => `${g} ${report.counts[g as keyof typeof report.counts]}`).join(', ')}; not resolving ${report.counts.none}`,
  );
  lines.push(`  ${report.queries} DNS queries${report.capped ? `; ${report.candidatesBeforeCap} names made, the likeliest ${report.generated} tried` : ''}`);
  if (report.wildcardSuffixes.length > 0) lines.push(`  These suffixes answer every name (a wildcard): ${report.wildcardSuffixes.join(', ')}`);
  for (const l of report.lookalikes) {
    lines.push('');
    const shown = l.unicode !== l.domain ? `${l.unicode} (${l.domain})` : l.domain;
    lines.push(`  ${GRADE_TEXT[l.grade] ?? l.grade}  ${shown}  [${l.fuzzers.join(', ')}; distance ${l.distance}]`);
    lines.push(
      `      MX ${l.mx.status}${l.mx.hosts.length > 0 ? ` (${l.mx.hosts.slice(0, 3).join(', ')})` : ''}; SPF ${l.spf.status}${l.spf.record ? ` "${l.spf.record}"` : ''}; DMARC ${l.dmarc.status}`,
    );
    lines.push(...wrap(l.note, 6));
  }
  for (const step of report.nextSteps) {
    lines.push('');
    lines.push(`  Next step: ${step.title}`);
    lines.push(...wrap(step.body, 4));
    for (const record of step.records ?? []) lines.push(`      ${record}`);
  }
  return `${lines.join('\n')}\n`;
}

function wrap(text: string, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && pad.length + line.length + 1 + word.length > REPORT_WIDTH) {
      out.push(pad + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') out.push(pad + line);
  return out;
}

function usage(io: CliIo, error: unknown): number {
  return usageExit(io, 'lookalikes', error);
}
