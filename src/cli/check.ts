import { isDemoDnssecDomain, isDemoZonesDirectory, loadDemoDnssec } from '../service/demo-dnssec.js';
import { checkDomain, DnssecCache, ianaRootAnchors, loadTrustAnchorFile, type CheckOptions } from '@spoof-checker/engine';
import { isSpoofCheckError } from '@spoof-checker/engine';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import { parseCommandOrExit, RESOLVER_OPTIONS, usageExit, UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, type CliIo, type Command } from './io.js';
import { formatFailure, formatReport } from './report.js';
import { RANGES_HELP, rangesFromFlag } from './ranges-options.js';
import { resolverFromFlags } from './resolver-options.js';
import type { NetworkResolver } from '@spoof-checker/engine';
import { bimiOptionsFromFlags, hasTransportFlags, TRANSPORT_OPTIONS, TRANSPORT_USAGE, transportOptionsFromFlags } from './transport-options.js';

const USAGE = `Usage: spoof-checker check <domain|url|address>... [options]

Checks each name and prints a report: the verdict, the reasons, the SPF lookup tree, the next step.

Options:
  --zones DIR          answer from the *.zone files in DIR (the loaded zones are the whole DNS)
  --demo-zones         answer from the fixture zones shipped with spoof-checker (found wherever it is installed)
  --resolver IP[:PORT] ask this DNS server instead of the system's resolvers; several,
                       comma-separated (1.1.1.1,8.8.8.8), share the queries and stand in for each other
  --timeout MS         per-query timeout for --resolver and the system resolvers
  --faults FILE        inject the DNS faults listed in FILE (SERVFAIL, REFUSED, dropped queries…):
                       a JSON list of rules, or of scenarios such as fixtures/scenarios.json
  --selectors a,b      DKIM selectors to probe before the built-in list
${RANGES_HELP}
  --transport          also check mail sent TO the domain: MTA-STS, TLS-RPT and a STARTTLS probe of
                       every MX address (opens connections; takes seconds). Adds a report section
                       and a "transport" field to --json; the spoof verdict does not change
${TRANSPORT_USAGE}
  --trust-anchor FILE  validate DNSSEC from the DS or DNSKEY records in FILE (a lab's or a private
                       root) instead of the IANA root KSKs
  --no-dnssec          do not validate DNSSEC ("dnssec": not-checked); it is validated by default when
                       asking DNS servers, and never with --zones (zone files carry no signatures; the
                       DNSSEC demo domains of --demo-zones against the demo's own trust anchor)
  --at DATE            judge BIMI mark certificates and DNSSEC signatures at DATE instead of now: an
                       ISO date (2027-06-01, midnight UTC) or date-time (2027-06-01T12:00:00Z, or with
                       an offset such as +02:00); the HTTPS fetches still check their servers now
  --bimi               also check BIMI (the brand logo): the record, DMARC eligibility, the logo held
                       to SVG Tiny PS and the mark certificate (VMC, CMC) verified by signature. Adds a
                       report section and a "bimi" field to --json; the spoof verdict does not change.
                       --tls-ca, --connect-ports https=N and --allow-private-addresses apply to it
  --bimi-selector S    the BIMI selector (default "default")
  --bimi-roots FILE    extra Mark Verifying Authority roots (PEM), added to the shipped ones
  --json               one JSON line per input, in input order
  -h, --help           this text

Exit status: 0 when every input was checked, 1 when any failed, 2 on a usage error.
`;

/** A line of `--json` output for an input that could not be checked. */
export interface ErrorLine {
  input: string;
  error: { code: string; message: string };
}

/** `spoof-checker check`: one report (or JSON line) per input, in input order. */
export const check: Command = async (args, io) => {
  const parsed = parseCommandOrExit(
    'check',
    USAGE,
    io,
    args,
    { ...RESOLVER_OPTIONS, ...TRANSPORT_OPTIONS, 'trust-anchor': { type: 'string' }, 'no-dnssec': { type: 'boolean' }, faults: { type: 'string' }, selectors: { type: 'string' }, ranges: { type: 'string' }, transport: { type: 'boolean' }, bimi: { type: 'boolean' }, 'bimi-selector': { type: 'string' }, 'bimi-roots': { type: 'string' }, at: { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length === 0) return usage(io, new UsageError('give at least one domain, URL or address to check'));

  let built;
  let ranges;
  try {
    ranges = rangesFromFlag(values.ranges, io.env);
    built = await resolverFromFlags({ zones: values.zones, demoZones: values['demo-zones'], resolver: values.resolver, timeout: values.timeout, faults: values.faults });
  } catch (error) {
    return usage(io, error);
  }
  const options: CheckOptions = { resolver: built.resolver, selectors: splitList(values.selectors), ranges };
  const transportFlags = { tlsCa: values['tls-ca'], connectPorts: values['connect-ports'], allowPrivateAddresses: values['allow-private-addresses'] };
  if (!values.transport && !values.bimi && hasTransportFlags(transportFlags)) return usage(io, new UsageError('--tls-ca, --connect-ports and --allow-private-addresses apply to --transport and --bimi; add --transport or --bimi'));
  if (!values.bimi && (values['bimi-selector'] !== undefined || values['bimi-roots'] !== undefined)) return usage(io, new UsageError('--bimi-selector and --bimi-roots apply to --bimi; add --bimi'));
  let at: Date | undefined;
  if (values.at !== undefined) {
    try {
      at = parseAtDate(values.at);
      if (!values.bimi && values['no-dnssec']) throw new UsageError('--at sets the time BIMI certificates and DNSSEC signatures are judged at: add --bimi, or drop --no-dnssec');
    } catch (error) {
      return usage(io, error);
    }
  }
  if (values.bimi) {
    try {
      options.bimi = await bimiOptionsFromFlags({ ...transportFlags, selector: values['bimi-selector'], roots: values['bimi-roots'] });
      if (at !== undefined) options.bimi.validationTime = at;
    } catch (error) {
      return usage(io, error);
    }
  }
  if (values.transport) {
    try {
      options.transport = await transportOptionsFromFlags(transportFlags);
    } catch (error) {
      return usage(io, error);
    }
  }
  try {
    options.dnssec = await dnssecFromFlags(values['trust-anchor'], values['no-dnssec'], built.network);
  } catch (error) {
    return usage(io, error);
  }
  // The shipped fixture zones: the DNSSEC demo domains validate against the demo's own anchor, in process.
  const demoDnssec = (values['demo-zones'] || isDemoZonesDirectory(values.zones)) && !values['no-dnssec'] ? await loadDemoDnssec() : undefined;
  // At another time, without the zone-state cache (its states were judged now).
  const dnssecAt = (dnssec: CheckOptions['dnssec']): CheckOptions['dnssec'] => (at !== undefined && typeof dnssec === 'object' ? { ...dnssec, now: () => at.getTime() / 1000, cache: undefined } : dnssec);
  const dnssecFor = (input: string): CheckOptions['dnssec'] => dnssecAt(demoDnssec && isDemoDnssecDomain(demoDnssec, input) ? demoDnssec.options : options.dnssec);
  // Inputs run concurrently; output keeps input order.
  const outcomes = positionals.map((input) => checkOne(input, { ...options, resolver: built.resolverFor(input), dnssec: dnssecFor(input) }, values.resolver));
  let failed = 0;
  for (const [i, outcome] of outcomes.entries()) {
    const result = await outcome;
    if ('error' in result) failed++;
    if (values.json) io.out(`${JSON.stringify(result)}\n`);
    else io.out(('error' in result ? formatError(result) : formatReport(result)) + (i < outcomes.length - 1 ? '\n' : ''));
  }
  return failed > 0 ? EXIT_FAILED : EXIT_OK;
};

/**
 * `CheckOptions.dnssec` from the flags: validation over real servers (the IANA root anchors, or
 * `--trust-anchor FILE`), off with `--no-dnssec`, and never over zone files.
 */
export async function dnssecFromFlags(trustAnchor: string | undefined, off: boolean | undefined, network: NetworkResolver | undefined): Promise<CheckOptions['dnssec']> {
  if (off && trustAnchor !== undefined) throw new UsageError('give --trust-anchor FILE or --no-dnssec, not both');
  if (off) return false;
  if (!network) {
    if (trustAnchor !== undefined) throw new UsageError('--trust-anchor needs DNS servers (--resolver, or the system\'s): zone files (--zones) carry no signatures');
    return 'The answers come from zone files (--zones), which carry no signatures: nothing to validate.';
  }
  let anchors;
  try {
    anchors = trustAnchor === undefined ? ianaRootAnchors() : await loadTrustAnchorFile(trustAnchor);
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; a trust anchor file holds DS or DNSKEY records in zone-file form, such as ". IN DS 20326 8 2 E06D…"`);
  }
  // One cache for the inputs of this command: they share the root's and the TLDs' keys.
  return { query: network.dnssecQuery(), anchors, cache: new DnssecCache() };
}

/** `--at`: `YYYY-MM-DD` (midnight UTC) or an ISO 8601 date-time (`Z` or an offset; none means UTC). */
export function parseAtDate(text: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(text.trim());
  const fail = (): never => {
    throw new UsageError(`--at ${text}: not a date; give YYYY-MM-DD (2027-06-01) or a date-time (2027-06-01T12:00:00Z)`);
  };
  if (!match) return fail();
  const [, y, mo, d, h = '00', mi = '00', sec = '00'] = match;
  const zone = (match[7] ?? 'Z').toUpperCase();
  const offset = zone === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  // Date.UTC rolls 2027-02-30 over to March: a day, hour or minute out of range is refused instead.
  const check = new Date(local);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || check.getUTCHours() !== Number(h) || check.getUTCMinutes() !== Number(mi) || Number(sec) > 59) return fail();
  if (Math.abs(offset) > 14 * 60) return fail();
  return new Date(local - offset * 60_000);
}

/** Checks one input; a refusal becomes an error line, never an exception. */
export async function checkOne(input: string, options: CheckOptions, resolverFlag?: string): Promise<SpoofCheckResult | ErrorLine> {
  try {
    return await checkDomain(input, options);
  } catch (error) {
    if (isSpoofCheckError(error)) {
      // A DNS server that never answered (nothing listens, no route): the fix is which server to ask.
      const unreachable = error.code === 'dns_failure' && UNREACHABLE.test(error.query?.detail ?? '');
      return { input, error: { code: error.code, message: `${error.message} ${unreachable ? unreachableFix(resolverFlag) : error.fix}` } };
    }
    return { input, error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
  }
}

/** The engine's words for a lookup ended by a socket error (network-resolver.ts socketFailure). */
const UNREACHABLE = /cannot be reached/;

/** What to do when the DNS server asked cannot be reached, from the command line. */
function unreachableFix(resolverFlag: string | undefined): string {
  return resolverFlag === undefined
    ? "Check this machine's network and resolver settings, or give a DNS server that answers with --resolver IP (for example --resolver 1.1.1.1)."
    : `Check the address and port given with --resolver ${resolverFlag}, or give a DNS server that answers with --resolver IP (for example --resolver 1.1.1.1).`;
}

function formatError(line: ErrorLine): string {
  return formatFailure(line.input, line.error.code, line.error.message);
}

function usage(io: CliIo, error: unknown): number {
  return usageExit(io, 'check', error);
}

/** `a, b,,c` → ['a', 'b', 'c']; undefined stays undefined. */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
