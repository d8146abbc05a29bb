import type { Kysely, Selectable } from 'kysely';
import type { DnsRecord, Domain, DomainPatch, DomainStore, TlsMode } from './domains.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import type { DnsRecordsTable, DomainsTable, StoreDatabase } from './sql-schema.js';
import { bool, isTrue, newestFirstPage, type SqlDialectTraits } from './sql-values.js';

function dnsRecordFromRow(row: Selectable<DnsRecordsTable>): DnsRecord {
  return {
    id: row.id,
    recordType: row.record_type,
    recordTypeName: row.record_type_name,
    domain: row.domain,
    name: row.name,
    value: row.value,
    ttl: row.ttl,
    priority: row.priority === null ? null : Number(row.priority),
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

function domainFromRow(row: Selectable<DomainsTable>, records: DnsRecord[]): Domain {
  return {
    id: row.id,
    organizationId: row.organization_id,
    domain: row.domain,
    status: row.status,
    userVerifiedDomain: isTrue(row.user_verified_domain),
    systemVerified: isTrue(row.system_verified),
    customReturnPath: row.custom_return_path,
    trackingSubdomain: row.tracking_subdomain,
    isClickTrackingEnabled: isTrue(row.is_click_tracking_enabled),
    isOpenTrackingEnabled: isTrue(row.is_open_tracking_enabled),
    tls: row.tls as TlsMode,
    isTrackingDomain: isTrue(row.is_tracking_domain),
    isSendingEmailEnabled: isTrue(row.is_sending_email_enabled),
    isReceivingEmailEnabled: isTrue(row.is_receiving_email_enabled),
    verificationFailedReason: row.verification_failed_reason,
    dnsRecords: records,
    lastVerifiedAt: row.last_verified_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

/** Domains, with their DNS records in their own table (soft delete marks both). */
export class SqlDomainStore implements DomainStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async add(domain: Domain): Promise<void> {
    const row: DomainsTable = {
      id: domain.id,
      organization_id: domain.organizationId,
      domain: domain.domain,
      status: domain.status,
      user_verified_domain: bool(domain.userVerifiedDomain),
      system_verified: bool(domain.systemVerified),
      custom_return_path: domain.customReturnPath,
      tracking_subdomain: domain.trackingSubdomain,
      is_click_tracking_enabled: bool(domain.isClickTrackingEnabled),
      is_open_tracking_enabled: bool(domain.isOpenTrackingEnabled),
      tls: domain.tls,
      is_tracking_domain: bool(domain.isTrackingDomain),
      is_sending_email_enabled: bool(domain.isSendingEmailEnabled),
      is_receiving_email_enabled: bool(domain.isReceivingEmailEnabled),
      verification_failed_reason: domain.verificationFailedReason,
      last_verified_at: domain.lastVerifiedAt,
      created_at: domain.createdAt,
      updated_at: domain.updatedAt,
      deleted_at: domain.deletedAt,
    };
    const { id: _id, ...update } = row;
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('domains').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
      // Adding a domain again replaces its records, as the memory store replaces the whole domain.
      await trx.deleteFrom('dns_records').where('domain_id', '=', domain.id).execute();
      if (domain.dnsRecords.length > 0) {
        await trx
          .insertInto('dns_records')
          .values(
            domain.dnsRecords.map((r, position) => ({
              id: r.id,
              domain_id: domain.id,
              position,
              record_type: r.recordType,
              record_type_name: r.recordTypeName,
              domain: r.domain,
              name: r.name,
              value: r.value,
              ttl: r.ttl,
              priority: r.priority,
              status: r.status,
              created_at: r.createdAt,
              updated_at: r.updatedAt,
              deleted_at: r.deletedAt,
            })),
          )
          .execute();
      }
    });
  }

  async #liveRecords(db: Kysely<StoreDatabase>, domainIds: string[]): Promise<Map<string, DnsRecord[]>> {
    const byDomain = new Map<string, DnsRecord[]>(domainIds.map((id) => [id, []]));
    if (domainIds.length === 0) return byDomain;
    const rows = await db.selectFrom('dns_records').selectAll().where('domain_id', 'in', domainIds).where('deleted_at', 'is', null).orderBy('domain_id').orderBy('position').execute();
    for (const row of rows) byDomain.get(row.domain_id)?.push(dnsRecordFromRow(row));
    return byDomain;
  }

  async get(organizationId: string, id: string): Promise<Domain | undefined> {
    const row = await this.db.selectFrom('domains').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!row) return undefined;
    return domainFromRow(row, (await this.#liveRecords(this.db, [row.id])).get(row.id) ?? []);
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Domain>> {
    const live = this.db.selectFrom('domains').where('organization_id', '=', organizationId).where('deleted_at', 'is', null);
    const { items: rows, total } = await newestFirstPage(live, page, (row: Selectable<DomainsTable>) => row);
    const records = await this.#liveRecords(
      this.db,
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => domainFromRow(r, records.get(r.id) ?? [])), total };
  }

  async update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined> {
    const result = await this.db
      .updateTable('domains')
      .set({
        // Only the fields given change; `updatedAt` is always set.
        ...(patch.isClickTrackingEnabled !== undefined ? { is_click_tracking_enabled: bool(patch.isClickTrackingEnabled) } : {}),
        ...(patch.isOpenTrackingEnabled !== undefined ? { is_open_tracking_enabled: bool(patch.isOpenTrackingEnabled) } : {}),
        ...(patch.isSendingEmailEnabled !== undefined ? { is_sending_email_enabled: bool(patch.isSendingEmailEnabled) } : {}),
        ...(patch.isReceivingEmailEnabled !== undefined ? { is_receiving_email_enabled: bool(patch.isReceivingEmailEnabled) } : {}),
        ...(patch.tls !== undefined ? { tls: patch.tls } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(organizationId, id);
  }

  async softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('domains')
        .selectAll()
        .where('id', '=', id)
        .where('organization_id', '=', organizationId)
        .where('deleted_at', 'is', null)
        .$if(this.traits.dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) return undefined;
      const removed = ((await this.#liveRecords(trx, [id])).get(id) ?? []).map((r) => ({ ...r, deletedAt: now, updatedAt: now }));
      await trx.updateTable('dns_records').set({ deleted_at: now, updated_at: now }).where('domain_id', '=', id).where('deleted_at', 'is', null).execute();
      await trx.updateTable('domains').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
      return domainFromRow({ ...row, deleted_at: now, updated_at: now }, removed);
    });
  }
}
