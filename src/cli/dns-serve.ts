/**
 * `spoof-checker dns-serve <zones-dir> | --demo-zones [--port N] [--host H] [--outside refused|nxdomain] [--faults FILE]`:
 * serves a directory of zone files over DNS (UDP and TCP) as an authoritative server, in the
 * foreground until the process is asked to stop, so that the scenarios can be checked by any client
 * (`dig @127.0.0.1 -p 5300 …`, or `spoof-checker check --resolver … ` with `--outside nxdomain`).
 * With `--faults`, the server itself misbehaves as the file says (SERVFAIL, REFUSED, no answer…).
 */
import { readdir } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { FaultPlan } from '@spoof-checker/engine';
import { startDnsServer, type OutsideZones } from '@spoof-checker/engine';
import { ZoneResolver } from '@spoof-checker/engine';
import { loadSignedZoneDirectory, loadZoneDirectory, SignedZoneSet, ZoneLoadError } from '@spoof-checker/engine';
import { integerOption, parseCommandArgs, UsageError } from './args.js';
import { loadFaultPlan } from './faults-file.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Command } from './io.js';
import { DEMO_ZONES_FLAG, zonesDirectory } from './resolver-options.js';
import { FIXTURE_ZONES_DIR } from '../fixtures.js';

/** The port used without `--port`: unprivileged, and clear of mDNS's 5353. */
export const DEFAULT_DNS_SERVE_PORT = 5300;
/** The address used without `--host`: loopback only, so nothing outside the machine can query it. */
export const DEFAULT_DNS_SERVE_HOST = '127.0.0.1';

const USAGE = `Usage: spoof-checker dns-serve <zones-dir> | --demo-zones [--port N] [--host H] [--outside refused|nxdomain] [--faults FILE]

Serves every *.zone file in <zones-dir> over DNS, UDP and TCP on one port, as their authoritative
server, until stopped (Ctrl-C). Signed zones (*.signed, ldns-signzone output, such as
fixtures/dnssec/zones) are served with their DNSSEC records: RRSIGs to a DO query, DNSKEY, DS and the
NSEC/NSEC3 proofs (RFC 4035 §3).

Options:
  --demo-zones   serve the fixture zones shipped with spoof-checker instead of <zones-dir>
  --port N       port to listen on (default ${DEFAULT_DNS_SERVE_PORT}; 0 picks a free one)
  --host H       IP address to listen on (default ${DEFAULT_DNS_SERVE_HOST})
  --outside A    how to answer names outside the zones: refused (default, as an authoritative
                 server does) or nxdomain (as if the zones were the whole DNS; use this when
                 \`spoof-checker check --resolver\` asks this server, since a check also looks up
                 names such as _dmarc.<tld>)
  --faults FILE  answer the queries FILE lists as a faulty server would, on the wire: SERVFAIL,
                 REFUSED, no answer (drop), late, truncated or garbled; FILE is a JSON list of
                 rules, or of scenarios such as fixtures/scenarios.json
  -h, --help     show this help
`;

/** What `--outside` takes. */
const OUTSIDE_VALUES: readonly OutsideZones[] = ['refused', 'nxdomain'];

/** The `dns-serve` command. Exit 0 after a clean stop, 1 when the zones or the port fail, 2 on bad arguments. */
export const dnsServe: Command = async (args, io) => {
  let dir: string;
  let port: number;
  let host: string;
  let outsideZones: OutsideZones;
  let faultsFile: string | undefined;
  try {
    const { values, positionals } = parseCommandArgs(
      args,
      { port: { type: 'string' }, host: { type: 'string' }, outside: { type: 'string' }, faults: { type: 'string' }, 'demo-zones': { type: 'boolean' } },
      true,
    );
    if (values.help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (values['demo-zones']) {
      if (positionals.length > 0) throw new UsageError(`give a zones directory or ${DEMO_ZONES_FLAG}, not both`);
      dir = FIXTURE_ZONES_DIR;
    } else {
      if (positionals.length !== 1 || positionals[0] === undefined) {
        throw new UsageError(positionals.length === 0 ? `the zones directory is missing (${DEMO_ZONES_FLAG} serves the fixture zones shipped with spoof-checker)` : `one zones directory expected, got ${positionals.length} arguments`);
      }
      // A directory that is not there names --demo-zones.
      dir = zonesDirectory(positionals[0], false, 'the zones directory') ?? positionals[0];
    }
    port = integerOption(values.port, 'port', DEFAULT_DNS_SERVE_PORT, 0, 65_535);
    host = values.host ?? DEFAULT_DNS_SERVE_HOST;
    if (isIP(host) === 0) throw new UsageError(`--host must be an IP address such as 127.0.0.1 or ::1, not "${host}"`);
    const outside = values.outside ?? 'refused';
    if (!(OUTSIDE_VALUES as readonly string[]).includes(outside)) {
      throw new UsageError(`--outside must be refused or nxdomain, not "${outside}"`);
    }
    outsideZones = outside as OutsideZones;
    faultsFile = values.faults;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`dns-serve: ${error.message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }

  let faults: FaultPlan = [];
  if (faultsFile !== undefined) {
    try {
      faults = (await loadFaultPlan(faultsFile)).plan;
    } catch (error) {
      // One line naming the file and the problem: the usage would bury it.
      io.err(`dns-serve: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT_USAGE;
    }
  }

  let resolver: ZoneResolver;
  let signedZones: SignedZoneSet | undefined;
  try {
    const signedFiles = await signedZoneFiles(dir);
    // A folder of signed zones may hold no *.zone file at all; the signed ones are its zones then.
    resolver = new ZoneResolver(signedFiles > 0 && (await zoneFileCount(dir)) === 0 ? [] : await loadZoneDirectory(dir));
    if (signedFiles > 0) signedZones = await loadSignedZoneDirectory(dir);
  } catch (error) {
    io.err(`dns-serve: ${error instanceof Error ? error.message : String(error)}\n`);
    // A directory that cannot be read was a bad argument; a zone that does not parse is a failure.
    return error instanceof ZoneLoadError && error.path === dir ? EXIT_USAGE : EXIT_FAILED;
  }

  let server: Awaited<ReturnType<typeof startDnsServer>>;
  try {
    server = await startDnsServer({ resolver, host, port, outsideZones, faults, ...(signedZones ? { signedZones } : {}) });
  } catch (error) {
    io.err(`dns-serve: cannot listen on ${formatAddress(host, port)}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
  const zones = new Set([...resolver.origins(), ...(signedZones?.origins() ?? [])]).size;
  io.out(
    `dns-serve: listening on ${formatAddress(host, server.address.port)} (udp+tcp), ${zones} zone${zones === 1 ? '' : 's'}, names outside them ${outsideZones === 'refused' ? 'REFUSED' : 'NXDOMAIN'}` +
      (faultsFile !== undefined ? `, ${faults.length} DNS fault(s) from ${faultsFile}` : '') +
      '\n',
  );
  const signal = await io.stopSignal;
  await server.close();
  io.out(`dns-serve: stopped (${signal})\n`);
  return EXIT_OK;
};

/** How many `*.signed` files `dir` holds (0 when it cannot be read: loadZoneDirectory then says why). */
async function signedZoneFiles(dir: string): Promise<number> {
  return (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.signed')).length;
}

async function zoneFileCount(dir: string): Promise<number> {
  return (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.zone')).length;
}

function formatAddress(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
