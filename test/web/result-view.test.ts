/**
 * Pieces of the result page that read numbers and codes out to people: the share of an address
 * space never rounds to "100%" unless it is the whole space, and the verdict badge carries the
 * API's verdict code beside its words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { formatShare, openerWords, VERDICT_LABELS } from '../../src/web/result-view.js';
import { fixtureApp, innerById, textContent } from './helpers.js';

describe('formatShare', () => {
  it.each([
    [0, 'none'],
    [1e-12, 'less than 0.01%'],
    [0.0039, '0.39%'],
    [0.25, '25%'],
    [0.5, '50%'],
    [0.996, '99.60%'],
    [0.9999, '99.99%'],
    [1 - 2 ** -24, 'more than 99.99%'],
    [1 - 2 ** -40, 'more than 99.99%'],
    [1, '100%'],
  ])('%d → %s', (share, words) => {
    expect(formatShare(share)).toBe(words);
  });
});

describe('openerWords', () => {
  it.each([
    ['+all', 'lets any server pass'],
    ['include:open-relay.example', 'lets any server pass'],
    ['ip4:0.0.0.0/1', 'lets 50% of all IPv4 addresses pass'],
    ['+ip4:0.0.0.0/0', 'lets 100% of all IPv4 addresses pass'],
    ['ip6:2000::/3', 'lets 13% of all IPv6 addresses pass'],
    ['ip4:10.0.0.0/8', 'lets 0.39% of all IPv4 addresses pass'],
  ])('%s → %s', (term, words) => {
    expect(openerWords(term)).toBe(words);
  });
});

describe('the result page', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    ({ app } = await fixtureApp());
  });
  afterAll(() => app.close());

  it('says "more than 99.99%", not "100%", when negative terms before +all leave addresses out', async () => {
    const page = (await app.inject({ url: '/check/spf-minus-plus-all.example' })).body;
    const passSet = textContent(innerById(page, 'spf-pass-set') ?? '');
    expect(passSet).toContain('IPv4 addresses more than 99.99%');
    expect(passSet).toContain('IPv6 addresses more than 99.99%');
    expect(passSet).not.toContain('100%');
    // +all with nothing before it is the whole space.
    const open = (await app.inject({ url: '/check/open-relay.example' })).body;
    expect(textContent(innerById(open, 'spf-pass-set') ?? '')).toContain('IPv4 addresses 100%');
  });

  it('tells a visitor in plain words how old stale provider data is, and never asks them to run a command', async () => {
    // The shipped snapshot is dated 2025-07-21: stale (over 90 days) ever since.
    const page = (await app.inject({ url: '/check/spf-cloud-ec2.example' })).body;
    const text = textContent(page);
    expect(text).toMatch(/The provider data is \d+ days old \(dated 2025-07-21\)/);
    expect(text).not.toMatch(/ranges update|spoof-checker ranges|run '/);
  });

  it('marks a range that opens SPF with its own share, not as "any server"', async () => {
    const page = (await app.inject({ url: '/check/spf-huge-ranges.example' })).body;
    const tree = textContent(innerById(page, 'spf-tree') ?? '');
    expect(tree).toContain('ip4:0.0.0.0/1 lets 50% of all IPv4 addresses pass');
    expect(tree).not.toContain('any server');
    expect(textContent(innerById(page, 'spf-pass-set') ?? '')).toContain('IPv4 addresses 75%');
    const plusAll = textContent(innerById((await app.inject({ url: '/check/spf-plus-all.example' })).body, 'spf-tree') ?? '');
    expect(plusAll).toContain('+all lets any server pass');
  });

  it('a subdomain shows the organisational domain\'s SPF record that opens it, and why it counts', async () => {
    const page = (await app.inject({ url: '/check/www.org-open-relaxed.example' })).body;
    const org = textContent(innerById(page, 'spf-organizational') ?? '');
    expect(org).toContain('SPF of the organisational domain, org-open-relaxed.example');
    expect(org).toContain('relaxed SPF alignment (aspf=r, the default), so an SPF pass for org-open-relaxed.example also counts for www.org-open-relaxed.example');
    expect(org).toContain('v=spf1 -ip4:192.0.2.0/24 +all');
    expect(org).toContain('IPv4 addresses more than 99.99%');
    expect(org).toMatch(/Opened by \+all ?: lets any server pass/);
    const strict = textContent(innerById((await app.inject({ url: '/check/www.org-open-strict.example' })).body, 'spf-organizational') ?? '');
    expect(strict).toContain('strict SPF alignment (aspf=s), so an SPF pass for org-open-strict.example does not count for www.org-open-strict.example');
    // The organisational domain itself has no such block.
    expect(innerById((await app.inject({ url: '/check/org-open-relaxed.example' })).body, 'spf-organizational')).toBeNull();
  });

  it.each([
    ['p-reject.example', 'protected'],
    ['p-quarantine.example', 'partially_protected'],
    ['p-none.example', 'spoofable'],
  ] as const)('%s: the badge carries the API verdict %s and its words', async (domain, verdict) => {
    const page = (await app.inject({ url: `/check/${domain}` })).body;
    const api = (await app.inject({ url: `/check/${domain}`, headers: { accept: 'application/json' } })).json<{ verdict: string }>();
    expect(api.verdict).toBe(verdict);
    expect(page).toContain(`<span class="badge" id="verdict" data-verdict="${verdict}">${VERDICT_LABELS[verdict].label}</span>`);
    expect(VERDICT_LABELS[verdict].label.toLowerCase()).toBe(verdict.replace('_', ' '));
  });
});
