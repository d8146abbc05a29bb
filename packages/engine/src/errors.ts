import type { DnsErrorReason, RecordType } from './dns/types.js';

/**
 * Why a check gave no verdict. These are the only refusals `checkDomain` makes; every other DNS
 * condition becomes a finding. The HTTP catalogue (src/http/errors.ts) and the CLI map them by code.
 */
export type CheckErrorCode =
  /** The input is not a domain name, URL or address we can check (HTTP 400). */
  | 'invalid_domain'
  /** A lookup the verdict rests on failed: SERVFAIL, REFUSED or a malformed answer (HTTP 502). */
  | 'dns_failure'
  /** A lookup the verdict rests on timed out, or the per-check budget ran out (HTTP 503). */
  | 'dns_timeout'
  /** The registrable domain does not exist (NXDOMAIN, RFC 8020): nothing to judge (HTTP 422). */
  | 'domain_not_found';

/** The DNS query a refusal rests on. */
export interface FailedQuery {
  name: string;
  type: RecordType;
  reason: DnsErrorReason;
  detail?: string;
}

/**
 * Thrown by `checkDomain` when it cannot give a verdict. `message` says what went wrong, `why` the
 * consequence, `fix` what to do about it; `query` names the DNS lookup when one failed.
 */
export class SpoofCheckError extends Error {
  override readonly name = 'SpoofCheckError' as const;
  readonly code: CheckErrorCode;
  readonly why: string;
  readonly fix: string;
  readonly query: FailedQuery | undefined;

  constructor(code: CheckErrorCode, message: string, details: { why: string; fix: string; query?: FailedQuery }) {
    super(message);
    this.code = code;
    this.why = details.why;
    this.fix = details.fix;
    this.query = details.query;
  }
}

/** Cross-realm type guard (an error from another copy of the package still counts). */
export function isSpoofCheckError(error: unknown): error is SpoofCheckError {
  return error instanceof Error && error.name === 'SpoofCheckError' && 'code' in error && 'why' in error;
}
