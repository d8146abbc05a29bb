/**
 * Read-only links to one domain's report dashboard, for someone without an account (a consultant,
 * an auditor). Only the SHA-256 of a link's token is kept: the token itself is shown once, when the
 * link is made, and a stolen copy of the store opens nothing. A link expires and can be revoked;
 * both take effect at once, since every visit reads the link here.
 */

/** One share link. */
export interface ShareLink {
  id: string;
  /** SHA-256 (hex) of the token in the link's URL. */
  tokenHash: string;
  organizationId: string;
  /** The one domain it shows. */
  domain: string;
  /** A note of who it is for ("the auditor"), shown to the organisation only. */
  label: string;
  createdAt: string;
  /** The user who made it. */
  createdBy: string;
  expiresAt: string;
  /** When it was revoked, or null. */
  revokedAt: string | null;
}

/** Where share links are kept: memory, SQLite and PostgreSQL (test/store/share-links-contract.test.ts). */
export interface ShareLinkStore {
  create(link: ShareLink): Promise<void>;
  /** The link whose token hashes to `tokenHash` (revoked and expired ones too: the caller decides). */
  byTokenHash(tokenHash: string): Promise<ShareLink | undefined>;
  /** The organisation's links to `domain`, newest first. */
  list(organizationId: string, domain: string): Promise<ShareLink[]>;
  /** Revokes the organisation's link `id` at `at`; false when it is not the organisation's or was revoked already. */
  revoke(organizationId: string, id: string, at: string): Promise<boolean>;
}
