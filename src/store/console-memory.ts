/**
 * The console's store in memory (tests, `serve` without a database): every row copied in and out,
 * so that a caller never holds the stored object.
 */
import type { ConsoleApiKey, ConsoleInvitation, ConsoleMember, ConsoleMembership, ConsoleOrganizationSettings, ConsoleRole, ConsoleSession, ConsoleSessionView, ConsoleStore, ConsoleUser, LatestResult } from './console.js';
import type { Timestamp } from './page-types.js';
import { copy } from './pagination.js';

/** Failed sign-ins kept in memory (the oldest go first): a flood cannot grow the process without bound. */
export const MEMORY_FAILED_SIGN_IN_CAPACITY = 100_000;

const membershipKey = (userId: string, organizationId: string) => `${userId}\u0000${organizationId}`;

/** The memory implementation of {@link ConsoleStore}. */
export class MemoryConsoleStore implements ConsoleStore {
  readonly #users = new Map<string, ConsoleUser>();
  readonly #memberships = new Map<string, ConsoleMembership>();
  readonly #invitations = new Map<string, ConsoleInvitation>();
  readonly #sessions = new Map<string, ConsoleSession>();
  readonly #failures: { key: string; at: Timestamp }[] = [];
  readonly #settings = new Map<string, ConsoleOrganizationSettings>();
  readonly #keys = new Map<string, ConsoleApiKey>();
  readonly #latest = new Map<string, LatestResult>();

  async createUser(user: ConsoleUser): Promise<'created' | 'duplicate-email'> {
    if ([...this.#users.values()].some((u) => u.email === user.email)) return 'duplicate-email';
    this.#users.set(user.id, copy(user));
    return 'created';
  }
  async getUser(id: string): Promise<ConsoleUser | undefined> {
    const user = this.#users.get(id);
    return user && copy(user);
  }
  async findUserByEmail(email: string): Promise<ConsoleUser | undefined> {
    const user = [...this.#users.values()].find((u) => u.email === email);
    return user && copy(user);
  }
  async updateUser(id: string, patch: Partial<Pick<ConsoleUser, 'passwordHash' | 'totpSecret' | 'totpLastStep' | 'recoveryCodes'>>): Promise<boolean> {
    const user = this.#users.get(id);
    if (!user) return false;
    this.#users.set(id, { ...user, ...copy(patch) });
    return true;
  }
  async deleteUser(id: string): Promise<boolean> {
    if (!this.#users.delete(id)) return false;
    for (const [key, m] of this.#memberships) if (m.userId === id) this.#memberships.delete(key);
    await this.deleteSessionsOf(id);
    return true;
  }
  async listUsers(): Promise<ConsoleUser[]> {
    return [...this.#users.values()].map(copy).sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  }

  async putMembership(membership: ConsoleMembership): Promise<void> {
    this.#memberships.set(membershipKey(membership.userId, membership.organizationId), copy(membership));
  }
  async getMembership(userId: string, organizationId: string): Promise<ConsoleMembership | undefined> {
    const m = this.#memberships.get(membershipKey(userId, organizationId));
    return m && copy(m);
  }
  async membershipsOf(userId: string): Promise<ConsoleMembership[]> {
    return [...this.#memberships.values()].filter((m) => m.userId === userId).map(copy).sort((a, b) => (a.organizationId < b.organizationId ? -1 : 1));
  }
  async members(organizationId: string): Promise<ConsoleMember[]> {
    const out: ConsoleMember[] = [];
    for (const m of this.#memberships.values()) {
      if (m.organizationId !== organizationId) continue;
      const user = this.#users.get(m.userId);
      if (user) out.push({ ...copy(m), email: user.email, active: user.passwordHash !== null, totp: user.totpSecret !== null });
    }
    return out.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  }
  async changeMembership(userId: string, organizationId: string, role: ConsoleRole | null): Promise<'changed' | 'not-found' | 'last-owner'> {
    const key = membershipKey(userId, organizationId);
    const current = this.#memberships.get(key);
    if (!current) return 'not-found';
    if (current.role === 'owner' && role !== 'owner') {
      const owners = [...this.#memberships.values()].filter((m) => m.organizationId === organizationId && m.role === 'owner').length;
      if (owners <= 1) return 'last-owner';
    }
    if (role === null) {
      this.#memberships.delete(key);
      for (const [id, s] of this.#sessions) if (s.userId === userId && s.organizationId === organizationId) this.#sessions.delete(id);
    } else {
      this.#memberships.set(key, { ...current, role });
    }
    return 'changed';
  }

  async addInvitation(invitation: ConsoleInvitation): Promise<void> {
    this.#invitations.set(invitation.tokenHash, copy(invitation));
  }
  async getInvitation(tokenHash: string): Promise<ConsoleInvitation | undefined> {
    const i = this.#invitations.get(tokenHash);
    return i && copy(i);
  }
  async takeInvitation(tokenHash: string): Promise<boolean> {
    return this.#invitations.delete(tokenHash);
  }
  async invitations(organizationId: string | null): Promise<ConsoleInvitation[]> {
    return [...this.#invitations.values()].filter((i) => organizationId === null || i.organizationId === organizationId).map(copy).sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  async createSession(session: ConsoleSession): Promise<void> {
    this.#sessions.set(session.idHash, copy(session));
  }
  async getSession(idHash: string): Promise<ConsoleSession | undefined> {
    const s = this.#sessions.get(idHash);
    return s && copy(s);
  }
  async sessionView(idHash: string): Promise<ConsoleSessionView | undefined> {
    const session = await this.getSession(idHash);
    if (!session) return undefined;
    const memberships = await this.membershipsOf(session.userId);
    return {
      session,
      user: await this.getUser(session.userId),
      memberships: await Promise.all(memberships.map(async (membership) => ({ membership, organizationName: undefined, settings: await this.getSettings(membership.organizationId) }))),
    };
  }
  async updateSession(idHash: string, patch: Partial<Pick<ConsoleSession, 'organizationId' | 'lastSeenAt' | 'pendingSecondFactor'>>): Promise<boolean> {
    const s = this.#sessions.get(idHash);
    if (!s) return false;
    this.#sessions.set(idHash, { ...s, ...patch });
    return true;
  }
  async deleteSession(idHash: string): Promise<void> {
    this.#sessions.delete(idHash);
  }
  async deleteSessionsOf(userId: string): Promise<void> {
    for (const [id, s] of this.#sessions) if (s.userId === userId) this.#sessions.delete(id);
  }

  async addFailedSignIn(keys: string[], at: Timestamp): Promise<void> {
    for (const key of keys) this.#failures.push({ key, at });
    if (this.#failures.length > MEMORY_FAILED_SIGN_IN_CAPACITY) this.#failures.splice(0, this.#failures.length - MEMORY_FAILED_SIGN_IN_CAPACITY);
  }
  async failedSignIns(key: string, since: Timestamp): Promise<{ count: number; oldest: Timestamp | null }> {
    let count = 0;
    let oldest: Timestamp | null = null;
    for (const f of this.#failures) {
      if (f.key !== key || f.at < since) continue;
      count++;
      if (oldest === null || f.at < oldest) oldest = f.at;
    }
    return { count, oldest };
  }

  async getSettings(organizationId: string): Promise<ConsoleOrganizationSettings> {
    return copy(this.#settings.get(organizationId) ?? { organizationId, requireSecondFactor: false });
  }
  async putSettings(settings: ConsoleOrganizationSettings): Promise<void> {
    this.#settings.set(settings.organizationId, copy(settings));
  }

  async addApiKey(key: ConsoleApiKey): Promise<void> {
    this.#keys.set(key.id, copy(key));
  }
  async apiKeys(organizationId: string): Promise<ConsoleApiKey[]> {
    return [...this.#keys.values()].filter((k) => k.organizationId === organizationId).map(copy).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
  }
  async touchApiKey(organizationId: string, id: string, at: Timestamp): Promise<void> {
    const key = this.#keys.get(id);
    if (key && key.organizationId === organizationId && (key.lastUsedAt === null || key.lastUsedAt < at)) key.lastUsedAt = at;
  }
  async removeApiKey(organizationId: string, id: string): Promise<boolean> {
    const key = this.#keys.get(id);
    if (!key || key.organizationId !== organizationId) return false;
    return this.#keys.delete(id);
  }

  async putLatestResult(result: LatestResult): Promise<void> {
    const current = this.#latest.get(result.domain);
    // A slower, older run never replaces a newer result.
    if (current && current.checkedAt > result.checkedAt) return;
    this.#latest.set(result.domain, copy(result));
  }
  async getLatestResult(domain: string): Promise<LatestResult | undefined> {
    const r = this.#latest.get(domain);
    return r && copy(r);
  }

  async prune(now: Timestamp, failuresBefore: Timestamp): Promise<number> {
    let deleted = 0;
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) (this.#sessions.delete(id), deleted++);
    for (const [id, i] of this.#invitations) if (i.expiresAt <= now) (this.#invitations.delete(id), deleted++);
    const before = this.#failures.length;
    const kept = this.#failures.filter((f) => f.at >= failuresBefore);
    this.#failures.splice(0, this.#failures.length, ...kept);
    return deleted + before - kept.length;
  }
}
