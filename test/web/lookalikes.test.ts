/**
 * "Names that look like yours" on the checker page through `inject`: the placeholder after the
 * verdict, the fragment and the whole page (no JavaScript needed), JSON on request, escaping, the
 * page's caps and its stricter rate limit, and no section when the server runs no searches.
 */
import { describe, expect, it } from 'vitest';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { ANONYMOUS_LOOKALIKE_MAX_CANDIDATES, ANONYMOUS_LOOKALIKE_MAX_QUERIES } from '../../src/web/plugin.js';
import { lookalikesSection } from '../../src/web/lookalikes-view.js';
import type { LookalikeReport } from '../../packages/engine/src/lookalikes/types.js';
import { fixtureApp, fixtureResolver, textById } from './helpers.js';

async function lookalikeApp(overrides: Record<string, unknown> = {}) {
  const resolver = await fixtureResolver();
  const seen: { maxCandidates?: number; maxQueries?: number; deep?: boolean }[] = [];
  const { app } = await fixtureApp({
    overrides: {
      lookalikes: (domain, options) => {
        seen.push(options);
        return findLookalikes(domain, { resolver, ...options });
      },
      ...overrides,
    },
  });
  return { app, seen };
}

describe('Names that look like yours', () => {
  it('the result page shows a placeholder after the verdict, with a link that works without JavaScript', async () => {
    const { app } = await lookalikeApp();
    const body = (await app.inject({ url: '/check/acmebank.example' })).body;
    expect(body).toContain('data-lookalikes-src="/lookalikes/acmebank.example?fragment=1"');
    expect(body.indexOf('id="verdict"')).toBeLessThan(body.indexOf('id="lookalikes"'));
    expect(body).toContain('<a id="lookalikes-link" href="/lookalikes/acmebank.example">');
  });

  it('the fragment lists the graded lookalikes, worst first, with the parking records; the search is the page\'s capped one', async () => {
    const { app, seen } = await lookalikeApp();
    const response = await app.inject({ url: '/lookalikes/acmebank.example?fragment=1' });
    expect(response.statusCode).toBe(200);
    expect(response.body.startsWith('<section')).toBe(true);
    const grades = [...response.body.matchAll(/data-grade="([a-z]+)"/g)].map((m) => m[1]);
    expect(grades).toEqual(['critical', 'critical', 'high', 'high', 'high', 'high', 'medium', 'protected', 'protected']);
    expect(response.body).toContain('data-lookalike="xn--acmebnk-6fg.example"');
    expect(textById(response.body, 'lookalikes-summary')).toMatch(/^9 of the \d+ names tried that look like acmebank\.example resolve; 6 can send or receive mail/);
    expect(response.body).toContain('MX 0 .');
    expect(seen).toEqual([{ deep: false, maxCandidates: ANONYMOUS_LOOKALIKE_MAX_CANDIDATES, maxQueries: ANONYMOUS_LOOKALIKE_MAX_QUERIES }]);
  });

  it('the whole page without JavaScript, JSON on request, and a refusal for a bad name', async () => {
    const { app } = await lookalikeApp();
    const page = await app.inject({ url: '/lookalikes/acmebank.example' });
    expect(page.body).toContain('<title>');
    expect(page.body).toContain('id="lookalikes-list"');
    const json = await app.inject({ url: '/lookalikes/acmebank.example', headers: { accept: 'application/json' } });
    expect(json.json()).toMatchObject({ domain: 'acmebank.example', counts: { critical: 2 } });
    const redirect = await app.inject({ url: '/lookalikes/ACMEBANK.example' });
    expect(redirect.statusCode).toBe(303);
    expect(redirect.headers.location).toBe('/lookalikes/acmebank.example');
    expect((await app.inject({ url: '/lookalikes/not%20a%20domain' })).statusCode).toBe(400);
  });

  it('escapes what DNS says', () => {
    const hostile: LookalikeReport = {
      domain: 'x.example', unicode: 'x.example', deep: false, generated: 1, probed: 1, queries: 4, candidatesBeforeCap: 1, capped: false,
      counts: { critical: 0, high: 1, medium: 0, unknown: 0, protected: 0, none: 0 },
      lookalikes: [{ domain: 'y.example', unicode: 'y.example', fuzzers: ['omission'], distance: 1, grade: 'high', mx: { status: 'receives', hosts: ['<b>'] }, spf: { status: 'none', record: null }, dmarc: { status: 'absent', record: null }, sharedWithOriginal: false, note: '<script>alert(1)</script>' }],
      looksLike: null, wildcardSuffixes: [], nextSteps: [{ title: '<i>t</i>', body: 'b', records: ['"><img src=x onerror=alert(1)>'] }],
    };
    const markup = String(lookalikesSection(hostile).value);
    expect(markup).not.toContain('<script>');
    expect(markup).not.toContain('<img');
    expect(markup).toContain('&lt;script&gt;');
  });

  it('is rate limited more strictly than the check, per client network', async () => {
    const { app } = await lookalikeApp({ rateLimits: { lookalikes: { max: 1, windowMs: 60_000 } } });
    expect((await app.inject({ url: '/lookalikes/acmebank.example?fragment=1' })).statusCode).toBe(200);
    const limited = await app.inject({ url: '/lookalikes/acmebank.example?fragment=1' });
    expect(limited.statusCode).toBe(429);
    // The check itself is still allowed.
    expect((await app.inject({ url: '/check/acmebank.example' })).statusCode).toBe(200);
  });

  it('no section and no route when the server runs no lookalike searches', async () => {
    const { app } = await fixtureApp();
    expect((await app.inject({ url: '/check/acmebank.example' })).body).not.toContain('id="lookalikes"');
    expect((await app.inject({ url: '/lookalikes/acmebank.example' })).statusCode).toBe(404);
  });
});
