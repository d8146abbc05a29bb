import type { Resolver } from './dns/types.js';
import type { SpoofCheckResult } from './result.js';

/** Options of `checkDomain`. */
export interface CheckOptions {
  /** Where DNS answers come from. Required: the engine never reaches for a global resolver. */
  resolver: Resolver;
  /** DKIM selectors to probe before the built-in list. */
  selectors?: string[];
  /** Base URL for `nextStep.href`. */
  baseUrl?: string;
}

/**
 * Checks whether mail can be forged as `input` (a domain, URL or email address).
 * Throws `SpoofCheckError` when no verdict can be given (bad input, or a DNS failure on a lookup the
 * verdict rests on).
 */
export async function checkDomain(input: string, options: CheckOptions): Promise<SpoofCheckResult> {
  void input;
  void options;
  throw new Error('checkDomain: being written (issue 5)');
}
