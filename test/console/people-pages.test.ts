/**
 * The console's alerts, lookalikes and failure-report pages over inject (issue 41): each route and
 * role (a viewer reads and every POST a viewer crafts is 403; another organisation's domain and
 * channel are 404), a channel of each kind through the alert service, a test sent to a real local
 * HTTP receiver and its outcome shown after the redirect, secrets never shown again, "ours" marked,
 * failure reports grouped by source, the hashing setting an owner turns off.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addMember, ORG_A, ORG_B } from './helpers.js';
import { failure, peopleService as startPeople, remembered } from './people-helpers.js';

async function peopleService(options: { smtp?: boolean } = {}) {
  const service = await startPeople(options);
  cleanups.push(service.close);
  return service;
}

const cleanups: (() => Promise<unknown>)[] = [];
/** A page's HTML without the spans the shell adds to break long words (so that text can be matched). */
const plain = (body: string) => body.replace(/<\/?span[^>]*>/g, '');
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A local HTTP receiver that keeps what it is sent and answers `status`. */
async function receiver(status = 200): Promise<{ url: string; bodies: unknown[]; server: Server }> {
  const bodies: unknown[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      bodies.push(JSON.parse(text));
      response.writeHead(status).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/SECRET-TOKEN-123`, bodies, server };
}

describe('/console/alerts', () => {
  it('an owner adds a Slack channel, sends a test to a local receiver and sees "Delivered" after the redirect; the URL is never shown', async () => {
    const { app, stores, clock } = await peopleService();
    const slack = await receiver();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const empty = await owner.get('/console/alerts');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('id="no-channels"');
    expect(empty.body).toContain('Add a channel');
    const added = await owner.post('/console/alerts', { kind: 'slack', name: '#security', url: slack.url, events: ['authentication', 'lookalikes'], domains: 'alpha.example\nBeta.Example' });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe('/console/alerts?done=channel_added');
    const [channel] = await stores.alerts.listChannels(ORG_A.id);
    expect(channel).toMatchObject({ kind: 'slack', name: '#security', rules: { events: ['authentication', 'lookalikes'], domains: ['alpha.example', 'beta.example'] } });
    const listed = await owner.get('/console/alerts?done=channel_added');
    expect(listed.body).toContain(new URL(slack.url).host);
    expect(listed.body).not.toContain('SECRET-TOKEN-123');
    expect(listed.body).toContain('never sent');
    const tested = await owner.post(`/console/alerts/${channel!.id}/test`, {});
    expect(tested.statusCode).toBe(303);
    expect(tested.headers.location).toBe(`/console/alerts?tested=${channel!.id}`);
    expect(slack.bodies).toHaveLength(1);
    expect(slack.bodies[0]).toHaveProperty('text');
    const after = await owner.get(tested.headers.location as string);
    expect(plain(after.body)).toMatch(/id="notice"[^>]*><p>Test of &quot;#security&quot;: Delivered \(200\)/);
    expect(after.body).not.toContain('SECRET-TOKEN-123');
    // A second test at once: the cooldown, said in words, nothing sent.
    const again = await owner.post(`/console/alerts/${channel!.id}/test`, {});
    expect(again.headers.location).toMatch(/^\/console\/alerts\?wait=\d+$/);
    expect((await owner.get(again.headers.location as string)).body).toContain('wait');
    expect(slack.bodies).toHaveLength(1);
  });

  it('a failing receiver: the test shows "Failed" with the reason', async () => {
    const { app, stores, clock } = await peopleService();
    const teams = await receiver(500);
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console/alerts');
    expect((await owner.post('/console/alerts', { kind: 'teams', name: 'Teams', url: teams.url, events: ['authentication'] })).statusCode).toBe(303);
    const [channel] = await stores.alerts.listChannels(ORG_A.id);
    const tested = await owner.post(`/console/alerts/${channel!.id}/test`, {});
    const after = await owner.get(tested.headers.location as string);
    expect(plain(after.body)).toMatch(/tone-critical" role="alert" id="notice"><p>Test of &quot;Teams&quot;: Failed: http-error 500/);
    expect((teams.bodies[0] as { type?: string }).type).toBe('message');
  });

  it('a signed webhook shows its secret once; an email channel takes recipients; rules change; remove; bad input is said', async () => {
    const { app, stores, clock } = await peopleService({ smtp: true });
    const hook = await receiver();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console/alerts');
    const webhook = await owner.post('/console/alerts', { kind: 'webhook', name: 'SIEM', url: hook.url, events: ['authentication'] });
    expect(webhook.statusCode).toBe(200);
    const secret = /id="secret"[^>]*>([^<]+)</.exec(webhook.body)?.[1];
    expect(secret).toBeTruthy();
    expect((await owner.get('/console/alerts')).body).not.toContain(secret!);
    const email = await owner.post('/console/alerts', { kind: 'email', name: 'Security team', recipients: 'sec@acme.example, Ops@Acme.example', events: ['authentication', 'dnssec'] });
    expect(email.statusCode).toBe(303);
    const channels = await stores.alerts.listChannels(ORG_A.id);
    const mail = channels.find((c) => c.kind === 'email')!;
    expect(mail.recipients).toEqual(['sec@acme.example', 'ops@acme.example']);
    const rules = await owner.post(`/console/alerts/${mail.id}/rules`, { events: ['dnssec'], domains: 'gamma.example' });
    expect(rules.headers.location).toBe('/console/alerts?done=channel_saved');
    expect(await stores.alerts.getChannel(ORG_A.id, mail.id)).toMatchObject({ enabled: false, rules: { events: ['dnssec'], domains: ['gamma.example'] } });
    const noEvents = await owner.post(`/console/alerts/${mail.id}/rules`, { domains: '' });
    expect(noEvents.statusCode).toBe(400);
    expect(noEvents.body).toContain('Tick at least one kind of event');
    const badDomain = await owner.post(`/console/alerts/${mail.id}/rules`, { events: ['dnssec'], domains: 'not a domain!' });
    expect(badDomain.statusCode).toBe(400);
    const badUrl = await owner.post('/console/alerts', { kind: 'slack', name: 'x', url: 'ftp://example.com/', events: ['authentication'] });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.body).toContain('This URL cannot be used');
    expect(badUrl.body).toContain('value="x"');
    const badKind = await owner.post('/console/alerts', { kind: 'pager', name: 'x', events: ['authentication'] });
    expect(badKind.statusCode).toBe(400);
    const removed = await owner.post(`/console/alerts/${mail.id}/remove`, {});
    expect(removed.headers.location).toBe('/console/alerts?done=channel_removed');
    expect(await stores.alerts.getChannel(ORG_A.id, mail.id)).toBeUndefined();
    expect((await owner.post(`/console/alerts/${mail.id}/remove`, {})).statusCode).toBe(404);
  });

  it('without a mail relay, an email channel is refused saying how to configure one', async () => {
    const { app, stores, clock } = await peopleService();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const page = await owner.get('/console/alerts');
    expect(page.body).toContain('(no mail relay configured)');
    const refused = await owner.post('/console/alerts', { kind: 'email', name: 'x', recipients: 'a@acme.example', events: ['authentication'] });
    expect(refused.statusCode).toBe(400);
    expect(plain(refused.body)).toContain('--alert-smtp');
  });

  it('a viewer reads and every POST is 403; another organisation gets 404 for the channel; an admin manages', async () => {
    const { app, stores, clock } = await peopleService();
    const hook = await receiver();
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console/alerts');
    await owner.post('/console/alerts', { kind: 'slack', name: '#security', url: hook.url, events: ['authentication'] });
    const [channel] = await stores.alerts.listChannels(ORG_A.id);
    const viewer = await addMember(app, stores, ORG_A.id, 'vic@acme.example', 'viewer', clock);
    const seen = await viewer.get('/console/alerts');
    expect(seen.statusCode).toBe(200);
    expect(seen.body).toContain('#security');
    expect(seen.body).not.toContain('Send a test');
    expect(seen.body).not.toContain('Add a channel');
    const attempts: [string, Record<string, string | string[]>][] = [
      ['/console/alerts', { kind: 'slack', name: 'v', url: hook.url, events: ['authentication'] }],
      [`/console/alerts/${channel!.id}/rules`, { events: ['dnssec'] }],
      [`/console/alerts/${channel!.id}/test`, {}],
      [`/console/alerts/${channel!.id}/remove`, {}],
    ];
    for (const [url, form] of attempts) expect({ url, status: (await viewer.post(url, form)).statusCode }).toEqual({ url, status: 403 });
    expect(hook.bodies).toHaveLength(0);
    expect(await stores.alerts.listChannels(ORG_A.id)).toHaveLength(1);
    const other = await addMember(app, stores, ORG_B.id, 'zed@bravo.example', 'owner', clock);
    expect((await other.get('/console/alerts')).body).not.toContain(channel!.id);
    for (const [url, form] of attempts.slice(1)) expect({ url, status: (await other.post(url, form)).statusCode }).toEqual({ url, status: 404 });
    expect(hook.bodies).toHaveLength(0);
    const captured: { organizationId: string | null; record: unknown }[] = [];
    const append = stores.recordLogs.append.bind(stores.recordLogs);
    stores.recordLogs.append = async (organizationId, record) => {
      captured.push({ organizationId, record });
      return append(organizationId, record);
    };
    const admin = await addMember(app, stores, ORG_A.id, 'ada@acme.example', 'admin', clock);
    await admin.get('/console/alerts');
    expect((await admin.post(`/console/alerts/${channel!.id}/rules`, { events: ['dnssec'], enabled: 'yes' })).statusCode).toBe(303);
    // The record log names the acting user for each console action.
    const change = captured.find((c) => JSON.stringify(c.record).includes('/rules'));
    expect(change?.organizationId).toBe(ORG_A.id);
    expect(JSON.stringify(change?.record)).toContain('ada@acme.example');
  });
});

describe('/console/domains/<domain>/lookalikes', () => {
  it('lists remembered lookalikes with first/last seen, history and the xn-- form; an owner marks "ours"; a viewer cannot; another organisation 404', async () => {
    const { app, stores, clock, monitors } = await peopleService();
    const created = await monitors.create(ORG_A.id, { domain: 'alpha.example', checks: ['lookalikes'] });
    if ('kind' in created) throw new Error(created.kind);
    const id = created.monitor.id;
    await stores.rememberedLookalikes.save([remembered('xn--alph-ooa.example', 'alphä.example', id), remembered('alpha-mail.example', 'alpha-mail.example', id, { ours: true })]);
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const domainPage = await owner.get('/console/domains/alpha.example');
    expect(domainPage.body).toContain('href="/console/domains/alpha.example/lookalikes"');
    expect(domainPage.body).toContain('href="/console/domains/alpha.example/failures"');
    const page = await owner.get('/console/domains/alpha.example/lookalikes');
    expect(page.statusCode).toBe(200);
    expect(plain(page.body)).toContain('alphä.example <code class="muted">xn--alph-ooa.example</code>');
    expect(plain(page.body)).toContain('<td>2026-02-01 10:00 UTC</td><td>2026-02-28 10:00 UTC</td>');
    expect(plain(page.body)).toContain('mx-published');
    expect(plain(page.body)).toContain('registered, receives mail, no SPF, grade high');
    const marked = await owner.post('/console/domains/alpha.example/lookalikes/ours', { name: 'alphä.example', ours: 'yes' });
    expect(marked.statusCode).toBe(303);
    expect(marked.headers.location).toBe('/console/domains/alpha.example/lookalikes?done=ours');
    expect((await stores.rememberedLookalikes.all(id)).find((e) => e.domain === 'xn--alph-ooa.example')?.ours).toBe(true);
    expect((await owner.post('/console/domains/alpha.example/lookalikes/ours', { name: 'alpha-mail.example', ours: 'no' })).statusCode).toBe(303);
    expect((await stores.rememberedLookalikes.all(id)).find((e) => e.domain === 'alpha-mail.example')?.ours).toBe(false);
    expect((await owner.post('/console/domains/alpha.example/lookalikes/ours', { name: 'unknown.example', ours: 'yes' })).statusCode).toBe(404);
    const viewer = await addMember(app, stores, ORG_A.id, 'vic@acme.example', 'viewer', clock);
    const read = await viewer.get('/console/domains/alpha.example/lookalikes');
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toContain('Mark ours');
    expect((await viewer.post('/console/domains/alpha.example/lookalikes/ours', { name: 'alpha-mail.example', ours: 'yes' })).statusCode).toBe(403);
    expect((await stores.rememberedLookalikes.all(id)).find((e) => e.domain === 'alpha-mail.example')?.ours).toBe(false);
    const other = await addMember(app, stores, ORG_B.id, 'zed@bravo.example', 'owner', clock);
    expect((await other.get('/console/domains/alpha.example/lookalikes')).statusCode).toBe(404);
    expect((await other.post('/console/domains/alpha.example/lookalikes/ours', { name: 'alpha-mail.example', ours: 'yes' })).statusCode).toBe(404);
  });
});

describe('/console/domains/<domain>/failures', () => {
  it('groups failure reports by source within the window; an owner turns hashing off; admin and viewer cannot; another organisation 404', async () => {
    const { app, stores, clock, monitors } = await peopleService();
    const created = await monitors.create(ORG_A.id, { domain: 'alpha.example' });
    if ('kind' in created) throw new Error(created.kind);
    for (const [n, ip, at] of [[1, '203.0.113.9', '2026-02-27T00:00:00.000Z'], [2, '203.0.113.9', '2026-02-28T00:00:00.000Z'], [3, '198.51.100.7', '2026-02-28T00:00:00.000Z'], [4, '192.0.2.1', '2025-12-15T00:00:00.000Z']] as const) {
      await stores.failureReports.add(failure(n, ip, at));
    }
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    const page = await owner.get('/console/domains/alpha.example/failures');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('3 report(s) in the last 30 days');
    const rows = [...page.body.matchAll(/<tr><th scope="row"><code>([^<]+)<\/code><\/th><td>(\d+)<\/td>/g)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual([['203.0.113.9', '2'], ['198.51.100.7', '1']]);
    expect(page.body).toContain('dmarc 2');
    // The newest report of each source: its header fields and authentication results (no body is stored).
    const details = plain(page.body);
    expect(details).toContain('<summary><code>203.0.113.9</code>, received 2026-02-28 00:00 UTC</summary>');
    expect(details).toContain('Subject: Invoice');
    expect(details).toContain('mx.receiver.example; dmarc=fail header.from=alpha.example');
    expect(details).toContain('(local parts hashed)');
    expect((await owner.get('/console/domains/alpha.example/failures?days=90')).body).toContain('4 report(s) in the last 90 days');
    expect(page.body).toContain('stored hashed');
    const admin = await addMember(app, stores, ORG_A.id, 'ada@acme.example', 'admin', clock);
    await admin.get('/console/domains/alpha.example/failures');
    expect((await admin.post('/console/failure-reports/hashing', { hash: 'no', back: 'alpha.example' })).statusCode).toBe(403);
    const viewer = await addMember(app, stores, ORG_A.id, 'vic@acme.example', 'viewer', clock);
    await viewer.get('/console/domains/alpha.example/failures');
    expect((await viewer.post('/console/failure-reports/hashing', { hash: 'no', back: 'alpha.example' })).statusCode).toBe(403);
    expect((await stores.failureReports.settings(ORG_A.id)).hashLocalParts).toBe(true);
    await owner.get('/console/domains/alpha.example/failures');
    const off = await owner.post('/console/failure-reports/hashing', { hash: 'no', back: 'alpha.example' });
    expect(off.headers.location).toBe('/console/domains/alpha.example/failures?done=hashing');
    expect((await stores.failureReports.settings(ORG_A.id)).hashLocalParts).toBe(false);
    expect((await owner.get(off.headers.location as string)).body).toContain('stored in clear');
    const other = await addMember(app, stores, ORG_B.id, 'zed@bravo.example', 'owner', clock);
    expect((await other.get('/console/domains/alpha.example/failures')).statusCode).toBe(404);
    // Another organisation's owner changes only their own organisation's setting.
    await other.get('/console');
    await other.post('/console/failure-reports/hashing', { hash: 'yes', back: 'alpha.example' });
    expect((await stores.failureReports.settings(ORG_A.id)).hashLocalParts).toBe(false);
  });
});
