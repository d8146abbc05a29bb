/**
 * The console's accounts as service functions, used by the console's pages and by
 * `spoof-checker users` alike (one implementation): invitations (a one-time link, valid
 * INVITATION_TTL_MS), accepting one (the password is set, or the existing one confirmed), listing
 * and removing users.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { normaliseDomainInput } from '@spoof-checker/engine';
import type { ConsoleInvitation, ConsoleRole, ConsoleStore, ConsoleUser } from '../store/console.js';
import { CONSOLE_ROLES } from '../store/console.js';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';

/** How long an invitation link works: 72 hours. */
export const INVITATION_TTL_MS = 72 * 3_600_000;
/** Random bytes of an invitation token (256 bits). */
export const INVITATION_TOKEN_BYTES = 32;
/** Longest email address accepted (RFC 5321 §4.5.3.1.3: a path is at most 256 octets). */
export const MAX_EMAIL_LENGTH = 254;
/** Where the console lives. */
export const CONSOLE_PATH = '/console';

/** SHA-256 (hex) of a secret: how tokens, session ids and codes are stored. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The path of an invitation link. */
export function invitationPath(token: string): string {
  return `${CONSOLE_PATH}/invite/${token}`;
}

/** The email address in its stored form (lower case), or why it is not one. */
export function normaliseEmail(text: string): { ok: true; email: string } | { ok: false; message: string } {
  const email = text.trim().toLowerCase();
  if (email.length === 0) return { ok: false, message: 'Enter an email address, such as ann@example.com.' };
  if (email.length > MAX_EMAIL_LENGTH) return { ok: false, message: `The email address is longer than ${MAX_EMAIL_LENGTH} characters.` };
  const at = email.lastIndexOf('@');
  if (at <= 0 || /[\s<>(),;:"\\[\]]/.test(email)) return { ok: false, message: `"${email.slice(0, 80)}" is not an email address: write it as name@example.com.` };
  const domain = normaliseDomainInput(email.slice(at + 1));
  if (!domain.ok) return { ok: false, message: `The domain of "${email.slice(0, 80)}" is not valid: ${domain.message}` };
  return { ok: true, email: `${email.slice(0, at)}@${domain.domain}` };
}

/** Whether `text` is a role. */
export function isRole(text: unknown): text is ConsoleRole {
  return typeof text === 'string' && (CONSOLE_ROLES as readonly string[]).includes(text);
}

/** The outcome of {@link invite}. */
export type InviteOutcome = { kind: 'invited'; token: string; path: string; invitation: ConsoleInvitation } | { kind: 'invalid'; message: string };

/** Makes a one-time invitation of `email` to the organisation with `role`; the token is returned this once. */
export async function invite(
  store: ConsoleStore,
  input: { organizationId: string; email: string; role: string; invitedBy: string; now: Date },
): Promise<InviteOutcome> {
  const email = normaliseEmail(input.email);
  if (!email.ok) return { kind: 'invalid', message: email.message };
  if (!isRole(input.role)) return { kind: 'invalid', message: `The role must be one of ${CONSOLE_ROLES.join(', ')}, not "${String(input.role).slice(0, 40)}".` };
  const token = randomBytes(INVITATION_TOKEN_BYTES).toString('base64url');
  const invitation: ConsoleInvitation = {
    tokenHash: secretHash(token),
    organizationId: input.organizationId,
    email: email.email,
    role: input.role,
    createdAt: input.now.toISOString(),
    expiresAt: new Date(input.now.getTime() + INVITATION_TTL_MS).toISOString(),
    invitedBy: input.invitedBy,
  };
  await store.addInvitation(invitation);
  return { kind: 'invited', token, path: invitationPath(token), invitation };
}

/** An invitation that can still be used, or undefined (unknown, used or expired: one answer). */
export async function openInvitation(store: ConsoleStore, token: string, now: Date): Promise<ConsoleInvitation | undefined> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
  const invitation = await store.getInvitation(secretHash(token));
  if (!invitation || invitation.expiresAt <= now.toISOString()) return undefined;
  return invitation;
}

/** The outcome of {@link acceptInvitation}. */
export type AcceptOutcome =
  | { kind: 'accepted'; user: ConsoleUser; organizationId: string }
  | { kind: 'gone' }
  | { kind: 'weak-password'; message: string }
  | { kind: 'mismatch'; message: string }
  | { kind: 'wrong-password' };

/**
 * Accepts an invitation: a new account sets its password (twice, the rules of passwords.ts); an
 * account that already has one confirms it. The invitation is used once, whoever races.
 */
export async function acceptInvitation(store: ConsoleStore, token: string, input: { password: string; confirm?: string; now: Date }): Promise<AcceptOutcome> {
  const invitation = await openInvitation(store, token, input.now);
  if (!invitation) return { kind: 'gone' };
  const existing = await store.findUserByEmail(invitation.email);
  let user: ConsoleUser;
  if (existing && existing.passwordHash !== null) {
    if (!(await verifyPassword(input.password, existing.passwordHash))) return { kind: 'wrong-password' };
    user = existing;
  } else {
    const problem = passwordProblem(input.password, invitation.email);
    if (problem !== null) return { kind: 'weak-password', message: problem };
    if (input.confirm !== undefined && input.confirm !== input.password) return { kind: 'mismatch', message: 'The two passwords differ: type the same one twice.' };
    const passwordHash = await hashPassword(input.password);
    if (existing) {
      await store.updateUser(existing.id, { passwordHash });
      user = { ...existing, passwordHash };
    } else {
      user = { id: `usr_${randomUUID()}`, email: invitation.email, passwordHash, totpSecret: null, totpLastStep: 0, recoveryCodes: [], createdAt: input.now.toISOString() };
      if ((await store.createUser(user)) === 'duplicate-email') {
        // Created meanwhile by another acceptance: that account sets its own password.
        return { kind: 'gone' };
      }
    }
  }
  if (!(await store.takeInvitation(invitation.tokenHash))) return { kind: 'gone' };
  const current = await store.getMembership(user.id, invitation.organizationId);
  // An invitation never lowers a role the person already has.
  const rank = (role: ConsoleRole) => CONSOLE_ROLES.indexOf(role);
  if (!current || rank(invitation.role) < rank(current.role)) {
    await store.putMembership({ userId: user.id, organizationId: invitation.organizationId, role: invitation.role, createdAt: current?.createdAt ?? input.now.toISOString() });
  }
  return { kind: 'accepted', user, organizationId: invitation.organizationId };
}

/** A user as `users list` prints them. */
export interface UserListing {
  email: string;
  active: boolean;
  totp: boolean;
  memberships: { organizationId: string; role: ConsoleRole }[];
}

/** An invitation not yet used nor expired, as `users list` shows it beside the users (marked). */
export interface InvitationListing extends UserListing {
  invitation: { createdAt: string; expiresAt: string };
}

/** Every open invitation (of every organisation), by address then organisation. */
export async function listInvitations(store: ConsoleStore, now: Date): Promise<InvitationListing[]> {
  const open = (await store.invitations(null)).filter((i) => i.expiresAt > now.toISOString());
  open.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0));
  return open.map((i) => ({ email: i.email, active: false, totp: false, memberships: [{ organizationId: i.organizationId, role: i.role }], invitation: { createdAt: i.createdAt, expiresAt: i.expiresAt } }));
}

/** Every user with their organisations. */
export async function listUsers(store: ConsoleStore): Promise<UserListing[]> {
  const users = await store.listUsers();
  const out: UserListing[] = [];
  for (const user of users) {
    const memberships = await store.membershipsOf(user.id);
    out.push({ email: user.email, active: user.passwordHash !== null, totp: user.totpSecret !== null, memberships: memberships.map((m) => ({ organizationId: m.organizationId, role: m.role })) });
  }
  return out;
}

/**
 * Removes a user from one organisation (or every one, and the account, without `organizationId`),
 * never the last owner of an organisation.
 */
export async function removeUser(store: ConsoleStore, email: string, organizationId?: string): Promise<'removed' | 'not-found' | { kind: 'last-owner'; organizationId: string }> {
  const normal = normaliseEmail(email);
  if (!normal.ok) return 'not-found';
  const user = await store.findUserByEmail(normal.email);
  if (!user) return 'not-found';
  const memberships = await store.membershipsOf(user.id);
  const targets = organizationId === undefined ? memberships : memberships.filter((m) => m.organizationId === organizationId);
  if (organizationId !== undefined && targets.length === 0) return 'not-found';
  for (const m of targets) {
    const outcome = await store.changeMembership(user.id, m.organizationId, null);
    if (outcome === 'last-owner') return { kind: 'last-owner', organizationId: m.organizationId };
  }
  if (organizationId === undefined || (await store.membershipsOf(user.id)).length === 0) await store.deleteUser(user.id);
  return 'removed';
}
