/**
 * `spoof-checker users`: add prints a one-time invitation link (the public origin from the flag or
 * the variable, else the path and how to open it), on SQLite data that a running service holds open
 * too; the link sets the password; list shows users and roles; remove never removes the last owner.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptInvitation } from '../../src/console/accounts.js';
import { main } from '../../src/cli/main.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { captureIo } from './helpers.js';

const PASSWORD = 'correct horse battery staple';
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'users-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const captured = captureIo();
  captured.io.env = env;
  const code = await main(['users', ...args, '--data', dir], captured.io);
  return { code, out: captured.stdout(), err: captured.stderr() };
}

describe('spoof-checker users', () => {
  it('add prints a link on the public origin (flag or variable), valid 72 h, that the console accepts; the service holding the data open sees it', async () => {
    // The service's own store, open while the command runs.
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
    try {
      const added = await run(['add', '--org', 'org_new', '--email', 'Ann@Example.COM', '--role', 'owner', '--public-origin', 'https://console.example']);
      expect(added.code).toBe(0);
      const link = added.out.trim();
      expect(link).toMatch(/^https:\/\/console\.example\/console\/invite\/[A-Za-z0-9_-]{43}$/);
      expect(added.err).toContain('ann@example.com as owner of org_new');
      const token = link.split('/').pop()!;
      // Read and used through the service's store.
      const accepted = await acceptInvitation(stores.console, token, { password: PASSWORD, confirm: PASSWORD, now: new Date() });
      expect(accepted.kind).toBe('accepted');
      expect(await stores.apiKeys.getOrganization('org_new')).toEqual({ id: 'org_new', name: 'org_new' });
      // Used once.
      expect((await acceptInvitation(stores.console, token, { password: PASSWORD, confirm: PASSWORD, now: new Date() })).kind).toBe('gone');
      // Expired after 72 hours.
      const late = await run(['add', '--org', 'org_new', '--email', 'bob@example.com', '--role', 'viewer'], { SPOOF_CHECKER_PUBLIC_ORIGIN: 'https://c.example' });
      expect(late.out.trim()).toMatch(/^https:\/\/c\.example\/console\/invite\//);
      const lateToken = late.out.trim().split('/').pop()!;
      expect((await acceptInvitation(stores.console, lateToken, { password: PASSWORD, confirm: PASSWORD, now: new Date(Date.now() + 72 * 3_600_000 + 60_000) })).kind).toBe('gone');
    } finally {
      await stores.close();
    }
  });

  it('without a public origin it prints the path and says where to open it; bad input is a usage error', async () => {
    const added = await run(['add', '--org', 'o1', '--email', 'ann@example.com', '--role', 'admin']);
    expect(added.code).toBe(0);
    expect(added.out.trim()).toMatch(/^\/console\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(added.err).toContain("Open it on the service's address");
    expect((await run(['add', '--org', 'o1', '--email', 'ann@example.com', '--role', 'boss'])).code).toBe(1);
    expect((await run(['add', '--org', 'o1', '--email', 'not an address', '--role', 'viewer'])).code).toBe(1);
    expect((await run(['add', '--email', 'ann@example.com', '--role', 'viewer'])).code).toBe(2);
    expect((await run(['add', '--org', 'o1', '--email', 'a@example.com', '--role', 'viewer', '--public-origin', 'https://x.example/path'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
  });

  it('list shows users and roles; remove refuses the last owner, then removes', async () => {
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
    try {
      for (const [email, role] of [
        ['ann@example.com', 'owner'],
        ['bob@example.com', 'viewer'],
      ] as const) {
        const added = await run(['add', '--org', 'o1', '--email', email, '--role', role]);
        const token = added.out.trim().split('/').pop()!;
        expect((await acceptInvitation(stores.console, token, { password: PASSWORD, confirm: PASSWORD, now: new Date() })).kind).toBe('accepted');
      }
      const listed = await run(['list']);
      expect(listed.out).toBe('ann@example.com\tactive\t-\to1:owner\nbob@example.com\tactive\t-\to1:viewer\n');
      const json = JSON.parse((await run(['list', '--json'])).out);
      expect(json[0]).toEqual({ email: 'ann@example.com', active: true, totp: false, memberships: [{ organizationId: 'o1', role: 'owner' }] });
      const refused = await run(['remove', '--email', 'ann@example.com', '--org', 'o1']);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('last owner of o1');
      expect((await run(['remove', '--email', 'bob@example.com'])).code).toBe(0);
      expect((await run(['remove', '--email', 'bob@example.com'])).code).toBe(1);
      expect((await run(['list'])).out).toBe('ann@example.com\tactive\t-\to1:owner\n');
      // An invitation not yet used is listed after the users, marked, with when it ends; a used one is not.
      expect((await run(['add', '--org', 'o2', '--email', 'carol@example.com', '--role', 'admin'])).code).toBe(0);
      const withInvitation = (await run(['list'])).out.split('\n');
      expect(withInvitation[0]).toBe('ann@example.com\tactive\t-\to1:owner');
      expect(withInvitation[1]).toMatch(/^carol@example\.com\tinvitation open until \d{4}-\d{2}-\d{2}T[\d:.]+Z\t-\to2:admin$/);
      const listedJson = JSON.parse((await run(['list', '--json'])).out);
      expect(listedJson[1]).toMatchObject({ email: 'carol@example.com', active: false, memberships: [{ organizationId: 'o2', role: 'admin' }], invitation: { expiresAt: expect.any(String) } });
      expect(listedJson[0].invitation).toBeUndefined();
    } finally {
      await stores.close();
    }
  });
});
