/**
 * The checker page through `inject`: the home page, results, redirects, JSON on request, every
 * error page and its status, escaping of hostile input (path, query and result), the security
 * headers, the rate limit by client network, guides, assets, and that no page visit is audited.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpoofCheckError } from '../../packages/engine/src/errors.js';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { GUIDE_TOPICS } from '../../packages/engine/src/verdict/index.js';
import { ASSETS } from '../../src/web/assets.js';
import { CONTENT_SECURITY_POLICY, wantsJson } from '../../src/web/plugin.js';
import { makeApp, SAMPLE_RESULT } from '../http/helpers.js';
import { API_KEY, codeBlocks, fixtureApp, linkedUrls, textById, textContent } from './helpers.js';

const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "' onmouseover='alert(1)", '`${alert(1)}`'];

/** Asserts that no hostile markup made it into the page as markup. */
function expectNoInjectedMarkup(body: string): void {
  expect(body).not.toMatch(/<script>alert/i);
  expect(body).not.toMatch(/<img[^>]*onerror/i);
  // No tag gained an event handler attribute: with every quoted value removed, none is left.
  for (const tag of body.match(/<[a-z][^>]*>/gi) ?? []) expect(tag.replace(/="[^"]*"/g, '=""'), tag).not.toMatch(/\son[a-z]+=/i);
  // Our own script tag is the only one.
  expect(body.match(/<script/gi)?.length).toBe(1);
}

let fixture: Awaited<ReturnType<typeof fixtureApp>>;
let app: FastifyInstance;
beforeAll(async () => {
  fixture = await fixtureApp();
  app = fixture.app;
});
afterAll(async () => {
  await app?.close();
});

describe('GET /', () => {
  it('is one form with a labelled "domain" input, what is checked, and the API links, without a key', async () => {
    const response = await app.inject({ url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const body = response.body;
    expect(body.match(/<form/g)?.length).toBe(1);
    expect(body).toMatch(/<form class="check" action="\/check" method="get"/);
    expect(body).toMatch(/<label for="domain">/);
    expect(body).toMatch(/<input type="text" id="domain" name="domain"/);
    for (const word of ['SPF', 'DMARC', 'DKIM', 'MX', 'Shared infrastructure', 'Mail sent to you']) expect(body).toContain(`<strong>${word}</strong>`);
    expect(linkedUrls(body)).toEqual(expect.arrayContaining(['/docs', '/openapi.json']));
  });

  it('carries the CSP and the other security headers, and links only to this host', async () => {
    const response = await app.inject({ url: '/' });
    expect(response.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("default-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('DENY');
    for (const url of linkedUrls(response.body)) expect(url, url).toMatch(/^\/(?!\/)|^#/);
    // No inline script or style at all: the CSP would block them.
    expect(response.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(response.body).not.toMatch(/<style|\sstyle="/);
  });
});

describe('GET /check', () => {
  it.each([
    ['P-Reject.Example.', '/check/p-reject.example'],
    ['ceo@p-reject.example', '/check/p-reject.example'],
    ['https://www.p-reject.example/pricing?x=1', '/check/www.p-reject.example'],
  ])('redirects the form (%s) with 303 to the canonical result page', async (typed, location) => {
    const response = await app.inject({ url: `/check?domain=${encodeURIComponent(typed)}` });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(location);
  });

  it('redirects a non-canonical result path too', async () => {
    const response = await app.inject({ url: '/check/P-REJECT.example.' });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/check/p-reject.example');
  });

  it('renders the result on the server: verdict, headline, reasons, records, next step, time and link', async () => {
    const response = await app.inject({ url: '/check/p-none.example' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.body;
    expect(textById(body, 'verdict')).toBe('Spoofable');
    expect(textById(body, 'headline')).toMatch(/p-none\.example/);
    expect(textById(body, 'inbox-outcome')).toBe('Delivered to the inbox');
    expect(textById(body, 'spf-lookups')).toMatch(/^\d+ of 10 allowed$/);
    expect(body).toMatch(/<time datetime="\d{4}-\d{2}-\d{2}T[^"]+Z" id="checked-at">/);
    expect(body).toContain('<a id="permalink" href="/check/p-none.example">');
    // The next step's record to publish is a block of its own.
    expect(codeBlocks(body)).toContain('v=DMARC1; p=quarantine; rua=mailto:dmarc-reports@p-none.example');
    expect(body).toContain('class="record publish"');
    expect(body).toContain('href="/guides/dmarc-enforce?domain=p-none.example"');
  });

  it('names the providers whose rented space passes SPF, with counts, in a section of its own', async () => {
    const body = (await app.inject({ url: '/check/spf-ci-runners.example' })).body;
    expect(textById(body, 'verdict')).toBe('Spoofable');
    expect(textById(body, 'shared-title')).toBe('SPF: rented servers that pass');
    const section = body.slice(body.indexOf('id="shared-infrastructure"'), body.indexOf('</section>', body.indexOf('id="shared-infrastructure"')));
    expect(textContent(section)).toMatch(/GitHub Actions runners\s*65,536 IPv4\s*ip4:4\.148\.0\.0\/16/);
    expect(textContent(section)).toMatch(/Microsoft Azure\s*65,536 IPv4/);
    expect(section).toContain('data-severity="critical"');
    expect(textContent(section)).toMatch(/friction for an attacker, not protection/);
    // A domain with nothing in shared space has no such section.
    expect((await app.inject({ url: '/check/p-none.example' })).body).not.toContain('id="shared-infrastructure"');
  });

  it('answers the API result as JSON when asked with Accept: application/json', async () => {
    const page = await app.inject({ url: '/check/p-reject.example', headers: { accept: 'application/json' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^application\/json/);
    expect(page.headers.vary).toMatch(/accept/i);
    const api = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { authorization: `Bearer ${API_KEY}` }, payload: { domain: 'p-reject.example' } });
    const volatile = (r: SpoofCheckResult) => ({ ...r, resolvedAt: '', responseTimeMs: 0, details: { ...r.details, dns: null } });
    expect(volatile(page.json<SpoofCheckResult>())).toEqual(volatile(api.json<SpoofCheckResult>()));
  });

  it('reads Accept by quality: browsers get HTML', () => {
    expect(wantsJson('application/json')).toBe(true);
    expect(wantsJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(false);
    expect(wantsJson('text/html;q=0.5, application/json')).toBe(true);
    expect(wantsJson('application/json;q=0, text/html')).toBe(false);
    expect(wantsJson(undefined)).toBe(false);
  });
});

describe('error pages', () => {
  it('answers 400 for an empty form, saying what was wrong', async () => {
    const response = await app.inject({ url: '/check?domain=' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(textById(response.body, 'domain-error')).toMatch(/The domain is empty/);
    expect(response.body).toContain('aria-invalid="true"');
  });

  it('answers 400 for an IP address and keeps what was typed', async () => {
    const response = await app.inject({ url: '/check?domain=192.0.2.1' });
    expect(response.statusCode).toBe(400);
    expect(textById(response.body, 'domain-error')).toMatch(/IP address/);
    expect(response.body).toContain('value="192.0.2.1"');
    expect(response.body).not.toContain('id="verdict"');
  });

  it('answers 400 with the catalogue JSON when JSON is asked for', async () => {
    const response = await app.inject({ url: '/check/not_a_domain', headers: { accept: 'application/json' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ statusCode: 400, code: 'INVALID_DOMAIN' });
  });

  it.each(HOSTILE)('escapes hostile input in the query: %s', async (typed) => {
    const response = await app.inject({ url: `/check?domain=${encodeURIComponent(typed)}` });
    expect(response.statusCode).toBe(400);
    expectNoInjectedMarkup(response.body);
    // What was typed is back in the form, escaped.
    expect(response.body).toContain(`value="${typed.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;').replace(/`/g, '&#96;')}"`);
  });

  it.each(HOSTILE)('escapes hostile input in the path: %s', async (typed) => {
    const response = await app.inject({ url: `/check/${encodeURIComponent(typed)}` });
    expect(response.statusCode).toBe(400);
    expectNoInjectedMarkup(response.body);
    expect(response.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  });

  it('answers 502 naming the failed lookup, with no verdict, when DNS fails (SERVFAIL)', async () => {
    const failing = await fixtureApp({ faults: [{ name: '_dmarc.p-reject.example', type: 'TXT', fault: { kind: 'servfail' } }] });
    try {
      const response = await failing.app.inject({ url: '/check/p-reject.example' });
      expect(response.statusCode).toBe(502);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      // The name is kept whole on narrow screens (a span that does not break at its hyphen).
      expect(response.body).toContain('<code>TXT <span class="nb">_dmarc.p<span class="nh">-r</span>eject.example</span></code>');
      expect(response.body).not.toContain('id="verdict"');
      expect(response.body).toContain('value="p-reject.example"');
      expect(response.body).toContain('href="/check/p-reject.example">Check again');
      const json = await failing.app.inject({ url: '/check/p-reject.example', headers: { accept: 'application/json' } });
      expect(json.statusCode).toBe(502);
      expect(json.json()).toMatchObject({ code: 'DNS_FAILURE', query: { name: '_dmarc.p-reject.example', type: 'TXT' } });
    } finally {
      await failing.app.close();
    }
  });

  it('answers 503 when the lookup times out', async () => {
    const failing = await fixtureApp({ faults: [{ name: 'p-reject.example', type: 'TXT', fault: { kind: 'drop' } }] });
    try {
      const response = await failing.app.inject({ url: '/check/p-reject.example' });
      expect(response.statusCode).toBe(503);
      expect(textContent(response.body)).toMatch(/timed out/);
      expect(response.body).not.toContain('id="verdict"');
    } finally {
      await failing.app.close();
    }
  });

  it('answers a 4xx page for a domain that does not exist, with the API\'s status (SpoofCheckError domain_not_found)', async () => {
    const api = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { authorization: `Bearer ${API_KEY}` }, payload: { domain: 'does-not-exist.example' } });
    expect(api.json()).toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
    const response = await app.inject({ url: '/check/does-not-exist.example' });
    expect([404, 422]).toContain(response.statusCode);
    expect(response.statusCode).toBe(api.statusCode);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(textContent(response.body)).toContain('This domain does not exist');
    expect(textContent(response.body)).toContain('does-not-exist.example does not exist');
    expect(response.body).toContain('value="does-not-exist.example"');
    expect(response.body).not.toContain('id="verdict"');
    const json = await app.inject({ url: '/check/does-not-exist.example', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(api.statusCode);
    expect(json.json()).toMatchObject({ code: 'DOMAIN_NOT_FOUND' });
  });

  it('answers 500 without internals when the check crashes', async () => {
    const { app: broken } = await makeApp({ check: async () => Promise.reject(new Error('secret stack detail')) });
    try {
      const response = await broken.inject({ url: '/check/example.com' });
      expect(response.statusCode).toBe(500);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).not.toContain('secret stack detail');
    } finally {
      await broken.close();
    }
  });
});

describe('escaping of what the DNS says', () => {
  it('escapes every field of a hostile result', async () => {
    const evil = '<script>alert(1)</script>"><img src=x onerror=alert(1)>';
    const result: SpoofCheckResult = {
      ...SAMPLE_RESULT,
      headline: evil,
      summary: evil,
      subdomainNote: evil,
      reasons: [{ id: evil, severity: 'critical', title: evil, detail: evil }],
      dmarc: { ...SAMPLE_RESULT.dmarc, rawRecord: evil },
      spf: { ...SAMPLE_RESULT.spf, rawRecord: evil },
      nextStep: { title: evil, body: `Add:\n  ${evil}`, href: 'javascript:alert(1)' },
      details: { displayDomain: evil, spf: { records: [evil], tree: [{ raw: evil, record: evil, children: [], errors: [evil] }], passSet: { pass: { ipv4Share: 1 }, open: { term: evil }, unknown: { problem: evil } } }, mx: { hosts: [{ exchange: evil, problems: [evil] }] } } as unknown as SpoofCheckResult['details'],
    };
    const { app: hostile } = await makeApp({ check: async (domain) => ({ ...result, domain }) });
    try {
      const response = await hostile.inject({ url: '/check/example.com' });
      expect(response.statusCode).toBe(200);
      expectNoInjectedMarkup(response.body);
      expect(response.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
      expect(response.body).not.toContain('javascript:');
    } finally {
      await hostile.close();
    }
  });
});

describe('rate limit', () => {
  it('allows a set number of checks per network, then answers a 429 page with Retry-After; an IPv6 /64 is one network', async () => {
    const { app: limited } = await fixtureApp({ overrides: { rateLimits: { spoofCheck: { max: 2, windowMs: 60_000 } } } });
    try {
      const from = (remoteAddress: string) => limited.inject({ url: '/check/p-reject.example', remoteAddress });
      expect((await from('2001:db8:1:2::1')).statusCode).toBe(200);
      expect((await from('2001:db8:1:2::ffff')).statusCode).toBe(200);
      const refused = await from('2001:db8:1:2:abcd::9');
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(textContent(refused.body)).toMatch(/Too many checks from your network/);
      expect(textContent(refused.body)).toContain('You can check 2 domains per minute from one network');
      expect(refused.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      // Another /64 has its own count; the form's redirect counts nothing.
      expect((await from('2001:db8:1:3::1')).statusCode).toBe(200);
      expect((await limited.inject({ url: '/check?domain=p-reject.example', remoteAddress: '2001:db8:1:2::1' })).statusCode).toBe(303);
      const json = await limited.inject({ url: '/check/p-reject.example', remoteAddress: '2001:db8:1:2::1', headers: { accept: 'application/json' } });
      expect(json.statusCode).toBe(429);
      expect(json.json()).toMatchObject({ code: 'RATE_LIMITED' });
    } finally {
      await limited.close();
    }
  });
});

describe('no organisation data', () => {
  it('writes no record log and sets no x-log-id for page visits, checks and errors', async () => {
    const before = fixture.appended.length;
    for (const url of ['/', '/check/p-reject.example', '/check?domain=p-reject.example', '/check/%3Cx%3E', '/guides/protected', ASSETS.stylesheet.path]) {
      const response = await app.inject({ url });
      expect(response.headers['x-log-id'], url).toBeUndefined();
    }
    expect(fixture.appended.length).toBe(before);
  });
});

describe('guides', () => {
  it.each(GUIDE_TOPICS)('serves /guides/%s as an HTML page from its Markdown', async (topic) => {
    const response = await app.inject({ url: `/guides/${topic}?domain=p-none.example` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toMatch(/<h1>[^<]+<\/h1>/);
    expect(response.body).not.toMatch(/^#/m);
    expect(response.body).toContain('href="/check/p-none.example"');
  });

  it('opens the guide of a result\'s nextStep.href', async () => {
    const result = (await app.inject({ url: '/check/no-dmarc.example', headers: { accept: 'application/json' } })).json<SpoofCheckResult>();
    const response = await app.inject({ url: result.nextStep.href });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('ignores a hostile domain parameter and answers an unknown topic with a 404 page', async () => {
    const hostile = await app.inject({ url: `/guides/protected?domain=${encodeURIComponent(HOSTILE[1]!)}` });
    expect(hostile.statusCode).toBe(200);
    expectNoInjectedMarkup(hostile.body);
    const unknown = await app.inject({ url: `/guides/${encodeURIComponent('<b>nope')}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(unknown.body).not.toContain('<b>nope');
  });
});

describe('assets', () => {
  it.each(Object.values(ASSETS))('serves $path from this host, immutable', async (asset) => {
    const response = await app.inject({ url: asset.path });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(asset.contentType);
    expect(response.headers['cache-control']).toContain('immutable');
    expect(response.body).toBe(asset.body);
  });

  it('has light and dark colours and a visible focus style', () => {
    expect(ASSETS.stylesheet.body).toContain('@media (prefers-color-scheme: dark)');
    expect(ASSETS.stylesheet.body).toContain(':focus-visible');
    expect(ASSETS.stylesheet.body).not.toMatch(/@import|url\(\s*['"]?(?:https?:)?\/\//);
  });
});
