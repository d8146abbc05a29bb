import type { NewTemplateVersion, Template, TemplateVersion } from './templates.js';

/** The numbers and default name a new template version gets. Exactly one of the two counters is set. */
export interface VersionNumbers {
  version: number;
  draftNumber?: number;
  publishNumber?: number;
  defaultName: string;
}

/**
 * Numbers for the next version of a template, following the reference service:
 * `version` is the highest existing version + 1 (the first is 1), one counter across drafts and
 * published versions; a major version gets `publishNumber` = published count + 1 and the default
 * name `v{n}`, any other version `draftNumber` = draft count + 1 and the default name `Draft {n}`.
 */
export function nextVersionNumbers(existing: readonly Pick<TemplateVersion, 'version' | 'isMajor'>[], isMajor: boolean): VersionNumbers {
  return versionNumbersFromTally(
    {
      highest: existing.reduce((highest, v) => Math.max(highest, v.version), 0),
      majors: existing.filter((v) => v.isMajor).length,
      drafts: existing.filter((v) => !v.isMajor).length,
    },
    isMajor,
  );
}

/** What numbering needs to know of a template's versions (a SQL store gets it in one aggregate query). */
export interface VersionTally {
  /** The highest `version`, 0 when there is none. */
  highest: number;
  majors: number;
  drafts: number;
}

/** {@link nextVersionNumbers} from the tally of the existing versions. */
export function versionNumbersFromTally(tally: VersionTally, isMajor: boolean): VersionNumbers {
  const version = tally.highest + 1;
  if (isMajor) {
    const publishNumber = tally.majors + 1;
    return { version, publishNumber, defaultName: `v${publishNumber}` };
  }
  const draftNumber = tally.drafts + 1;
  return { version, draftNumber, defaultName: `Draft ${draftNumber}` };
}

/**
 * The version a store writes: the numbers it computed, the fields sent, and what was left out
 * inherited from the parent template (reference service behaviour). One rule for every backend.
 */
export function buildTemplateVersion(
  id: string,
  template: Pick<Template, 'id' | 'subject' | 'fromEmail' | 'replyTo' | 'previewText' | 'variables'>,
  input: NewTemplateVersion,
  numbers: VersionNumbers,
): TemplateVersion {
  return {
    id,
    templateId: template.id,
    version: numbers.version,
    name: input.name ?? numbers.defaultName,
    isMajor: input.isMajor ?? false,
    subject: input.subject ?? template.subject,
    fromEmail: input.fromEmail ?? template.fromEmail,
    replyTo: input.replyTo ?? template.replyTo,
    previewText: input.previewText ?? template.previewText,
    description: input.description ?? null,
    content: input.content,
    variables: input.variables ?? template.variables,
    renderedHtml: input.renderedHtml ?? null,
    createdByUserId: input.createdBy.id,
    createdBy: input.createdBy,
    createdAt: input.createdAt,
    ...(numbers.publishNumber !== undefined ? { publishNumber: numbers.publishNumber } : {}),
    ...(numbers.draftNumber !== undefined ? { draftNumber: numbers.draftNumber } : {}),
  };
}
