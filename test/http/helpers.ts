/**
 * Shared set-up of the HTTP tests: a small two-organisation seed (loaded through the real seed
 * validator), an app factory, a realistic spoof check result, and the spec's resource shapes as
 * tables so that responses are checked field by field.
 */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp, type AppOptions } from '../../src/service/compose.js';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { applySeed, parseSeed } from '../../src/store/seed.js';
import type { Stores } from '../../src/store/types.js';

export const KEY_A = 'sk_test_org_a_bb86ae7a86176b48300e2253e99c640a';
export const KEY_B = 'sk_test_org_b_0fa3f9669299a2f250638f1437ffd7dd';
export const bearerA = { authorization: `Bearer ${KEY_A}` };
export const apiKeyA = { 'x-api-key': KEY_A };
export const bearerB = { authorization: `Bearer ${KEY_B}` };
export const apiKeyB = { 'x-api-key': KEY_B };

const owner = (id: string) => ({ id, name: `User ${id}`, email: `${id}@example.test`, image: `https://example.test/${id}.png` });
const T = (day: number, hour = 0) => `2025-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`;

function domainRow(id: string, name: string, day: number, records: { id: string; type: string; typeName: string; deleted?: boolean }[]) {
  return {
    id,
    domain: name,
    status: 'pending',
    userVerifiedDomain: false,
    systemVerified: false,
    customReturnPath: `bounces.${name}`,
    trackingSubdomain: null,
    isClickTrackingEnabled: false,
    isOpenTrackingEnabled: false,
    tls: 'opportunistic' as const,
    isTrackingDomain: false,
    isSendingEmailEnabled: true,
    isReceivingEmailEnabled: false,
    verificationFailedReason: null,
    lastVerifiedAt: null,
    createdAt: T(day),
    updatedAt: T(day),
    dnsRecords: records.map((r) => ({
      id: r.id,
      recordType: r.type,
      recordTypeName: r.typeName,
      domain: name,
      name,
      value: r.type === 'MX' ? `feedback.${name}` : 'v=spf1 -all',
      ttl: 'Auto',
      priority: r.type === 'MX' ? 10 : null,
      status: 'active',
      createdAt: T(day),
      updatedAt: T(day),
      deletedAt: r.deleted ? T(day, 1) : null,
    })),
  };
}

/** Two organisations, A and B, with a few of each resource. */
export const TEST_SEED = {
  organizations: [
    {
      id: 'org_a',
      name: 'Org A',
      apiKeys: [{ id: 'key_a', key: KEY_A, owner: owner('user_a') }],
      emailLogs: [
        {
          id: 'eml_a1',
          messageId: '<a1@mail.a.test>',
          domainId: 'dom_a1',
          fromEmail: 'hello@a.test',
          fromName: 'A',
          toEmails: ['x@r.test'],
          ccEmails: ['cc@r.test'],
          bccEmails: [],
          replyTo: null,
          subject: 'Hello',
          textBody: 'hi',
          htmlBody: null,
          status: 'delivered',
          errorMessage: null,
          provider: 'smtp',
          size: 1234,
          headers: { 'X-Test': '1' },
          sentAt: T(2, 1),
          deliveredAt: T(2, 2),
          failedAt: null,
          createdAt: T(2),
          updatedAt: T(2, 2),
          // Out of order on purpose: the API must answer in lifecycle order.
          events: [
            { id: 'ev3', type: 'delivered', metadata: { smtp: '250' }, createdAt: T(2, 2) },
            { id: 'ev1', type: 'queued', metadata: null, createdAt: T(2) },
            { id: 'ev2', type: 'sent', createdAt: T(2, 1) },
          ],
        },
        {
          id: 'eml_a2',
          messageId: '<a2@mail.a.test>',
          domainId: 'dom_a1',
          fromEmail: 'hello@a.test',
          toEmails: ['y@r.test'],
          subject: 'Second',
          status: 'queued',
          size: 10,
          createdAt: T(3),
          updatedAt: T(3),
        },
      ],
      templates: [
        {
          id: 'tpl_a',
          name: 'Welcome',
          description: 'welcome mail',
          subject: 'Welcome {{name}}',
          fromEmail: 'hello@a.test',
          replyTo: 'reply@a.test',
          previewText: 'Hi there',
          variables: [{ name: 'name', type: 'string' as const, defaultValue: 'friend' }],
          createdAt: T(1),
          updatedAt: T(1),
          versions: [
            { id: 'tv_a1', version: 1, name: 'Draft 1', isMajor: false, content: [], createdBy: owner('user_a'), createdAt: T(1), draftNumber: 1 },
            { id: 'tv_a2', version: 2, name: 'v1', isMajor: true, content: [], createdBy: owner('user_a'), createdAt: T(1, 1), publishNumber: 1 },
          ],
        },
        { id: 'tpl_a_empty', name: 'Empty', createdAt: T(2), updatedAt: T(2) },
      ],
      domains: [
        domainRow('dom_a1', 'a.test', 1, [
          { id: 'dns_a1', type: 'MX', typeName: 'MX' },
          { id: 'dns_a2', type: 'TXT', typeName: 'SPF' },
          { id: 'dns_a3', type: 'TXT', typeName: 'DKIM', deleted: true },
        ]),
        domainRow('dom_a2', 'mail.a.test', 2, [{ id: 'dns_a4', type: 'MX', typeName: 'MX' }]),
      ],
      contactGroups: [
        { id: 'grp_a1', name: 'Customers' },
        { id: 'grp_a2', name: 'Beta' },
      ],
      contactChannels: [
        { id: 'ch_a1', name: 'Newsletter', defaultSubscription: 'opt_in' as const },
        { id: 'ch_a2', name: 'Product', defaultSubscription: 'opt_out' as const },
      ],
      contacts: [
        { id: 'ct_a1', email: 'alice@r.test', firstName: 'Alice', lastName: 'A', status: 'subscribed' as const, properties: { plan: 'pro' }, groupIds: ['grp_a1'], enrolments: { ch_a2: 'enrolled' as const }, createdAt: T(1), updatedAt: T(1) },
        { id: 'ct_a2', email: 'BOB@R.test', firstName: 'Bob', status: 'unsubscribed' as const, groupIds: ['grp_a1', 'grp_a2'], enrolments: { ch_a1: 'unenrolled' as const }, createdAt: T(2), updatedAt: T(2) },
        { id: 'ct_a3', email: 'carol@other.test', status: 'blocked' as const, suppressionReason: 'complaint', suppressedAt: T(3, 1), createdAt: T(3), updatedAt: T(3, 1) },
        { id: 'ct_a4', email: 'dave@r.test', status: 'subscribed' as const, createdAt: T(4), updatedAt: T(4) },
      ],
    },
    {
      id: 'org_b',
      name: 'Org B',
      apiKeys: [{ id: 'key_b', key: KEY_B, owner: owner('user_b') }],
      emailLogs: [
        { id: 'eml_b1', messageId: '<b1@b.test>', domainId: 'dom_b1', fromEmail: 'x@b.test', toEmails: ['z@r.test'], subject: 'B', status: 'sent', size: 1, createdAt: T(5), updatedAt: T(5) },
      ],
      templates: [{ id: 'tpl_b', name: 'B template', createdAt: T(5), updatedAt: T(5) }],
      domains: [domainRow('dom_b1', 'b.test', 5, [{ id: 'dns_b1', type: 'MX', typeName: 'MX' }])],
      contactChannels: [{ id: 'ch_b1', name: 'B news', defaultSubscription: 'opt_in' as const }],
      contacts: [{ id: 'ct_b1', email: 'zoe@r.test', status: 'subscribed' as const, createdAt: T(5), updatedAt: T(5) }],
    },
  ],
};

/** A fixed, realistic spoof check result (what the engine answers for a domain with p=none). */
export const SAMPLE_RESULT: SpoofCheckResult = {
  domain: 'example.com',
  resolvedAt: '2025-03-01T12:00:00.000Z',
  source: 'dns',
  responseTimeMs: 42,
  spoofable: true,
  verdict: 'spoofable',
  headline: 'Yes — anyone can send as you@example.com',
  summary: "Your DMARC policy is set to 'p=none' (monitoring only). Receiving servers will still deliver unauthorized emails directly to inboxes.",
  inboxOutcome: 'delivered',
  dmarc: { published: true, policy: 'none', subdomainPolicy: null, percentage: 100, rawRecord: 'v=DMARC1; p=none' },
  spf: { published: true, qualifier: '~all', lookupCount: 3, rawRecord: 'v=spf1 include:_spf.example.net ~all' },
  dkim: { published: true, status: 'ok', selector: 's1', keyLength: 2048 },
  mx: { published: true, status: 'ok', provider: 'Google Workspace' },
  reasons: [
    { id: 'dmarc-p-none', severity: 'critical', title: "DMARC policy is 'p=none'", detail: 'Your DMARC record only monitors.' },
    { id: 'spf-valid', severity: 'success', title: "SPF Configured ('~all')", detail: 'Legitimate sending servers are specified with 3/10 DNS lookups.' },
  ],
  nextStep: { title: 'Move to p=reject', body: 'Change your DMARC policy step by step.', href: '/tools/auth-checker?domain=example.com' },
  subdomainNote: null,
  // A stand-in: the routes pass details through untouched, so its shape does not matter here.
  details: { dmarc: { record: { p: 'none' }, discovery: ['_dmarc.example.com'] }, dnsQueries: 9 } as unknown as SpoofCheckResult['details'],
};

/** Stores loaded with TEST_SEED. */
export async function seededStores(): Promise<Stores> {
  const stores = createMemoryStores();
  await applySeed(stores, parseSeed(structuredClone(TEST_SEED), 'test seed'));
  return stores;
}

/** An app over TEST_SEED; rate limits off unless given, the check answers SAMPLE_RESULT for the domain asked. */
export async function makeApp(overrides: Partial<AppOptions> = {}): Promise<{ app: FastifyInstance; stores: Stores }> {
  const stores = overrides.stores ?? (await seededStores());
  const app = await buildApp({
    stores,
    check: async (domain) => ({ ...SAMPLE_RESULT, domain }),
    rateLimits: false,
    now: () => new Date('2025-06-01T00:00:00.000Z'),
    ...overrides,
  });
  return { app, stores };
}

/** The type of a field as the spec gives it. `?` marks a field that may be absent. */
export type FieldType =
  | 'string'
  | 'string|null'
  | 'number'
  | 'number|null'
  | 'boolean'
  | 'boolean|null'
  | 'timestamp'
  | 'timestamp|null'
  | 'string[]'
  | 'array'
  | 'object'
  | 'object|null'
  | { literal: string }
  | { oneOf: readonly string[] }
  | { shape: Shape }
  | { arrayOf: Shape };
export type Shape = Record<string, FieldType | { optional: FieldType }>;

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Asserts that `value` has exactly the fields of `shape` (optional ones may be absent), each of its type. */
export function expectShape(value: unknown, shape: Shape, path = 'body'): void {
  expect(value, `${path} is an object`).toBeTypeOf('object');
  expect(value, `${path} is not null`).not.toBeNull();
  const record = value as Record<string, unknown>;
  const required = Object.entries(shape).filter(([, t]) => !(typeof t === 'object' && 'optional' in t)).map(([k]) => k);
  for (const name of required) expect(Object.keys(record), `${path}.${name} is present`).toContain(name);
  for (const name of Object.keys(record)) expect(Object.keys(shape), `${path}.${name} is a field of the spec`).toContain(name);
  for (const [name, declared] of Object.entries(shape)) {
    if (!(name in record)) continue;
    const type = typeof declared === 'object' && 'optional' in declared ? declared.optional : declared;
    expectType(record[name], type, `${path}.${name}`);
  }
}

function expectType(value: unknown, type: FieldType, path: string): void {
  if (typeof type === 'object') {
    if ('literal' in type) return void expect(value, path).toBe(type.literal);
    if ('oneOf' in type) return void expect(type.oneOf, `${path} = ${String(value)}`).toContain(value);
    if ('shape' in type) return expectShape(value, type.shape, path);
    expect(Array.isArray(value), `${path} is an array`).toBe(true);
    (value as unknown[]).forEach((item, i) => expectShape(item, type.arrayOf, `${path}[${i}]`));
    return;
  }
  const nullable = type.endsWith('|null');
  if (nullable && value === null) return;
  const base = nullable ? type.slice(0, -5) : type;
  switch (base) {
    case 'string':
    case 'number':
    case 'boolean':
      return void expect(typeof value, path).toBe(base);
    case 'timestamp':
      return void expect(value, path).toMatch(ISO_UTC);
    case 'string[]':
      expect(Array.isArray(value), `${path} is an array`).toBe(true);
      for (const item of value as unknown[]) expect(typeof item, `${path}[] is a string`).toBe('string');
      return;
    case 'array':
      return void expect(Array.isArray(value), `${path} is an array`).toBe(true);
    case 'object':
      expect(value !== null && typeof value === 'object' && !Array.isArray(value), `${path} is an object`).toBe(true);
      return;
  }
  throw new Error(`unknown type ${base}`);
}

/** Spec: "Email log" and "Email event". */
export const EMAIL_LOG_SHAPE: Shape = {
  id: 'string',
  messageId: 'string',
  organizationId: 'string',
  domainId: 'string',
  fromEmail: 'string',
  fromName: 'string|null',
  toEmails: 'string[]',
  ccEmails: 'string[]',
  bccEmails: 'string[]',
  replyTo: 'string|null',
  subject: 'string',
  textBody: 'string|null',
  htmlBody: 'string|null',
  status: 'string',
  errorMessage: 'string|null',
  provider: 'string|null',
  size: 'number',
  headers: 'object',
  sentAt: 'timestamp|null',
  deliveredAt: 'timestamp|null',
  failedAt: 'timestamp|null',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
  events: { arrayOf: { id: 'string', type: 'string', metadata: 'object|null', createdAt: 'timestamp' } },
};

/** Spec: "Record log". */
export const RECORD_LOG_SHAPE: Shape = {
  uuid: 'string',
  event: 'string',
  level: { oneOf: ['info', 'warn', 'error'] },
  trace_id: 'string',
  metadata: 'object|null',
  status_code: 'number',
  created_at: 'timestamp',
  requestDetails: 'object|null',
  request_body: 'object|null',
  email: 'object|null',
  actor_type: 'string',
  actor_id: 'string',
  resource_type: 'string',
  resource_id: 'string',
  service: 'string',
  action: 'string',
  ip_address: 'string',
  user_agent: 'string',
  environment: 'string',
};

/** Spec: "Spoof check result" (+ `details`). */
export const SPOOF_RESULT_SHAPE: Shape = {
  domain: 'string',
  resolvedAt: 'timestamp',
  // Beyond the spec: where the answers came from (fixture zones are stand-ins, never the live domain).
  source: { oneOf: ['dns', 'fixture-zones'] },
  responseTimeMs: 'number',
  spoofable: 'boolean',
  verdict: { oneOf: ['spoofable', 'partially_protected', 'protected'] },
  headline: 'string',
  summary: 'string',
  inboxOutcome: { oneOf: ['delivered', 'spam', 'rejected'] },
  dmarc: { shape: { published: 'boolean', policy: 'string|null', subdomainPolicy: 'string|null', percentage: 'number|null', rawRecord: 'string|null' } },
  spf: { shape: { published: 'boolean', qualifier: 'string|null', lookupCount: 'number', rawRecord: 'string|null' } },
  // published is null (status 'error') when a lookup failed: unknown, never false.
  dkim: { shape: { published: 'boolean|null', status: { oneOf: ['ok', 'error'] }, selector: 'string|null', keyLength: 'number|null' } },
  mx: { shape: { published: 'boolean|null', status: { oneOf: ['ok', 'error'] }, provider: 'string|null' } },
  reasons: { arrayOf: { id: 'string', severity: { oneOf: ['critical', 'warning', 'info', 'success'] }, title: 'string', detail: 'string' } },
  nextStep: { shape: { title: 'string', body: 'string', href: 'string' } },
  subdomainNote: 'string|null',
  details: 'object',
};

/** Spec: "Template version". */
export const TEMPLATE_VERSION_SHAPE: Shape = {
  id: 'string',
  templateId: 'string',
  version: 'number',
  name: 'string',
  isMajor: 'boolean',
  subject: 'string|null',
  fromEmail: 'string|null',
  replyTo: 'string|null',
  previewText: 'string|null',
  description: 'string|null',
  content: 'array',
  variables: { arrayOf: { name: 'string', type: { oneOf: ['string', 'number'] }, defaultValue: 'string|null' } },
  renderedHtml: 'string|null',
  createdByUserId: 'string',
  createdBy: { shape: { id: 'string', name: 'string', email: 'string', image: 'string' } },
  createdAt: 'timestamp',
  draftNumber: { optional: 'number' },
  publishNumber: { optional: 'number' },
};

/** Spec: "DNS record". */
export const DNS_RECORD_SHAPE: Shape = {
  id: 'string',
  recordType: 'string',
  recordTypeName: 'string',
  domain: 'string',
  name: 'string',
  value: 'string',
  ttl: 'string',
  priority: 'number|null',
  status: 'string',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
};

/** Spec: "Domain" (with `event`). */
export const DOMAIN_SHAPE: Shape = {
  object: { literal: 'domain' },
  id: 'string',
  domain: 'string',
  status: 'string',
  userVerifiedDomain: 'boolean',
  systemVerified: 'boolean',
  customReturnPath: 'string|null',
  trackingSubdomain: 'string|null',
  isClickTrackingEnabled: 'boolean',
  isOpenTrackingEnabled: 'boolean',
  tls: { oneOf: ['opportunistic', 'enforced'] },
  isTrackingDomain: 'boolean',
  isSendingEmailEnabled: 'boolean',
  isReceivingEmailEnabled: 'boolean',
  verificationFailedReason: 'string|null',
  dnsRecords: { arrayOf: DNS_RECORD_SHAPE },
  lastVerifiedAt: 'timestamp|null',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
  event: 'string',
};

/** Spec: "Contact". */
export const CONTACT_SHAPE: Shape = {
  object: { literal: 'contact' },
  id: 'string',
  email: 'string',
  firstName: 'string|null',
  lastName: 'string|null',
  status: { oneOf: ['subscribed', 'unsubscribed', 'blocked'] },
  properties: 'object',
  groups: { arrayOf: { id: 'string', name: 'string' } },
  channels: { arrayOf: { id: 'string', name: 'string', subscription: { oneOf: ['opt_in', 'opt_out'] } } },
  suppressionReason: 'string|null',
  suppressedAt: 'timestamp|null',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
};

/** The catalogue's error body. */
export const ERROR_SHAPE: Shape = {
  statusCode: 'number',
  code: 'string',
  message: 'string',
  why: 'string',
  fix: 'string',
  query: { optional: { shape: { name: 'string', type: 'string', reason: 'string', detail: { optional: 'string' } } } },
  retryAfter: { optional: 'number' },
};

/** Asserts an error response: status, stable code, and the catalogue's body shape. */
export function expectError(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(status);
  expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expectShape(body, ERROR_SHAPE);
  expect(body['statusCode']).toBe(status);
  expect(body['code']).toBe(code);
  return body;
}

/** A string of `n` characters. */
export const chars = (n: number, c = 'a'): string => c.repeat(n);
