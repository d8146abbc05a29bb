/**
 * The console store's contract, run unchanged against memory, SQLite and PostgreSQL: users (one
 * per email), memberships and the last owner, invitations taken once, sessions, failed sign-ins
 * counted in a window, key names per organisation, the latest result kept newest, pruning.
 */
import { describe, expect, it } from 'vitest';
import type { ConsoleUser } from '../../src/store/console.js';
import { sqliteBackend, type Backend } from './backends.js';
import { describeStoreContract } from './contract-stores.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:05:00.000Z';
const T2 = '2026-01-01T00:20:00.000Z';

const user = (id: string, email: string): ConsoleUser => ({ id, email, passwordHash: null, totpSecret: null, totpLastStep: 0, recoveryCodes: [], createdAt: T0 });

describeStoreContract('console store contract', ({ stores }) => {
  it('one account per email; users are read back, updated and deleted with their memberships and sessions', async () => {
    const c = stores.console;
    expect(await c.createUser(user('u1', 'ann@example.com'))).toBe('created');
    expect(await c.createUser(user('u2', 'ann@example.com'))).toBe('duplicate-email');
    expect((await c.findUserByEmail('ann@example.com'))?.id).toBe('u1');
    expect(await c.updateUser('u1', { passwordHash: 'scrypt$x', recoveryCodes: ['a', 'b'], totpLastStep: 123 })).toBe(true);
    expect(await c.getUser('u1')).toMatchObject({ passwordHash: 'scrypt$x', recoveryCodes: ['a', 'b'], totpLastStep: 123, totpSecret: null });
    expect(await c.updateUser('nobody', { passwordHash: 'x' })).toBe(false);
    await c.putMembership({ userId: 'u1', organizationId: 'o1', role: 'owner', createdAt: T0 });
    await c.createSession({ idHash: 's1', userId: 'u1', organizationId: 'o1', createdAt: T0, lastSeenAt: T0, expiresAt: T2, pendingSecondFactor: false });
    expect(await c.deleteUser('u1')).toBe(true);
    expect(await c.getUser('u1')).toBeUndefined();
    expect(await c.membershipsOf('u1')).toEqual([]);
    expect(await c.getSession('s1')).toBeUndefined();
    expect(await c.deleteUser('u1')).toBe(false);
  });

  it('memberships: roles per organisation, members by email, and the last owner is neither removed nor demoted', async () => {
    const c = stores.console;
    await c.createUser(user('u1', 'b@example.com'));
    await c.createUser(user('u2', 'a@example.com'));
    await c.putMembership({ userId: 'u1', organizationId: 'o1', role: 'owner', createdAt: T0 });
    await c.putMembership({ userId: 'u2', organizationId: 'o1', role: 'viewer', createdAt: T0 });
    await c.putMembership({ userId: 'u2', organizationId: 'o2', role: 'owner', createdAt: T0 });
    expect((await c.members('o1')).map((m) => [m.email, m.role, m.active])).toEqual([
      ['a@example.com', 'viewer', false],
      ['b@example.com', 'owner', false],
    ]);
    expect((await c.membershipsOf('u2')).map((m) => m.organizationId)).toEqual(['o1', 'o2']);
    expect(await c.changeMembership('u1', 'o1', 'admin')).toBe('last-owner');
    expect(await c.changeMembership('u1', 'o1', null)).toBe('last-owner');
    expect(await c.changeMembership('u9', 'o1', null)).toBe('not-found');
    expect(await c.changeMembership('u2', 'o1', 'owner')).toBe('changed');
    expect(await c.changeMembership('u1', 'o1', 'viewer')).toBe('changed');
    expect((await c.getMembership('u1', 'o1'))?.role).toBe('viewer');
    // Removing a member ends their sessions on that organisation only.
    await c.createSession({ idHash: 's1', userId: 'u2', organizationId: 'o1', createdAt: T0, lastSeenAt: T0, expiresAt: T2, pendingSecondFactor: false });
    await c.createSession({ idHash: 's2', userId: 'u2', organizationId: 'o2', createdAt: T0, lastSeenAt: T0, expiresAt: T2, pendingSecondFactor: false });
    expect(await c.changeMembership('u1', 'o1', 'owner')).toBe('changed');
    expect(await c.changeMembership('u2', 'o1', null)).toBe('changed');
    expect(await c.getSession('s1')).toBeUndefined();
    expect(await c.getSession('s2')).toBeDefined();
  });

  it('two owners demoting each other at once leave one owner', async () => {
    const c = stores.console;
    await c.createUser(user('u1', 'a@example.com'));
    await c.createUser(user('u2', 'b@example.com'));
    await c.putMembership({ userId: 'u1', organizationId: 'o1', role: 'owner', createdAt: T0 });
    await c.putMembership({ userId: 'u2', organizationId: 'o1', role: 'owner', createdAt: T0 });
    const outcomes = await Promise.all([c.changeMembership('u1', 'o1', 'viewer'), c.changeMembership('u2', 'o1', 'viewer')]);
    expect(outcomes.sort()).toEqual(['changed', 'last-owner']);
    expect((await c.members('o1')).filter((m) => m.role === 'owner')).toHaveLength(1);
  });

  it('an invitation is taken once, listed per organisation', async () => {
    const c = stores.console;
    await c.addInvitation({ tokenHash: 'h1', organizationId: 'o1', email: 'x@example.com', role: 'admin', createdAt: T0, expiresAt: T2, invitedBy: 'cli' });
    expect((await c.getInvitation('h1'))?.role).toBe('admin');
    expect((await c.invitations('o1')).map((i) => i.email)).toEqual(['x@example.com']);
    expect(await c.invitations('o2')).toEqual([]);
    // null: every organisation's (users list).
    await c.addInvitation({ tokenHash: 'h3', organizationId: 'o3', email: 'z@example.com', role: 'viewer', createdAt: T2, expiresAt: T2, invitedBy: 'cli' });
    expect((await c.invitations(null)).map((i) => [i.organizationId, i.email])).toEqual([['o3', 'z@example.com'], ['o1', 'x@example.com']]);
    expect(await Promise.all([c.takeInvitation('h1'), c.takeInvitation('h1')])).toEqual(expect.arrayContaining([true, false]));
    expect(await c.getInvitation('h1')).toBeUndefined();
  });

  it('sessions are updated and deleted; failed sign-ins are counted per key in a window', async () => {
    const c = stores.console;
    await c.createSession({ idHash: 's1', userId: 'u1', organizationId: 'o1', createdAt: T0, lastSeenAt: T0, expiresAt: T2, pendingSecondFactor: true });
    expect(await c.updateSession('s1', { lastSeenAt: T1, organizationId: 'o2', pendingSecondFactor: false })).toBe(true);
    expect(await c.getSession('s1')).toMatchObject({ lastSeenAt: T1, organizationId: 'o2', pendingSecondFactor: false, expiresAt: T2 });
    await c.deleteSession('s1');
    expect(await c.updateSession('s1', { lastSeenAt: T2 })).toBe(false);

    await c.addFailedSignIn(['acct:a', 'addr:1'], T0);
    await c.addFailedSignIn(['acct:a', 'addr:1'], T1);
    await c.addFailedSignIn(['addr:1'], T2);
    expect(await c.failedSignIns('acct:a', T0)).toEqual({ count: 2, oldest: T0 });
    expect(await c.failedSignIns('acct:a', T1)).toEqual({ count: 1, oldest: T1 });
    expect(await c.failedSignIns('addr:1', T0)).toEqual({ count: 3, oldest: T0 });
    expect(await c.failedSignIns('acct:b', T0)).toEqual({ count: 0, oldest: null });
    // Pruning drops expired sessions and invitations and failures before the window.
    await c.createSession({ idHash: 's2', userId: 'u1', organizationId: 'o1', createdAt: T0, lastSeenAt: T0, expiresAt: T1, pendingSecondFactor: false });
    expect(await c.prune(T1, T1)).toBe(1 + 2);
    expect(await c.getSession('s2')).toBeUndefined();
    expect(await c.failedSignIns('addr:1', T0)).toEqual({ count: 2, oldest: T1 });
  });

  it('sessionView: the session, its user and the user\u2019s memberships with their settings (and names where read beside), in one read', async () => {
    const c = stores.console;
    await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
    await c.createUser(user('u1', 'a@example.com'));
    await c.putMembership({ userId: 'u1', organizationId: 'o2', role: 'viewer', createdAt: T1 });
    await c.putMembership({ userId: 'u1', organizationId: 'o1', role: 'owner', createdAt: T0 });
    await c.putMembership({ userId: 'u2', organizationId: 'o1', role: 'admin', createdAt: T0 });
    await c.putSettings({ organizationId: 'o2', requireSecondFactor: true });
    const session = { idHash: 's1', userId: 'u1', organizationId: 'o1', createdAt: T0, lastSeenAt: T0, expiresAt: T2, pendingSecondFactor: false };
    await c.createSession(session);
    const view = await c.sessionView('s1');
    expect(view?.session).toEqual(session);
    expect(view?.user).toEqual(await c.getUser('u1'));
    expect(view?.memberships.map((m) => [m.membership, m.settings])).toEqual([
      [{ userId: 'u1', organizationId: 'o1', role: 'owner', createdAt: T0 }, { organizationId: 'o1', requireSecondFactor: false }],
      [{ userId: 'u1', organizationId: 'o2', role: 'viewer', createdAt: T1 }, { organizationId: 'o2', requireSecondFactor: true }],
    ]);
    // A name is the organisation's (null: no such organisation) where the store reads it beside; undefined where not.
    expect([['One', null], [undefined, undefined]]).toContainEqual(view?.memberships.map((m) => m.organizationName));
    expect(await c.sessionView('nope')).toBeUndefined();
    // A session whose user is gone and who has no membership.
    await c.createSession({ ...session, idHash: 's9', userId: 'u9' });
    expect(await c.sessionView('s9')).toMatchObject({ user: undefined, memberships: [] });
  });

  it('settings default to no second factor; key names are per organisation; the latest result keeps the newest', async () => {
    const c = stores.console;
    expect(await c.getSettings('o1')).toEqual({ organizationId: 'o1', requireSecondFactor: false });
    await c.putSettings({ organizationId: 'o1', requireSecondFactor: true });
    await c.putSettings({ organizationId: 'o1', requireSecondFactor: true });
    expect((await c.getSettings('o1')).requireSecondFactor).toBe(true);

    await c.addApiKey({ id: 'key_1', organizationId: 'o1', name: 'CI', createdAt: T0, createdBy: 'u1', lastUsedAt: null });
    await c.addApiKey({ id: 'key_2', organizationId: 'o1', name: 'Deploy', createdAt: T1, createdBy: 'u1', lastUsedAt: null });
    expect((await c.apiKeys('o1')).map((k) => k.name)).toEqual(['Deploy', 'CI']);
    await c.touchApiKey('o1', 'key_1', T2);
    await c.touchApiKey('o1', 'key_1', T1);
    await c.touchApiKey('o2', 'key_2', T2);
    expect((await c.apiKeys('o1')).map((k) => [k.id, k.lastUsedAt])).toEqual([
      ['key_2', null],
      ['key_1', T2],
    ]);
    expect(await c.removeApiKey('o2', 'key_1')).toBe(false);
    expect(await c.removeApiKey('o1', 'key_1')).toBe(true);
    expect((await c.apiKeys('o1')).map((k) => k.id)).toEqual(['key_2']);

    await c.putLatestResult({ domain: 'a.example', checkedAt: T1, result: '{"v":1}' });
    await c.putLatestResult({ domain: 'a.example', checkedAt: T0, result: '{"v":0}' });
    expect((await c.getLatestResult('a.example'))?.result).toBe('{"v":1}');
    await c.putLatestResult({ domain: 'a.example', checkedAt: T2, result: '{"v":2}' });
    expect(await c.getLatestResult('a.example')).toEqual({ domain: 'a.example', checkedAt: T2, result: '{"v":2}' });
  });

  it('an API key is removed from the API key store by its organisation only', async () => {
    await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
    const sha256 = Buffer.alloc(32, 7);
    await stores.apiKeys.addKey({ id: 'key_x', organizationId: 'o1', sha256, owner: { id: 'u', name: 'n', email: 'e@example.com', image: '' } });
    expect(await stores.apiKeys.removeKey('o2', 'key_x')).toBe(false);
    expect(await stores.apiKeys.findByDigest(sha256)).toBeDefined();
    expect(await stores.apiKeys.removeKey('o1', 'key_x')).toBe(true);
    expect(await stores.apiKeys.findByDigest(sha256)).toBeUndefined();
  });
});

describe.each<Backend>([sqliteBackend])('console store pruning: $name', (backend) => {
  it('prune (run by the SQL stores\' background pruning) removes expired sessions and failed sign-ins older than a day', async () => {
    const opened = await backend.open();
    try {
      const c = opened.stores.console;
      await c.createSession({ idHash: 'old', userId: 'u', organizationId: 'o', createdAt: T0, lastSeenAt: T0, expiresAt: T1, pendingSecondFactor: false });
      await c.addFailedSignIn(['account:a'], T0);
      expect(await c.prune(new Date().toISOString(), new Date(Date.now() - 86_400_000).toISOString())).toBe(2);
    } finally {
      await opened.dispose();
    }
  });
});
