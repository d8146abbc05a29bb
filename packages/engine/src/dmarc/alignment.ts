import { canonicalName } from '../dns/name.js';
import type { Resolver } from '../dns/types.js';
import { findOrganizationalDomain } from './discover.js';
import type { DmarcFailedQuery } from './discover.js';
import type { AlignmentMode } from './types.js';

/** Whether an authenticated identifier (SPF or DKIM domain) aligns with the author domain. */
export type AlignmentResult =
  | { status: 'aligned' | 'not-aligned'; authorOrganizationalDomain: string | null; identifierOrganizationalDomain: string | null; queries: string[] }
  | { status: 'temperror'; failedQuery: DmarcFailedQuery; queries: string[] };

/**
 * Identifier alignment (RFC 9989 §4.4, §4.10.2): strict needs the two names to be identical; relaxed
 * needs the same organizational domain, each found by its own DNS tree walk. Names compare
 * case-insensitively (RFC 4343). A failed walk query gives `temperror`, never "not aligned".
 */
export async function checkAlignment(
  authorDomain: string,
  identifier: string,
  mode: AlignmentMode,
  resolver: Resolver,
): Promise<AlignmentResult> {
  const author = canonicalName(authorDomain);
  const other = canonicalName(identifier);
  if (mode === 's' || author === other) {
    // RFC 9989 §4.10.2 note: strict alignment is a plain comparison; no tree walk needed.
    return { status: author === other ? 'aligned' : 'not-aligned', authorOrganizationalDomain: null, identifierOrganizationalDomain: null, queries: [] };
  }
  const authorOrg = await findOrganizationalDomain(author, resolver);
  if (authorOrg.status === 'temperror') return { status: 'temperror', failedQuery: authorOrg.failedQuery, queries: authorOrg.queries };
  const otherOrg = await findOrganizationalDomain(other, resolver);
  const queries = [...authorOrg.queries, ...otherOrg.queries];
  if (otherOrg.status === 'temperror') return { status: 'temperror', failedQuery: otherOrg.failedQuery, queries };
  return {
    status: authorOrg.organizationalDomain === otherOrg.organizationalDomain ? 'aligned' : 'not-aligned',
    authorOrganizationalDomain: authorOrg.organizationalDomain,
    identifierOrganizationalDomain: otherOrg.organizationalDomain,
    queries,
  };
}
