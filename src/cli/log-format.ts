/**
 * How `serve` writes its request log: JSON lines (pino's, one object per event) for machines, or
 * one short line per request for a person at a terminal:
 *
 *   15:42:07  GET /check/p-none.example  200  41 ms
 *
 * `--log-format json|short`; without it, short on a terminal and JSON anywhere else (a file, a
 * pipe, a log collector), so that nothing that parses the log changes.
 */

/** The formats `--log-format` takes. */
export const LOG_FORMATS = ['json', 'short'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Requests whose start line is held until they complete; past it the oldest is dropped (a request that never completes). */
const MAX_PENDING_REQUESTS = 10_000;
/** pino's level numbers, as words for the short format. */
const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** The format to use: the one asked for, else short on a terminal. */
export function logFormatFor(asked: string | undefined, stdoutIsTTY: boolean): LogFormat {
  if (asked === undefined) return stdoutIsTTY ? 'short' : 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(asked)) throw new Error(`--log-format must be ${LOG_FORMATS.join(' or ')}, not "${asked}"`);
  return asked as LogFormat;
}

/**
 * A writer for pino's lines in the short format: the request's method and path are kept from its
 * "incoming request" line and printed with the status and time when it completes; any other line
 * becomes its level and message. A line that is not JSON is passed through as it is.
 */
export function shortLogWriter(out: (text: string) => void): (line: string) => void {
  const pending = new Map<string, string>();
  return (line) => {
    let entry: { level?: number; time?: number; reqId?: string; msg?: string; req?: { method?: string; url?: string }; res?: { statusCode?: number }; responseTime?: number; err?: { message?: string } };
    try {
      entry = JSON.parse(line);
    } catch {
      out(line.endsWith('\n') ? line : `${line}\n`);
      return;
    }
    const time = new Date(entry.time ?? Date.now()).toTimeString().slice(0, 8);
    if (entry.req && entry.reqId !== undefined) {
      pending.set(entry.reqId, `${entry.req.method ?? '?'} ${entry.req.url ?? '?'}`);
      if (pending.size > MAX_PENDING_REQUESTS) pending.delete(pending.keys().next().value as string);
      return;
    }
    if (entry.res && entry.reqId !== undefined) {
      const request = pending.get(entry.reqId) ?? 'request';
      pending.delete(entry.reqId);
      out(`${time}  ${request}  ${entry.res.statusCode ?? '?'}  ${Math.round(entry.responseTime ?? 0)} ms\n`);
      return;
    }
    const level = LEVEL_NAMES[entry.level ?? 30] ?? 'info';
    out(`${time}  ${level === 'info' ? '' : `${level}: `}${entry.msg ?? ''}${entry.err?.message ? ` (${entry.err.message})` : ''}\n`);
  };
}
