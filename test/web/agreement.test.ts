/**
 * A page and an API answer for the same domain agree: the page renders the same injected check, so
 * verdict, headline, summary, every reason, the SPF and DMARC records and the next step match the
 * API's JSON, over fixture domains that reach every verdict and most rules.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { VERDICT_LABELS } from '../../src/web/result-view.js';
import { API_KEY, codeBlocks, fixtureApp, innerById, textById, textContent } from './helpers.js';

const DOMAINS = [
  'p-reject.example',
  'p-none.example',
  'p-quarantine.example',
  'no-dmarc.example',
  'spf-include-open.example',
  'spf-plus-all.example',
  'reject-sp-none.example',
  'reject-pct-50.example',
  'quarantine-testing.example',
  'dmarc-multiple.example',
  'parked-bare.example',
  'mx-none.example',
  'dkim-servfail.example',
];

let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await fixtureApp());
});
afterAll(async () => {
  await app?.close();
});

describe.each(DOMAINS)('%s: the page says what the API says', (domain) => {
  it('agrees on verdict, headline, summary, reasons, records and next step', async () => {
    const apiResponse = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { authorization: `Bearer ${API_KEY}` }, payload: { domain } });
    expect(apiResponse.statusCode, apiResponse.body).toBe(200);
    const api = apiResponse.json<SpoofCheckResult>();
    const pageResponse = await app.inject({ url: `/check/${domain}` });
    expect(pageResponse.statusCode).toBe(200);
    const page = pageResponse.body;

    expect(textById(page, 'verdict')).toBe(VERDICT_LABELS[api.verdict].label);
    expect(textById(page, 'headline')).toBe(api.headline);
    expect(textById(page, 'summary')).toBe(api.summary);
    // The subdomain note is said once: as the subdomain reason's detail when there is one, else on its own.
    const noteInReasons = api.subdomainNote !== null && api.reasons.some((r) => r.detail === api.subdomainNote);
    expect(textById(page, 'subdomain-note')).toBe(noteInReasons ? null : api.subdomainNote);
    if (api.subdomainNote !== null) expect(textContent(page).split(api.subdomainNote).length - 1).toBe(1);
    // The summary does not repeat the first reason.
    expect(api.summary).not.toBe(api.reasons[0]?.detail);

    const reasons = [...(innerById(page, 'reasons-title') !== null ? page.matchAll(/<li class="tone-[a-z]+" data-reason="([^"]*)">\s*<span class="badge">([^<]*)<\/span>\s*<h3>([\s\S]*?)<\/h3>\s*<p>([\s\S]*?)<\/p>/g) : [])];
    expect(reasons.map((m) => textContent(m[3]!))).toEqual(api.reasons.map((r) => r.title));
    expect(reasons.map((m) => textContent(m[4]!))).toEqual(api.reasons.map((r) => r.detail));
    expect(reasons.map((m) => m[1])).toEqual(api.reasons.map((r) => r.id));

    const blocks = codeBlocks(page);
    if (api.spf.rawRecord) expect(blocks).toContain(api.spf.rawRecord);
    if (api.dmarc.rawRecord) expect(blocks).toContain(api.dmarc.rawRecord);

    expect(textById(page, 'next-title')).toBe(api.nextStep.title);
    const next = innerById(page, 'next-title') !== null ? textContent(page.slice(page.indexOf('id="next-title"'), page.indexOf('id="guide-link"'))) : '';
    for (const line of api.nextStep.body.split('\n').filter((l) => l.trim() !== '')) {
      if (/^\s{2}/.test(line)) expect(blocks, line).toContain(line.trim());
      expect(next, line).toContain(line.trim());
    }
    expect(page).toContain(`href="${api.nextStep.href.replace(/&/g, '&amp;')}" id="guide-link"`);
  });
});

describe('the domains above', () => {
  it('reach every verdict', async () => {
    const verdicts = new Set<string>();
    for (const domain of DOMAINS) {
      const response = await app.inject({ url: `/check/${domain}`, headers: { accept: 'application/json' } });
      verdicts.add(response.json<SpoofCheckResult>().verdict);
    }
    expect([...verdicts].sort()).toEqual(Object.keys(VERDICT_LABELS).sort());
  });
});
