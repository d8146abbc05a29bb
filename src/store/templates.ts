/** Email templates and their versions, and their store. */
import type { KeyOwner } from './api-keys.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** A template variable (spec: Template version `variables`). */
export interface TemplateVariable {
  name: string;
  type: 'string' | 'number';
  defaultValue: string | null;
}

/** An email template: the parent of its versions. Its fields are what a new version inherits. */
export interface Template {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  subject: string | null;
  fromEmail: string | null;
  replyTo: string | null;
  previewText: string | null;
  /** `published` once a major version exists. */
  status: 'draft' | 'published';
  /** The `version` of the latest major version, null while there is none. */
  currentVersion: number | null;
  variables: TemplateVariable[];
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** One version of a template (spec: "Template version"). Exactly one of the two numbers is set. */
export interface TemplateVersion {
  id: string;
  templateId: string;
  version: number;
  name: string;
  isMajor: boolean;
  subject: string | null;
  fromEmail: string | null;
  replyTo: string | null;
  previewText: string | null;
  description: string | null;
  content: unknown[];
  variables: TemplateVariable[];
  renderedHtml: string | null;
  createdByUserId: string;
  createdBy: KeyOwner;
  createdAt: Timestamp;
  draftNumber?: number;
  publishNumber?: number;
}

/** What a caller supplies to create a version; the store assigns the numbers and the defaults. */
export interface NewTemplateVersion {
  content: unknown[];
  subject?: string;
  fromEmail?: string;
  replyTo?: string;
  previewText?: string;
  description?: string;
  name?: string;
  isMajor?: boolean;
  renderedHtml?: string;
  variables?: TemplateVariable[];
  createdBy: KeyOwner;
  createdAt: Timestamp;
}

/** Templates and their versions. */
export interface TemplateStore {
  addTemplate(template: Template): Promise<void>;
  addVersion(organizationId: string, version: TemplateVersion): Promise<void>;
  getTemplate(organizationId: string, id: string): Promise<Template | undefined>;
  /** Newest first (`createdAt` descending). */
  listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>>;
  listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined>;
  /**
   * Creates a version, assigning `version`, `draftNumber`/`publishNumber` and the default name
   * atomically (two concurrent calls never share a number). Undefined when the template is unknown
   * to this organisation.
   */
  createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined>;
}
