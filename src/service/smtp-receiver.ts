/**
 * The SMTP report receiver as the service starts it (`serve --smtp-port N`): one call,
 * `startSmtpReceiver`, that builds the receiver of src/ingest/smtp.ts over the service's stores,
 * listens, and says what it listens on. `startService` (src/service/start.ts) adds it as the
 * component `smtp`, after the stores (it writes to them) and stopped before them.
 *
 * The receiver stores reports through `keyFreeReportStore` with the service's one key redactor: a
 * key a report carries (in its org_name, its id, its file name) is refused there as at the API's
 * upload (issue 38 item 9).
 */
import type { Resolver } from '@spoof-checker/engine';
import { keyFreeReportStore, type KeyRedactor } from '../http/key-redaction.js';
import { SmtpReportReceiver } from '../ingest/smtp.js';
import type { Stores } from '../store/types.js';

/** Where and how large: the `smtp` section of the service's `ReportsConfig`. */
export interface SmtpReceiverConfig {
  host: string;
  port: number;
  maxMessageBytes?: number;
}

/** What `startSmtpReceiver` needs from the running service. */
export interface SmtpReceiverContext {
  stores: Pick<Stores, 'reports' | 'failureReports'>;
  /** Looks up report addresses and authenticates messages. */
  resolver: Resolver;
  /** Addresses that are always report addresses (`--report-address`). */
  reportAddresses: readonly string[];
  /** The service's report domain (the first report address's), or null when none is named. */
  serviceDomain: string | null;
  keyRedactor: KeyRedactor;
  log: (line: string) => void;
}

/** A listening receiver and the start-up lines that say where. */
export interface StartedSmtpReceiver {
  receiver: SmtpReportReceiver;
  /** For the start-up line (`ServiceHandle.notes`). */
  notes: string[];
  stop(): Promise<void>;
}

/** Build the report receiver over the service's stores and start it listening. */
export async function startSmtpReceiver(config: SmtpReceiverConfig, context: SmtpReceiverContext): Promise<StartedSmtpReceiver> {
  const { stores, reportAddresses, serviceDomain, log } = context;
  const receiver = new SmtpReportReceiver({
    store: keyFreeReportStore(stores.reports, context.keyRedactor),
    resolver: context.resolver,
    reportAddresses,
    host: config.host,
    port: config.port,
    ...(config.maxMessageBytes !== undefined ? { maxMessageBytes: config.maxMessageBytes } : {}),
    onError: (error) => log(`smtp: ${error instanceof Error ? error.message : String(error)}`),
    failures: stores.failureReports,
  });
  const bound = await receiver.start();
  const notes = [`SMTP report receiver on ${bound.host}:${bound.port}${reportAddresses.length > 0 ? ` for ${reportAddresses.join(', ')}` : ''} and the rua addresses of the zones`];
  // RFC 7489 §7.1: receivers send another domain's reports here only if that domain agrees.
  if (serviceDomain !== null) notes.push(`a domain sending its reports here publishes <domain>._report._dmarc.${serviceDomain} TXT "v=DMARC1"`);
  return { receiver, notes, stop: () => receiver.stop() };
}
