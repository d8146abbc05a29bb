/**
 * The console over inject: invitation → password → sign in → add a domain → its page; roles on
 * every route; another organisation's domain; the cross-site POST; the sign-in limit; sessions
 * ended on the server, idle and absolute expiry; the record log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { invite } from '../../src/console/accounts.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { RecordLog } from '../../src/store/types.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../src/console/sessions.js';
import { addMember, Browser, consoleService, GOOD_PASSWORD, ORG_A, ORG_B } from './helpers.js';

type Service = Awaited<ReturnType<typeof consoleService>>;
let service: Service | undefined;
afterEach(async () => {
  await service?.monitors.scheduler.close();
  await service?.app.close();
  service = undefined;
});

async function start(options: Parameters<typeof consoleService>[0] = {}) {
  service = await consoleService(options);
  return service;
}

describe('the console: accounts and sign-in', () => {
  it('an invitation sets the password, signs in, and the overview opens', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const page = await owner.get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Domains of Acme Corp');
    expect(page.body).toContain('ann@acme.example');
    // Sign out, then sign in with the password set.
    expect((await owner.post('/console/sign-out', {})).statusCode).toBe(303);
    expect((await owner.get('/console')).statusCode).toBe(303);
    const signIn = await owner.signIn('ann@acme.example');
    expect(signIn.statusCode).toBe(303);
    expect(signIn.headers.location).toBe('/console');
    expect((await owner.get('/console')).statusCode).toBe(200);
  });

  it('the password rules: 12 characters, not common, not the local part; the invitation is used once, and is noindex', async () => {
    const { app, stores, clock } = await start();
    const invited = await invite(stores.console, { organizationId: ORG_A.id, email: 'bob@acme.example', role: 'viewer', invitedBy: 'cli', now: clock.now() });
    if (invited.kind !== 'invited') throw new Error('not invited');
    const browser = new Browser(app);
    // A secret link: the page asks search engines not to index it, used or not.
    expect((await browser.get(invited.path)).body).toContain('<meta name="robots" content="noindex">');
    for (const [password, words] of [
      ['short pass', 'at least 12'],
      ['password1234', 'common passwords'],
      ['bob-is-my-name-1', 'email address'],
    ] as const) {
      const answer = await browser.post(invited.path, { password, confirm: password }, { token: false });
      expect(answer.statusCode).toBe(400);
      expect(answer.body).toContain(words);
    }
    expect((await browser.post(invited.path, { password: GOOD_PASSWORD, confirm: GOOD_PASSWORD }, { token: false })).statusCode).toBe(303);
    const used = await new Browser(app).get(invited.path);
    expect(used.statusCode).toBe(404);
    expect(used.body).toContain('<meta name="robots" content="noindex">');
    // The password is nowhere in the stores' record log.
    const user = await stores.console.findUserByEmail('bob@acme.example');
    expect(user?.passwordHash).toMatch(/^scrypt\$15\$8\$1\$/);
  });

  it('an expired invitation (72 h) does not work', async () => {
    const { app, stores, clock } = await start();
    const invited = await invite(stores.console, { organizationId: ORG_A.id, email: 'late@acme.example', role: 'viewer', invitedBy: 'cli', now: clock.now() });
    if (invited.kind !== 'invited') throw new Error('not invited');
    clock.advance(72 * 3_600_000 + 1);
    expect((await new Browser(app).get(invited.path)).statusCode).toBe(404);
  });

  it('a wrong password and an unknown email get the same answer; 10 failures per account → 429 with Retry-After', async () => {
    const { app, stores, clock } = await start();
    await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const browser = new Browser(app);
    const wrong = await browser.signIn('ann@acme.example', 'not the right password');
    const unknown = await browser.signIn('nobody@acme.example', 'not the right password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    const text = (body: string) => /<div class="card notice[^]*?<\/div>/.exec(body)?.[0];
    expect(text(wrong.body)).toBe(text(unknown.body));
    for (let i = 1; i < 10; i++) expect((await browser.signIn('ann@acme.example', 'wrong again, again')).statusCode).toBe(401);
    const limited = await browser.signIn('ann@acme.example', GOOD_PASSWORD);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    // After the window, the right password works again.
    clock.advance(15 * 60_000 + 1);
    expect((await browser.signIn('ann@acme.example')).statusCode).toBe(303);
  });

  it('50 failures from one address → 429 for any account', async () => {
    const { app, stores, clock } = await start();
    await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const browser = new Browser(app);
    for (let i = 0; i < 50; i++) await stores.console.addFailedSignIn([`address:127.0.0.1`], clock.now().toISOString());
    const limited = await browser.signIn('ann@acme.example');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('a new session id at sign-in; sign-out ends the session on the server (a replayed cookie is signed out)', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const before = owner.cookieHeader;
    await owner.signIn('ann@acme.example');
    expect(owner.cookieHeader).not.toBe(before);
    const replay = owner.cookieHeader;
    const setCookie = (await owner.signIn('ann@acme.example')).headers['set-cookie'];
    expect(String(setCookie)).toMatch(/HttpOnly/);
    expect(String(setCookie)).toMatch(/SameSite=Lax/);
    expect(String(setCookie)).not.toMatch(/Secure/);
    const current = owner.cookieHeader;
    // The old cookie of the session before this sign-in no longer works.
    expect((await app.inject({ method: 'GET', url: '/console', headers: { cookie: replay } })).statusCode).toBe(303);
    await owner.get('/console');
    expect((await owner.post('/console/sign-out', {})).statusCode).toBe(303);
    expect((await app.inject({ method: 'GET', url: '/console', headers: { cookie: current } })).statusCode).toBe(303);
  });

  it('sessions end after 12 h idle and 7 days in all', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await owner.get('/console')).statusCode).toBe(200);
    clock.advance(SESSION_IDLE_MS - 60_000);
    expect((await owner.get('/console')).statusCode).toBe(200);
    clock.advance(SESSION_IDLE_MS + 1);
    expect((await owner.get('/console')).statusCode).toBe(303);
    await owner.signIn('ann@acme.example');
    for (let t = 0; t < SESSION_ABSOLUTE_MS; t += SESSION_IDLE_MS / 2) {
      clock.advance(SESSION_IDLE_MS / 2);
      if (t + SESSION_IDLE_MS / 2 < SESSION_ABSOLUTE_MS) expect((await owner.get('/console/members')).statusCode).toBe(200);
    }
    expect((await owner.get('/console')).statusCode).toBe(303);
  });

  it('with an HTTPS public origin the cookie is Secure and __Host- prefixed, and a POST from another origin is 403', async () => {
    const { app, stores, clock } = await start({ publicUrl: 'https://console.example' });
    const invited = await invite(stores.console, { organizationId: ORG_A.id, email: 'ann@acme.example', role: 'owner', invitedBy: 'cli', now: clock.now() });
    if (invited.kind !== 'invited') throw new Error('not invited');
    const browser = new Browser(app, 'https://console.example');
    const done = await browser.post(invited.path, { password: GOOD_PASSWORD, confirm: GOOD_PASSWORD }, { token: false });
    expect(done.statusCode).toBe(303);
    const cookie = String(done.headers['set-cookie']);
    expect(cookie).toMatch(/^__Host-spoof_checker_session=/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/Path=\//);
    // The request's own origin is not enough once a public origin is set.
    expect((await browser.post('/console/sign-out', {}, { origin: 'http://localhost' })).statusCode).toBe(403);
  });
});

describe('the console: forms, roles and tenancy', () => {
  it('a cross-site POST, a POST without Origin and one without the token are 403, and change nothing', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console');
    for (const options of [{ origin: 'https://evil.example' }, { origin: null }, { token: false }, { token: 'x'.repeat(43) }] as const) {
      const answer = await owner.post('/console/domains', { domain: 'alpha.example' }, options);
      expect(answer.statusCode).toBe(403);
      expect(answer.body).toContain('Error 403');
    }
    expect((await stores.monitors.list(ORG_A.id, { page: 1, limit: 10 })).total).toBe(0);
    // A Referer of this origin stands in for a missing Origin.
    const viaReferer = await app.inject({
      method: 'POST',
      url: '/console/domains',
      headers: { 'content-type': 'application/x-www-form-urlencoded', referer: 'http://localhost/console', cookie: owner.cookieHeader },
      payload: `domain=alpha.example&csrf_token=${owner.token}`,
    });
    expect(viaReferer.statusCode).toBe(303);
  });

  it('add a domain → its page with the public sections, a change on its timeline; another organisation sees 404', async () => {
    const { app, stores, clock, monitors } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console');
    const added = await owner.post('/console/domains', { domain: 'Beta.Example' });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe('/console/domains/beta.example?done=added');
    await monitors.scheduler.idle();
    const page = await owner.get('/console/domains/beta.example');
    expect(page.statusCode).toBe(200);
    for (const words of ['id="verdict"', 'What we found', 'id="reasons-title"', 'Changes over time', 'Alerts sent', 'Run now']) expect(page.body).toContain(words);
    expect(page.body).toContain('data-verdict="spoofable"');
    const overview = await owner.get('/console');
    expect(overview.body).toContain('data-domain="beta.example"');
    expect(overview.body).toContain('none published');
    // Another organisation's member: 404 for the page and every action.
    const other = await addMember(app, stores, ORG_B.id, 'zed@bravo.example', 'owner', clock);
    await other.get('/console');
    expect((await other.get('/console/domains/beta.example')).statusCode).toBe(404);
    for (const action of ['run', 'settings', 'remove']) expect((await other.post(`/console/domains/beta.example/${action}`, { intervalMinutes: '60' })).statusCode).toBe(404);
    expect((await stores.monitors.list(ORG_A.id, { page: 1, limit: 10 })).total).toBe(1);
  });

  it('a notice after an action: its fixed words for a known `done`; none for another (an inherited name like toString either)', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    for (const path of ['/console', '/console/alerts']) {
      const known = await owner.get(`${path}?done=${path === '/console' ? 'removed' : 'channel_removed'}`);
      expect(known.statusCode).toBe(200);
      expect(known.body).toMatch(/<div class="card notice tone-success" role="status" id="notice"><p>The (domain is no longer watched|channel was removed: nothing more is sent to it)\.<\/p>/);
      for (const done of ['toString', '__proto__', 'constructor', 'hasOwnProperty', '<b>x</b>']) {
        const page = await owner.get(`${path}?done=${encodeURIComponent(done)}`);
        expect(page.statusCode).toBe(200);
        expect(page.body).not.toContain('id="notice"');
      }
    }
  });

  it('a viewer sees everything and can change nothing (every POST a viewer crafts is 403)', async () => {
    const { app, stores, clock, monitors } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console');
    await owner.post('/console/domains', { domain: 'alpha.example' });
    await monitors.scheduler.idle();
    const viewer = await addMember(app, stores, ORG_A.id, 'vic@acme.example', 'viewer', clock);
    const overview = await viewer.get('/console');
    expect(overview.body).toContain('alpha.example');
    expect(overview.body).not.toContain('Add a domain to watch');
    const page = await viewer.get('/console/domains/alpha.example');
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('Run now');
    const ownerId = (await stores.console.findUserByEmail('ann@acme.example'))!.id;
    const attempts: [string, Record<string, string>][] = [
      ['/console/domains', { domain: 'gamma.example' }],
      ['/console/domains/alpha.example/run', {}],
      ['/console/domains/alpha.example/settings', { intervalMinutes: '60' }],
      ['/console/domains/alpha.example/remove', {}],
      ['/console/members/invite', { email: 'x@acme.example', role: 'owner' }],
      [`/console/members/${ownerId}/role`, { role: 'viewer' }],
      [`/console/members/${ownerId}/remove`, {}],
      ['/console/members/second-factor', { require: 'yes' }],
      ['/console/keys', { name: 'mine' }],
      ['/console/keys/key_x/revoke', {}],
    ];
    for (const [url, form] of attempts) expect({ url, status: (await viewer.post(url, form)).statusCode }).toEqual({ url, status: 403 });
    expect((await stores.monitors.list(ORG_A.id, { page: 1, limit: 10 })).total).toBe(1);
    expect((await stores.console.getMembership(ownerId, ORG_A.id))?.role).toBe('owner');
  });

  it('an admin manages domains and keys and invites, but cannot change roles; an owner can, never leaving no owner', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const admin = await addMember(app, stores, ORG_A.id, 'adi@acme.example', 'admin', clock);
    await admin.get('/console');
    expect((await admin.post('/console/domains', { domain: 'gamma.example' })).statusCode).toBe(303);
    const invited = await admin.post('/console/members/invite', { email: 'new@acme.example', role: 'viewer' });
    expect(invited.statusCode).toBe(200);
    expect(invited.body).toMatch(/http:\/\/localhost\/console\/invite\/[A-Za-z0-9_-]{43}/);
    expect((await admin.post('/console/members/invite', { email: 'boss@acme.example', role: 'owner' })).statusCode).toBe(403);
    const ownerId = (await stores.console.findUserByEmail('ann@acme.example'))!.id;
    const adminId = (await stores.console.findUserByEmail('adi@acme.example'))!.id;
    expect((await admin.post(`/console/members/${ownerId}/role`, { role: 'viewer' })).statusCode).toBe(403);
    await owner.get('/console/members');
    expect((await owner.post(`/console/members/${ownerId}/role`, { role: 'admin' })).statusCode).toBe(409);
    expect((await owner.post(`/console/members/${ownerId}/remove`, {})).statusCode).toBe(409);
    expect((await owner.post(`/console/members/${adminId}/role`, { role: 'viewer' })).statusCode).toBe(303);
    expect((await stores.console.getMembership(adminId, ORG_A.id))?.role).toBe('viewer');
    expect((await owner.post(`/console/members/${adminId}/remove`, {})).statusCode).toBe(303);
    // The removed member's session no longer opens the organisation.
    expect((await admin.get('/console')).statusCode).toBe(303);
  });

  it('API keys: the secret is shown once and works on the API; revoked, it is gone from the key store', async () => {
    const { app, stores, clock } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console/keys');
    const made = await owner.post('/console/keys', { name: 'CI pipeline' });
    expect(made.statusCode).toBe(200);
    const secret = /<textarea class="secret" id="secret"[^>]*>(sk_[A-Za-z0-9_-]+)<\/textarea>/.exec(made.body)?.[1];
    expect(secret).toBeDefined();
    const listed = await owner.get('/console/keys');
    expect(listed.body).toContain('CI pipeline');
    expect(listed.body).not.toContain(secret!);
    const api = () => app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker/monitors', headers: { authorization: `Bearer ${secret}` } });
    expect((await api()).statusCode).toBe(200);
    // The API's use of the key shows as its last use.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const used = await owner.get('/console/keys');
    expect(listed.body).toMatch(/Last used<\/dt><dd>Never/);
    expect(used.body).toMatch(/Last used<\/dt><dd>(?!Never)/);
    const id = /data-key="(key_[0-9a-f]+)"/.exec(listed.body)![1]!;
    expect((await owner.post(`/console/keys/${id}/revoke`, {})).statusCode).toBe(303);
    expect(await stores.apiKeys.removeKey(ORG_A.id, id)).toBe(false);
    // Refused at once: the API's key cache (API_KEY_CACHE_TTL_MS) forgets a key revoked in this process.
    expect((await api()).statusCode).toBe(401);
  });

  it('a user of two organisations switches between them; not into one they are not in', async () => {
    const { app, stores, clock } = await start();
    const ann = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await addMember(app, stores, ORG_B.id, 'ann@acme.example', 'viewer', clock);
    await ann.signIn('ann@acme.example');
    const first = await ann.get('/console');
    expect(first.body).toContain('Domains of Acme Corp');
    expect(first.body).toContain('id="switch-org"');
    expect((await ann.post('/console/organization', { organization: ORG_B.id })).statusCode).toBe(303);
    expect((await ann.get('/console')).body).toContain('Domains of Bravo Ltd');
    expect((await ann.post('/console/organization', { organization: 'org_nope' })).statusCode).toBe(404);
  });

  it('every console action is in the record log with the acting user, and no password or token', async () => {
    const stores = createMemoryStores();
    const captured: { organizationId: string | null; record: RecordLog }[] = [];
    const append = stores.recordLogs.append.bind(stores.recordLogs);
    stores.recordLogs.append = async (organizationId, record) => {
      captured.push({ organizationId, record });
      return append(organizationId, record);
    };
    const { app, clock } = await start({ stores });
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console');
    expect((await owner.post('/console/domains', { domain: 'alpha.example' })).statusCode).toBe(303);
    const userId = (await stores.console.findUserByEmail('ann@acme.example'))!.id;
    const create = captured.find((c) => c.record.event === 'monitor.created');
    expect(create).toBeDefined();
    expect(create!.organizationId).toBe(ORG_A.id);
    expect(create!.record).toMatchObject({ actor_type: 'user', actor_id: userId, service: 'console', status_code: 303 });
    expect(captured.some((c) => c.record.event === 'invitation.accepted' && c.record.actor_id === userId)).toBe(true);
    const all = JSON.stringify(captured);
    expect(all).not.toContain(GOOD_PASSWORD);
    expect(all).not.toContain(owner.token);
    expect(all).not.toMatch(/\/console\/invite\/[A-Za-z0-9_-]{20,}/);
    // A refused POST is recorded too.
    await owner.post('/console/domains', { domain: 'beta.example' }, { origin: 'https://evil.example' });
    expect(captured.some((c) => c.record.event === 'monitor.create_failed' && c.record.status_code === 403)).toBe(true);
  });
});

describe('the console in the demo', () => {
  it('on loopback /console opens signed in as the demo viewer, with the demo banner; the viewer cannot change anything', async () => {
    const { loadDemoSettings } = await import('../../src/cli/demo.js');
    const { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } = await import('../../src/cli/serve.js');
    const settings = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
    const { app, stores, monitors } = await start({ extra: { pages: { demo: settings }, console: { demo: { organizationId: ORG_A.id, autoSignIn: true } } } });
    await monitors.service.create(ORG_A.id, { domain: 'alpha.example' });
    const browser = new Browser(app);
    const page = await browser.get('/console');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="demo-banner"');
    expect(page.body).toContain('viewer@demo.invalid');
    expect(page.body).toContain('data-domain="alpha.example"');
    expect(page.body).not.toContain('Sign out');
    expect(browser.cookies.size).toBe(1);
    expect((await browser.post('/console/domains/alpha.example/remove', {})).statusCode).toBe(403);
    expect((await stores.monitors.list(ORG_A.id, { page: 1, limit: 10 })).total).toBe(1);
  });

  it('without auto sign-in (the demo off loopback) /console asks to sign in', async () => {
    const { app } = await start({ extra: { console: { demo: { organizationId: ORG_A.id, autoSignIn: false } } } });
    const page = await new Browser(app).get('/console');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/console/sign-in');
  });
});

describe('the overview', () => {
  it('worst first by default; sortable and filterable by query; a summary of every state', async () => {
    const { app, stores, clock, monitors } = await start();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    for (const domain of ['alpha.example', 'beta.example', 'gamma.example']) {
      const created = await monitors.service.create(ORG_A.id, { domain });
      if ('monitor' in created) await monitors.service.runNow(ORG_A.id, created.monitor.id);
    }
    await monitors.scheduler.idle();
    const order = async (url: string) => [...(await owner.get(url)).body.matchAll(/<tr data-domain="([^"]+)"/g)].map((m) => m[1]);
    // beta: no DMARC (spoofable); gamma: p=none (partially protected? spoofable by policy); alpha: p=reject (protected).
    const worstFirst = await order('/console');
    expect(worstFirst.at(-1)).toBe('alpha.example');
    expect(worstFirst[0]).toBe('beta.example');
    expect(await order('/console?sort=domain&order=desc')).toEqual(['gamma.example', 'beta.example', 'alpha.example']);
    expect(await order('/console?sort=domain&order=asc&q=alp')).toEqual(['alpha.example']);
    expect(await order('/console?verdict=protected')).toEqual(['alpha.example']);
    expect(await order('/console?sort=nonsense&order=sideways&page=zero')).toEqual(worstFirst);
    const page = await owner.get('/console');
    expect(page.body).toMatch(/id="states">3 domains: <a [^>]+>\d+ spoofable<\/a>/);
    expect(page.body).toContain('aria-sort="ascending"');
  });
});
