/**
 * Whether an address is a report address: given by the operator (`--report-address`), or named in a
 * `mailto:` URI of the `rua` (or `ruf`) of the DMARC record (RFC 7489 §6.3, RFC 9989) or of the TLS-RPT record
 * (RFC 8460 §3) of its own domain, looked up through the configured resolver (or zones). Every other
 * recipient is refused at RCPT, so the receiver is never an open drop box.
 *
 * A DNS failure is never a missing record: it is `unknown` (the SMTP receiver answers 451, try
 * later), not a refusal.
 */
import { parseDmarcRecord, parseTlsRptRecord, type Resolver } from '@spoof-checker/engine';

/** How long an answer about one address is kept (positive and negative alike). */
export const REPORT_ADDRESS_CACHE_MS = 60_000;
/** Addresses whose answer is kept at most. */
export const REPORT_ADDRESS_CACHE_ENTRIES = 1_000;

/** The answer for one address. */
export type ReportAddressVerdict =
  | { kind: 'report-address'; via: 'configured' | 'dmarc' | 'tlsrpt' }
  | { kind: 'not-report-address' }
  | { kind: 'unknown'; detail: string };

/** Lower-cases the domain (and the local part: report addresses are compared without case). */
export function normaliseAddress(address: string): string {
  return address.trim().replace(/^<|>$/g, '').toLowerCase();
}

/**
 * The `mailto:` addresses of a TLS-RPT record's `rua` (RFC 8460 §3: `v=TLSRPTv1; rua=mailto:…,https:…`),
 * read by the engine's own parser (`parseTlsRptRecord`, the one the transport check uses): a record it
 * refuses names no address. Null when the record is not a valid TLS-RPT record.
 */
export function tlsRptMailtos(record: string): string[] | null {
  const parsed = parseTlsRptRecord(record);
  if (!parsed.ok) return null;
  const addresses: string[] = [];
  for (const uri of parsed.rua) {
    if (!/^mailto:/i.test(uri)) continue;
    try {
      addresses.push(normaliseAddress(decodeURIComponent(uri.slice('mailto:'.length).split('?')[0]!)));
    } catch {
      // A URI that does not decode names no address.
    }
  }
  return addresses;
}

/** Decides whether recipients are report addresses, with a small cache. */
export class ReportAddressCheck {
  readonly #configured: Set<string>;
  readonly #resolver: Resolver | undefined;
  readonly #cache = new Map<string, { verdict: ReportAddressVerdict; until: number }>();
  readonly #now: () => number;

  constructor(options: { configured: readonly string[]; resolver?: Resolver; now?: () => number }) {
    this.#configured = new Set(options.configured.map(normaliseAddress));
    this.#resolver = options.resolver;
    this.#now = options.now ?? Date.now;
  }

  /** The addresses given with `--report-address`. */
  get configured(): string[] {
    return [...this.#configured];
  }

  async check(address: string): Promise<ReportAddressVerdict> {
    const normalised = normaliseAddress(address);
    if (this.#configured.has(normalised)) return { kind: 'report-address', via: 'configured' };
    const at = normalised.lastIndexOf('@');
    if (at <= 0 || at === normalised.length - 1 || !this.#resolver) return { kind: 'not-report-address' };
    const cached = this.#cache.get(normalised);
    if (cached && cached.until > this.#now()) return cached.verdict;
    const verdict = await this.#lookup(normalised, normalised.slice(at + 1), this.#resolver);
    if (this.#cache.size >= REPORT_ADDRESS_CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    // A failure is not remembered: the next attempt asks again.
    if (verdict.kind !== 'unknown') this.#cache.set(normalised, { verdict, until: this.#now() + REPORT_ADDRESS_CACHE_MS });
    return verdict;
  }

  async #lookup(address: string, domain: string, resolver: Resolver): Promise<ReportAddressVerdict> {
    const [dmarc, tlsrpt] = await Promise.all([resolver.resolve(`_dmarc.${domain}`, 'TXT'), resolver.resolve(`_smtp._tls.${domain}`, 'TXT')]);
    if (dmarc.kind === 'records') {
      for (const txt of dmarc.records) {
        const parsed = parseDmarcRecord(txt);
        // `ruf` too: failure reports (RFC 6591) come to the addresses it names (src/ingest/failure-reports.ts).
        if (parsed.kind === 'record' && [...parsed.record.rua, ...parsed.record.ruf].some((uri) => uri.address !== null && normaliseAddress(uri.address) === address)) {
          return { kind: 'report-address', via: 'dmarc' };
        }
      }
    }
    if (tlsrpt.kind === 'records') {
      for (const txt of tlsrpt.records) {
        if (tlsRptMailtos(txt.join(''))?.includes(address)) return { kind: 'report-address', via: 'tlsrpt' };
      }
    }
    const failed = [dmarc, tlsrpt].find((a) => a.kind === 'error');
    if (failed && failed.kind === 'error') return { kind: 'unknown', detail: `the DNS lookup for ${domain}'s report records failed (${failed.reason})` };
    return { kind: 'not-report-address' };
  }
}
