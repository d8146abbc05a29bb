import { randomUUID } from 'node:crypto';
import type { Page, PageRequest } from './page-types.js';
import { copy, newestFirst, owned, ownedBy, ownedCopy, paginate } from './pagination.js';
import { buildTemplateVersion, nextVersionNumbers } from './template-numbering.js';
import type { NewTemplateVersion, Template, TemplateStore, TemplateVersion } from './templates.js';

/** Templates and versions held in memory. */
export class MemoryTemplateStore implements TemplateStore {
  readonly #templates = new Map<string, Template>();
  readonly #versions = new Map<string, TemplateVersion[]>();
  readonly #newId: () => string;

  constructor(newId: () => string = randomUUID) {
    this.#newId = newId;
  }

  async addTemplate(template: Template): Promise<void> {
    this.#templates.set(template.id, copy(template));
    if (!this.#versions.has(template.id)) this.#versions.set(template.id, []);
  }

  async addVersion(organizationId: string, version: TemplateVersion): Promise<void> {
    const template = owned(this.#templates.get(version.templateId), organizationId);
    if (!template) {
      throw new Error(`template "${version.templateId}" is not a template of organisation "${organizationId}"`);
    }
    this.#versions.get(version.templateId)?.push(copy(version));
  }

  async getTemplate(organizationId: string, id: string): Promise<Template | undefined> {
    return ownedCopy(this.#templates.get(id), organizationId);
  }

  async listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>> {
    const rows = ownedBy(this.#templates.values(), organizationId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map(copy), total: result.total };
  }

  async listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined> {
    const template = owned(this.#templates.get(templateId), organizationId);
    if (!template) return undefined;
    return copy(this.#versions.get(templateId) ?? []).sort((a, b) => a.version - b.version);
  }

  async createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    // No `await` from here to the push: reading the numbers and storing the version is one step on
    // the event loop, so concurrent creations never see the same highest version.
    const template = owned(this.#templates.get(templateId), organizationId);
    if (!template) return undefined;
    const versions = this.#versions.get(templateId) ?? [];
    const isMajor = input.isMajor ?? false;
    const numbers = nextVersionNumbers(versions, isMajor);
    const version = buildTemplateVersion(this.#newId(), template, input, numbers);
    versions.push(copy(version));
    this.#versions.set(templateId, versions);
    if (input.variables) template.variables = copy(input.variables);
    if (isMajor) {
      template.status = 'published';
      template.currentVersion = version.version;
    }
    template.updatedAt = input.createdAt;
    return copy(version);
  }
}
