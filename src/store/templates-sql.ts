import type { Kysely, Selectable, Transaction } from 'kysely';
import type { KeyOwner } from './api-keys.js';
import type { Page, PageRequest } from './page-types.js';
import type { StoreDatabase, TemplatesTable, TemplateVersionsTable } from './sql-schema.js';
import { count, flagsFromColumns, flagsToColumns, fromColumns, json, newestFirstPage, numbersFromColumns, parse, toColumns, upsertById, type SqlDialectTraits } from './sql-values.js';
import { buildTemplateVersion, versionNumbersFromTally } from './template-numbering.js';
import type { NewTemplateVersion, Template, TemplateStore, TemplateVariable, TemplateVersion } from './templates.js';

/** Attempts of a template version creation that lost a race on its number (unique constraint). */
export const VERSION_CREATE_ATTEMPTS = 8;

/** The fields of a template its row holds as they are (the rest are JSON or numbers). */
const TEMPLATE_FIELDS = ['id', 'organizationId', 'name', 'description', 'subject', 'fromEmail', 'replyTo', 'previewText', 'createdAt', 'updatedAt'] as const;
/** Likewise for a version. */
const VERSION_FIELDS = ['id', 'templateId', 'name', 'subject', 'fromEmail', 'replyTo', 'previewText', 'description', 'renderedHtml', 'createdByUserId', 'createdAt'] as const;

function templateFromRow(row: Selectable<TemplatesTable>): Template {
  return {
    ...fromColumns(row, TEMPLATE_FIELDS),
    status: row.status as Template['status'],
    currentVersion: row.current_version === null ? null : Number(row.current_version),
    variables: parse<TemplateVariable[]>(row.variables),
  };
}

function templateToRow(template: Template): TemplatesTable {
  return { ...toColumns(template, TEMPLATE_FIELDS), status: template.status, current_version: template.currentVersion, variables: json(template.variables) };
}

function versionFromRow(row: Selectable<TemplateVersionsTable>): TemplateVersion {
  return {
    ...fromColumns(row, VERSION_FIELDS),
    ...numbersFromColumns(row, ['version']),
    ...flagsFromColumns(row, ['isMajor']),
    content: parse<unknown[]>(row.content),
    variables: parse<TemplateVariable[]>(row.variables),
    createdBy: parse<KeyOwner>(row.created_by),
    ...(row.draft_number !== null ? { draftNumber: Number(row.draft_number) } : {}),
    ...(row.publish_number !== null ? { publishNumber: Number(row.publish_number) } : {}),
  };
}

function versionToRow(version: TemplateVersion): TemplateVersionsTable {
  return {
    ...toColumns(version, [...VERSION_FIELDS, 'version']),
    ...flagsToColumns(version, ['isMajor']),
    content: json(version.content),
    variables: json(version.variables),
    created_by: json(version.createdBy),
    draft_number: version.draftNumber ?? null,
    publish_number: version.publishNumber ?? null,
  };
}

/** Templates and versions. Version numbers are assigned under a row lock on the template, with a unique constraint behind it. */
export class SqlTemplateStore implements TemplateStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
    private readonly newId: () => string,
  ) {}

  async addTemplate(template: Template): Promise<void> {
    await upsertById(this.db, 'templates', templateToRow(template));
  }

  async addVersion(organizationId: string, version: TemplateVersion): Promise<void> {
    const template = await this.db.selectFrom('templates').select('id').where('id', '=', version.templateId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!template) throw new Error(`template "${version.templateId}" is not a template of organisation "${organizationId}"`);
    await this.db.insertInto('template_versions').values(versionToRow(version)).execute();
  }

  async getTemplate(organizationId: string, id: string): Promise<Template | undefined> {
    const row = await this.db.selectFrom('templates').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && templateFromRow(row);
  }

  async listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>> {
    return newestFirstPage(this.db.selectFrom('templates').where('organization_id', '=', organizationId), page, templateFromRow);
  }

  async listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined> {
    const template = await this.db.selectFrom('templates').select('id').where('id', '=', templateId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!template) return undefined;
    const rows = await this.db.selectFrom('template_versions').selectAll().where('template_id', '=', templateId).orderBy('version').execute();
    return rows.map(versionFromRow);
  }

  async createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => this.#createVersionIn(trx, organizationId, templateId, input));
      } catch (error) {
        // Two writers that read the same highest version: one insert hits the unique constraint
        // (template_id, version); it starts over and reads the winner's number.
        if (!this.traits.isUniqueViolation(error) || attempt >= VERSION_CREATE_ATTEMPTS) throw error;
      }
    }
  }

  async #createVersionIn(trx: Transaction<StoreDatabase>, organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    // On PostgreSQL the template row is locked until commit, so concurrent creations for one
    // template (from any replica) run one after another; SQLite has one writer at a time anyway.
    const row = await trx
      .selectFrom('templates')
      .selectAll()
      .where('id', '=', templateId)
      .where('organization_id', '=', organizationId)
      .$if(this.traits.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!row) return undefined;
    const template = templateFromRow(row);
    const tally = await trx
      .selectFrom('template_versions')
      .where('template_id', '=', templateId)
      .select((eb) => [
        eb.fn.max('version').as('highest'),
        eb.fn.sum<number>(eb.case().when('is_major', '=', 1).then(1).else(0).end()).as('majors'),
        eb.fn.sum<number>(eb.case().when('is_major', '=', 1).then(0).else(1).end()).as('drafts'),
      ])
      .executeTakeFirst();
    const isMajor = input.isMajor ?? false;
    const numbers = versionNumbersFromTally({ highest: count(tally?.highest), majors: count(tally?.majors), drafts: count(tally?.drafts) }, isMajor);
    const version = buildTemplateVersion(this.newId(), template, input, numbers);
    await trx.insertInto('template_versions').values(versionToRow(version)).execute();
    await trx
      .updateTable('templates')
      .set({
        updated_at: input.createdAt,
        ...(input.variables ? { variables: json(input.variables) } : {}),
        ...(isMajor ? { status: 'published', current_version: version.version } : {}),
      })
      .where('id', '=', templateId)
      .execute();
    return version;
  }
}
