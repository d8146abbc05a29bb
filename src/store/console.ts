/**
 * The console's store: people who sign in (users), the organisations they belong to with a role
 * (memberships), the one-time links that add them (invitations), their sessions, the failed
 * sign-ins that the limits count, the API keys' names as the console shows them, and the latest
 * full result of each monitored domain (so that the overview and a domain page read rows, never run
 * checks). One interface, a memory implementation (console-memory.ts) and a SQL one
 * (console-sql.ts, migration `0010_console`); test/store/console-contract.test.ts runs against all three.
 *
 * Secrets are never stored as given: a session id, an invitation token and a recovery code are kept
 * as their SHA-256 (hex), a password as its scrypt hash (src/console/passwords.ts).
 */
import type { Timestamp } from './page-types.js';

/** What a member may do in an organisation (docs/console.md). */
export type ConsoleRole = 'owner' | 'admin' | 'viewer';
/** Every value of {@link ConsoleRole}, most powerful first. */
export const CONSOLE_ROLES: readonly ConsoleRole[] = ['owner', 'admin', 'viewer'];

/** A person who signs in. `email` is kept in lower case (one account per address). */
export interface ConsoleUser {
  id: string;
  email: string;
  /** The scrypt hash (`scrypt$…`), or null until the invitation is accepted. */
  passwordHash: string | null;
  /** The TOTP secret (RFC 6238), base32, once the user turned the second factor on; else null. */
  totpSecret: string | null;
  /** The last TOTP time step accepted (a code is never accepted twice). */
  totpLastStep: number;
  /** SHA-256 (hex) of each unused recovery code. */
  recoveryCodes: string[];
  createdAt: Timestamp;
}

/** A user's place in an organisation. */
export interface ConsoleMembership {
  userId: string;
  organizationId: string;
  role: ConsoleRole;
  createdAt: Timestamp;
}

/** A member as the members page lists them. */
export interface ConsoleMember extends ConsoleMembership {
  email: string;
  /** False until the invitation's password is set. */
  active: boolean;
  totp: boolean;
}

/** A one-time link that adds `email` to the organisation with `role`. */
export interface ConsoleInvitation {
  /** SHA-256 (hex) of the token in the link. */
  tokenHash: string;
  organizationId: string;
  email: string;
  role: ConsoleRole;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  /** Who invited: a user id, or `cli` for `spoof-checker users add`. */
  invitedBy: string;
}

/** A signed-in session, server-side. */
export interface ConsoleSession {
  /** SHA-256 (hex) of the session id in the cookie. */
  idHash: string;
  userId: string;
  /** The organisation the user is looking at. */
  organizationId: string;
  createdAt: Timestamp;
  lastSeenAt: Timestamp;
  /** The absolute end (createdAt + 7 days). */
  expiresAt: Timestamp;
  /** True while the password was right but the second factor is still to be given. */
  pendingSecondFactor: boolean;
}

/** An organisation's console settings. */
export interface ConsoleOrganizationSettings {
  organizationId: string;
  /** Members must sign in with a second factor. */
  requireSecondFactor: boolean;
}

/** An API key as the console lists it (the key itself is in the API's key store, as its digest only). */
export interface ConsoleApiKey {
  id: string;
  organizationId: string;
  name: string;
  createdAt: Timestamp;
  createdBy: string;
  lastUsedAt: Timestamp | null;
}

/** The latest full check result of a domain (JSON of the API's result), written by every monitor run. */
export interface LatestResult {
  domain: string;
  checkedAt: Timestamp;
  /** The API's result, as JSON text. */
  result: string;
}

/** What {@link ConsoleStore.sessionView} reads. */
export interface ConsoleSessionView {
  session: ConsoleSession;
  user: ConsoleUser | undefined;
  memberships: { membership: ConsoleMembership; organizationName: string | null | undefined; settings: ConsoleOrganizationSettings }[];
}

/** Storage of the console's accounts, sessions and its views' rows. */
export interface ConsoleStore {
  /** A new user; `duplicate-email` when the address has an account. */
  createUser(user: ConsoleUser): Promise<'created' | 'duplicate-email'>;
  getUser(id: string): Promise<ConsoleUser | undefined>;
  findUserByEmail(email: string): Promise<ConsoleUser | undefined>;
  /** Sets the fields given; false when the user is unknown. */
  updateUser(id: string, patch: Partial<Pick<ConsoleUser, 'passwordHash' | 'totpSecret' | 'totpLastStep' | 'recoveryCodes'>>): Promise<boolean>;
  /** Deletes the user with their memberships and sessions. */
  deleteUser(id: string): Promise<boolean>;
  /** Every user, by email (`users list`). */
  listUsers(): Promise<ConsoleUser[]>;

  /** Adds or changes a membership. */
  putMembership(membership: ConsoleMembership): Promise<void>;
  getMembership(userId: string, organizationId: string): Promise<ConsoleMembership | undefined>;
  /** The user's memberships, by organisation id. */
  membershipsOf(userId: string): Promise<ConsoleMembership[]>;
  /** The organisation's members, by email. */
  members(organizationId: string): Promise<ConsoleMember[]>;
  /**
   * Removes a membership (and the sessions on that organisation), or changes its role, unless that
   * leaves the organisation without an owner: `last-owner` then, and nothing changes. Done in one
   * transaction on SQL, so two owners demoting each other at once cannot both succeed.
   */
  changeMembership(userId: string, organizationId: string, role: ConsoleRole | null): Promise<'changed' | 'not-found' | 'last-owner'>;

  addInvitation(invitation: ConsoleInvitation): Promise<void>;
  /** The invitation with this token hash, if it exists (expired ones included: the caller says so). */
  getInvitation(tokenHash: string): Promise<ConsoleInvitation | undefined>;
  /** Deletes the invitation; true when this call deleted it (it is used once, whoever races). */
  takeInvitation(tokenHash: string): Promise<boolean>;
  /** Open invitations of the organisation (of every organisation when null: `users list`), newest first. */
  invitations(organizationId: string | null): Promise<ConsoleInvitation[]>;

  createSession(session: ConsoleSession): Promise<void>;
  getSession(idHash: string): Promise<ConsoleSession | undefined>;
  /**
   * A session with what a page needs of its user, in one read (the console's pages): the session,
   * its user (undefined if gone) and the user's memberships by organisation id, each with its
   * organisation's settings and, where the store can read it beside, its name (null: no such
   * organisation; undefined: not read here). Undefined if there is no such session.
   */
  sessionView(idHash: string): Promise<ConsoleSessionView | undefined>;
  /** Sets the fields given; false when the session is gone. */
  updateSession(idHash: string, patch: Partial<Pick<ConsoleSession, 'organizationId' | 'lastSeenAt' | 'pendingSecondFactor'>>): Promise<boolean>;
  deleteSession(idHash: string): Promise<void>;
  /** Ends every session of a user (a password change, a removal). */
  deleteSessionsOf(userId: string): Promise<void>;

  /** Records a failed sign-in under each key (the account, the client address). */
  addFailedSignIn(keys: string[], at: Timestamp): Promise<void>;
  /** Failures under `key` at or after `since`, and the oldest of them (for Retry-After). */
  failedSignIns(key: string, since: Timestamp): Promise<{ count: number; oldest: Timestamp | null }>;

  getSettings(organizationId: string): Promise<ConsoleOrganizationSettings>;
  putSettings(settings: ConsoleOrganizationSettings): Promise<void>;

  addApiKey(key: ConsoleApiKey): Promise<void>;
  /** The organisation's keys as the console lists them, newest first. */
  apiKeys(organizationId: string): Promise<ConsoleApiKey[]>;
  /** Sets when the key was last used (the API found it); nothing when the console did not make it. */
  touchApiKey(organizationId: string, id: string, at: Timestamp): Promise<void>;
  /** Removes the console's row of the key; false when it is not the organisation's. */
  removeApiKey(organizationId: string, id: string): Promise<boolean>;

  /** Keeps the latest result of a domain (the older one is replaced). */
  putLatestResult(result: LatestResult): Promise<void>;
  getLatestResult(domain: string): Promise<LatestResult | undefined>;

  /** Deletes expired sessions, invitations and old failed sign-ins; how many rows went. */
  prune(now: Timestamp, failuresBefore: Timestamp): Promise<number>;
}
