/**
 * The page of `serve --demo` (app.inject, the real engine over the fixture zones, the demo settings
 * `serve` builds from fixtures/scenarios.json): it says on every page that the answers come from
 * fixture zones, lists the demo's domains as links that work, gives form examples that work, and
 * answers "not in the demo" for other names (google.com, whose fixture zone is only a stand-in).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { loadDemoSettings } from '../../src/cli/demo.js';
import { demoExamples, demoHref, inDemo, type DemoSettings } from '../../src/web/demo.js';
import { fixtureApp, linkedUrls, textById, textContent } from './helpers.js';

let demo: DemoSettings;
let app: FastifyInstance;
let plain: FastifyInstance;

beforeAll(async () => {
  demo = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
  ({ app } = await fixtureApp({ overrides: { pages: { demo } } }));
  ({ app: plain } = await fixtureApp());
});
afterAll(async () => {
  await app?.close();
  await plain?.close();
});

/** Follows the form's redirect, as a browser would. */
async function submit(typed: string): Promise<{ status: number; body: string; location: string }> {
  const form = await app.inject({ url: `/check?domain=${encodeURIComponent(typed)}` });
  expect(form.statusCode, `${typed}: ${form.body}`).toBe(303);
  const location = String(form.headers.location);
  const page = await app.inject({ url: location });
  return { status: page.statusCode, body: page.body, location };
}

describe('the demo settings from fixtures/scenarios.json', () => {
  it('list the featured scenarios first, then every other domain once, and only the scenarios\' zones', () => {
    expect(demo.domains.slice(0, 3).map((d) => d.input)).toEqual(['p-reject.example', 'p-quarantine.example', 'p-none.example']);
    expect(demo.featured).toBe(8);
    expect(new Set(demo.domains.map((d) => d.input)).size).toBe(demo.domains.length);
    expect(demo.domains.length).toBeGreaterThan(80);
    expect(inDemo(demo, 'p-none.example')).toBe(true);
    expect(inDemo(demo, 'mail.reject-sp-none.example')).toBe(true);
    // Stand-ins for providers are not demo domains, and neither is a real name.
    expect(inDemo(demo, 'google.com')).toBe(false);
    expect(inDemo(demo, 'smtp.google.com')).toBe(false);
    expect(inDemo(demo, 'outlook.com')).toBe(false);
    expect(inDemo(demo, 'example.com')).toBe(false);
    // The zones of real names are kept, as stand-ins.
    expect(demo.standIns).toEqual(['google.com', 'mcsv.net', 'onmicrosoft.com', 'outlook.com']);
  });
});

describe('serve --demo: the page', () => {
  it.each([
    ['home', '/'],
    ['a result', '/check/p-none.example'],
    ['a guide', '/guides/dmarc-enforce'],
    ['an invalid input', '/check?domain=192.0.2.1'],
    ['a DNS failure', '/check/dmarc-servfail.example'],
    ['a domain that does not exist', '/check/no-such-domain.example'],
    ['a name outside the demo', '/check/google.com'],
  ])('%s carries the demo banner and never claims to read public DNS', async (_label, url) => {
    const response = await app.inject({ url });
    const text = textContent(response.body);
    expect(textById(response.body, 'demo-banner')).toMatch(/^Demo\. The answers come from the fixture zone files shipped with spoof-checker \(fixtures\/zones\), not from public DNS/);
    expect(text).not.toMatch(/reads? (its )?public DNS/i);
    expect(text).not.toContain('Only public DNS is read');
  });

  it('lists the stand-in zones of real names as stand-ins, never as links to a verdict', async () => {
    for (const url of ['/', '/check/google.com']) {
      const body = (await app.inject({ url })).body;
      const standIns = (textById(body, 'demo-stand-ins') ?? '').replace(/ ([,.])/g, '$1');
      expect(standIns).toMatch(/^Stand-ins, not checked: google\.com, mcsv\.net, onmicrosoft\.com, outlook\.com\. .*they stand in for those providers and are not their DNS/);
      expect(linkedUrls(body)).not.toContain('/check/google.com');
    }
  });

  it('lists the demo domains as links, and every link gives a result page', async () => {
    const home = (await app.inject({ url: '/' })).body;
    const links = linkedUrls(home).filter((url) => url.startsWith('/check/'));
    expect(links.length).toBeGreaterThan(80);
    for (const input of ['p-reject.example', 'spf-too-many-lookups.example', 'ceo@p-reject.example']) expect(links).toContain(demoHref(input));
    // The featured ones, each answered with a verdict.
    for (const link of links.slice(0, demo.featured)) {
      const response = await app.inject({ url: link });
      expect(response.statusCode, link).toBe(200);
      expect(response.body).toContain('id="verdict"');
    }
  });

  it('gives form examples that work in the demo (a domain, an address, a website)', async () => {
    const examples = demoExamples(demo);
    expect(examples).toHaveLength(3);
    const hint = textById((await app.inject({ url: '/' })).body, 'domain-hint');
    for (const example of examples) {
      expect(hint).toContain(example);
      const { status, body } = await submit(example);
      expect(status, example).toBe(200);
      expect(body).toContain('id="verdict"');
    }
    expect(hint).not.toContain('example.com');
  });

  it.each(['google.com', 'example.com', 'you@gmail.com'])('answers "not in the demo" for %s, with no verdict and the domains to try', async (typed) => {
    const { status, body } = await submit(typed);
    expect(status).toBe(404);
    expect(body).not.toContain('id="verdict"');
    expect(body).toContain('id="not-in-demo"');
    expect(textContent(body)).toMatch(/is not in the demo/);
    expect(body).toContain('id="demo-domains"');
  });

  it('answers the JSON form of an outside name with the catalogue\'s NOT_FOUND, not a verdict', async () => {
    const response = await app.inject({ url: '/check/google.com', headers: { accept: 'application/json' } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT_FOUND', message: 'google.com is not in the demo.' });
  });
});

describe('outside the demo', () => {
  it('has no banner, the usual examples, and still reads public DNS in its words', async () => {
    const home = (await plain.inject({ url: '/' })).body;
    expect(home).not.toContain('id="demo-banner"');
    expect(textById(home, 'domain-hint')).toContain('example.com');
    expect(textContent(home)).toContain('We read its public DNS records');
    expect((await plain.inject({ url: '/check/google.com' })).body).not.toContain('id="not-in-demo"');
  });
});
