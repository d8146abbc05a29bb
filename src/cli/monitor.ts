/**
 * `spoof-checker monitor add|list|show|history|run|remove`: the monitor routes of a running service
 * (`serve`) from the command line, so that nobody has to write curl lines. It is a client of the
 * HTTP API, never of the store: the service checks, limits and records every change as it does for
 * any other client (the record log names the key's organisation).
 *
 * The key is read from SPOOF_CHECKER_API_KEY or from a file (`--key-file`), never from the command
 * line, where every user of the machine could read it in the process list.
 */
import { readFile } from 'node:fs/promises';
import { booleanOptions, integerOption, parseCommandArgs, stringOptions, UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type Command } from './io.js';
import { didYouMean } from './suggest.js';

/** The service asked when neither `--api` nor SPOOF_CHECKER_API_URL says otherwise: `serve`'s default address. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8787';
/** The monitor routes, below the API's base URL. */
const MONITORS_PATH = '/api/tools/v1/spoof-checker/monitors';
/** How long one request may take before the command gives up. */
export const MONITOR_REQUEST_TIMEOUT_MS = 15_000;
/** Largest page the API serves; a domain is looked up page by page at this size. */
const PAGE_LIMIT = 100;
/** Pages read at most while looking for a monitor by its domain (the organisation's cap is far below). */
const MAX_LOOKUP_PAGES = 200;
/** Longest key file read: a key is a line, not a document. */
const MAX_KEY_FILE_BYTES = 4096;

const SUBCOMMANDS = ['add', 'list', 'show', 'history', 'run', 'remove'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const USAGE = `Usage: spoof-checker monitor <add|list|show|history|run|remove> [arguments] [options]

Watches domains through a running service (spoof-checker serve): each is checked on a schedule and a
confirmed change is POSTed, signed, to its webhook.

  monitor add <domain> [--interval MIN] [--webhook URL] [--transport]
                       start watching a domain; prints the webhook secret once
  monitor list [--page N] [--limit N]
                       the organisation's monitors, newest first
  monitor show <id|domain>      one monitor, its state and last check
  monitor history <id|domain> [--page N] [--limit N]
                       its checks and confirmed changes, newest first
  monitor run <id|domain>       check now (the result lands in the history)
  monitor remove <id|domain>    stop watching (deletes its history and deliveries)

Options:
  --api URL        the service's base URL (default $SPOOF_CHECKER_API_URL, else ${DEFAULT_API_URL})
  --key-file FILE  read the API key from FILE (default: $SPOOF_CHECKER_API_KEY); never pass a key
                   on the command line, where other users can read it
  --json           print the API's JSON answer instead of a report
  -h, --help       show this help

Exit status: 0 done, 1 the service refused or could not be reached (its message is printed), 2 usage error.
`;

/** A refusal from the service, in the catalogue's shape (`code`, `message`, `fix`). */
class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fix: string | undefined,
  ) {
    super(message);
  }
}

/** The API as this command uses it: JSON in, JSON out, errors as {@link ApiRefusal}. */
interface MonitorApi {
  request(method: string, path: string, body?: unknown): Promise<any>;
}

function apiClient(base: URL, key: string): MonitorApi {
  return {
    async request(method, path, body) {
      const url = new URL(path.replace(/^\//, ''), base.href.endsWith('/') ? base : new URL(`${base.href}/`));
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: { authorization: `Bearer ${key}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(MONITOR_REQUEST_TIMEOUT_MS),
          redirect: 'error',
        });
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        throw new ApiRefusal(0, 'UNREACHABLE', `could not reach ${base.origin} (${cause})`, `Start the service (spoof-checker serve) or give its address with --api URL.`);
      }
      const text = await response.text();
      let parsed: any = undefined;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        // Not the API (a proxy's page, another server): said below.
      }
      if (!response.ok) {
        if (parsed && typeof parsed === 'object' && typeof parsed.code === 'string') {
          const retry = response.headers.get('retry-after');
          const message = `${parsed.message ?? parsed.code}${retry ? ` (retry after ${retry} s)` : ''}`;
          throw new ApiRefusal(response.status, parsed.code, message, typeof parsed.fix === 'string' ? parsed.fix : undefined);
        }
        throw new ApiRefusal(response.status, 'UNEXPECTED_ANSWER', `${base.origin} answered HTTP ${response.status}, not the spoof-checker API`, 'Check the address given with --api.');
      }
      if (parsed === undefined) throw new ApiRefusal(response.status, 'UNEXPECTED_ANSWER', `${base.origin} answered without JSON`, 'Check the address given with --api.');
      return parsed;
    },
  };
}

/** The key: from `--key-file` (first line, trimmed) or SPOOF_CHECKER_API_KEY. */
async function readKey(keyFile: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (keyFile !== undefined) {
    let text: string;
    try {
      const bytes = await readFile(keyFile);
      if (bytes.length > MAX_KEY_FILE_BYTES) throw new UsageError(`--key-file ${keyFile} is ${bytes.length} bytes; a key file holds one key on one line`);
      text = bytes.toString('utf8');
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`cannot read --key-file ${keyFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const key = text.split(/\r?\n/)[0]?.trim() ?? '';
    if (key === '') throw new UsageError(`--key-file ${keyFile} is empty; put the API key on its first line`);
    return key;
  }
  const key = env.SPOOF_CHECKER_API_KEY?.trim();
  if (!key) throw new UsageError('no API key: set SPOOF_CHECKER_API_KEY or give --key-file FILE');
  return key;
}

/** The base URL: `--api`, else SPOOF_CHECKER_API_URL, else the default; http(s) only. */
function baseUrl(value: string | undefined, env: NodeJS.ProcessEnv): URL {
  const text = value ?? env.SPOOF_CHECKER_API_URL ?? DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--api must be a URL such as ${DEFAULT_API_URL}, not "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--api must be an http:// or https:// URL, not "${text}"`);
  if (url.username || url.password) throw new UsageError('--api must not carry a user name or password; the key comes from SPOOF_CHECKER_API_KEY or --key-file');
  return url;
}

/** A monitor id as the API makes them (`mon_` and a UUID); anything else is taken for a domain. */
const looksLikeId = (text: string): boolean => /^mon_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);

/** The monitor's id: given as is, or found by its domain in the organisation's list. */
async function monitorId(api: MonitorApi, idOrDomain: string): Promise<string> {
  if (looksLikeId(idOrDomain)) return idOrDomain;
  const wanted = idOrDomain.trim().toLowerCase().replace(/\.$/, '');
  for (let page = 1; page <= MAX_LOOKUP_PAGES; page++) {
    const list = await api.request('GET', `${MONITORS_PATH}?page=${page}&limit=${PAGE_LIMIT}`);
    const found = (list.monitors as Array<{ id: string; domain: string }>).find((m) => m.domain === wanted);
    if (found) return found.id;
    if (page * PAGE_LIMIT >= list.total) break;
  }
  throw new ApiRefusal(404, 'NOT_FOUND', `no monitor watches ${wanted}`, `List them with 'spoof-checker monitor list', or add one with 'spoof-checker monitor add ${wanted}'.`);
}

const when = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—');

/** One monitor, readable. */
function describeMonitor(m: any): string {
  const last = m.lastResult;
  const lastLine = last
    ? `${when(last.checkedAt)}: ${last.outcome === 'checked' ? `${last.verdict}${last.transportVerdict ? `, transport ${last.transportVerdict}` : ''}` : `${last.outcome}${last.reason ? ` (${last.reason})` : ''}`}`
    : 'not checked yet';
  return [
    `${m.domain}  (${m.id})`,
    `  state:     ${m.state.status}${m.state.consecutiveFailures > 0 ? `, ${m.state.consecutiveFailures} failed checks in a row` : ''}`,
    `  checks:    every ${m.intervalMinutes} min${m.checks.length ? `, with ${m.checks.join(', ')}` : ''}; next ${when(m.nextRunAt)}`,
    `  webhook:   ${m.webhookUrl ?? 'none (changes are kept in the history only)'}`,
    `  last:      ${lastLine}`,
  ].join('\n');
}

/** One history entry, on one line (changes with their fields). */
function describeEntry(entry: any): string {
  if (entry.type === 'check') {
    const c = entry.check ?? {};
    const what = c.outcome === 'checked' ? `${c.verdict}${c.transportVerdict ? `, transport ${c.transportVerdict}` : ''}` : `${c.outcome}${c.reason ? ` (${c.reason})` : ''}`;
    return `${when(entry.at)}  check   ${what}`;
  }
  const fields = (entry.changes as Array<{ field: string; before: unknown; after: unknown }> | undefined) ?? [];
  const lines = fields.map((f) => `      ${f.field}: ${JSON.stringify(f.before)} → ${JSON.stringify(f.after)}`);
  return [`${when(entry.at)}  CHANGE  ${fields.length} field${fields.length === 1 ? '' : 's'}`, ...lines].join('\n');
}

/** The `monitor` command. */
export const monitor: Command = async (args, io) => {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    if (sub === undefined) io.err(USAGE);
    else io.out(USAGE);
    return sub === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) {
    io.err(`monitor: unknown subcommand '${sub}'.${didYouMean(sub, [...SUBCOMMANDS])}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    return await runSubcommand(sub as Subcommand, rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`monitor ${sub}: ${error.message}\n\nRun 'spoof-checker monitor --help' for the usage.\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ApiRefusal) {
      io.err(`monitor ${sub}: ${error.message}${error.status > 0 ? ` [${error.code}]` : ''}\n${error.fix ? `  ${error.fix}\n` : ''}`);
      return EXIT_FAILED;
    }
    throw error;
  }
};

async function runSubcommand(sub: Subcommand, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { ...stringOptions('api', 'key-file', 'interval', 'webhook', 'page', 'limit'), ...booleanOptions('json', 'transport') },
    true,
  );
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  // Each subcommand takes only its own options, so a misplaced one is said, never ignored.
  const allowed: Record<Subcommand, string[]> = {
    add: ['interval', 'webhook', 'transport'],
    list: ['page', 'limit'],
    show: [],
    history: ['page', 'limit'],
    run: [],
    remove: [],
  };
  for (const name of ['interval', 'webhook', 'transport', 'page', 'limit']) {
    if ((values as Record<string, unknown>)[name] !== undefined && !allowed[sub].includes(name)) throw new UsageError(`--${name} does not apply to 'monitor ${sub}'`);
  }
  const wantsTarget = sub !== 'list';
  if (wantsTarget && positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? `which monitor? give ${sub === 'add' ? 'a domain' : 'its id or domain'}` : `one ${sub === 'add' ? 'domain' : 'monitor'} expected, got ${positionals.length}`);
  }
  if (!wantsTarget && positionals.length > 0) throw new UsageError(`'monitor list' takes no argument, got "${positionals[0]}"`);
  const target = positionals[0] ?? '';
  const api = apiClient(baseUrl(values.api, io.env), await readKey(values['key-file'], io.env));
  const page = integerOption(values.page, 'page', 1, 1, 1_000_000);
  const limit = integerOption(values.limit, 'limit', 20, 1, PAGE_LIMIT);
  const print = (json: unknown, text: string) => io.out(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);

  switch (sub) {
    case 'add': {
      const body: Record<string, unknown> = { domain: target };
      if (values.interval !== undefined) body.intervalMinutes = integerOption(values.interval, 'interval', 0, 1, 10_080);
      if (values.webhook !== undefined) body.webhookUrl = values.webhook;
      if (values.transport) body.checks = ['transport'];
      const created = await api.request('POST', MONITORS_PATH, body);
      print(
        created,
        `${describeMonitor(created)}\n  secret:    ${created.secret}\n\nStore the secret now: it signs every webhook (Spoof-Checker-Signature) and is never shown again.`,
      );
      return EXIT_OK;
    }
    case 'list': {
      const list = await api.request('GET', `${MONITORS_PATH}?page=${page}&limit=${limit}`);
      const rows = (list.monitors as any[]).map((m) => {
        const last = m.lastResult;
        const verdict = last ? (last.outcome === 'checked' ? last.verdict : last.outcome) : 'not checked yet';
        return `${m.domain.padEnd(32)} ${String(m.state.status).padEnd(15)} ${String(verdict).padEnd(16)} every ${m.intervalMinutes} min  ${m.id}`;
      });
      const first = (page - 1) * limit;
      const footer = list.total === 0 ? 'No monitors yet: add one with `spoof-checker monitor add <domain>`.' : `${first + 1}–${first + rows.length} of ${list.total}`;
      print(list, [...rows, footer].join('\n'));
      return EXIT_OK;
    }
    case 'show': {
      const shown = await api.request('GET', `${MONITORS_PATH}/${encodeURIComponent(await monitorId(api, target))}`);
      print(shown, describeMonitor(shown));
      return EXIT_OK;
    }
    case 'history': {
      const id = await monitorId(api, target);
      const history = await api.request('GET', `${MONITORS_PATH}/${encodeURIComponent(id)}/history?page=${page}&limit=${limit}`);
      const lines = (history.history as any[]).map(describeEntry);
      print(history, lines.length === 0 ? 'No checks yet.' : [...lines, `${lines.length} of ${history.total}`].join('\n'));
      return EXIT_OK;
    }
    case 'run': {
      const id = await monitorId(api, target);
      const queued = await api.request('POST', `${MONITORS_PATH}/${encodeURIComponent(id)}/run`);
      print(queued, `Queued a check of ${target} (run ${queued.runId}); see it with 'spoof-checker monitor history ${target}'.`);
      return EXIT_OK;
    }
    case 'remove': {
      const id = await monitorId(api, target);
      const removed = await api.request('DELETE', `${MONITORS_PATH}/${encodeURIComponent(id)}`);
      print(removed, `Stopped watching ${target}; its history and deliveries are deleted.`);
      return EXIT_OK;
    }
  }
}
