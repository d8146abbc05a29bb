import { describe, expect, it } from 'vitest';
import { selectorProblem } from '../../src/dkim/probe.js';
import { DKIM_CNAME_PROVIDERS, KNOWN_SELECTORS, microsoftDynamicSelectors, providerForCnameTarget, providerForSelector } from '../../src/dkim/selectors.js';

describe('KNOWN_SELECTORS', () => {
  it('holds the selectors the brief and providers.md require', () => {
    const names = new Set(KNOWN_SELECTORS.map((entry) => entry.selector));
    const required = [
      'google', 'selector1', 'selector2', 'k1', 'k2', 'k3', 's1', 's2', 'fm1', 'fm2', 'fm3', 'protonmail', 'protonmail2', 'protonmail3',
      'pdk1', 'pdk2', 'default', 'dkim', 'mail', 'mandrill', 'mailjet', 'resend', 'zmail', 'sig1', 'secureserver1', 'secureserver2',
      'aweber_key_a', 'aweber_key_b', 'aweber_key_c', 'zendesk1', 'zendesk2', 'smtp', 'krs', 'mx', 'ctct1', 'ctct2',
    ];
    expect(required.filter((selector) => !names.has(selector))).toEqual([]);
  });

  it('gives every entry a source and a confidence, and every name passes selector validation', () => {
    for (const entry of KNOWN_SELECTORS) {
      expect(entry.source.length, entry.selector).toBeGreaterThan(10);
      expect(['high', 'medium', 'low']).toContain(entry.confidence);
      expect(selectorProblem(entry.selector), entry.selector).toBeNull();
    }
  });

  it('lists one provider at most once per selector', () => {
    const pairs = KNOWN_SELECTORS.map((entry) => `${entry.selector}/${entry.provider}`);
    expect(new Set(pairs).size).toBe(pairs.length);
  });
});

describe('providerForSelector', () => {
  it.each([
    ['google', 'Google Workspace'],
    ['selector2', 'Microsoft 365'],
    ['k1', 'Mailchimp or AWeber'],
    ['fm3', 'Fastmail'],
    ['default', null],
    ['unknown-selector', null],
  ])('%s → %s', (selector, provider) => {
    expect(providerForSelector(selector)).toBe(provider);
  });
});

describe('providerForCnameTarget (label-boundary suffixes)', () => {
  it.each<[string, string | null, string]>([
    ['abcdef123.dkim.amazonses.com', 'Amazon SES', 'Easy DKIM target'],
    ['s1.domainkey.u123.wl001.sendgrid.net', 'Twilio SendGrid', 'SendGrid automated security'],
    ['fm1.example.com.dkim.fmhosted.com', 'Fastmail', 'Fastmail delegation'],
    ['protonmail.domainkey.dabc.domains.proton.ch', 'Proton Mail', 'Proton delegation'],
    ['selector1-example-com._domainkey.example.onmicrosoft.com', 'Microsoft 365', 'classic M365 form'],
    ['selector1-example-com._domainkey.example.r-v1.dkim.mail.microsoft', 'Microsoft 365', '2025 M365 form'],
    ['dkim.mcsv.net', 'Mailchimp', 'the target itself'],
    ['pdk1._domainkey.123.dkim1.mailgun.com', 'Mailgun', 'Mailgun automatic sender security'],
    ['evilsendgrid.net', null, 'not a label boundary'],
    ['sendgrid.net.attacker.example', null, 'the suffix must be at the end'],
    ['xdkim.amazonses.com', null, 'dkim.amazonses.com is a two-label suffix'],
    ['amazonses.com', null, 'the parent of the suffix is not the suffix'],
  ])('%s → %s (%s)', (target, provider) => {
    expect(providerForCnameTarget(target)).toBe(provider);
  });

  it('gives every row a source', () => {
    for (const row of DKIM_CNAME_PROVIDERS) expect(row.source.length, row.suffix).toBeGreaterThan(5);
  });
});

describe('microsoftDynamicSelectors', () => {
  it('replaces every dot of the domain with a dash', () => {
    expect(microsoftDynamicSelectors('my.company.co.uk')).toEqual(['selector1-my-company-co-uk', 'selector2-my-company-co-uk']);
  });
});

describe('selectorProblem', () => {
  it.each<[string, boolean, string]>([
    ['s1', true, 'plain label'],
    ['aweber_key_a', true, 'underscores are used in practice'],
    ['2024a.mail', true, 'a selector may have several labels (RFC 6376 §3.1)'],
    ['selector1-example-com', true, 'inner hyphens'],
    ['', false, 'empty'],
    ['-x', false, 'leading hyphen'],
    ['x-', false, 'trailing hyphen'],
    ['a..b', false, 'empty label'],
    ['a b', false, 'space'],
    ['a'.repeat(64), false, 'label over 63 octets'],
    ['ключ', false, 'not in A-label form'],
  ])('%s → usable %s (%s)', (selector, usable) => {
    expect(selectorProblem(selector) === null).toBe(usable);
  });
});
