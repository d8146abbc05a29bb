import { describe, expect, it } from 'vitest';
import { apiKeyIdFromDigest, digestApiKey, digestsEqual } from '../../src/store/api-keys.js';
import { createMemoryStores, MemoryApiKeyStore, MemoryTemplateStore } from '../../src/store/memory.js';
import { newestFirst, paginate } from '../../src/store/pagination.js';
import { nextVersionNumbers } from '../../src/store/template-numbering.js';
import type { Contact, Domain, EmailLog, KeyOwner, RecordLog, Template } from '../../src/store/types.js';

const owner: KeyOwner = { id: 'u1', name: 'U', email: 'u@x.test', image: '' };
const T = (n: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();

describe('paginate', () => {
  const rows = [1, 2, 3, 4, 5];
  it.each([
    [1, 2, [1, 2], 'first page'],
    [2, 2, [3, 4], 'middle page'],
    [3, 2, [5], 'last, partial page'],
    [4, 2, [], 'past the end: empty, total still counts'],
    [1, 100, [1, 2, 3, 4, 5], 'limit above the row count'],
  ])('page %i limit %i → %j (%s)', (page, limit, items, _reason) => {
    expect(paginate(rows, { page, limit })).toEqual({ items, total: 5 });
  });

  it('newestFirst orders by createdAt descending, then id descending', () => {
    const sorted = [
      { id: 'a', createdAt: T(1) },
      { id: 'c', createdAt: T(2) },
      { id: 'b', createdAt: T(2) },
    ].sort(newestFirst);
    expect(sorted.map((r) => r.id)).toEqual(['c', 'b', 'a']);
  });
});

describe('nextVersionNumbers', () => {
  it.each([
    [[], false, { version: 1, draftNumber: 1, defaultName: 'Draft 1' }, 'first version, a draft'],
    [[], true, { version: 1, publishNumber: 1, defaultName: 'v1' }, 'first version, major'],
    [[{ version: 1, isMajor: false }], true, { version: 2, publishNumber: 1, defaultName: 'v1' }, 'first publish after a draft'],
    [[{ version: 1, isMajor: false }, { version: 2, isMajor: true }], false, { version: 3, draftNumber: 2, defaultName: 'Draft 2' }, 'drafts count drafts only'],
    [[{ version: 7, isMajor: true }, { version: 3, isMajor: false }], false, { version: 8, draftNumber: 2, defaultName: 'Draft 2' }, 'highest + 1, not count + 1'],
  ])('%j, isMajor %s → %j (%s)', (existing, isMajor, expected, _reason) => {
    expect(nextVersionNumbers(existing, isMajor)).toEqual(expected);
  });
});

describe('API keys', () => {
  it('stores digests and finds a key by digest, in its organisation', async () => {
    const store = new MemoryApiKeyStore();
    await store.addKey({ id: 'k1', organizationId: 'o1', sha256: digestApiKey('secret-one'), owner });
    await store.addKey({ id: 'k2', organizationId: 'o2', sha256: digestApiKey('secret-two'), owner });
    expect((await store.findByDigest(digestApiKey('secret-two')))?.organizationId).toBe('o2');
    expect(await store.findByDigest(digestApiKey('secret-three'))).toBeUndefined();
    expect(await store.findByDigest(Buffer.alloc(5))).toBeUndefined();
  });

  it('refuses a duplicate key id', async () => {
    const store = new MemoryApiKeyStore();
    await store.addKey({ id: 'k1', organizationId: 'o1', sha256: digestApiKey('a'), owner });
    await expect(store.addKey({ id: 'k1', organizationId: 'o1', sha256: digestApiKey('b'), owner })).rejects.toThrow(/duplicate/);
  });

  it('digests: SHA-256, constant-time equality, ids that do not reveal the key', () => {
    const digest = digestApiKey('abc');
    expect(digest.toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(digestsEqual(digest, digestApiKey('abc'))).toBe(true);
    expect(digestsEqual(digest, digestApiKey('abd'))).toBe(false);
    expect(digestsEqual(digest, digest.subarray(0, 16))).toBe(false);
    // Not a prefix of the stored digest (which an id printed at start-up would otherwise expose).
    expect(apiKeyIdFromDigest(digest)).toBe('key_09d78aaf00c8');
    expect(digest.toString('hex')).not.toContain(apiKeyIdFromDigest(digest).slice(4));
  });
});

describe('tenancy and copies', () => {
  const log = (id: string, organizationId: string, createdAt: string): EmailLog => ({
    id,
    messageId: `<${id}>`,
    organizationId,
    domainId: 'd',
    fromEmail: 'f@x.test',
    fromName: null,
    toEmails: ['t@x.test'],
    ccEmails: [],
    bccEmails: [],
    replyTo: null,
    subject: 's',
    textBody: null,
    htmlBody: null,
    status: 'sent',
    errorMessage: null,
    provider: null,
    size: 1,
    headers: {},
    sentAt: null,
    deliveredAt: null,
    failedAt: null,
    createdAt,
    updatedAt: createdAt,
    events: [
      { id: 'e2', type: 'b', metadata: null, createdAt: T(5) },
      { id: 'e1', type: 'a', metadata: null, createdAt: T(1) },
      { id: 'e3', type: 'c', metadata: null, createdAt: T(5) },
    ],
  });

  it('email logs: scoped by organisation, events by createdAt (ties in stored order), list newest first', async () => {
    const { emailLogs } = createMemoryStores();
    await emailLogs.add(log('m1', 'o1', T(1)));
    await emailLogs.add(log('m2', 'o1', T(2)));
    await emailLogs.add(log('m3', 'o2', T(3)));
    expect(await emailLogs.get('o2', 'm1')).toBeUndefined();
    expect((await emailLogs.get('o1', 'm1'))?.events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    const page = await emailLogs.list('o1', { page: 1, limit: 10 });
    expect(page.items.map((l) => l.id)).toEqual(['m2', 'm1']);
    expect(page.total).toBe(2);
  });

  it('a caller that edits what it read does not edit the store', async () => {
    const { emailLogs } = createMemoryStores();
    await emailLogs.add(log('m1', 'o1', T(1)));
    const read = await emailLogs.get('o1', 'm1');
    read!.subject = 'changed';
    read!.events.pop();
    expect((await emailLogs.get('o1', 'm1'))?.subject).toBe('s');
    expect((await emailLogs.get('o1', 'm1'))?.events).toHaveLength(3);
  });

  it('record logs: readable only by their organisation; an anonymous record by nobody', async () => {
    const { recordLogs } = createMemoryStores();
    const record = { uuid: 'r1' } as RecordLog;
    await recordLogs.append('o1', record);
    await recordLogs.append(null, { ...record, uuid: 'r2' });
    expect(await recordLogs.get('o1', 'r1')).toEqual(record);
    expect(await recordLogs.get('o2', 'r1')).toBeUndefined();
    expect(await recordLogs.get('o1', 'r2')).toBeUndefined();
    expect(await recordLogs.get('', 'r2')).toBeUndefined();
  });
});

describe('templates', () => {
  const template: Template = {
    id: 't1',
    organizationId: 'o1',
    name: 'T',
    description: null,
    subject: 'S',
    fromEmail: 'f@x.test',
    replyTo: null,
    previewText: 'P',
    status: 'draft',
    currentVersion: null,
    variables: [],
    createdAt: T(0),
    updatedAt: T(0),
  };

  it('creates versions atomically: 50 concurrent calls give 1..50', async () => {
    let n = 0;
    const store = new MemoryTemplateStore(() => `v${++n}`);
    await store.addTemplate(template);
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => store.createVersion('o1', 't1', { content: [i], createdBy: owner, createdAt: T(i) })));
    expect(created.map((v) => v?.version).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(new Set(created.map((v) => v?.id)).size).toBe(50);
  });

  it('does not create a version for another organisation', async () => {
    const store = new MemoryTemplateStore();
    await store.addTemplate(template);
    expect(await store.createVersion('o2', 't1', { content: [], createdBy: owner, createdAt: T(1) })).toBeUndefined();
    expect(await store.listVersions('o1', 't1')).toEqual([]);
    expect(await store.listVersions('o2', 't1')).toBeUndefined();
    await expect(store.addVersion('o2', { templateId: 't1' } as never)).rejects.toThrow(/not a template of organisation "o2"/);
  });
});

describe('domains', () => {
  const domain: Domain = {
    id: 'd1',
    organizationId: 'o1',
    domain: 'x.test',
    status: 'pending',
    userVerifiedDomain: false,
    systemVerified: false,
    customReturnPath: null,
    trackingSubdomain: null,
    isClickTrackingEnabled: false,
    isOpenTrackingEnabled: false,
    tls: 'opportunistic',
    isTrackingDomain: false,
    isSendingEmailEnabled: true,
    isReceivingEmailEnabled: false,
    verificationFailedReason: null,
    dnsRecords: [
      { id: 'r1', recordType: 'MX', recordTypeName: 'MX', domain: 'x.test', name: 'x.test', value: 'mx', ttl: 'Auto', priority: 10, status: 'active', createdAt: T(0), updatedAt: T(0), deletedAt: null },
      { id: 'r2', recordType: 'TXT', recordTypeName: 'SPF', domain: 'x.test', name: 'x.test', value: 'v=spf1', ttl: 'Auto', priority: null, status: 'active', createdAt: T(0), updatedAt: T(0), deletedAt: T(1) },
    ],
    lastVerifiedAt: null,
    createdAt: T(0),
    updatedAt: T(0),
    deletedAt: null,
  };

  it('update changes only the given fields and sets updatedAt; another organisation gets undefined', async () => {
    const { domains } = createMemoryStores();
    await domains.add(domain);
    expect(await domains.update('o2', 'd1', { tls: 'enforced' }, T(9))).toBeUndefined();
    const updated = await domains.update('o1', 'd1', { tls: 'enforced' }, T(9));
    expect(updated).toMatchObject({ tls: 'enforced', isClickTrackingEnabled: false, updatedAt: T(9) });
    expect(updated?.dnsRecords.map((r) => r.id)).toEqual(['r1']);
  });

  it('softDelete marks the domain and its live records, hides it from every read, and keeps it', async () => {
    const { domains } = createMemoryStores();
    await domains.add(domain);
    const deleted = await domains.softDelete('o1', 'd1', T(9));
    expect(deleted).toMatchObject({ deletedAt: T(9), updatedAt: T(9) });
    expect(deleted?.dnsRecords).toEqual([expect.objectContaining({ id: 'r1', deletedAt: T(9), updatedAt: T(9) })]);
    expect(await domains.get('o1', 'd1')).toBeUndefined();
    expect(await domains.update('o1', 'd1', {}, T(10))).toBeUndefined();
    expect(await domains.softDelete('o1', 'd1', T(10))).toBeUndefined();
    expect((await domains.list('o1', { page: 1, limit: 10 })).total).toBe(0);
  });
});

describe('contacts', () => {
  const contact = (id: string, email: string, status: Contact['status'], n: number, extra: Partial<Contact> = {}): Contact => ({
    id,
    organizationId: 'o1',
    email,
    firstName: null,
    lastName: null,
    status,
    properties: {},
    groupIds: [],
    enrolments: {},
    suppressionReason: null,
    suppressedAt: null,
    createdAt: T(n),
    updatedAt: T(n),
    ...extra,
  });

  it('filters, orders newest first, and counts organisation-wide', async () => {
    const { contacts } = createMemoryStores();
    await contacts.addChannel({ id: 'ch2', organizationId: 'o1', name: 'Second', defaultSubscription: 'opt_out' });
    await contacts.addChannel({ id: 'ch1', organizationId: 'o1', name: 'First', defaultSubscription: 'opt_in' });
    await contacts.addChannel({ id: 'chX', organizationId: 'o2', name: 'Other org', defaultSubscription: 'opt_in' });
    await contacts.addGroup({ id: 'g1', organizationId: 'o1', name: 'G' });
    await contacts.addContact(contact('c1', 'a@x.test', 'subscribed', 1, { groupIds: ['g1'], enrolments: { ch2: 'enrolled', ch1: 'unenrolled' } }));
    await contacts.addContact(contact('c2', 'B@X.test', 'unsubscribed', 2));
    await contacts.addContact(contact('c3', 'c@y.test', 'blocked', 3));
    await contacts.addContact({ ...contact('c4', 'a@x.test', 'subscribed', 4), organizationId: 'o2' });

    const all = await contacts.list('o1', { page: 1, limit: 100 });
    expect(all.items.map((c) => c.id)).toEqual(['c3', 'c2', 'c1']);
    expect(all).toMatchObject({ total: 3, totalContacts: 3, subscribedContacts: 1, unsubscribedContacts: 1 });
    const c1 = all.items.find((c) => c.id === 'c1');
    expect(c1?.groups).toEqual([{ id: 'g1', name: 'G' }]);
    expect(c1?.channels).toEqual([
      { id: 'ch1', name: 'First', subscription: 'opt_out' },
      { id: 'ch2', name: 'Second', subscription: 'opt_in' },
    ]);
    expect(all.items.find((c) => c.id === 'c2')?.channels.map((c) => c.subscription)).toEqual(['opt_in', 'opt_out']);

    const filtered = await contacts.list('o1', { page: 1, limit: 100, search: 'X.TEST' });
    expect(filtered.items.map((c) => c.id)).toEqual(['c2', 'c1']);
    expect(filtered).toMatchObject({ total: 2, totalContacts: 3 });
    expect((await contacts.list('o1', { page: 1, limit: 100, status: 'blocked' })).items.map((c) => c.id)).toEqual(['c3']);
  });
});
