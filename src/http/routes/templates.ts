/**
 * Templates: `POST /api/template/v1/:id/versions` (create a version, numbered as the reference
 * service numbers them, see src/store/template-numbering.ts) and `GET /api/template/v1` (the list,
 * whose path the spec does not show).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerPagedList } from './paged-list.js';
import { Type } from 'typebox';
import type { Stores, Template, TemplateVersion } from '../../store/types.js';
import { notFound } from '../errors.js';
import {
  API_SECURITY,
  COMMON_ERROR_STATUSES,
  errorResponses,
  TemplateSchema,
  TemplateVariableSchema,
  TemplateVersionSchema,
  type TemplateBody,
  type TemplateVersionBody,
} from '../schemas.js';
import { MAX_ID_LENGTH, principalOf } from './logs.js';

/** Spec: template version `subject` and `description`, at most 500 characters. */
export const TEMPLATE_SUBJECT_MAX_LENGTH = 500;
/** Spec: template version `description`, at most 500 characters. */
export const TEMPLATE_DESCRIPTION_MAX_LENGTH = 500;
/** Spec: template version `fromEmail`, `replyTo` and `name`, at most 255 characters each. */
export const TEMPLATE_SHORT_FIELD_MAX_LENGTH = 255;

/** Spec: body of "Create a template version". */
export const CreateVersionBodySchema = Type.Object(
  {
    content: Type.Array(Type.Unknown(), { description: 'The template content (any element type)' }),
    subject: Type.Optional(Type.String({ maxLength: TEMPLATE_SUBJECT_MAX_LENGTH, description: 'Inherited from the template when left out' })),
    fromEmail: Type.Optional(Type.String({ maxLength: TEMPLATE_SHORT_FIELD_MAX_LENGTH, description: 'Inherited from the template when left out' })),
    replyTo: Type.Optional(Type.String({ maxLength: TEMPLATE_SHORT_FIELD_MAX_LENGTH, description: 'Inherited from the template when left out' })),
    previewText: Type.Optional(Type.String({ description: 'Inherited from the template when left out' })),
    description: Type.Optional(Type.String({ maxLength: TEMPLATE_DESCRIPTION_MAX_LENGTH })),
    name: Type.Optional(Type.String({ maxLength: TEMPLATE_SHORT_FIELD_MAX_LENGTH, description: "Default 'v{publishNumber}' for a major version, 'Draft {draftNumber}' otherwise" })),
    isMajor: Type.Optional(Type.Boolean({ description: 'A major (published) version; default false (a draft)' })),
    renderedHtml: Type.Optional(Type.String()),
    variables: Type.Optional(Type.Array(TemplateVariableSchema, { description: "Inherited from the template when left out; when given, also become the template's" })),
  },
  { additionalProperties: false },
);

/** A version as the API shows it: only one of `draftNumber` and `publishNumber` is present. */
export function templateVersionBody(version: TemplateVersion): TemplateVersionBody {
  return {
    id: version.id,
    templateId: version.templateId,
    version: version.version,
    name: version.name,
    isMajor: version.isMajor,
    subject: version.subject,
    fromEmail: version.fromEmail,
    replyTo: version.replyTo,
    previewText: version.previewText,
    description: version.description,
    content: version.content,
    variables: version.variables,
    renderedHtml: version.renderedHtml,
    createdByUserId: version.createdByUserId,
    createdBy: version.createdBy,
    createdAt: version.createdAt,
    ...(version.draftNumber !== undefined ? { draftNumber: version.draftNumber } : {}),
    ...(version.publishNumber !== undefined ? { publishNumber: version.publishNumber } : {}),
  };
}

/** A template as the list shows it. */
export function templateBody(template: Template): TemplateBody {
  return {
    id: template.id,
    name: template.name,
    description: template.description,
    subject: template.subject,
    fromEmail: template.fromEmail,
    replyTo: template.replyTo,
    previewText: template.previewText,
    status: template.status,
    currentVersion: template.currentVersion,
    variables: template.variables,
    createdAt: template.createdAt,
    updatedAt: template.updatedAt,
  };
}

/** Options of the template routes. */
export interface TemplateRouteOptions {
  stores: Stores;
  now: () => Date;
}

/** The template routes. */
export const templateRoutes: FastifyPluginAsyncTypebox<TemplateRouteOptions> = async (app, { stores, now }) => {
  const security = API_SECURITY;

  app.post(
    '/api/template/v1/:id/versions',
    {
      config: { audit: { service: 'template', resource: 'template_version', verb: 'create', past: 'created', idParam: 'id' } },
      schema: {
        tags: ['templates'],
        security,
        summary: 'Create a template version',
        description:
          "version = the template's highest version + 1 (drafts and published alike). A major version gets publishNumber = published count + 1, any other draftNumber = draft count + 1; only one of the two is present.",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description: 'The template id' }) }),
        body: CreateVersionBodySchema,
        response: { 200: TemplateVersionSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const body = request.body;
      const version = await stores.templates.createVersion(principal.organizationId, request.params.id, {
        ...body,
        createdBy: principal.owner,
        createdAt: now().toISOString(),
      });
      if (!version) throw notFound('Template', request.params.id);
      return templateVersionBody(version);
    },
  );

  registerPagedList(app, {
    path: '/api/template/v1',
    audit: { service: 'template', resource: 'template' },
    tag: 'templates',
    summary: 'List templates (newest first)',
    security,
    key: 'templates',
    item: TemplateSchema,
    event: 'template.list',
    list: (organizationId, page) => stores.templates.listTemplates(organizationId, page),
    body: templateBody,
  });
};
