/**
 * DNSSEC for the records a spoof check rests on: the domain's TXT (SPF), its `_dmarc` TXT and its
 * MX, each validated from a trust anchor (`Validator`); the overall state is the weakest of them.
 * `not-checked`, with the reason, when validation was not asked for or turned off, when no trust
 * anchor covers the domain, or when the resolver's answers carry no DNSSEC at all for the anchor's
 * zone (zone files, a resolver that strips it). The spoof verdict never depends on it.
 */
import { EDE, type DnssecReason, type DnssecStatus, type RawQuery, type RawResponse, type TrustAnchor } from './types.js';
import { type DnssecCache, Validator, weakest } from './validate.js';
import { TYPE } from '../dns/canonical.js';
import type { Finding, SectionEnvelope } from '../findings.js';

/** A result's DNSSEC state: a validator's state, or `not-checked` (never shown as secure). */
export type DnssecResultStatus = DnssecStatus | 'not-checked';

/** One RRset the verdict rests on, and its state. */
export interface DnssecRRsetResult {
  name: string;
  type: 'TXT' | 'MX';
  status: DnssecStatus;
  reason: DnssecReason;
}

/** `result.dnssec`. */
export interface DnssecResult {
  status: DnssecResultStatus;
  reason: DnssecReason;
  rrsets: DnssecRRsetResult[];
  /**
   * When the first of the signatures this validation relied on expires (ISO 8601), or null when
   * nothing verified: a zone that is not re-signed in time turns bogus then (monitors alert ahead).
   */
  signaturesExpire: string | null;
  /**
   * The section envelope (`SectionEnvelope`, added by `withDnssecEnvelope` in a spoof check): what the
   * state means for mail; none when not checked. Results stored before the envelope existed lack it.
   */
  findings?: Finding[];
  /** What to do, in order (for a bogus state, how to make the zone validate again); none otherwise. */
  nextSteps?: string[];
}

/** The core of `result.dnssec`, before its envelope. */
export type DnssecState = Omit<DnssecResult, 'findings' | 'nextSteps'>;

/** `result.dnssec` as every check now writes it: with its envelope (`withDnssecEnvelope`). */
export type DnssecSection = DnssecResult & SectionEnvelope<DnssecResultStatus>;

/** The finding of each checked state (RFC 4035 §4.3): secure, insecure, bogus, indeterminate. */
const STATE_FINDINGS: Record<DnssecStatus, Omit<Finding, 'detail'> & { why: string }> = {
  secure: { id: 'dnssec-secure', severity: 'success', title: 'DNSSEC Verified', why: '' },
  insecure: { id: 'dnssec-insecure', severity: 'info', title: 'Mail Records Not Signed', why: ' Nothing proves these answers authentic, so a resolver cannot tell a forged answer from a real one.' },
  bogus: { id: 'dnssec-bogus', severity: 'critical', title: 'DNSSEC Validation Fails', why: ' Validating resolvers refuse these answers (SERVFAIL): to them the SPF, DMARC and MX records cannot be read at all.' },
  indeterminate: { id: 'dnssec-indeterminate', severity: 'warning', title: 'DNSSEC Could Not Be Settled', why: ' Whether the answers are authentic could not be decided.' },
};

/** How to make a bogus zone validate again, by its RFC 8914 Extended DNS Error code. */
function bogusFix(code: number | null): string {
  switch (code) {
    case EDE.SIGNATURE_EXPIRED: return 'Sign the zone again (its signatures have expired), and have the signer re-sign it automatically well before they expire.';
    case EDE.SIGNATURE_NOT_YET_VALID: return "Sign the zone again with the signer's clock right: its signatures only start in the future.";
    case EDE.DNSKEY_MISSING: return "Make the DS at the registrar match a key the zone publishes: publish that key again, or replace the DS with the current key's.";
    case EDE.RRSIGS_MISSING: return 'Sign the zone again: some of its records carry no signature.';
    case EDE.NSEC_MISSING: return 'Sign the zone again: its proofs that names do not exist (NSEC or NSEC3) are missing.';
    default: return 'Sign the zone again from its current data, or, if it should not be signed, remove the DS at the registrar.';
  }
}

/** `state` with the section envelope: its finding and next steps (none when not checked). */
export function withDnssecEnvelope(state: DnssecState): DnssecSection {
  if (state.status === 'not-checked') return { ...state, findings: [], nextSteps: [] };
  const { why, ...finding } = STATE_FINDINGS[state.status];
  return { ...state, findings: [{ ...finding, detail: `${state.reason.text}${why}` }], nextSteps: state.status === 'bogus' ? [bogusFix(state.reason.code)] : [] };
}

/** `CheckOptions.dnssec`: how to ask (DO and CD), from which anchors, at what time. */
export interface CheckDnssecOptions {
  query: RawQuery;
  anchors: readonly TrustAnchor[];
  /** Seconds since the epoch; the real clock unless a test injects one. */
  now?: () => number;
  /** Zone states shared between checks that use the same query and anchors (`DnssecCache`). */
  cache?: DnssecCache | undefined;
}

/** The `not-checked` result with its reason. */
export function dnssecNotChecked(text: string, code: number | null = null): DnssecResult {
  return { status: 'not-checked', reason: { code, text }, rrsets: [], signaturesExpire: null };
}

/** Validation under way for one domain; `finish` adds the DMARC record's name and gives the result. */
export interface DnssecWork {
  finish(dmarcName: string): Promise<DnssecResult>;
}

/** The check's DNS deadline, which validation shares (`CheckOptions.deadlineMs`, `signal`). */
export interface DnssecDeadline {
  /** Wall time from the start of validation, in milliseconds. */
  deadlineMs: number;
  /** Aborting it ends validation's DNS work as the check's. */
  signal?: AbortSignal | undefined;
  /** The clock, in milliseconds; `Date.now` unless a test injects one. */
  now?: () => number;
}

/**
 * `query` bound by the check's deadline: after it (or once `signal` aborts) nothing more is asked,
 * and a question still waiting then fails at the deadline, so a resolver that answers slowly (or
 * never) cannot hold a check past it. Validation then says `indeterminate`, naming the deadline.
 */
export function queryWithinDeadline(query: RawQuery, deadline: DnssecDeadline): RawQuery {
  const now = deadline.now ?? Date.now;
  const endsAt = now() + deadline.deadlineMs;
  const passed = (): RawResponse => ({ kind: 'error', detail: deadline.signal?.aborted ? 'the check was cancelled' : `the check's ${deadline.deadlineMs} ms DNS deadline has passed` });
  return (name, type) => {
    const left = endsAt - now();
    if (left <= 0 || deadline.signal?.aborted) return Promise.resolve(passed());
    return new Promise<RawResponse>((resolve) => {
      let settled = false;
      const settle = (response: RawResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        deadline.signal?.removeEventListener('abort', onAbort);
        resolve(response);
      };
      const onAbort = (): void => settle(passed());
      const timer = setTimeout(() => settle(passed()), left);
      deadline.signal?.addEventListener('abort', onAbort, { once: true });
      query(name, type).then(settle, (error: unknown) => settle({ kind: 'error', detail: error instanceof Error ? error.message : String(error) }));
    });
  };
}

/**
 * Starts validating `domain`'s TXT and MX (and `_dmarc.<domain>`) at once; `finish(dmarcName)`
 * validates the name the DMARC record was found at when it is another, then reports. Never rejects.
 * With `deadline` (the check's), no question is asked or waited for past it.
 */
export function startDnssec(domain: string, options: CheckDnssecOptions, deadline?: DnssecDeadline): DnssecWork {
  // Questions in flight are shared with the other checks of the cache, under this check's deadline.
  const shared = options.cache ? options.cache.share(options.query) : options.query;
  const query = deadline ? queryWithinDeadline(shared, deadline) : shared;
  const validator = new Validator({ query, anchors: options.anchors, cache: options.cache, ...(options.now ? { now: options.now } : {}) });
  const anchor = validator.anchorZoneOf(domain);
  if (anchor === undefined) {
    const result = dnssecNotChecked(`No trust anchor covers ${domain}: nothing to validate from.`);
    return { finish: async () => result };
  }
  // The anchor's DNSKEY answer is kept (by the validator, and by the cache for the checks after):
  // the walk reads it rather than asking again.
  const material = validator.anchorHasMaterial(anchor);
  const one = async (name: string, type: 'TXT' | 'MX'): Promise<DnssecRRsetResult> => {
    try {
      const result = await validator.validate(name, TYPE[type]);
      return { name, type, status: result.status, reason: result.reason };
    } catch (error) {
      return { name, type, status: 'indeterminate', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `Validation failed: ${error instanceof Error ? error.message : String(error)}` } };
    }
  };
  const defaultDmarc = `_dmarc.${domain}`;
  // Nothing more is asked of a resolver whose answers carry no DNSSEC at all.
  const started = material.then((present) => (present ? Promise.all([one(domain, 'TXT'), one(defaultDmarc, 'TXT'), one(domain, 'MX')]) : null));
  return {
    finish: async (dmarcName) => {
      const done = await started;
      if (!done) {
        return dnssecNotChecked(`The resolver's answers carry no DNSKEY for the trust anchor's zone ${anchor || '.'}: DNSSEC could not be checked (zone files, or a resolver that strips DNSSEC).`, EDE.DNSKEY_MISSING);
      }
      const [txt, dmarc, mx] = done;
      const rrsets = [txt, dmarcName === defaultDmarc ? dmarc : await one(dmarcName, 'TXT'), mx] as DnssecRRsetResult[];
      const worst = weakest(rrsets) as DnssecRRsetResult;
      const reason = worst.status === 'secure' ? { code: null, text: 'The SPF, DMARC and MX answers are signed and verify from the trust anchor down.' } : worst.reason;
      const earliest = validator.earliestExpiration();
      return { status: worst.status, reason, rrsets, signaturesExpire: earliest === undefined ? null : new Date(earliest * 1000).toISOString() };
    },
  };
}
