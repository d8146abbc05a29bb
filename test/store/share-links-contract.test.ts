/**
 * The share-link store's contract, run unchanged against memory, SQLite and PostgreSQL (migration
 * `0012_share_links`): a link is found by its token's hash only, listed per organisation and domain
 * newest first, revoked once and only by its own organisation.
 */
import { expect, it } from 'vitest';
import type { ShareLink } from '../../src/store/share-links.js';
import { describeStoreContract } from './contract-stores.js';

const link = (id: string, over: Partial<ShareLink> = {}): ShareLink => ({
  id,
  tokenHash: `hash-${id}`,
  organizationId: 'o1',
  domain: 'example.com',
  label: `for ${id}`,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'u1',
  expiresAt: '2026-01-31T00:00:00.000Z',
  revokedAt: null,
  ...over,
});

describeStoreContract('share-link store contract', ({ stores }) => {
  it('finds by hash, lists per organisation and domain newest first, revokes once and only its own', async () => {
    const s = stores.shareLinks!;
    expect(s).toBeDefined();
    await s.create(link('a'));
    await s.create(link('b', { createdAt: '2026-01-02T00:00:00.000Z' }));
    await s.create(link('c', { domain: 'other.example' }));
    await s.create(link('d', { organizationId: 'o2' }));
    expect(await s.byTokenHash('hash-a')).toEqual(link('a'));
    expect(await s.byTokenHash('nothing')).toBeUndefined();
    expect((await s.list('o1', 'example.com')).map((l) => l.id)).toEqual(['b', 'a']);
    expect((await s.list('o2', 'example.com')).map((l) => l.id)).toEqual(['d']);
    expect(await s.revoke('o2', 'a', '2026-01-03T00:00:00.000Z')).toBe(false);
    expect(await s.revoke('o1', 'a', '2026-01-03T00:00:00.000Z')).toBe(true);
    expect(await s.revoke('o1', 'a', '2026-01-04T00:00:00.000Z')).toBe(false);
    expect((await s.byTokenHash('hash-a'))?.revokedAt).toBe('2026-01-03T00:00:00.000Z');
    expect(await s.revoke('o1', 'nothing', '2026-01-03T00:00:00.000Z')).toBe(false);
  });

  it('one link per token hash', async () => {
    const s = stores.shareLinks!;
    await s.create(link('a'));
    await expect(s.create(link('z', { tokenHash: 'hash-a' }))).rejects.toThrow();
  });
});
