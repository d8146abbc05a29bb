import type { TemplateVersion } from './types.js';

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
  const version = existing.reduce((highest, v) => Math.max(highest, v.version), 0) + 1;
  if (isMajor) {
    const publishNumber = existing.filter((v) => v.isMajor).length + 1;
    return { version, publishNumber, defaultName: `v${publishNumber}` };
  }
  const draftNumber = existing.filter((v) => !v.isMajor).length + 1;
  return { version, draftNumber, defaultName: `Draft ${draftNumber}` };
}
