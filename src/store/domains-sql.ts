import type { Kysely, Selectable } from 'kysely';
import type { DnsRecord, Domain, DomainPatch, DomainStore, TlsMode } from './domains.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import type { DnsRecordsTable, DomainsTable, StoreDatabase } from './sql-schema.js';
import { flagsFromColumns, flagsToColumns, fromColumns, newestFirstPage, toColumns, upsertById, type SqlDialectTraits } from './sql-values.js';

/** The fields of a DNS record its row holds as they are. */
const DNS_RECORD_FIELDS = ['id', 'recordType', 'recordTypeName', 'domain', 'name', 'value', 'ttl', 'status', 'createdAt', 'updatedAt', 'deletedAt'] as const;
/** The fields of a domain its row holds as they are (the flags are 0/1). */
const DOMAIN_FIELDS = [
  'id', 'organizationId', 'domain', 'status', 'customReturnPath', 'trackingSubdomain', 'verificationFailedReason', 'lastVerifiedAt', 'createdAt', 'updatedAt', 'deletedAt',
] as const;
/** The domain's flags, stored 0/1. */
const DOMAIN_FLAGS = [
  'userVerifiedDomain', 'systemVerified', 'isClickTrackingEnabled', 'isOpenTrackingEnabled', 'isTrackingDomain', 'isSendingEmailEnabled', 'isReceivingEmailEnabled',
] as const;

/** The flags a domain update may change. */
const PATCH_FLAGS = ['isClickTrackingEnabled', 'isOpenTrackingEnabled', 'isSendingEmailEnabled', 'isReceivingEmailEnabled'] as const;

function dnsRecordFromRow(row: Selectable<DnsRecordsTable>): DnsRecord {
  return { ...fromColumns(row, DNS_RECORD_FIELDS), priority: row.priority === null ? null : Number(row.priority) };
}

function domainFromRow(row: Selectable<DomainsTable>, records: DnsRecord[]): Domain {
  return { ...fromColumns(row, DOMAIN_FIELDS), ...flagsFromColumns(row, DOMAIN_FLAGS), tls: row.tls as TlsMode, dnsRecords: records };
}

function domainToRow(domain: Domain): DomainsTable {
  return { ...toColumns(domain, DOMAIN_FIELDS), ...flagsToColumns(domain, DOMAIN_FLAGS), tls: domain.tls };
}

/** Domains, with their DNS records in their own table (soft delete marks both). */
export class SqlDomainStore implements DomainStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async add(domain: Domain): Promise<void> {
    const row = domainToRow(domain);
    await this.db.transaction().execute(async (trx) => {
      await upsertById(trx, 'domains', row);
      // Adding a domain again replaces its records, as the memory store replaces the whole domain.
      await trx.deleteFrom('dns_records').where('domain_id', '=', domain.id).execute();
      if (domain.dnsRecords.length > 0) {
        await trx
          .insertInto('dns_records')
          .values(
            domain.dnsRecords.map((r, position) => ({ ...toColumns(r, DNS_RECORD_FIELDS), domain_id: domain.id, position, priority: r.priority })),
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
        ...flagsToColumns(patch as Required<DomainPatch>, PATCH_FLAGS.filter((flag) => patch[flag] !== undefined)),
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
