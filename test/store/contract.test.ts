/**
 * The store contract: one suite, run unchanged against memory, SQLite and PostgreSQL. Every
 * resource, tenancy, pagination and order, template numbering (also under concurrency), soft
 * delete, record-log read-back and retention.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { digestApiKey } from '../../src/store/api-keys.js';
import { MEMORY_RECORD_LOG_CAPACITY } from '../../src/store/memory.js';
import { PRUNE_BATCH_SIZE } from '../../src/store/sql.js';
import type { Contact, ContactQuery, Domain, EmailLog, KeyOwner, RecordLog, Template } from '../../src/store/types.js';
import type { Monitor, MonitorRunCommit, MonitorSnapshot, WebhookDelivery } from '../../src/store/monitors.js';
import { describeStoreContract } from './contract-stores.js';

const owner: KeyOwner = { id: 'u1', name: 'U', email: 'u@x.test', image: '' };
const T = (n: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();

const emailLog = (id: string, organizationId: string, createdAt: string): EmailLog => ({
  id,
  messageId: `<${id}@x.test>`,
  organizationId,
  domainId: 'd1',
  fromEmail: 'f@x.test',
  fromName: 'From',
  toEmails: ['t@x.test', 'u@x.test'],
  ccEmails: ['c@x.test'],
  bccEmails: [],
  replyTo: null,
  subject: 'Hello ✉',
  textBody: 'text',
  htmlBody: null,
  status: 'delivered',
  errorMessage: null,
  provider: 'smtp',
  size: 1234,
  headers: { 'X-A': '1' },
  sentAt: T(1),
  deliveredAt: T(2),
  failedAt: null,
  createdAt,
  updatedAt: createdAt,
  events: [
    { id: `${id}e2`, type: 'sent', metadata: { n: 2 }, createdAt: T(5) },
    { id: `${id}e1`, type: 'queued', metadata: null, createdAt: T(1) },
    { id: `${id}e3`, type: 'delivered', metadata: null, createdAt: T(5) },
  ],
});

const recordLog = (uuid: string, createdAt: string): RecordLog => ({
  uuid,
  event: 'api.request',
  level: 'info',
  trace_id: `trace-${uuid}`,
  metadata: { route: '/x' },
  status_code: 201,
  created_at: createdAt,
  requestDetails: { method: 'POST' },
  request_body: { domain: 'x.test' },
  email: null,
  actor_type: 'api_key',
  actor_id: 'key_1',
  resource_type: 'template',
  resource_id: 't1',
  service: 'templates',
  action: 'create',
  ip_address: '192.0.2.1',
  user_agent: 'test',
  environment: 'test',
});

const template = (id: string, organizationId: string, createdAt: string): Template => ({
  id,
  organizationId,
  name: `Template ${id}`,
  description: null,
  subject: 'Subject',
  fromEmail: 'f@x.test',
  replyTo: null,
  previewText: 'Preview',
  status: 'draft',
  currentVersion: null,
  variables: [{ name: 'first', type: 'string', defaultValue: null }],
  createdAt,
  updatedAt: createdAt,
});

const domain = (id: string, organizationId: string, createdAt: string): Domain => ({
  id,
  organizationId,
  domain: `${id}.test`,
  status: 'pending',
  userVerifiedDomain: false,
  systemVerified: true,
  customReturnPath: null,
  trackingSubdomain: 'track',
  isClickTrackingEnabled: false,
  isOpenTrackingEnabled: true,
  tls: 'opportunistic',
  isTrackingDomain: false,
  isSendingEmailEnabled: true,
  isReceivingEmailEnabled: false,
  verificationFailedReason: null,
  dnsRecords: [
    { id: `${id}r1`, recordType: 'MX', recordTypeName: 'MX', domain: `${id}.test`, name: '@', value: 'mx', ttl: 'Auto', priority: 10, status: 'active', createdAt, updatedAt: createdAt, deletedAt: null },
    { id: `${id}r2`, recordType: 'TXT', recordTypeName: 'SPF', domain: `${id}.test`, name: '@', value: 'v=spf1 -all', ttl: 'Auto', priority: null, status: 'active', createdAt, updatedAt: createdAt, deletedAt: T(1) },
    { id: `${id}r3`, recordType: 'TXT', recordTypeName: 'DMARC', domain: `${id}.test`, name: '_dmarc', value: 'v=DMARC1; p=none', ttl: 'Auto', priority: null, status: 'active', createdAt, updatedAt: createdAt, deletedAt: null },
  ],
  lastVerifiedAt: null,
  createdAt,
  updatedAt: createdAt,
  deletedAt: null,
});

const contact = (id: string, organizationId: string, email: string, status: Contact['status'], n: number, extra: Partial<Contact> = {}): Contact => ({
  id,
  organizationId,
  email,
  firstName: 'F',
  lastName: null,
  status,
  properties: { plan: 'pro' },
  groupIds: [],
  enrolments: {},
  suppressionReason: null,
  suppressedAt: null,
  createdAt: T(n),
  updatedAt: T(n),
  ...extra,
});

describeStoreContract('store contract', ({ stores }, backend) => {
  describe('health and emptiness', () => {
    it('is healthy and empty when opened; not empty once an organisation exists', async () => {
      expect(await stores.health()).toEqual({ ok: true });
      expect(await stores.isEmpty()).toBe(true);
      await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
      expect(await stores.isEmpty()).toBe(false);
    });
  });

  describe('organisations and API keys', () => {
    it('adds (and renames) organisations', async () => {
      await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
      expect(await stores.apiKeys.getOrganization('o1')).toEqual({ id: 'o1', name: 'One' });
      await stores.apiKeys.addOrganization({ id: 'o1', name: 'Renamed' });
      expect(await stores.apiKeys.getOrganization('o1')).toEqual({ id: 'o1', name: 'Renamed' });
      expect(await stores.apiKeys.getOrganization('o2')).toBeUndefined();
    });

    it('finds a key by its digest, in its organisation; refuses a duplicate id', async () => {
      expect(await stores.apiKeys.hasAnyKey()).toBe(false);
      await stores.apiKeys.addKey({ id: 'k1', organizationId: 'o1', sha256: digestApiKey('secret-one-0123456'), owner });
      await stores.apiKeys.addKey({ id: 'k2', organizationId: 'o2', sha256: digestApiKey('secret-two-0123456'), owner });
      expect(await stores.apiKeys.hasAnyKey()).toBe(true);
      const found = await stores.apiKeys.findByDigest(digestApiKey('secret-two-0123456'));
      expect(found).toEqual({ id: 'k2', organizationId: 'o2', sha256: digestApiKey('secret-two-0123456'), owner });
      expect(await stores.apiKeys.findByDigest(digestApiKey('secret-three-0123'))).toBeUndefined();
      expect(await stores.apiKeys.findByDigest(Buffer.alloc(5))).toBeUndefined();
      await expect(stores.apiKeys.addKey({ id: 'k1', organizationId: 'o1', sha256: digestApiKey('other-key-0123456'), owner })).rejects.toThrow(/duplicate API key id "k1"/);
    });
  });

  describe('email logs', () => {
    it('scoped by organisation; events in lifecycle order; every field read back', async () => {
      await stores.emailLogs.add(emailLog('m1', 'o1', T(1)));
      expect(await stores.emailLogs.get('o2', 'm1')).toBeUndefined();
      const read = await stores.emailLogs.get('o1', 'm1');
      const expected = emailLog('m1', 'o1', T(1));
      expect(read).toEqual({ ...expected, events: [expected.events[1], expected.events[0], expected.events[2]] });
    });

    it('lists newest first (ties by id), page by page, with the total', async () => {
      for (const [id, n] of [['m1', 1], ['m2', 2], ['m3', 2], ['m4', 4], ['m5', 5]] as const) await stores.emailLogs.add(emailLog(id, 'o1', T(n)));
      await stores.emailLogs.add(emailLog('mX', 'o2', T(9)));
      const pages = await Promise.all([1, 2, 3, 4].map((page) => stores.emailLogs.list('o1', { page, limit: 2 })));
      expect(pages.map((p) => p.items.map((l) => l.id))).toEqual([['m5', 'm4'], ['m3', 'm2'], ['m1'], []]);
      expect(pages.map((p) => p.total)).toEqual([5, 5, 5, 5]);
    });

    it('a caller that edits what it read does not edit the store', async () => {
      await stores.emailLogs.add(emailLog('m1', 'o1', T(1)));
      const read = await stores.emailLogs.get('o1', 'm1');
      read!.subject = 'changed';
      read!.events.pop();
      expect((await stores.emailLogs.get('o1', 'm1'))?.subject).toBe('Hello ✉');
      expect((await stores.emailLogs.get('o1', 'm1'))?.events).toHaveLength(3);
    });
  });

  describe('record logs', () => {
    it('reads back every field; readable only by its organisation; an anonymous record by nobody', async () => {
      await stores.recordLogs.append('o1', recordLog('r1', T(1)));
      await stores.recordLogs.append(null, recordLog('r2', T(2)));
      expect(await stores.recordLogs.get('o1', 'r1')).toEqual(recordLog('r1', T(1)));
      expect(await stores.recordLogs.get('o2', 'r1')).toBeUndefined();
      expect(await stores.recordLogs.get('o1', 'r2')).toBeUndefined();
      expect(await stores.recordLogs.get('', 'r2')).toBeUndefined();
    });

    it('1,200 concurrent appends (grouped into a few commits) are each readable once their promise resolves; a uuid written twice keeps the last', async () => {
      const appends = Array.from({ length: 1200 }, (_, i) => stores.recordLogs.append(i % 3 === 0 ? null : 'o1', recordLog(`g${i}`, T(1 + (i % 20)))));
      appends.push(stores.recordLogs.append('o1', recordLog('g1', T(25))));
      await Promise.all(appends);
      const read = await Promise.all(Array.from({ length: 1200 }, (_, i) => stores.recordLogs.get('o1', `g${i}`)));
      expect(read.filter((record) => record !== undefined)).toHaveLength(800);
      expect((await stores.recordLogs.get('o1', 'g1'))?.created_at).toBe(T(25));
    });
  });

  describe('templates', () => {
    it('scoped by organisation; listed newest first with pagination', async () => {
      for (const [id, n] of [['t1', 1], ['t2', 2], ['t3', 3]] as const) await stores.templates.addTemplate(template(id, 'o1', T(n)));
      await stores.templates.addTemplate(template('tX', 'o2', T(9)));
      expect(await stores.templates.getTemplate('o1', 't1')).toEqual(template('t1', 'o1', T(1)));
      expect(await stores.templates.getTemplate('o2', 't1')).toBeUndefined();
      const page = await stores.templates.listTemplates('o1', { page: 2, limit: 2 });
      expect(page).toEqual({ items: [template('t1', 'o1', T(1))], total: 3 });
    });

    it('numbers versions: one counter, drafts and publishes counted apart, default names, inherited fields', async () => {
      await stores.templates.addTemplate(template('t1', 'o1', T(0)));
      const draft1 = await stores.templates.createVersion('o1', 't1', { content: [{ type: 'text' }], createdBy: owner, createdAt: T(1) });
      expect(draft1).toMatchObject({ version: 1, draftNumber: 1, name: 'Draft 1', isMajor: false, subject: 'Subject', fromEmail: 'f@x.test', previewText: 'Preview', description: null });
      expect(draft1).not.toHaveProperty('publishNumber');
      const major1 = await stores.templates.createVersion('o1', 't1', {
        content: [],
        isMajor: true,
        subject: 'New subject',
        variables: [{ name: 'n', type: 'number', defaultValue: '1' }],
        createdBy: owner,
        createdAt: T(2),
      });
      expect(major1).toMatchObject({ version: 2, publishNumber: 1, name: 'v1', subject: 'New subject' });
      expect(major1).not.toHaveProperty('draftNumber');
      const draft2 = await stores.templates.createVersion('o1', 't1', { content: [], name: 'Mine', createdBy: owner, createdAt: T(3) });
      expect(draft2).toMatchObject({ version: 3, draftNumber: 2, name: 'Mine' });
      expect(await stores.templates.getTemplate('o1', 't1')).toMatchObject({
        status: 'published',
        currentVersion: 2,
        updatedAt: T(3),
        variables: [{ name: 'n', type: 'number', defaultValue: '1' }],
      });
      const versions = await stores.templates.listVersions('o1', 't1');
      expect(versions).toEqual([draft1, major1, draft2]);
    });

    it('adds seeded versions and lists them by version; refuses another organisation', async () => {
      await stores.templates.addTemplate(template('t1', 'o1', T(0)));
      const base = (await stores.templates.createVersion('o1', 't1', { content: [], createdBy: owner, createdAt: T(1) }))!;
      await stores.templates.addVersion('o1', { ...base, id: 'seeded7', version: 7, isMajor: true, publishNumber: 1, draftNumber: undefined as never });
      expect((await stores.templates.listVersions('o1', 't1'))?.map((v) => v.version)).toEqual([1, 7]);
      expect(await stores.templates.createVersion('o1', 't1', { content: [], createdBy: owner, createdAt: T(2) })).toMatchObject({ version: 8, draftNumber: 2 });
      await expect(stores.templates.addVersion('o2', { ...base, id: 'other' })).rejects.toThrow(/not a template of organisation "o2"/);
    });

    it('no version for an unknown template or another organisation', async () => {
      await stores.templates.addTemplate(template('t1', 'o1', T(0)));
      expect(await stores.templates.createVersion('o2', 't1', { content: [], createdBy: owner, createdAt: T(1) })).toBeUndefined();
      expect(await stores.templates.createVersion('o1', 'nope', { content: [], createdBy: owner, createdAt: T(1) })).toBeUndefined();
      expect(await stores.templates.listVersions('o1', 't1')).toEqual([]);
      expect(await stores.templates.listVersions('o2', 't1')).toBeUndefined();
    });

    it('30 concurrent creations get 1..30, each number once, drafts 1..n and publishes 1..m', async () => {
      await stores.templates.addTemplate(template('t1', 'o1', T(0)));
      const created = await Promise.all(
        Array.from({ length: 30 }, (_, i) => stores.templates.createVersion('o1', 't1', { content: [i], isMajor: i % 3 === 0, createdBy: owner, createdAt: T(i) })),
      );
      expect(created.map((v) => v!.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(new Set(created.map((v) => v!.id)).size).toBe(30);
      const drafts = created.filter((v) => !v!.isMajor).map((v) => v!.draftNumber!);
      const publishes = created.filter((v) => v!.isMajor).map((v) => v!.publishNumber!);
      expect(drafts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(publishes.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    });
  });

  describe('domains', () => {
    it('get and list show live domains with their live records, in order, newest first', async () => {
      await stores.domains.add(domain('d1', 'o1', T(1)));
      await stores.domains.add(domain('d2', 'o1', T(2)));
      await stores.domains.add(domain('dX', 'o2', T(3)));
      const expected = domain('d1', 'o1', T(1));
      expect(await stores.domains.get('o1', 'd1')).toEqual({ ...expected, dnsRecords: [expected.dnsRecords[0], expected.dnsRecords[2]] });
      expect(await stores.domains.get('o2', 'd1')).toBeUndefined();
      const page = await stores.domains.list('o1', { page: 1, limit: 1 });
      expect(page.items.map((d) => d.id)).toEqual(['d2']);
      expect(page.items[0]?.dnsRecords.map((r) => r.id)).toEqual(['d2r1', 'd2r3']);
      expect(page.total).toBe(2);
    });

    it('update changes only the given fields and sets updatedAt; another organisation gets undefined', async () => {
      await stores.domains.add(domain('d1', 'o1', T(1)));
      expect(await stores.domains.update('o2', 'd1', { tls: 'enforced' }, T(9))).toBeUndefined();
      const updated = await stores.domains.update('o1', 'd1', { tls: 'enforced', isClickTrackingEnabled: true }, T(9));
      expect(updated).toMatchObject({ tls: 'enforced', isClickTrackingEnabled: true, isOpenTrackingEnabled: true, isSendingEmailEnabled: true, updatedAt: T(9) });
      expect(await stores.domains.get('o1', 'd1')).toEqual(updated);
    });

    it('softDelete marks the domain and its live records, returns the records it removed, hides it from every read', async () => {
      await stores.domains.add(domain('d1', 'o1', T(1)));
      expect(await stores.domains.softDelete('o2', 'd1', T(9))).toBeUndefined();
      const deleted = await stores.domains.softDelete('o1', 'd1', T(9));
      expect(deleted).toMatchObject({ id: 'd1', deletedAt: T(9), updatedAt: T(9) });
      expect(deleted?.dnsRecords.map((r) => [r.id, r.deletedAt, r.updatedAt])).toEqual([
        ['d1r1', T(9), T(9)],
        ['d1r3', T(9), T(9)],
      ]);
      expect(await stores.domains.get('o1', 'd1')).toBeUndefined();
      expect(await stores.domains.update('o1', 'd1', {}, T(10))).toBeUndefined();
      expect(await stores.domains.softDelete('o1', 'd1', T(10))).toBeUndefined();
      expect(await stores.domains.list('o1', { page: 1, limit: 10 })).toEqual({ items: [], total: 0 });
    });
  });

  describe('contacts', () => {
    beforeEach(async () => {
      await stores.contacts.addChannel({ id: 'ch2', organizationId: 'o1', name: 'Second', defaultSubscription: 'opt_out' });
      await stores.contacts.addChannel({ id: 'ch1', organizationId: 'o1', name: 'First', defaultSubscription: 'opt_in' });
      await stores.contacts.addChannel({ id: 'chX', organizationId: 'o2', name: 'Other org', defaultSubscription: 'opt_in' });
      await stores.contacts.addGroup({ id: 'g1', organizationId: 'o1', name: 'G' });
      await stores.contacts.addGroup({ id: 'gX', organizationId: 'o2', name: 'Other' });
      await stores.contacts.addContact(contact('c1', 'o1', 'a@x.test', 'subscribed', 1, { groupIds: ['g1', 'gX'], enrolments: { ch2: 'enrolled', ch1: 'unenrolled' } }));
      await stores.contacts.addContact(contact('c2', 'o1', 'B@X.test', 'unsubscribed', 2));
      await stores.contacts.addContact(contact('c3', 'o1', 'c%_@y.test', 'blocked', 3));
      await stores.contacts.addContact(contact('c4', 'o2', 'a@x.test', 'subscribed', 4));
      await stores.contacts.addContact(contact('c5', 'o1', 'ÉLODIE@exemple.test', 'blocked', 5));
    });

    it('resolves groups and channels; orders newest first; counts organisation-wide', async () => {
      const all = await stores.contacts.list('o1', { page: 1, limit: 100 });
      expect(all).toMatchObject({ total: 4, totalContacts: 4, subscribedContacts: 1, unsubscribedContacts: 1 });
      expect(all.items.map((c) => c.id)).toEqual(['c5', 'c3', 'c2', 'c1']);
      expect(all.items[3]).toEqual({
        id: 'c1',
        email: 'a@x.test',
        firstName: 'F',
        lastName: null,
        status: 'subscribed',
        properties: { plan: 'pro' },
        suppressionReason: null,
        suppressedAt: null,
        createdAt: T(1),
        updatedAt: T(1),
        groups: [{ id: 'g1', name: 'G' }],
        channels: [
          { id: 'ch1', name: 'First', subscription: 'opt_out' },
          { id: 'ch2', name: 'Second', subscription: 'opt_in' },
        ],
      });
      expect(all.items[2]?.channels.map((c) => c.subscription)).toEqual(['opt_in', 'opt_out']);
    });

    it.each<[Pick<ContactQuery, 'search' | 'status'>, string[], string]>([
      [{ search: 'X.TEST' }, ['c2', 'c1'], 'case-insensitive substring'],
      [{ search: '%_' }, ['c3'], 'LIKE wildcards are plain characters'],
      [{ search: '%' }, ['c3'], 'a lone % matches only a %'],
      [{ search: 'élodie@' }, ['c5'], 'non-ASCII letters compare case-insensitively too'],
      [{ status: 'blocked' }, ['c5', 'c3'], 'status filter'],
      [{ status: 'subscribed', search: 'b@' }, [], 'both filters'],
    ])('filter %j → %j (%s)', async (filter, ids) => {
      const page = await stores.contacts.list('o1', { page: 1, limit: 100, ...filter });
      expect(page.items.map((c) => c.id)).toEqual(ids);
      expect(page).toMatchObject({ total: ids.length, totalContacts: 4, subscribedContacts: 1, unsubscribedContacts: 1 });
    });

    it('paginates with the filtered total', async () => {
      expect((await stores.contacts.list('o1', { page: 2, limit: 3 })).items.map((c) => c.id)).toEqual(['c1']);
      expect(await stores.contacts.list('o1', { page: 3, limit: 2 })).toMatchObject({ items: [], total: 4 });
    });
  });

  describe('monitors', () => {
    const monitor = (id: string, organizationId: string, domain: string, n: number, extra: Partial<Monitor> = {}): Monitor => ({
      id,
      organizationId,
      domain,
      intervalMinutes: 1440,
      webhookUrl: 'https://hooks.example/x',
      checks: [],
      sealedSecret: 'v1.sealed',
      machine: { confirmed: null, candidate: null, consecutiveFailures: 0 },
      lastResult: null,
      nextRunAt: T(100 + n),
      leaseUntil: null,
      version: 0,
      createdAt: T(n),
      updatedAt: T(n),
      ...extra,
    });
    const snap: MonitorSnapshot = { kind: 'could-not-check', reason: 'SERVFAIL' };
    const summary = { checkedAt: T(50), outcome: 'could-not-check' as const, verdict: null, inboxOutcome: null, transportVerdict: null, digest: 'd', reason: 'SERVFAIL' };
    const delivery = (id: string, monitorId: string, at: string): WebhookDelivery => ({
      id, monitorId, organizationId: 'o1', eventId: 'chg1', url: 'https://hooks.example/x', body: '{"a":1}', status: 'pending', attempts: [], nextAttemptAt: at, giveUpAt: T(59), redeliveryOf: null, createdAt: at,
    });
    const run = (monitorId: string, runId: string, expectedVersion: number, at: string, extra: Partial<MonitorRunCommit> = {}): MonitorRunCommit => ({
      monitorId,
      runId,
      expectedVersion,
      machine: { confirmed: null, candidate: null, consecutiveFailures: expectedVersion + 1 },
      lastResult: { ...summary, checkedAt: at },
      at,
      entries: [{ type: 'check', id: `chk-${runId}`, monitorId, at, runId, summary: { ...summary, checkedAt: at }, snapshot: snap }],
      deliveries: [],
      ...extra,
    });

    it('one monitor per domain and organisation; scoped reads; newest first with pagination; update and delete', async () => {
      expect(await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1))).toBe('created');
      expect(await stores.monitors.create(monitor('m2', 'o1', 'a.example', 2))).toBe('duplicate-domain');
      expect(await stores.monitors.create(monitor('m3', 'o2', 'a.example', 3))).toBe('created');
      expect(await stores.monitors.create(monitor('m4', 'o1', 'b.example', 4, { checks: ['transport'], webhookUrl: null }))).toBe('created');
      expect(await stores.monitors.get('o1', 'm1')).toEqual(monitor('m1', 'o1', 'a.example', 1));
      expect(await stores.monitors.get('o2', 'm1')).toBeUndefined();
      expect((await stores.monitors.getById('m3'))?.organizationId).toBe('o2');
      const page1 = await stores.monitors.list('o1', { page: 1, limit: 1 });
      expect(page1.total).toBe(2);
      expect(page1.items.map((m) => m.id)).toEqual(['m4']);
      expect((await stores.monitors.list('o1', { page: 2, limit: 1 })).items.map((m) => m.id)).toEqual(['m1']);
      const updated = await stores.monitors.update('o1', 'm1', { intervalMinutes: 5, webhookUrl: null, nextRunAt: T(7) }, T(9));
      expect(updated).toMatchObject({ intervalMinutes: 5, webhookUrl: null, nextRunAt: T(7), updatedAt: T(9), domain: 'a.example' });
      expect(await stores.monitors.update('o2', 'm1', { intervalMinutes: 6 }, T(9))).toBeUndefined();
      expect(await stores.monitors.delete('o2', 'm1')).toBe(false);
      expect(await stores.monitors.delete('o1', 'm1')).toBe(true);
      expect(await stores.monitors.get('o1', 'm1')).toBeUndefined();
      // The domain is free again once its monitor is gone.
      expect(await stores.monitors.create(monitor('m5', 'o1', 'a.example', 5))).toBe('created');
    });

    it('commits a run once (same run id: duplicate), refuses a stale version (conflict), numbers history newest first', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      expect(await stores.monitors.commitRun(run('m1', 'slot:1', 0, T(10), { nextRunAt: T(20), deliveries: [delivery('d1', 'm1', T(10))] }))).toBe('committed');
      expect(await stores.monitors.commitRun(run('m1', 'slot:1', 1, T(11)))).toBe('duplicate');
      expect(await stores.monitors.commitRun(run('m1', 'slot:2', 0, T(12)))).toBe('conflict');
      expect(await stores.monitors.commitRun(run('nope', 'slot:2', 0, T(12)))).toBe('gone');
      const change = { type: 'change' as const, id: 'chg1', monitorId: 'm1', at: T(13), before: snap, after: snap, changes: [{ field: 'state', before: 'checked', after: 'could-not-check' }] };
      const second = run('m1', 'slot:2', 1, T(13));
      expect(await stores.monitors.commitRun({ ...second, entries: [...second.entries, change] })).toBe('committed');
      const after = await stores.monitors.getById('m1');
      expect(after).toMatchObject({ version: 2, nextRunAt: T(20), leaseUntil: null, machine: { consecutiveFailures: 2 }, lastResult: { checkedAt: T(13) } });
      const history = await stores.monitors.history('o1', 'm1', { page: 1, limit: 2 });
      expect(history?.total).toBe(3);
      expect(history?.items.map((e) => [e.type, e.seq])).toEqual([['change', 3], ['check', 2]]);
      expect(history?.items[0]).toEqual({ ...change, seq: 3 });
      expect((await stores.monitors.history('o1', 'm1', { page: 2, limit: 2 }))?.items.map((e) => e.id)).toEqual(['chk-slot:1']);
      expect(await stores.monitors.history('o2', 'm1', { page: 1, limit: 2 })).toBeUndefined();
      expect((await stores.monitors.publicHistory('a.example', { page: 1, limit: 10 }))?.total).toBe(3);
      expect(await stores.monitors.publicHistory('z.example', { page: 1, limit: 10 })).toBeUndefined();
      // Deleting the monitor deletes its history and deliveries.
      await stores.monitors.delete('o1', 'm1');
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      expect((await stores.monitors.history('o1', 'm1', { page: 1, limit: 10 }))?.total).toBe(0);
      expect((await stores.monitors.deliveries('o1', 'm1', { page: 1, limit: 10 }))?.total).toBe(0);
    });

    it('stamps name each monitor\u2019s state (a run moves its version); getMany reads the organisation\u2019s monitors by id', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      await stores.monitors.create(monitor('m2', 'o1', 'b.example', 2));
      await stores.monitors.create(monitor('m3', 'o2', 'c.example', 3));
      const byId = <T extends { id: string }>(list: T[]): T[] => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(byId(await stores.monitors.stamps('o1'))).toEqual([
        { id: 'm1', version: 0, createdAt: T(1) },
        { id: 'm2', version: 0, createdAt: T(2) },
      ]);
      await stores.monitors.update('o1', 'm2', { intervalMinutes: 5 }, T(9));
      expect(await stores.monitors.commitRun(run('m1', 'slot:1', 0, T(10)))).toBe('committed');
      expect(byId(await stores.monitors.stamps('o1')).map((s) => [s.id, s.version])).toEqual([['m1', 1], ['m2', 0]]);
      expect(await stores.monitors.stamps('o3')).toEqual([]);
      const many = byId(await stores.monitors.getMany('o1', ['m1', 'm2', 'm3', 'nope']));
      expect(many).toEqual([await stores.monitors.get('o1', 'm1'), await stores.monitors.get('o1', 'm2')]);
      expect(many[0]).toMatchObject({ version: 1, lastResult: { checkedAt: T(10) } });
      expect(await stores.monitors.getMany('o1', [])).toEqual([]);
    });

    it('recentActivity: the changes among the latest entries (newest first, at most so many) and the latest deliveries, in one read; scoped', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      const change = (n: number) => ({ type: 'change' as const, id: `chg${n}`, monitorId: 'm1', at: T(10 + n), before: snap, after: snap, changes: [{ field: 'state', before: 'checked', after: 'could-not-check' }] });
      // Entries 1..8: a check then a change per run (seq 2, 4, 6, 8 are changes).
      for (let n = 0; n < 4; n++) {
        const r = run('m1', `slot:${n}`, n, T(10 + n), { deliveries: [delivery(`d${n}`, 'm1', T(20 + n))] });
        expect(await stores.monitors.commitRun({ ...r, entries: [...r.entries, change(n)] })).toBe('committed');
      }
      const all = await stores.monitors.recentActivity('o1', 'm1', { entries: 100, changes: 100, deliveries: 100 });
      expect(all?.changes.map((e) => [e.id, e.seq])).toEqual([['chg3', 8], ['chg2', 6], ['chg1', 4], ['chg0', 2]]);
      expect(all?.changes[0]).toEqual({ ...change(3), seq: 8 });
      expect(all?.deliveries.map((d) => d.id)).toEqual(['d3', 'd2', 'd1', 'd0']);
      expect(all?.deliveries).toEqual((await stores.monitors.deliveries('o1', 'm1', { page: 1, limit: 10 }))?.items);
      // The latest 5 entries (seq 8..4) hold three changes; two kept; two deliveries.
      const some = await stores.monitors.recentActivity('o1', 'm1', { entries: 5, changes: 2, deliveries: 2 });
      expect(some?.changes.map((e) => e.seq)).toEqual([8, 6]);
      expect((await stores.monitors.recentActivity('o1', 'm1', { entries: 4, changes: 10, deliveries: 0 }))?.changes.map((e) => e.seq)).toEqual([8, 6]);
      expect(some?.deliveries.map((d) => d.id)).toEqual(['d3', 'd2']);
      expect(await stores.monitors.recentActivity('o2', 'm1', { entries: 5, changes: 2, deliveries: 2 })).toBeUndefined();
      await stores.monitors.create(monitor('m2', 'o1', 'b.example', 2));
      expect(await stores.monitors.recentActivity('o1', 'm2', { entries: 5, changes: 2, deliveries: 2 })).toEqual({ changes: [], deliveries: [] });
    });

    it('of concurrent runs at one version, exactly one commits', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => stores.monitors.commitRun(run('m1', `slot:${i}`, 0, T(10 + i)))));
      expect(outcomes.filter((o) => o === 'committed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'conflict')).toHaveLength(7);
      expect((await stores.monitors.history('o1', 'm1', { page: 1, limit: 10 }))?.total).toBe(1);
    });

    it('due monitors are leased by one scheduler at a time', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1, { nextRunAt: T(10) }));
      await stores.monitors.create(monitor('m2', 'o1', 'b.example', 2, { nextRunAt: T(30) }));
      expect((await stores.monitors.due(T(20), 10)).map((m) => m.id)).toEqual(['m1']);
      const leases = await Promise.all([stores.monitors.lease('m1', null, T(25), T(20)), stores.monitors.lease('m1', null, T(26), T(20))]);
      expect(leases.filter(Boolean)).toHaveLength(1);
      expect(await stores.monitors.due(T(20), 10)).toEqual([]);
      expect(await stores.monitors.lease('m2', null, T(25), T(20))).toBe(false); // not due yet
      // A lease that ran out: the slot is due again and can be taken over.
      const expired = await stores.monitors.due(T(27), 10);
      expect(expired.map((m) => m.id)).toEqual(['m1']);
      expect(await stores.monitors.lease('m1', expired[0]!.leaseUntil, T(40), T(27))).toBe(true);
      expect((await stores.monitors.listAll('', 10)).map((m) => m.id)).toEqual(['m1', 'm2']);
      expect((await stores.monitors.listAll('m1', 10)).map((m) => m.id)).toEqual(['m2']);
    });

    it('deliveries: claimed by one pump, attempts recorded, listed newest first, scoped; the server key is made once', async () => {
      await stores.monitors.create(monitor('m1', 'o1', 'a.example', 1));
      await stores.monitors.addDelivery(delivery('d1', 'm1', T(10)));
      await stores.monitors.addDelivery(delivery('d2', 'm1', T(11)));
      await stores.monitors.addDelivery(delivery('d3', 'm1', T(40)));
      const claims = await Promise.all([stores.monitors.claimDueDeliveries(T(20), T(50), 10), stores.monitors.claimDueDeliveries(T(20), T(50), 10)]);
      expect(claims.flat().map((d) => d.id).sort()).toEqual(['d1', 'd2']);
      expect(await stores.monitors.claimDueDeliveries(T(20), T(50), 10)).toEqual([]);
      const attempt = { at: T(21), outcome: 'http-error' as const, statusCode: 500, durationMs: 3, detail: 'HTTP 500' };
      await stores.monitors.recordAttempt('d1', attempt, 'pending', T(30));
      await stores.monitors.recordAttempt('d2', { ...attempt, outcome: 'delivered', statusCode: 200 }, 'delivered', null);
      expect(await stores.monitors.getDelivery('o1', 'm1', 'd1')).toMatchObject({ status: 'pending', nextAttemptAt: T(30), attempts: [attempt] });
      expect(await stores.monitors.getDelivery('o2', 'm1', 'd1')).toBeUndefined();
      const listed = await stores.monitors.deliveries('o1', 'm1', { page: 1, limit: 10 });
      expect(listed?.items.map((d) => d.id)).toEqual(['d3', 'd2', 'd1']);
      expect(await stores.monitors.deliveries('o2', 'm1', { page: 1, limit: 10 })).toBeUndefined();
      expect((await stores.monitors.claimDueDeliveries(T(31), T(55), 10)).map((d) => d.id)).toEqual(['d1']);
      // Retention: history and finished deliveries older than the cut-off go; pending ones stay.
      await stores.monitors.commitRun(run('m1', 'slot:1', 0, T(5)));
      await stores.monitors.commitRun(run('m1', 'slot:2', 1, T(45)));
      expect(await stores.monitors.prune(T(35))).toBe(2);
      expect((await stores.monitors.history('o1', 'm1', { page: 1, limit: 10 }))?.items.map((e) => e.at)).toEqual([T(45)]);
      expect((await stores.monitors.deliveries('o1', 'm1', { page: 1, limit: 10 }))?.items.map((d) => d.id)).toEqual(['d3', 'd1']);
      const key = await stores.monitors.serverKey(() => Buffer.alloc(32, 1));
      expect(await stores.monitors.serverKey(() => Buffer.alloc(32, 2))).toEqual(key);
      expect(key).toEqual(Buffer.alloc(32, 1));
    });
  });

  describe('record-log bound', () => {
    if (backend.name === 'memory') {
      it(`memory keeps a ring of the newest records (capacity ${MEMORY_RECORD_LOG_CAPACITY} by default)`, async () => {
        const small = await backend.open({ recordLogCapacity: 3 });
        try {
          for (let i = 1; i <= 5; i++) await small.stores.recordLogs.append('o1', recordLog(`r${i}`, T(i)));
          const kept = await Promise.all([1, 2, 3, 4, 5].map((i) => small.stores.recordLogs.get('o1', `r${i}`)));
          expect(kept.map((r) => r?.uuid ?? null)).toEqual([null, null, 'r3', 'r4', 'r5']);
        } finally {
          await small.dispose();
        }
      });
      it('memory keeps records without an organisation in a ring of their own: a flood of them evicts no organisation\'s record', async () => {
        const small = await backend.open({ recordLogCapacity: 3 });
        try {
          await small.stores.recordLogs.append('o1', recordLog('mine', T(1)));
          for (let i = 1; i <= 20; i++) await small.stores.recordLogs.append(null, recordLog(`anon${i}`, T(i + 1)));
          expect((await small.stores.recordLogs.get('o1', 'mine'))?.uuid).toBe('mine');
        } finally {
          await small.dispose();
        }
      });
    } else {
      it('SQL keeps only the newest records without an organisation, and never trims an organisation\'s', async () => {
        const small = await backend.open({ pruneAutomatically: false, unattributedRecordLogs: { max: 3, trimEvery: 2 } });
        try {
          const db = small.sql!.db;
          await small.stores.recordLogs.append('o1', recordLog('mine', T(1)));
          for (let i = 1; i <= 10; i++) await small.stores.recordLogs.append(null, recordLog(`anon${String(i).padStart(2, '0')}`, T(i + 1)));
          const anonymous = await db.selectFrom('record_logs').select('uuid').where('organization_id', 'is', null).orderBy('uuid').execute();
          // Trimmed after the 10th append: exactly the newest 3 remain.
          expect(anonymous.map((r) => r.uuid)).toEqual(['anon08', 'anon09', 'anon10']);
          expect((await small.stores.recordLogs.get('o1', 'mine'))?.uuid).toBe('mine');
        } finally {
          await small.dispose();
        }
      });

      it(`SQL prunes records older than the retention, in batches of ${PRUNE_BATCH_SIZE}`, async () => {
        const now = new Date('2025-03-01T00:00:00.000Z');
        const day = 24 * 60 * 60 * 1000;
        const at = (days: number, ms = 0) => new Date(now.getTime() - days * day + ms).toISOString();
        const small = await backend.open({ retentionDays: 30, pruneAutomatically: false });
        try {
          const old = PRUNE_BATCH_SIZE * 2 + 5;
          await Promise.all(Array.from({ length: old }, (_, i) => small.stores.recordLogs.append('o1', recordLog(`old${i}`, at(31, i)))));
          await small.stores.recordLogs.append('o1', recordLog('edge', at(30, 1)));
          await small.stores.recordLogs.append('o1', recordLog('new', at(1)));
          expect(await small.sql!.pruneRecordLogs(now)).toBe(old);
          expect(await small.stores.recordLogs.get('o1', 'old0')).toBeUndefined();
          expect(await small.stores.recordLogs.get('o1', `old${old - 1}`)).toBeUndefined();
          expect((await small.stores.recordLogs.get('o1', 'edge'))?.uuid).toBe('edge');
          expect((await small.stores.recordLogs.get('o1', 'new'))?.uuid).toBe('new');
          expect(await small.sql!.pruneRecordLogs(now)).toBe(0);
        } finally {
          await small.dispose();
        }
      });
    }
  });
});
