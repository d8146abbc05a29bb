/**
 * `spoof-checker serve`: runs the HTTP service in the foreground until SIGINT/SIGTERM, then stops
 * accepting, lets the requests in flight finish (`app.close()`) and exits 0.
 *
 * Configuration comes from flags, then environment variables, then defaults (a flag always wins);
 * every variable is listed in USAGE and in the README (The HTTP service).
 */
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DOCS_PATH, type StartupApiKey } from '../http/app.js';
import { startService, type ReportsConfig, type ServiceHandle } from '../service/start.js';
import { batchNamesPerDayFromEnv, maxMonitorsFromEnv } from './batch-quota.js';
import { loadDemoSettings, withDemoBimiDomains, withDemoDnssecDomains, withDemoReportDomains, withDemoTransportDomains } from './demo.js';
import { isDemoDnssecDomain, loadDemoDnssec } from '../service/demo-dnssec.js';
import { PUBLIC_ORIGIN_ENV } from './users.js';
import { LOG_FORMATS, logFormatFor, shortLogWriter } from './log-format.js';
import { parseTrustProxy, TrustProxyError, trustProxyWarning, type TrustProxy } from '../http/client-address.js';
import { apiKeyIdFromDigest, digestApiKey } from '../store/api-keys.js';
import { DEFAULT_DATA_DIR, MEMORY_DATA_DIR, type StorageChoice } from '../store/open.js';
import { DEFAULT_RETENTION_DAYS } from '../store/sql.js';
import { booleanOptions, integerOption, parseCommandArgs, stringOptions, UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type Command } from './io.js';
import type { RangeData } from '@spoof-checker/engine';
import { describeRanges, rangesFromFlag } from './ranges-options.js';
import { DEMO_RATE_LIMITS } from '../http/rate-limits.js';
import { resolverHostLookup } from '../jobs/resolver-lookup.js';
import { resolverFromFlags } from './resolver-options.js';
import { dnssecFromFlags } from './check.js';
import { ALERT_OPTIONS, ALERT_USAGE, alertSmtpFromFlags } from './alert-options.js';
import type { AlertSmtpConfig } from '../jobs/monitors/alert-email.js';
import { parseConnectPorts, TRANSPORT_OPTIONS, TRANSPORT_USAGE, transportOptionsFromFlags, type TransportFlags } from './transport-options.js';
import { apiKeyWeakness, MIN_API_KEY_LENGTH, STRONG_KEY_ADVICE } from '../store/api-key-strength.js';

/** Port without `--port`/`PORT`. */
export const DEFAULT_SERVE_PORT = 8080;
/** Port of `--demo` without `--port`/`PORT`. */
export const DEMO_SERVE_PORT = 8787;
/** Address without `--host`/`HOST`: loopback only; use `--host 0.0.0.0` in a container. */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
/** The demo organisation's key in fixtures/seed/demo.json (printed in the demo's curl line). */
export const DEMO_API_KEY = 'sk_demo_0123456789abcdef';
/** The demo organisation in fixtures/seed/demo.json (its monitor is seeded by `--demo`). */
export const DEMO_ORGANIZATION_ID = 'org_demo';
/** The domain the demo's curl line checks. */
export const DEMO_DOMAIN = 'p-none.example';
/** The demo console's other domains (beside DEMO_DOMAIN), one per verdict and a few findings. */
export const DEMO_CONSOLE_DOMAINS: readonly string[] = ['p-reject.example', 'no-dmarc.example', 'reject-pct-50.example', 'dmarc-p-typo.example', 'quarantine-testing.example'];

// Resolved against this file, so the same code finds the fixtures from src/cli/ and from dist/cli/.
const FIXTURES = new URL('../../fixtures/', import.meta.url);
/** The zone files `--demo` answers from. */
export const DEMO_ZONES_DIR = fileURLToPath(new URL('zones/', FIXTURES));
/** The seed `--demo` loads. */
export const DEMO_SEED_FILE = fileURLToPath(new URL('seed/demo.json', FIXTURES));
/**
 * The DNS faults `--demo` injects: the scenarios' own (SERVFAIL on `_dmarc.dmarc-servfail.example`…),
 * so that the demo answers those names as the regression corpus does. The package ships the file.
 */
export const DEMO_FAULTS_FILE = fileURLToPath(new URL('scenarios.json', FIXTURES));
/** The scenarios `--demo`'s page lists (its domains to try, and the zones that are "in the demo"). */
export const DEMO_SCENARIOS_FILE = fileURLToPath(new URL('scenarios.json', FIXTURES));
/** `--faults none` (or SPOOF_CHECKER_FAULTS=none): no faults, not even the demo's. */
export const NO_FAULTS = 'none';

// The one rule for API keys (src/store/api-key-strength.ts): here for SPOOF_CHECKER_API_KEYS.
export { MIN_API_KEY_DISTINCT_CHARACTERS, MIN_API_KEY_ENTROPY_BITS, MIN_API_KEY_LENGTH, apiKeyWeakness } from '../store/api-key-strength.js';
/** The flag that lets `--demo` listen on a non-loopback address, where its published keys would be open to anyone. */
export const PUBLIC_DEMO_FLAG = 'public-demo';

const USAGE = `Usage: spoof-checker serve [--host H] [--port P] [--zones DIR | --demo-zones | --resolver IP[:PORT]] [--faults FILE] [--data DIR | --database URL] [--seed FILE] [--demo]

Runs the HTTP API (spoof checker, logs, templates, domains, contacts) until stopped (Ctrl-C).
OpenAPI document at /openapi.json, the API reference at ${DOCS_PATH}.

Options (each overrides the environment variable in brackets):
  --host H              address to listen on [HOST] (default ${DEFAULT_SERVE_HOST})
  --port P              port to listen on [PORT] (default ${DEFAULT_SERVE_PORT}, ${DEMO_SERVE_PORT} with --demo; 0 picks a free one)
  --zones DIR           answer DNS from the zone files in DIR [SPOOF_CHECKER_ZONES]
  --demo-zones          answer DNS from the fixture zones shipped with spoof-checker (found wherever it is installed)
  --resolver IP[:PORT]  ask this DNS server (several: comma-separated, sharing the queries) [SPOOF_CHECKER_RESOLVER] (default: the system's resolvers)
  --timeout MS          per-query DNS timeout for real servers
  --faults FILE         inject the DNS faults listed in FILE, a JSON list of rules or of scenarios [SPOOF_CHECKER_FAULTS]
                        (default with --demo: fixtures/scenarios.json; '${NO_FAULTS}' injects none)
  --ranges FILE         classify SPF pass sets with the provider data in FILE (from 'ranges update') [SPOOF_CHECKER_RANGES]
                        (default: the data 'ranges update' keeps in the user data directory, else the shipped
                        snapshot; its date is on the start-up line, flagged when stale)
  --seed FILE           load organisations, keys and data from FILE into an empty store [SPOOF_CHECKER_SEED]
  --data DIR            keep everything in SQLite in DIR, created if missing [SPOOF_CHECKER_DATA]
                        (default ${DEFAULT_DATA_DIR}; ${MEMORY_DATA_DIR} keeps it in memory, lost at exit)
  --database URL        keep everything in PostgreSQL, shared by replicas: postgresql://user:pw@host/db [DATABASE_URL]
  --retention-days N    delete record logs older than N days (SQLite, PostgreSQL) [SPOOF_CHECKER_RETENTION_DAYS] (default ${DEFAULT_RETENTION_DAYS})
  --trust-proxy CIDRS|HOPS  proxies in front: their addresses (10.0.0.0/8,127.0.0.1), or a hop count (1, warned
                        about: it believes whoever connects); the client is the first X-Forwarded-For address
                        they did not add; a header holding anything but IP addresses is ignored [SPOOF_CHECKER_TRUST_PROXY]
  --public-url URL      the public base URL of the service (https://checker.example): the page's links start with it,
                        never with a forwarded host header [SPOOF_CHECKER_PUBLIC_URL]
  --public-origin URL   the same, as the console calls it: console forms must come from it; https:// makes the
                        session cookie Secure and __Host- (docs/console.md) [SPOOF_CHECKER_PUBLIC_ORIGIN]
  --redis URL           count rate limits in Redis/Valkey (redis://host:6379), shared by replicas [REDIS_URL]
                        and queue batch checks there for 'spoof-checker worker' (without it, batches run in this process)
                        and schedule monitors there (without it, monitors run in this process)
  --log-format F        the request log on stdout: short (one line per request) or json (pino's JSON lines)
                        [SPOOF_CHECKER_LOG_FORMAT] (default: short on a terminal, json otherwise)
  --public-history      link result pages to the public history of monitored domains (/history/<domain>)
  --smtp-port N         receive DMARC and TLS reports by SMTP on port N (0 picks a free one) [SPOOF_CHECKER_SMTP_PORT]
  --smtp-host H         the address the SMTP receiver listens on (default: --host)
  --report-address A    an address the SMTP receiver always takes reports for (comma-separated; others are taken only
                        when the rua of their domain's DMARC or TLS-RPT record names them) [SPOOF_CHECKER_REPORT_ADDRESS]
  --trust-anchor FILE   validate DNSSEC (result "dnssec", monitors' signature-expiry alerts) from the DS or DNSKEY
                        records in FILE instead of the IANA root KSKs
  --no-dnssec           no DNSSEC validation (on by default with DNS servers; never with --zones)
Transport and BIMI checks ("checks": ["transport"] / ["bimi"] in the API, "Mail sent to you" / "Your logo in the inbox" on the page); --allow-private-addresses also lets webhooks reach such addresses:
${TRANSPORT_USAGE}
Alerts (alert channels: signed webhooks, Slack, Teams, email):
${ALERT_USAGE}
  --demo                zones fixtures/zones, seed fixtures/seed/demo.json, the scenarios' DNS faults, port ${DEMO_SERVE_PORT},
                        and one monitor (of ${DEMO_DOMAIN}) with a history; loopback only: its API keys are published
  --${PUBLIC_DEMO_FLAG}         let --demo listen on a non-loopback --host anyway (its published keys are then refused:
                        give keys of your own with SPOOF_CHECKER_API_KEYS)
  -h, --help            show this help

Environment only:
  SPOOF_CHECKER_API_KEYS="key:organizationId,…"  add API keys at start (an unknown organisation starts empty); each key at least
                                                 ${MIN_API_KEY_LENGTH} random characters (e.g. openssl rand -hex 32); runs, repeats
                                                 and common words (0123…, abcd…, Password123!) are refused
  SPOOF_CHECKER_RATE_LIMIT=off                   turn every rate limit off (default on)
  SPOOF_CHECKER_BASE_URL=https://…               base of nextStep.href in spoof check results
  SPOOF_CHECKER_BATCH_NAMES_PER_DAY=1000000      names each organisation may submit in batches per UTC day
  SPOOF_CHECKER_SECRET_KEY=…                     the key that seals webhook secrets (default: one kept in the store)
  LOG_LEVEL=info                                 fatal, error, warn, info, debug, trace or silent
  NODE_ENV=production                            the 'environment' of every record log (default development)
`;

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Everything `serve` was asked to do, after flags, environment and defaults are combined. */
export interface ServeConfig {
  host: string;
  port: number;
  zones: string | undefined;
  resolver: string | undefined;
  timeout: string | undefined;
  /** The faults file (src/cli/faults-file.ts); undefined injects none. */
  faults: string | undefined;
  seed: string | undefined;
  demo: boolean;
  /** Where the stores live: memory, SQLite in a directory, or PostgreSQL. */
  storage: StorageChoice;
  /** Record logs older than this are pruned (SQL stores). */
  retentionDays: number;
  apiKeys: StartupApiKey[];
  rateLimit: boolean;
  trustProxy: TrustProxy;
  /** Redis URL for shared rate-limit counters; undefined counts in this process. */
  redis: string | undefined;
  /** The public base URL (origin) the page's links start with. */
  publicUrl: string | undefined;
  /** Webhooks may reach private addresses (`--allow-private-addresses`). */
  allowPrivateAddresses: boolean;
  /** Most monitors one organisation may keep (`SPOOF_CHECKER_MAX_MONITORS`). */
  maxMonitors: number;
  /** Result pages link to the public history of monitored domains (`--public-history`). */
  publicHistory: boolean;
  baseUrl: string | undefined;
  /** Provider data from --ranges / SPOOF_CHECKER_RANGES; undefined for the shipped snapshot. */
  ranges: RangeData | undefined;
  /** The SMTP report receiver and the report addresses (`--smtp-port`, `--report-address`); undefined: none. */
  reports: ReportsConfig | undefined;
  logLevel: string;
  /** `--log-format`: json or short; undefined picks short on a terminal, JSON elsewhere. */
  logFormat: string | undefined;
  environment: string;
  /** The transport probe's flags (--tls-ca, --connect-ports, --allow-private-addresses). */
  transport: TransportFlags;
  /** `--trust-anchor FILE`: DNSSEC from these DS/DNSKEY records instead of the IANA root's. */
  trustAnchor?: string | undefined;
  /** `--no-dnssec`: no DNSSEC validation (it is on by default over DNS servers). */
  noDnssec?: boolean | undefined;
  /** The mail relay of email alerts (`--alert-smtp`, `--alert-from`); undefined: no email channels. */
  alertSmtp?: AlertSmtpConfig | undefined;
}

/** Reads `key:organizationId,key:organizationId`. Throws `UsageError` naming the bad entry. */
export function parseApiKeysVariable(text: string | undefined): StartupApiKey[] {
  if (text === undefined || text.trim() === '') return [];
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry, index) => {
      // Organisation ids never hold ':' (see the seed format), so the last ':' splits.
      const colon = entry.lastIndexOf(':');
      const key = colon === -1 ? '' : entry.slice(0, colon);
      const organizationId = colon === -1 ? '' : entry.slice(colon + 1);
      if (key === '' || !/^[A-Za-z0-9_.-]+$/.test(organizationId)) {
        throw new UsageError(`SPOOF_CHECKER_API_KEYS entry ${index + 1} must be "key:organizationId"`);
      }
      const weakness = apiKeyWeakness(key);
      if (weakness) {
        throw new UsageError(
          `SPOOF_CHECKER_API_KEYS entry ${index + 1} (organisation "${organizationId}"): the key is too weak: ${weakness}. ${STRONG_KEY_ADVICE}`,
        );
      }
      return { key, organizationId };
    });
}

/** `text` (trimmed) as a URL of one of `protocols`; undefined when it is not a URL or of another protocol. */
function urlOf(text: string, protocols: readonly string[]): URL | undefined {
  try {
    const url = new URL(text.trim());
    return protocols.includes(url.protocol) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** The public URL: an http(s) origin, optionally with a path prefix; no query, fragment or credentials. */
function publicUrlOption(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const url = urlOf(text, ['https:', 'http:']);
  if (!url || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`--public-url / SPOOF_CHECKER_PUBLIC_URL must be an http(s) URL such as https://checker.example (no query, fragment or credentials), not "${text}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * Whether the API accepts weak keys the store holds (the demo seed's published keys): only the demo,
 * and only on loopback, where nobody else can present them.
 */
export function acceptsWeakKeys(config: Pick<ServeConfig, 'demo' | 'host'>): boolean {
  return config.demo && isLoopbackHost(config.host);
}

/** True for an address only this machine reaches (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

function booleanVariable(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const text = env[name]?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(text)) return true;
  if (['off', 'false', '0', 'no'].includes(text)) return false;
  throw new UsageError(`${name} must be on or off, not "${env[name]}"`);
}

/** `--trust-proxy` / SPOOF_CHECKER_TRUST_PROXY, read by the HTTP layer's parser; a bad value is a usage error. */
function trustProxyOption(text: string | undefined): TrustProxy {
  try {
    return parseTrustProxy(text);
  } catch (error) {
    if (error instanceof TrustProxyError) throw new UsageError(`--trust-proxy / SPOOF_CHECKER_TRUST_PROXY: ${error.message}`);
    throw error;
  }
}

/** `--redis` / REDIS_URL: a redis:// or rediss:// URL. */
function redisOption(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const url = urlOf(text, ['redis:', 'rediss:']);
  if (!url) {
    throw new UsageError(`--redis / REDIS_URL must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379, not "${text}"`);
  }
  return url.toString();
}

/** Longest `--retention-days` accepted (100 years: longer is a typo, not a policy). */
const MAX_RETENTION_DAYS = 36_500;

/**
 * `--data` / `--database` and their variables. A flag beats both variables; with neither flag,
 * DATABASE_URL beats SPOOF_CHECKER_DATA; `--demo` without any of them stays in memory; otherwise
 * SQLite in DEFAULT_DATA_DIR. The URL is checked when the store opens (a bad one: one line, exit 1).
 */
function storageOption(data: string | undefined, database: string | undefined, env: NodeJS.ProcessEnv, demo: boolean): StorageChoice {
  if (data !== undefined && database !== undefined) throw new UsageError('give --data or --database, not both');
  const url = data !== undefined ? undefined : (database ?? (env['DATABASE_URL'] || undefined));
  if (url !== undefined) return { kind: 'postgres', url };
  const dir = data ?? (env['SPOOF_CHECKER_DATA'] || undefined) ?? (demo ? MEMORY_DATA_DIR : DEFAULT_DATA_DIR);
  if (dir.trim() === '') throw new UsageError('--data needs a directory (or :memory:)');
  return dir === MEMORY_DATA_DIR ? { kind: 'memory' } : { kind: 'sqlite', dir };
}

/** Combines flags, environment and defaults. Throws `UsageError`. */
export function serveConfig(args: string[], env: NodeJS.ProcessEnv): ServeConfig | 'help' {
  const { values } = parseCommandArgs(
    args,
    {
      ...stringOptions('host', 'port', 'zones', 'resolver', 'timeout', 'faults', 'seed', 'data', 'database', 'retention-days', 'trust-proxy', 'public-url', 'public-origin', 'redis', 'ranges'),
      ...booleanOptions('demo-zones', 'demo', 'public-history', 'no-dnssec'),
      ...TRANSPORT_OPTIONS,
      ...ALERT_OPTIONS,
      [PUBLIC_DEMO_FLAG]: { type: 'boolean' },
      ...stringOptions('log-format', 'smtp-port', 'smtp-host', 'trust-anchor'),
      'report-address': { type: 'string', multiple: true },
    },
    false,
  );
  if (values.help) return 'help';
  const demo = values.demo ?? false;
  if (values.zones !== undefined && values.resolver !== undefined) throw new UsageError('give --zones or --resolver, not both');
  if (values['demo-zones'] && values.resolver !== undefined) throw new UsageError('give --demo-zones or --resolver, not both');
  if (values['demo-zones'] && values.zones !== undefined) throw new UsageError('give --zones DIR or --demo-zones, not both');
  // --demo-zones is the shipped fixture zones (a --zones DIR that is not there names it, at start).
  const flagZones = values['demo-zones'] ? DEMO_ZONES_DIR : values.zones;
  const flagsNameDns = flagZones !== undefined || values.resolver !== undefined;
  const envZones = env['SPOOF_CHECKER_ZONES'] || undefined;
  const envResolver = env['SPOOF_CHECKER_RESOLVER'] || undefined;
  if (!flagsNameDns && envZones !== undefined && envResolver !== undefined) {
    throw new UsageError('set SPOOF_CHECKER_ZONES or SPOOF_CHECKER_RESOLVER, not both');
  }
  // A DNS source named by a flag replaces both variables; --demo's zones come last.
  let zones = flagsNameDns ? flagZones : envZones;
  const resolver = flagsNameDns ? values.resolver : envResolver;
  if (zones === undefined && resolver === undefined && demo) zones = DEMO_ZONES_DIR;

  const host = values.host ?? (env['HOST'] || DEFAULT_SERVE_HOST);
  if (isIP(host) === 0 && host !== 'localhost') throw new UsageError(`--host must be an IP address such as 127.0.0.1 or ::, not "${host}"`);
  // The demo's keys are printed in the README and on start: on a reachable address anyone could use them.
  if (demo && !isLoopbackHost(host) && !values[PUBLIC_DEMO_FLAG]) {
    throw new UsageError(
      `--demo listens on loopback only: its API keys are published, so on ${host} anyone who reaches the port could use them. ` +
        `Use --host 127.0.0.1, or add --${PUBLIC_DEMO_FLAG} if that is really what you want`,
    );
  }
  const portText = values.port ?? (env['PORT'] || undefined);
  const port = integerOption(portText, 'port', demo ? DEMO_SERVE_PORT : DEFAULT_SERVE_PORT, 0, 65_535);
  const logLevel = env['LOG_LEVEL']?.trim().toLowerCase() || 'info';
  // Checked now, so a bad value is a usage error before anything starts (the CA file is read at start).
  if (values['connect-ports'] !== undefined) parseConnectPorts(values['connect-ports']);
  if (!LOG_LEVELS.has(logLevel)) throw new UsageError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}, not "${logLevel}"`);
  const logFormat = values['log-format'] ?? (env['SPOOF_CHECKER_LOG_FORMAT'] || undefined);
  if (logFormat !== undefined && !(LOG_FORMATS as readonly string[]).includes(logFormat)) throw new UsageError(`--log-format must be ${LOG_FORMATS.join(' or ')}, not "${logFormat}"`);
  return {
    host,
    port,
    zones,
    resolver,
    timeout: values.timeout,
    faults: faultsOption(values.faults ?? (env['SPOOF_CHECKER_FAULTS'] || undefined), demo),
    seed: values.seed ?? (env['SPOOF_CHECKER_SEED'] || (demo ? DEMO_SEED_FILE : undefined)),
    demo,
    storage: storageOption(values.data, values.database, env, demo),
    retentionDays: integerOption(values['retention-days'] ?? (env['SPOOF_CHECKER_RETENTION_DAYS'] || undefined), 'retention-days', DEFAULT_RETENTION_DAYS, 1, MAX_RETENTION_DAYS),
    apiKeys: parseApiKeysVariable(env['SPOOF_CHECKER_API_KEYS']),
    rateLimit: booleanVariable(env, 'SPOOF_CHECKER_RATE_LIMIT', true),
    trustProxy: trustProxyOption(values['trust-proxy'] ?? env['SPOOF_CHECKER_TRUST_PROXY']),
    redis: redisOption(values.redis ?? (env['REDIS_URL'] || undefined)),
    // --public-origin (the console's word, shared with `users add`) names the same base URL.
    publicUrl: publicUrlOption(values['public-url'] ?? values['public-origin'] ?? (env['SPOOF_CHECKER_PUBLIC_URL'] || env[PUBLIC_ORIGIN_ENV] || undefined)),
    allowPrivateAddresses: values['allow-private-addresses'] ?? false,
    maxMonitors: maxMonitorsFromEnv(env),
    publicHistory: values['public-history'] ?? false,
    baseUrl: env['SPOOF_CHECKER_BASE_URL'] || undefined,
    ranges: rangesFromFlag(values.ranges, env),
    logLevel,
    logFormat,
    environment: env['NODE_ENV'] || 'development',
    transport: { tlsCa: values['tls-ca'], connectPorts: values['connect-ports'], allowPrivateAddresses: values['allow-private-addresses'] },
    reports: reportsOption(values['smtp-port'] ?? (env['SPOOF_CHECKER_SMTP_PORT'] || undefined), values['smtp-host'] ?? host, values['report-address'] ?? (env['SPOOF_CHECKER_REPORT_ADDRESS'] ? [env['SPOOF_CHECKER_REPORT_ADDRESS']] : [])),
    trustAnchor: values['trust-anchor'],
    noDnssec: values['no-dnssec'],
    alertSmtp: alertSmtpFromFlags(values, env),
  };
}

/** `--smtp-port`, `--smtp-host` and `--report-address` (each address checked: local@domain). */
function reportsOption(portText: string | undefined, smtpHost: string, addresses: string[]): ServeConfig['reports'] {
  const reportAddresses = addresses.flatMap((a) => a.split(',')).map((a) => a.trim().toLowerCase()).filter((a) => a !== '');
  for (const address of reportAddresses) {
    if (!/^[^\s@]+@[a-z0-9.-]+\.[a-z0-9-]+$/.test(address)) throw new UsageError(`--report-address must be an address such as dmarc@reports.example.com, not "${address}"`);
  }
  if (isIP(smtpHost) === 0 && smtpHost !== 'localhost') throw new UsageError(`--smtp-host must be an IP address such as 127.0.0.1 or ::, not "${smtpHost}"`);
  if (portText === undefined) return reportAddresses.length > 0 ? { reportAddresses } : undefined;
  return { reportAddresses, smtp: { host: smtpHost, port: integerOption(portText, 'smtp-port', 0, 0, 65_535) } };
}

/** `--faults` / SPOOF_CHECKER_FAULTS, then the demo's default; `none` turns faults off. */
function faultsOption(text: string | undefined, demo: boolean): string | undefined {
  if (text === undefined) return demo ? DEMO_FAULTS_FILE : undefined;
  if (text.trim() === '') throw new UsageError(`--faults needs a file (or ${NO_FAULTS})`);
  return text === NO_FAULTS ? undefined : text;
}

/** The URL a client on this machine reaches the server at (a wildcard address becomes loopback). */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/** Printed at start when the store holds no API key: every /api call would answer 401. */
export const NO_API_KEY_HINT =
  '  no API key is configured: every /api call answers 401 until one is (the page at / needs none). Give one at start with\n' +
  '    SPOOF_CHECKER_API_KEYS="<key>:<organisation id>"   (several: comma-separated; the organisation is created if new)\n' +
  '  or load organisations and keys from a seed file with --seed FILE (example: fixtures/seed/demo.json).\n';

/** A curl command line that works as is against the demo server. */
export function demoCurlLine(baseUrl: string): string {
  return `curl -s -X POST ${baseUrl}/api/tools/v1/spoof-checker -H 'Authorization: Bearer ${DEMO_API_KEY}' -H 'Content-Type: application/json' -d '{"domain":"${DEMO_DOMAIN}"}'`;
}

/** The `serve` command. Exit 0 after a clean stop, 1 when start-up fails, 2 on bad arguments or environment. */
export const serve: Command = async (args, io) => {
  let config: ServeConfig;
  try {
    const parsed = serveConfig(args, io.env);
    if (parsed === 'help') {
      io.out(USAGE);
      return EXIT_OK;
    }
    config = parsed;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`serve: ${error.message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  return run(config, io);
};

async function run(config: ServeConfig, io: CliIo): Promise<number> {
  // A DNS source the flags name badly (a zone directory that does not load) is a usage error.
  const fail = (error: unknown): number => {
    io.err(`serve: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILED;
  };
  const log = (message: string) => io.err(`spoof-checker serve: ${message}\n`);
  let service: ServiceHandle;
  let dnsDescription: string;
  try {
    const { resolverFor, description, network, zones } = await resolverFromFlags({
      // The shipped fixture zones (--demo, --demo-zones) are named as such on the start-up line.
      ...(config.zones === DEMO_ZONES_DIR ? { demoZones: true } : config.zones !== undefined ? { zones: config.zones } : {}),
      ...(config.resolver !== undefined ? { resolver: config.resolver } : {}),
      ...(config.timeout !== undefined ? { timeout: config.timeout } : {}),
      ...(config.faults !== undefined ? { faults: config.faults } : {}),
    });
    dnsDescription = description;
    // One probe cache for the process; the flags' CA file and ports checked now (a bad one: exit 2).
    const transport = await transportOptionsFromFlags(config.transport);
    // The demo's page says where its answers come from and answers only for the demo's domains.
    // With the demo's own zones, the demo also runs its own mail servers (one domain per transport verdict).
    const demoZones = config.demo && config.zones === DEMO_ZONES_DIR;
    const demoPages = demoZones ? { demo: withDemoBimiDomains(withDemoReportDomains(withDemoDnssecDomains(withDemoTransportDomains(await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR))))) } : undefined;
    // DNSSEC over DNS servers (IANA anchors or --trust-anchor), with one zone-state cache for the process.
    const dnssecOption = await dnssecFromFlags(config.trustAnchor, config.noDnssec, network);
    // The shipped fixture zones: the DNSSEC demo domains validate against the demo's own anchor, in process.
    const demoDnssec = config.zones === DEMO_ZONES_DIR && !config.noDnssec ? await loadDemoDnssec() : undefined;
    service = await startService({
      storage: config.storage,
      retentionDays: config.retentionDays,
      seedFile: config.seed,
      allowWeakSeedKeys: config.demo,
      check: {
        resolverFor,
        ranges: config.ranges,
        baseUrl: config.baseUrl,
        transport,
        ...(dnssecOption !== undefined ? { dnssec: dnssecOption } : {}),
        ...(demoDnssec ? { dnssecFor: (domain: string) => (isDemoDnssecDomain(demoDnssec, domain) ? demoDnssec.options : undefined) } : {}),
      },
      redisUrl: config.redis,
      namesPerDay: batchNamesPerDayFromEnv(io.env),
      maxMonitorsPerOrganization: config.maxMonitors,
      allowPrivateAddresses: config.allowPrivateAddresses,
      // With zone files, webhook hosts are looked up in them too: nothing asks the system resolver.
      ...(zones ? { webhookLookup: resolverHostLookup(zones) } : {}),
      // The demo sends webhooks to this machine only (a receiver on 127.0.0.1), never off it.
      ...(config.demo ? { webhookLoopbackOnly: true } : {}),
      env: io.env,
      log,
      ...(config.demo ? { demoMonitor: { organizationId: DEMO_ORGANIZATION_ID, domain: DEMO_DOMAIN, more: DEMO_CONSOLE_DOMAINS } } : {}),
      ...(demoZones ? { demoTransport: true } : {}),
      ...(config.demo ? { demoReports: { organizationId: DEMO_ORGANIZATION_ID } } : {}),
      ...(config.reports ? { reports: config.reports } : {}),
      alerts: { smtp: config.alertSmtp, publicOrigin: config.publicUrl },
      http: {
        host: config.host,
        port: config.port,
        apiKeys: config.apiKeys,
        rateLimit: config.rateLimit,
        // The demo lets one person click through its result pages (DEMO_RESULT_PAGES_PER_MINUTE a minute).
        ...(config.demo ? { rateLimitOverrides: DEMO_RATE_LIMITS } : {}),
        trustProxy: config.trustProxy,
        publicUrl: config.publicUrl,
        publicHistory: config.publicHistory,
        environment: config.environment,
        acceptWeakKeys: acceptsWeakKeys(config),
        logger: { level: config.logLevel, stream: { write: logFormatFor(config.logFormat, io.stdoutIsTTY ?? false) === 'short' ? shortLogWriter(io.out) : (line: string) => io.out(line) } },
        ...(demoPages ? { pages: demoPages } : {}),
        // The demo console: its organisation, and on loopback a demo viewer signed in by itself.
        ...(config.demo ? { console: { demo: { organizationId: DEMO_ORGANIZATION_ID, autoSignIn: acceptsWeakKeys(config) } } } : {}),
      },
    });
  } catch (error) {
    // A bad URL or an unreachable database (one line naming it, exit 1), a port in use, a bad seed file.
    return fail(error);
  }
  const url = localUrl(config.host, service.port);
  // Without a key every API call answers 401: say so, and how to give one (the page at / needs none).
  const noKey = !(await service.hasApiKey());
  io.err(
    `spoof-checker serve: listening on ${url} (DNS: ${dnsDescription}; rate limits ${config.rateLimit ? (service.rateLimitsInRedis ? 'on, in Redis' : 'on') : 'off'}; ${service.notes.join('; ')}${config.allowPrivateAddresses ? '; webhooks may reach private addresses' : ''})\n` +
      `  OpenAPI: ${url}/openapi.json   docs: ${url}${DOCS_PATH}\n` +
      `  SPF shared infrastructure: ${describeRanges(config.ranges, new Date())}\n` +
      (config.demo ? `  try: ${demoCurlLine(url)}\n` : '') +
      (noKey ? NO_API_KEY_HINT : ''),
  );

  const trustWarning = trustProxyWarning(config.trustProxy);
  if (trustWarning) io.err(`spoof-checker serve: warning: ${trustWarning}\n`);
  if (config.demo && !isLoopbackHost(config.host)) {
    io.err(
      `spoof-checker serve: warning: the demo listens on ${config.host}; its published API keys are refused there (they work on loopback only): ` +
        `give keys of your own with SPOOF_CHECKER_API_KEYS\n`,
    );
  }
  // Each key by its id (an HMAC of its digest, src/store/api-keys.ts): never the key, nor a prefix of its hash.
  for (const { key, organizationId } of config.apiKeys) io.err(`spoof-checker serve: API key ${apiKeyIdFromDigest(digestApiKey(key))} for organisation ${organizationId}\n`);

  const signal = await io.stopSignal;
  io.err(`spoof-checker serve: ${signal}: finishing requests in flight, then stopping\n`);
  // Drains the requests in flight, then releases what they used, last started first.
  await service.stop();
  return EXIT_OK;
}
