/**
 * The console's store in SQL (SQLite or PostgreSQL) on Kysely, created by migration `0010_console`.
 * Timestamps are ISO 8601 text in UTC (they sort as text); lists are JSON text.
 */
import { sql, type Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { ConsoleApiKey, ConsoleInvitation, ConsoleMember, ConsoleMembership, ConsoleOrganizationSettings, ConsoleRole, ConsoleSession, ConsoleSessionView, ConsoleStore, ConsoleUser, LatestResult } from './console.js';
import type { MigrationFactory, SqlDialectName } from './migration-types.js';
import type { Timestamp } from './page-types.js';
import { flagsFromColumns, flagsToColumns, fromColumns, json, parse, toColumns } from './sql-values.js';

/** The console's tables, as Kysely sees them. */
export interface ConsoleTables {
  console_users: {
    id: string;
    email: string;
    password_hash: string | null;
    totp_secret: string | null;
    totp_last_step: number;
    /** JSON string[] of SHA-256 hex digests. */
    recovery_codes: string;
    created_at: string;
  };
  console_memberships: { user_id: string; organization_id: string; role: ConsoleRole; created_at: string };
  console_invitations: { token_hash: string; organization_id: string; email: string; role: ConsoleRole; created_at: string; expires_at: string; invited_by: string };
  console_sessions: { id_hash: string; user_id: string; organization_id: string; created_at: string; last_seen_at: string; expires_at: string; pending_second_factor: number };
  console_sign_in_failures: { key: string; at: string };
  console_settings: { organization_id: string; require_second_factor: number };
  console_api_keys: { id: string; organization_id: string; name: string; created_at: string; created_by: string; last_used_at: string | null };
  console_latest_results: { domain: string; checked_at: string; result: string };
}

/** The migration that creates the console's tables (`0010_console` in src/store/migrations.ts; forward-only). */
export const createConsoleTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'console_users', {
      id: 'key', email: { type: 'text', unique: true }, password_hash: 'text?', totp_secret: 'text?', totp_last_step: { type: 'bigint', defaultTo: 0 },
      recovery_codes: 'text', created_at: 'text',
    }).execute();
    await createTable(db, context, 'console_memberships', { user_id: 'text', organization_id: 'text', role: 'text', created_at: 'text' })
      .addPrimaryKeyConstraint('console_memberships_pk', ['user_id', 'organization_id'])
      .execute();
    await db.schema.createIndex('console_memberships_by_organization').on('console_memberships').columns(['organization_id', 'role']).execute();
    await createTable(db, context, 'console_invitations', {
      token_hash: 'key', organization_id: 'text', email: 'text', role: 'text', created_at: 'text', expires_at: 'text', invited_by: 'text',
    }).execute();
    await db.schema.createIndex('console_invitations_by_organization').on('console_invitations').columns(['organization_id', 'created_at']).execute();
    await createTable(db, context, 'console_sessions', {
      id_hash: 'key', user_id: 'text', organization_id: 'text', created_at: 'text', last_seen_at: 'text', expires_at: 'text', pending_second_factor: 'integer',
    }).execute();
    await db.schema.createIndex('console_sessions_by_user').on('console_sessions').column('user_id').execute();
    await db.schema.createIndex('console_sessions_by_expiry').on('console_sessions').column('expires_at').execute();
    await createTable(db, context, 'console_sign_in_failures', { key: 'text', at: 'text' }).execute();
    await db.schema.createIndex('console_sign_in_failures_by_key').on('console_sign_in_failures').columns(['key', 'at']).execute();
    await db.schema.createIndex('console_sign_in_failures_by_age').on('console_sign_in_failures').column('at').execute();
    await createTable(db, context, 'console_settings', { organization_id: 'key', require_second_factor: 'integer' }).execute();
    await createTable(db, context, 'console_api_keys', {
      id: 'key', organization_id: 'text', name: 'text', created_at: 'text', created_by: 'text', last_used_at: 'text?',
    }).execute();
    await db.schema.createIndex('console_api_keys_by_organization').on('console_api_keys').columns(['organization_id', 'created_at']).execute();
    await createTable(db, context, 'console_latest_results', { domain: 'key', checked_at: 'text', result: 'text' }).execute();
  },
});

type UserRow = ConsoleTables['console_users'];
/** A row of {@link SqlConsoleStore.sessionView}: the session, its user, one membership with its organisation's name and settings. */
type SessionViewRow = ConsoleTables['console_sessions'] & { [K in keyof UserRow as `u_${K}`]: UserRow[K] | null } & {
  m_organization_id: string | null;
  m_role: ConsoleRole | null;
  m_created_at: string | null;
  o_name: string | null;
  cs_require_second_factor: number | string | null;
};
/** The fields of each console row held as they are. */
const USER_FIELDS = ['id', 'email', 'passwordHash', 'totpSecret', 'createdAt'] as const;
const MEMBERSHIP_FIELDS = ['userId', 'organizationId', 'role', 'createdAt'] as const;
const INVITATION_FIELDS = ['tokenHash', 'organizationId', 'email', 'role', 'createdAt', 'expiresAt', 'invitedBy'] as const;
const SESSION_FIELDS = ['idHash', 'userId', 'organizationId', 'createdAt', 'lastSeenAt', 'expiresAt'] as const;
const KEY_FIELDS = ['id', 'organizationId', 'name', 'createdAt', 'createdBy', 'lastUsedAt'] as const;

function toUser(row: UserRow): ConsoleUser {
  return { ...fromColumns(row, USER_FIELDS), totpLastStep: Number(row.totp_last_step), recoveryCodes: parse<string[]>(row.recovery_codes) };
}
const toMembership = (row: ConsoleTables['console_memberships']): ConsoleMembership => fromColumns(row, MEMBERSHIP_FIELDS);
const toInvitation = (row: ConsoleTables['console_invitations']): ConsoleInvitation => fromColumns(row, INVITATION_FIELDS);
const toSession = (row: ConsoleTables['console_sessions']): ConsoleSession => ({ ...fromColumns(row, SESSION_FIELDS), ...flagsFromColumns(row, ['pendingSecondFactor']) });
const toKey = (row: ConsoleTables['console_api_keys']): ConsoleApiKey => fromColumns(row, KEY_FIELDS);

/** The SQL implementation of {@link ConsoleStore}. */
export class SqlConsoleStore implements ConsoleStore {
  readonly #db: Kysely<ConsoleTables>;
  readonly #dialect: SqlDialectName;
  readonly #isUniqueViolation: (error: unknown) => boolean;

  constructor(db: Kysely<any>, dialect: SqlDialectName, isUniqueViolation: (error: unknown) => boolean) {
    this.#db = db as Kysely<ConsoleTables>;
    this.#dialect = dialect;
    this.#isUniqueViolation = isUniqueViolation;
  }

  async createUser(user: ConsoleUser): Promise<'created' | 'duplicate-email'> {
    try {
      await this.#db
        .insertInto('console_users')
        .values({ ...toColumns(user, USER_FIELDS), totp_last_step: user.totpLastStep, recovery_codes: json(user.recoveryCodes) })
        .execute();
      return 'created';
    } catch (error) {
      if (this.#isUniqueViolation(error)) return 'duplicate-email';
      throw error;
    }
  }
  async getUser(id: string): Promise<ConsoleUser | undefined> {
    const row = await this.#db.selectFrom('console_users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }
  async findUserByEmail(email: string): Promise<ConsoleUser | undefined> {
    const row = await this.#db.selectFrom('console_users').selectAll().where('email', '=', email).executeTakeFirst();
    return row && toUser(row);
  }
  async updateUser(id: string, patch: Partial<Pick<ConsoleUser, 'passwordHash' | 'totpSecret' | 'totpLastStep' | 'recoveryCodes'>>): Promise<boolean> {
    const set: Partial<UserRow> = {};
    if (patch.passwordHash !== undefined) set.password_hash = patch.passwordHash;
    if (patch.totpSecret !== undefined) set.totp_secret = patch.totpSecret;
    if (patch.totpLastStep !== undefined) set.totp_last_step = patch.totpLastStep;
    if (patch.recoveryCodes !== undefined) set.recovery_codes = json(patch.recoveryCodes);
    if (Object.keys(set).length === 0) return (await this.getUser(id)) !== undefined;
    const result = await this.#db.updateTable('console_users').set(set).where('id', '=', id).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
  async deleteUser(id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('console_memberships').where('user_id', '=', id).execute();
      await trx.deleteFrom('console_sessions').where('user_id', '=', id).execute();
      const result = await trx.deleteFrom('console_users').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }
  async listUsers(): Promise<ConsoleUser[]> {
    return (await this.#db.selectFrom('console_users').selectAll().orderBy('email').execute()).map(toUser);
  }

  async putMembership(m: ConsoleMembership): Promise<void> {
    await this.#db
      .insertInto('console_memberships')
      .values(toColumns(m, MEMBERSHIP_FIELDS))
      .onConflict((oc) => oc.columns(['user_id', 'organization_id']).doUpdateSet({ role: m.role }))
      .execute();
  }
  async getMembership(userId: string, organizationId: string): Promise<ConsoleMembership | undefined> {
    const row = await this.#db.selectFrom('console_memberships').selectAll().where('user_id', '=', userId).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && toMembership(row);
  }
  async membershipsOf(userId: string): Promise<ConsoleMembership[]> {
    return (await this.#db.selectFrom('console_memberships').selectAll().where('user_id', '=', userId).orderBy('organization_id').execute()).map(toMembership);
  }
  async members(organizationId: string): Promise<ConsoleMember[]> {
    const rows = await this.#db
      .selectFrom('console_memberships as m')
      .innerJoin('console_users as u', 'u.id', 'm.user_id')
      .select(['m.user_id', 'm.organization_id', 'm.role', 'm.created_at', 'u.email', 'u.password_hash', 'u.totp_secret'])
      .where('m.organization_id', '=', organizationId)
      .orderBy('u.email')
      .execute();
    return rows.map((r) => ({
      userId: r.user_id,
      organizationId: r.organization_id,
      role: r.role,
      createdAt: r.created_at,
      email: r.email,
      active: r.password_hash !== null,
      totp: r.totp_secret !== null,
    }));
  }
  async changeMembership(userId: string, organizationId: string, role: ConsoleRole | null): Promise<'changed' | 'not-found' | 'last-owner'> {
    return this.#db.transaction().execute(async (trx) => {
      // The organisation's owners, locked on PostgreSQL so that two demotions at once are serialised
      // (SQLite runs one write transaction at a time).
      let owners = trx.selectFrom('console_memberships').select(['user_id']).where('organization_id', '=', organizationId).where('role', '=', 'owner');
      if (this.#dialect === 'postgres') owners = owners.forUpdate();
      const ownerIds = (await owners.execute()).map((r) => r.user_id);
      const current = await trx.selectFrom('console_memberships').selectAll().where('user_id', '=', userId).where('organization_id', '=', organizationId).executeTakeFirst();
      if (!current) return 'not-found';
      if (current.role === 'owner' && role !== 'owner' && ownerIds.length <= 1) return 'last-owner';
      if (role === null) {
        await trx.deleteFrom('console_memberships').where('user_id', '=', userId).where('organization_id', '=', organizationId).execute();
        await trx.deleteFrom('console_sessions').where('user_id', '=', userId).where('organization_id', '=', organizationId).execute();
      } else {
        await trx.updateTable('console_memberships').set({ role }).where('user_id', '=', userId).where('organization_id', '=', organizationId).execute();
      }
      return 'changed';
    });
  }

  async addInvitation(i: ConsoleInvitation): Promise<void> {
    await this.#db
      .insertInto('console_invitations')
      .values(toColumns(i, INVITATION_FIELDS))
      .execute();
  }
  async getInvitation(tokenHash: string): Promise<ConsoleInvitation | undefined> {
    const row = await this.#db.selectFrom('console_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toInvitation(row);
  }
  async takeInvitation(tokenHash: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('console_invitations').where('token_hash', '=', tokenHash).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
  async invitations(organizationId: string | null): Promise<ConsoleInvitation[]> {
    let query = this.#db.selectFrom('console_invitations').selectAll();
    if (organizationId !== null) query = query.where('organization_id', '=', organizationId);
    return (await query.orderBy('created_at', 'desc').execute()).map(toInvitation);
  }

  async createSession(s: ConsoleSession): Promise<void> {
    await this.#db
      .insertInto('console_sessions')
      .values({ ...toColumns(s, SESSION_FIELDS), ...flagsToColumns(s, ['pendingSecondFactor']) })
      .execute();
  }
  async getSession(idHash: string): Promise<ConsoleSession | undefined> {
    const row = await this.#db.selectFrom('console_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    return row && toSession(row);
  }
  async sessionView(idHash: string): Promise<ConsoleSessionView | undefined> {
    // One statement: a row per membership (one without, if none), the user and each organisation's
    // name (the table of migration 0001, read here for the page's list) and settings beside.
    const { rows } = await sql<SessionViewRow>`
      select s.id_hash, s.user_id, s.organization_id, s.created_at, s.last_seen_at, s.expires_at, s.pending_second_factor,
        u.id as u_id, u.email as u_email, u.password_hash as u_password_hash, u.totp_secret as u_totp_secret, u.totp_last_step as u_totp_last_step,
        u.recovery_codes as u_recovery_codes, u.created_at as u_created_at,
        m.organization_id as m_organization_id, m.role as m_role, m.created_at as m_created_at, o.name as o_name, cs.require_second_factor as cs_require_second_factor
      from console_sessions s
      left join console_users u on u.id = s.user_id
      left join console_memberships m on m.user_id = s.user_id
      left join organizations o on o.id = m.organization_id
      left join console_settings cs on cs.organization_id = m.organization_id
      where s.id_hash = ${idHash}
      order by m.organization_id`.execute(this.#db);
    const first = rows[0];
    if (!first) return undefined;
    const user: UserRow | null =
      first.u_id === null
        ? null
        : { id: first.u_id, email: first.u_email!, password_hash: first.u_password_hash, totp_secret: first.u_totp_secret, totp_last_step: first.u_totp_last_step!, recovery_codes: first.u_recovery_codes!, created_at: first.u_created_at! };
    return {
      session: toSession(first),
      user: user ? toUser(user) : undefined,
      memberships: rows
        .filter((r) => r.m_organization_id !== null)
        .map((r) => ({
          membership: toMembership({ user_id: first.user_id, organization_id: r.m_organization_id!, role: r.m_role!, created_at: r.m_created_at! }),
          organizationName: r.o_name,
          settings: { organizationId: r.m_organization_id!, requireSecondFactor: r.cs_require_second_factor !== null && Number(r.cs_require_second_factor) === 1 },
        })),
    };
  }
  async updateSession(idHash: string, patch: Partial<Pick<ConsoleSession, 'organizationId' | 'lastSeenAt' | 'pendingSecondFactor'>>): Promise<boolean> {
    const set: Partial<ConsoleTables['console_sessions']> = {};
    if (patch.organizationId !== undefined) set.organization_id = patch.organizationId;
    if (patch.lastSeenAt !== undefined) set.last_seen_at = patch.lastSeenAt;
    if (patch.pendingSecondFactor !== undefined) set.pending_second_factor = patch.pendingSecondFactor ? 1 : 0;
    if (Object.keys(set).length === 0) return (await this.getSession(idHash)) !== undefined;
    const result = await this.#db.updateTable('console_sessions').set(set).where('id_hash', '=', idHash).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
  async deleteSession(idHash: string): Promise<void> {
    await this.#db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
  }
  async deleteSessionsOf(userId: string): Promise<void> {
    await this.#db.deleteFrom('console_sessions').where('user_id', '=', userId).execute();
  }

  async addFailedSignIn(keys: string[], at: Timestamp): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.insertInto('console_sign_in_failures').values(keys.map((key) => ({ key, at }))).execute();
  }
  async failedSignIns(key: string, since: Timestamp): Promise<{ count: number; oldest: Timestamp | null }> {
    const row = await this.#db
      .selectFrom('console_sign_in_failures')
      .select((eb) => [eb.fn.countAll<number | string>().as('count'), eb.fn.min<string | null>('at').as('oldest')])
      .where('key', '=', key)
      .where('at', '>=', since)
      .executeTakeFirst();
    return { count: Number(row?.count ?? 0), oldest: row?.oldest ?? null };
  }

  async getSettings(organizationId: string): Promise<ConsoleOrganizationSettings> {
    const row = await this.#db.selectFrom('console_settings').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
    return { organizationId, requireSecondFactor: row ? Number(row.require_second_factor) === 1 : false };
  }
  async putSettings(settings: ConsoleOrganizationSettings): Promise<void> {
    const value = settings.requireSecondFactor ? 1 : 0;
    await this.#db
      .insertInto('console_settings')
      .values({ organization_id: settings.organizationId, require_second_factor: value })
      .onConflict((oc) => oc.column('organization_id').doUpdateSet({ require_second_factor: value }))
      .execute();
  }

  async addApiKey(k: ConsoleApiKey): Promise<void> {
    await this.#db
      .insertInto('console_api_keys')
      .values(toColumns(k, KEY_FIELDS))
      .execute();
  }
  async apiKeys(organizationId: string): Promise<ConsoleApiKey[]> {
    return (await this.#db.selectFrom('console_api_keys').selectAll().where('organization_id', '=', organizationId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map(toKey);
  }
  async touchApiKey(organizationId: string, id: string, at: Timestamp): Promise<void> {
    await this.#db
      .updateTable('console_api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }
  async removeApiKey(organizationId: string, id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('console_api_keys').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async putLatestResult(r: LatestResult): Promise<void> {
    // A slower, older run never replaces a newer result.
    await this.#db
      .insertInto('console_latest_results')
      .values({ domain: r.domain, checked_at: r.checkedAt, result: r.result })
      .onConflict((oc) =>
        oc
          .column('domain')
          .doUpdateSet({ checked_at: r.checkedAt, result: r.result })
          .where('console_latest_results.checked_at', '<=', r.checkedAt),
      )
      .execute();
  }
  async getLatestResult(domain: string): Promise<LatestResult | undefined> {
    const row = await this.#db.selectFrom('console_latest_results').selectAll().where('domain', '=', domain).executeTakeFirst();
    return row && { domain: row.domain, checkedAt: row.checked_at, result: row.result };
  }

  async prune(now: Timestamp, failuresBefore: Timestamp): Promise<number> {
    const a = await this.#db.deleteFrom('console_sessions').where('expires_at', '<=', now).executeTakeFirst();
    const b = await this.#db.deleteFrom('console_invitations').where('expires_at', '<=', now).executeTakeFirst();
    const c = await this.#db.deleteFrom('console_sign_in_failures').where('at', '<', failuresBefore).executeTakeFirst();
    return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
  }
}
