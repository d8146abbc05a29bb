import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestApiKey } from '../../src/store/api-keys.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { applySeed, loadSeedFile, parseSeed, SeedError } from '../../src/store/seed.js';

const TS = '2025-01-01T00:00:00.000Z';
const org = (extra: Record<string, unknown> = {}) => ({ id: 'org_x', name: 'X', ...extra });
const domain = (extra: Record<string, unknown> = {}) => ({
  id: 'd1',
  domain: 'x.test',
  status: 'pending',
  userVerifiedDomain: false,
  systemVerified: false,
  isClickTrackingEnabled: false,
  isOpenTrackingEnabled: false,
  tls: 'opportunistic',
  isTrackingDomain: false,
  isSendingEmailEnabled: true,
  isReceivingEmailEnabled: false,
  createdAt: TS,
  updatedAt: TS,
  ...extra,
});
const version = (extra: Record<string, unknown> = {}) => ({
  id: 'v1',
  version: 1,
  name: 'Draft 1',
  isMajor: false,
  content: [],
  createdBy: { id: 'u', name: 'U', email: 'u@x.test', image: '' },
  createdAt: TS,
  draftNumber: 1,
  ...extra,
});

describe('parseSeed', () => {
  it('accepts a minimal seed and an empty one', () => {
    expect(parseSeed({ organizations: [] }).organizations).toEqual([]);
    expect(parseSeed({ organizations: [org()] }).organizations[0]?.id).toBe('org_x');
  });

  it.each<[string, unknown, string]>([
    ['not an object', [], 'the document must be an object'],
    ['organizations missing', {}, '/organizations is required'],
    ['unknown top-level field', { organizations: [], orgs: [] }, '/orgs is not an allowed field'],
    ['organisation id with a space', { organizations: [org({ id: 'org x' })] }, '/organizations/0/id is not in the expected format'],
    ['a domain field missing', { organizations: [org({ domains: [{ id: 'd' }] })] }, '/organizations/0/domains/0/domain is required'],
    ['tls outside the enum', { organizations: [org({ domains: [domain({ tls: 'strict' })] })] }, "/organizations/0/domains/0/tls must be one of 'opportunistic', 'enforced'"],
    ['a timestamp not in UTC', { organizations: [org({ domains: [domain({ createdAt: '2025-01-01 00:00' })] })] }, '/organizations/0/domains/0/createdAt is not in the expected format'],
    ['a contact status', { organizations: [org({ contacts: [{ id: 'c', email: 'c@x.test', status: 'active', createdAt: TS, updatedAt: TS }] })] }, "/organizations/0/contacts/0/status must be one of 'subscribed', 'unsubscribed', 'blocked'"],
    ['a key in clear too short', { organizations: [org({ apiKeys: [{ key: 'short' }] })] }, '/organizations/0/apiKeys/0/key must be at least 16 character(s) long (it has 5)'],
    ['a digest that is not hex', { organizations: [org({ apiKeys: [{ sha256: 'zz' }] })] }, '/organizations/0/apiKeys/0/sha256 is not in the expected format'],
    ['a key with both forms', { organizations: [org({ apiKeys: [{ key: 'k'.repeat(16), sha256: 'a'.repeat(64) }] })] }, '/organizations/0/apiKeys/0 must have exactly one of "key" and "sha256"'],
    ['a key with neither form', { organizations: [org({ apiKeys: [{ id: 'k' }] })] }, '/organizations/0/apiKeys/0 must have exactly one of "key" and "sha256"'],
    ['a repeated organisation id', { organizations: [org(), org()] }, '/organizations/1/id repeats the organization id "org_x" already used at /organizations/0/id'],
    ['a domain id repeated across organisations', { organizations: [org({ domains: [domain()] }), org({ id: 'org_y', domains: [domain()] })] }, '/organizations/1/domains/0/id repeats the domain id "d1"'],
    ['a contact in an unknown group', { organizations: [org({ contacts: [{ id: 'c', email: 'c@x.test', status: 'blocked', groupIds: ['g9'], createdAt: TS, updatedAt: TS }] })] }, '/organizations/0/contacts/0/groupIds/0 names the group "g9"'],
    ['a contact enrolled in an unknown channel', { organizations: [org({ contacts: [{ id: 'c', email: 'c@x.test', status: 'blocked', enrolments: { ch9: 'enrolled' }, createdAt: TS, updatedAt: TS }] })] }, '/organizations/0/contacts/0/enrolments names the channel "ch9"'],
    ['a repeated version number', { organizations: [org({ templates: [{ id: 't', name: 'T', createdAt: TS, updatedAt: TS, versions: [version(), version({ id: 'v2', draftNumber: 2 })] }] })] }, '/organizations/0/templates/0/versions/1/version repeats version 1'],
    ['a major version with a draftNumber', { organizations: [org({ templates: [{ id: 't', name: 'T', createdAt: TS, updatedAt: TS, versions: [version({ isMajor: true })] }] })] }, '/organizations/0/templates/0/versions/0 must have "publishNumber" (it is major)'],
  ])('refuses %s, naming the path', (_case, data, message) => {
    expect(() => parseSeed(data, 'seed.json')).toThrow(SeedError);
    expect(() => parseSeed(data, 'seed.json')).toThrow(`seed.json: ${message}`);
  });
});

describe('loadSeedFile', () => {
  it('names the file when it cannot be read or is not JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    await expect(loadSeedFile(join(dir, 'missing.json'))).rejects.toThrow(/missing\.json: cannot read the seed file/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ not json');
    await expect(loadSeedFile(bad)).rejects.toThrow(/bad\.json: not valid JSON/);
  });

  it('says on which line and column the JSON breaks, as the faults file does (one reader for both)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{\n  "organizations": [\n    {"id": "org_a",}\n  ]\n}');
    await expect(loadSeedFile(bad)).rejects.toThrow(/bad\.json: not valid JSON \(.*\(line 3 column \d+\)\)$/);
  });
});

describe('applySeed', () => {
  it('hashes keys (clear or digest), fills defaults and derives the template status', async () => {
    const stores = createMemoryStores();
    const digest = digestApiKey('sk_from_digest_d14cb08eacdadec8efd68fb784606a4e').toString('hex');
    await applySeed(
      stores,
      parseSeed({
        organizations: [
          org({
            apiKeys: [{ key: 'sk_in_clear_a0412d2630db3923f54dc1cf51617675' }, { id: 'named', sha256: digest }],
            domains: [domain({ dnsRecords: [{ id: 'r', recordType: 'MX', recordTypeName: 'MX', domain: 'x.test', name: 'x.test', value: 'mx', ttl: 'Auto', status: 'active', createdAt: TS, updatedAt: TS }] })],
            templates: [{ id: 't', name: 'T', createdAt: TS, updatedAt: TS, versions: [version(), version({ id: 'v3', version: 3, isMajor: true, draftNumber: undefined, publishNumber: 1 })] }],
          }),
        ],
      }),
    );
    const clear = await stores.apiKeys.findByDigest(digestApiKey('sk_in_clear_a0412d2630db3923f54dc1cf51617675'));
    expect(clear).toMatchObject({ organizationId: 'org_x', id: expect.stringMatching(/^key_[0-9a-f]{12}$/) });
    expect((await stores.apiKeys.findByDigest(digestApiKey('sk_from_digest_d14cb08eacdadec8efd68fb784606a4e')))?.id).toBe('named');
    expect(await stores.apiKeys.getOrganization('org_x')).toEqual({ id: 'org_x', name: 'X' });
    expect(await stores.domains.get('org_x', 'd1')).toMatchObject({ customReturnPath: null, deletedAt: null, dnsRecords: [{ id: 'r', priority: null }] });
    expect(await stores.templates.getTemplate('org_x', 't')).toMatchObject({ status: 'published', currentVersion: 3, subject: null, variables: [] });
  });
});
