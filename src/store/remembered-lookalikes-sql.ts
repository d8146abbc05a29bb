/**
 * Remembered lookalikes in SQL (SQLite or PostgreSQL) on Kysely: one row per monitor and name
 * (`monitor_lookalikes`, migration `0011_alerts` in src/store/alerts-sql.ts), the entry as JSON,
 * dropped with its monitor (a foreign key with cascade). A monitor remembers at most
 * MAX_REMEMBERED_LOOKALIKES names (src/jobs/monitors/lookalike-memory.ts), so a list reads them all and
 * sorts in the process.
 */
import type { Kysely } from 'kysely';
import { paginate } from './pagination.js';
import type { Page, PageRequest } from './page-types.js';
import { compareRemembered, type RememberedLookalike, type RememberedLookalikeStore } from './remembered-lookalikes.js';

interface Tables {
  monitor_lookalikes: {
    monitor_id: string;
    domain: string;
    organization_id: string;
    first_seen: string | null;
    last_seen: string | null;
    document: string;
  };
}

const parse = (text: string): RememberedLookalike => JSON.parse(text) as RememberedLookalike;
const row = (e: RememberedLookalike): Tables['monitor_lookalikes'] => ({
  monitor_id: e.monitorId,
  domain: e.domain,
  organization_id: e.organizationId,
  first_seen: e.firstSeen,
  last_seen: e.lastSeen,
  document: JSON.stringify(e),
});

/** The SQL implementation of {@link RememberedLookalikeStore}. */
export class SqlRememberedLookalikeStore implements RememberedLookalikeStore {
  readonly #db: Kysely<Tables>;

  constructor(db: Kysely<any>) {
    this.#db = db as Kysely<Tables>;
  }

  async all(monitorId: string): Promise<RememberedLookalike[]> {
    const rows = await this.#db.selectFrom('monitor_lookalikes').select('document').where('monitor_id', '=', monitorId).execute();
    return rows.map((r) => parse(r.document));
  }

  async save(entries: RememberedLookalike[]): Promise<void> {
    if (entries.length === 0) return;
    await this.#db.transaction().execute(async (trx) => {
      for (const given of entries) {
        // "Ours" is a person's choice: a run that read the entry before it was set does not undo it.
        const stored = await trx.selectFrom('monitor_lookalikes').select('document').where('monitor_id', '=', given.monitorId).where('domain', '=', given.domain).executeTakeFirst();
        const entry = stored ? { ...given, ours: parse(stored.document).ours } : given;
        const values = row(entry);
        await trx
          .insertInto('monitor_lookalikes')
          .values(values)
          .onConflict((oc) => oc.columns(['monitor_id', 'domain']).doUpdateSet({ first_seen: values.first_seen, last_seen: values.last_seen, document: values.document }))
          .execute();
      }
    });
  }

  async list(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<RememberedLookalike>> {
    // The empty name is the baseline marker (src/jobs/monitors/lookalike-memory.ts), not a lookalike.
    const rows = await this.#db.selectFrom('monitor_lookalikes').select('document').where('monitor_id', '=', monitorId).where('organization_id', '=', organizationId).where('domain', '!=', '').execute();
    return paginate(rows.map((r) => parse(r.document)).sort(compareRemembered), page);
  }

  async setOurs(organizationId: string, monitorId: string, domain: string, ours: boolean): Promise<RememberedLookalike | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom('monitor_lookalikes')
        .select('document')
        .where('monitor_id', '=', monitorId)
        .where('domain', '=', domain)
        .where('organization_id', '=', organizationId)
        .executeTakeFirst();
      if (!found) return undefined;
      const next = { ...parse(found.document), ours };
      await trx.updateTable('monitor_lookalikes').set({ document: JSON.stringify(next) }).where('monitor_id', '=', monitorId).where('domain', '=', domain).execute();
      return next;
    });
  }

  async forget(monitorId: string): Promise<void> {
    await this.#db.deleteFrom('monitor_lookalikes').where('monitor_id', '=', monitorId).execute();
  }
}
