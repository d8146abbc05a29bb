import { readFile } from 'node:fs/promises';
import type { CheckTransportOptions } from '@spoof-checker/engine';
import { TransportCache } from '@spoof-checker/engine';
import { tlsTrust } from '@spoof-checker/engine';
import { bimiRootsFromPem, bimiSelectorProblem } from '@spoof-checker/engine';
import type { CheckBimiOptions } from '@spoof-checker/engine';
import type { ConnectPorts } from '@spoof-checker/engine';
import { UsageError } from './args.js';

/** The flags of the transport check, shared by `check` and `serve`. */
export const TRANSPORT_OPTIONS = {
  'tls-ca': { type: 'string' },
  'connect-ports': { type: 'string' },
  'allow-private-addresses': { type: 'boolean' },
} as const;

/** The transport flags as given. */
export interface TransportFlags {
  /** A PEM file of extra trusted roots, added to the defaults. */
  tlsCa?: string | undefined;
  /** `smtp=N,https=N`: ports to connect to instead of 25 and 443. */
  connectPorts?: string | undefined;
  /** Connect to loopback, private and other non-public addresses (test labs). */
  allowPrivateAddresses?: boolean | undefined;
}

/** The help lines of the transport flags. */
export const TRANSPORT_USAGE = `  --tls-ca FILE        extra trusted root certificates (PEM) for the transport probe, added to the defaults
  --connect-ports smtp=N,https=N
                       connect to the resolved addresses on these ports instead of 25 and 443 (test labs)
  --allow-private-addresses
                       let the transport probe connect to loopback, private, link-local and other
                       non-public addresses (refused by default: they give refused-private)`;

/** `smtp=2525,https=8443` → { smtp: 2525, https: 8443 }; a bad entry is a `UsageError` naming it. */
export function parseConnectPorts(text: string): ConnectPorts {
  const ports: ConnectPorts = {};
  for (const entry of text.split(',').map((part) => part.trim())) {
    const match = /^(smtp|https)=(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : Number.NaN;
    if (!match || port < 1 || port > 65_535) {
      throw new UsageError(`--connect-ports takes smtp=N,https=N with ports from 1 to 65535, such as smtp=2525,https=8443; "${entry}" is not one`);
    }
    const key = match[1] as 'smtp' | 'https';
    if (ports[key] !== undefined) throw new UsageError(`--connect-ports names ${key} twice`);
    ports[key] = port;
  }
  return ports;
}

/**
 * The PEM text of the file an option names, read and checked by `check` (which throws for a file
 * that holds no usable certificate); a `UsageError` naming the option and the file otherwise.
 */
async function pemFileOption(option: string, file: string, check: (pem: string) => unknown): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`${option} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    check(pem);
  } catch (error) {
    throw new UsageError(`${option} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return pem;
}

/**
 * The transport check's options from the flags: the CA file read and checked, the ports parsed,
 * one probe cache for the process. Throws `UsageError` for a file that cannot be read or holds no
 * usable PEM certificate, and for bad ports.
 */
export async function transportOptionsFromFlags(flags: TransportFlags): Promise<CheckTransportOptions> {
  const options: CheckTransportOptions = { cache: new TransportCache(), allowPrivateAddresses: flags.allowPrivateAddresses ?? false };
  if (flags.connectPorts !== undefined) options.connectPorts = parseConnectPorts(flags.connectPorts);
  if (flags.tlsCa !== undefined) {
    options.tlsCa = await pemFileOption('--tls-ca', flags.tlsCa, tlsTrust);
  }
  return options;
}

/** True when any transport flag was given. */
export function hasTransportFlags(flags: TransportFlags): boolean {
  return flags.tlsCa !== undefined || flags.connectPorts !== undefined || flags.allowPrivateAddresses !== undefined;
}

/** The BIMI flags: the transport flags (they reach the logo host), the selector and extra roots. */
export interface BimiFlags extends TransportFlags {
  /** `--bimi-selector`. */
  selector?: string | undefined;
  /** `--bimi-roots`: a PEM file of extra Mark Verifying Authority roots. */
  roots?: string | undefined;
}

/**
 * The BIMI check's options from the flags. Throws `UsageError` for a bad selector, a roots file
 * that cannot be read or holds no usable certificate, and what `transportOptionsFromFlags` refuses.
 */
export async function bimiOptionsFromFlags(flags: BimiFlags): Promise<CheckBimiOptions> {
  const transport = await transportOptionsFromFlags(flags);
  const options: CheckBimiOptions = { tlsCa: transport.tlsCa, connectPorts: transport.connectPorts, allowPrivateAddresses: transport.allowPrivateAddresses };
  if (flags.selector !== undefined) {
    const problem = bimiSelectorProblem(flags.selector);
    if (problem) throw new UsageError(`--bimi-selector: ${problem}`);
    options.selector = flags.selector;
  }
  if (flags.roots !== undefined) {
    options.extraRoots = await pemFileOption('--bimi-roots', flags.roots, bimiRootsFromPem);
  }
  return options;
}
