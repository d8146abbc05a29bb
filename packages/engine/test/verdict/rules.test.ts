import { describe, expect, it } from 'vitest';
import { decide, rewriteDmarc, VERDICT_RULES } from '../../src/verdict/index.js';
import type { DmarcFacts, OpenSpf, PolicyName, SpfFacts, VerdictFacts } from '../../src/verdict/index.js';

const lower = (policy: PolicyName | null, testing: boolean): PolicyName | null =>
  policy === null || !testing ? policy : policy === 'reject' ? 'quarantine' : 'none';

type PublishedDmarc = Omit<DmarcFacts, 'effectivePolicy' | 'subdomainEffectivePolicy' | 'nonExistentEffectivePolicy' | 'policySources' | 'spfAlignment'> & Partial<DmarcFacts>;

/**
 * The effective policies src/dmarc/policy.ts would compute from the published ones (one level lower
 * under t=y), unless the test sets them; and the tags as if each was published.
 */
function withEffective(dmarc: PublishedDmarc): DmarcFacts {
  return {
    effectivePolicy: dmarc.status === 'found' ? lower(dmarc.appliedPolicy, dmarc.testing) : null,
    subdomainEffectivePolicy: lower(dmarc.subdomainPolicy, dmarc.subdomainTesting),
    nonExistentEffectivePolicy: lower(dmarc.nonExistentPolicy, dmarc.subdomainTesting),
    policySources: { applied: dmarc.appliedTag, subdomain: 'sp', nonExistent: 'np' },
    spfAlignment: 'r',
    ...dmarc,
  };
}

/** An SPF record open to anyone, as check.ts reports it. */
function openSpf(term: string, rawRecord: string, domain = 'example.com'): OpenSpf {
  return { domain, rawRecord, term, evidence: `100% of all IPv4 addresses pass through '${term}'` };
}

/** A domain protected by `p=reject` with a clean SPF record; each test changes what it is about. */
function facts(dmarc: Partial<DmarcFacts> = {}, rest: Partial<Omit<VerdictFacts, 'dmarc' | 'spf'>> & { spf?: Partial<SpfFacts> } = {}): VerdictFacts {
  return {
    domain: 'example.com',
    displayDomain: 'example.com',
    dmarc: withEffective({
      status: 'found',
      rawRecord: 'v=DMARC1; p=reject; rua=mailto:d@example.com',
      foundAt: '_dmarc.example.com',
      organizationalDomain: 'example.com',
      requestedPolicy: 'reject',
      subdomainPolicy: 'reject',
      nonExistentPolicy: 'reject',
      appliedTag: 'p',
      appliedPolicy: 'reject',
      testing: false,
      pct: null,
      asNone: false,
      hasRua: true,
      nameExists: true,
      subdomainTesting: false,
      subdomainRecord: null,
      lookalike: null,
      ...dmarc,
    }),
    spf: { status: 'found', rawRecord: 'v=spf1 include:_spf.example.net -all', terminalAll: '-all', lookupCount: 1, openToAnyone: null, organizational: null, sharedInfrastructure: null, ...rest.spf },
    dkim: rest.dkim ?? { keys: [{ selector: 's1', keyType: 'rsa', keyLength: 2048, usable: true }], probed: 30 },
    mx: rest.mx ?? { status: 'found', provider: 'Google Workspace' },
    findings: rest.findings ?? [],
  };
}

/** SPF whose pass set holds a /16 of Amazon EC2 (what src/ranges/ reports as critical). */
const sharedSpf = {
  status: 'found',
  rawRecord: 'v=spf1 ip4:3.224.0.0/16 include:_spf.example.net -all',
  terminalAll: '-all',
  lookupCount: 1,
  openToAnyone: null,
  organizational: null,
  sharedInfrastructure: {
    critical: { id: 'spf-shared-infrastructure', severity: 'critical', title: 'SPF Lets Rented Servers Pass (Amazon EC2)', detail: '65,536 IPv4 addresses of Amazon EC2 pass.' },
    fix: { domain: 'example.com', rawRecord: 'v=spf1 ip4:3.224.0.0/16 include:_spf.example.net -all', terms: ['ip4:3.224.0.0/16'], included: [], instead: ["'include:amazonses.com' if you send through Amazon SES"] },
  },
} as const satisfies VerdictFacts['spf'];

const none = { requestedPolicy: 'none', subdomainPolicy: 'none', nonExistentPolicy: 'none', appliedPolicy: 'none', rawRecord: 'v=DMARC1; p=none; rua=mailto:d@example.com' } as const;
const quarantine = { requestedPolicy: 'quarantine', subdomainPolicy: 'quarantine', nonExistentPolicy: 'quarantine', appliedPolicy: 'quarantine', rawRecord: 'v=DMARC1; p=quarantine' } as const;

// One row per rule of the verdict table (and the edge cases the issue names), with the reason.
const table: [why: string, input: VerdictFacts, rule: string, verdict: string, inbox: string, spoofable: boolean, reasonId: string][] = [
  ['+all passes anyone even under p=reject', facts({}, { spf: { status: 'found', rawRecord: 'v=spf1 +all', terminalAll: '+all', lookupCount: 0, openToAnyone: openSpf('+all', 'v=spf1 +all') } }), 'spf-open-to-anyone', 'spoofable', 'delivered', true, 'spf-plus-all'],
  ['ip4:0.0.0.0/0 passes anyone', facts({}, { spf: { status: 'found', rawRecord: 'v=spf1 ip4:0.0.0.0/0 -all', terminalAll: '-all', lookupCount: 0, openToAnyone: openSpf('ip4:0.0.0.0/0', 'v=spf1 ip4:0.0.0.0/0 -all') } }), 'spf-open-to-anyone', 'spoofable', 'delivered', true, 'spf-open-to-anyone'],
  ['no DMARC record', facts({ status: 'none', rawRecord: null, foundAt: null, requestedPolicy: null, subdomainPolicy: null, nonExistentPolicy: null, appliedTag: null, appliedPolicy: null, hasRua: false }), 'dmarc-missing', 'spoofable', 'delivered', true, 'dmarc-missing'],
  ['several DMARC records', facts({ status: 'multiple', appliedTag: null, appliedPolicy: null }), 'dmarc-multiple', 'spoofable', 'delivered', true, 'dmarc-multiple'],
  ['p invalid and no rua', facts({ status: 'unusable', rawRecord: 'v=DMARC1; p=bogus', appliedTag: null, appliedPolicy: null, hasRua: false }), 'dmarc-unusable', 'spoofable', 'delivered', true, 'dmarc-unusable'],
  ['p=none', facts(none), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-p-none'],
  ['p missing but rua valid: read as none', facts({ ...none, asNone: true, rawRecord: 'v=DMARC1; rua=mailto:d@example.com' }), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-p-none'],
  ['a subdomain under sp=none', facts({ appliedTag: 'sp', appliedPolicy: 'none', subdomainPolicy: 'none' }, {}), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-sp-none'],
  ['a name that does not exist under np=none', facts({ appliedTag: 'np', appliedPolicy: 'none', nonExistentPolicy: 'none', nameExists: false }), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-np-none'],
  ['quarantine with t=y is one level lower: none', facts({ ...quarantine, testing: true }), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-testing-mode'],
  ['p=reject, but SPF lets an EC2 /16 pass', facts({}, { spf: { ...sharedSpf } }), 'spf-shared-infrastructure', 'spoofable', 'delivered', true, 'spf-shared-infrastructure'],
  ['p=quarantine, but SPF lets an EC2 /16 pass: delivered, not quarantined', facts(quarantine, { spf: { ...sharedSpf } }), 'spf-shared-infrastructure', 'spoofable', 'delivered', true, 'spf-shared-infrastructure'],
  ['p=none with an EC2 /16: the policy decides, the finding stays among the reasons', facts(none, { spf: { ...sharedSpf } }), 'dmarc-policy-none', 'spoofable', 'delivered', true, 'dmarc-p-none'],
  ['p=reject with a single fixed cloud address (no critical finding) is protected', facts({}, { spf: { ...sharedSpf, sharedInfrastructure: { critical: null, fix: null } } }), 'dmarc-reject', 'protected', 'rejected', false, 'dmarc-protected'],
  ['p=quarantine', facts(quarantine), 'dmarc-policy-quarantine', 'partially_protected', 'spam', true, 'dmarc-p-quarantine'],
  ['reject with t=y is quarantine', facts({ testing: true }), 'dmarc-policy-quarantine', 'partially_protected', 'spam', true, 'dmarc-testing-mode'],
  ['reject with pct=50', facts({ pct: 50 }), 'dmarc-reject-partial', 'partially_protected', 'spam', true, 'dmarc-pct-low'],
  ['reject with pct=0 (0, not 100)', facts({ pct: 0 }), 'dmarc-reject-partial', 'partially_protected', 'spam', true, 'dmarc-pct-low'],
  ['reject with pct=100', facts({ pct: 100 }), 'dmarc-reject', 'protected', 'rejected', false, 'dmarc-protected'],
  ['p=reject', facts(), 'dmarc-reject', 'protected', 'rejected', false, 'dmarc-protected'],
  ['reject without SPF is still protected', facts({}, { spf: { status: 'none', rawRecord: null, terminalAll: null, lookupCount: 0, openToAnyone: null } }), 'dmarc-reject', 'protected', 'rejected', false, 'dmarc-protected'],
  ['a name that does not exist under np=reject while p=none', facts({ ...none, nonExistentPolicy: 'reject', appliedTag: 'np', appliedPolicy: 'reject', nameExists: false }), 'dmarc-reject', 'protected', 'rejected', false, 'dmarc-protected'],
];

describe('verdict table', () => {
  it.each(table)('%s', (_why, input, rule, verdict, inbox, spoofable, reasonId) => {
    const decision = decide(input);
    expect(decision.rule).toBe(rule);
    expect(decision.verdict).toBe(verdict);
    expect(decision.inboxOutcome).toBe(inbox);
    expect(decision.spoofable).toBe(spoofable);
    expect(decision.reasons[0]?.id).toBe(reasonId);
  });

  it('names the term to replace and what to use instead in the next step', () => {
    const step = decide(facts({}, { spf: { ...sharedSpf } })).nextStep;
    expect(step.title).toBe("Replace 'ip4:3.224.0.0/16' in your SPF record");
    expect(step.body).toContain('from\n  v=spf1 ip4:3.224.0.0/16 include:_spf.example.net -all\nto\n  v=spf1 include:_spf.example.net -all\n');
    expect(step.body).toContain("'include:amazonses.com' if you send through Amazon SES");
    expect(step.href).toBe('/guides/spf-shared?domain=example.com');
    // The analyzer's "valid SPF" success never stands beside the critical finding.
    expect(decide(facts({}, { spf: { ...sharedSpf }, findings: [{ id: 'spf-valid', severity: 'success', title: 'SPF Valid', detail: '' }] })).reasons.map((r) => r.id)).toEqual(['spf-shared-infrastructure']);
  });

  it('has a test row for every rule', () => {
    const covered = new Set(table.map((row) => row[2]));
    expect(VERDICT_RULES.map((r) => r.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  it('writes headlines in the reference style, naming the mailbox', () => {
    expect(decide(facts(none)).headline).toBe('Yes — anyone can send as you@example.com');
    expect(decide(facts(quarantine)).headline).toBe('Sometimes — fake mail can still get through as you@example.com');
    expect(decide(facts()).headline).toBe('No — receivers are told to reject fakes as you@example.com');
  });
});

describe('subdomains', () => {
  it('flags sp weaker than p, with an example address', () => {
    const decision = decide(facts({ subdomainPolicy: 'none', rawRecord: 'v=DMARC1; p=reject; sp=none; rua=mailto:d@example.com' }));
    expect(decision.verdict).toBe('protected');
    expect(decision.reasons.map((r) => r.id)).toContain('subdomain-hole');
    expect(decision.subdomainNote).toMatch(/'sp=none'.*ceo@mail\.example\.com.*delivered to inboxes/);
    expect(decision.nextStep.title).toBe("Close the subdomain gap ('sp=reject')");
    expect(decision.nextStep.body).toContain('v=DMARC1; p=reject; sp=reject; rua=mailto:d@example.com');
  });

  it('flags np weaker than p (names that do not exist)', () => {
    const decision = decide(facts({ nonExistentPolicy: 'quarantine' }));
    expect(decision.subdomainNote).toMatch(/'np=quarantine'.*ceo@no-such-host\.example\.com.*spam/);
  });

  it('flags quarantine subdomains under a reject policy (the reference only saw sp=none)', () => {
    expect(decide(facts({ subdomainPolicy: 'quarantine', nonExistentPolicy: 'quarantine' })).subdomainNote).toMatch(/sp=quarantine.*np=quarantine/);
  });

  it('says subdomains are locked when sp and np are reject', () => {
    const decision = decide(facts());
    expect(decision.subdomainNote).toBeNull();
    expect(decision.reasons.map((r) => r.id)).toContain('subdomain-locked');
  });

  it('has no note for a name checked under np (nothing lies below a name that does not exist)', () => {
    expect(decide(facts({ appliedTag: 'np', appliedPolicy: 'reject', nameExists: false, subdomainPolicy: 'none' })).subdomainNote).toBeNull();
  });
});

describe('next step', () => {
  it('builds the stronger DMARC record from the one published', () => {
    const step = decide(facts({ ...none, rawRecord: 'v=DMARC1; p=none; fo=1; rua=mailto:agg@example.com' })).nextStep;
    expect(step.title).toBe("Move to 'p=quarantine'");
    expect(step.body).toContain('v=DMARC1; p=quarantine; fo=1; rua=mailto:agg@example.com');
    expect(step.href).toBe('/guides/dmarc-enforce?domain=example.com');
  });

  it('adds a rua when the record has none', () => {
    const step = decide(facts({ ...quarantine, hasRua: false })).nextStep;
    expect(step.body).toContain('v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.com');
  });

  it('proposes a reject record and SPF -all for a parked domain', () => {
    const parked = facts(
      { status: 'none', rawRecord: null, foundAt: null, requestedPolicy: null, subdomainPolicy: null, nonExistentPolicy: null, appliedTag: null, appliedPolicy: null, hasRua: false },
      { spf: { status: 'none', rawRecord: null, terminalAll: null, lookupCount: 0, openToAnyone: null }, dkim: { keys: [], probed: 40 }, mx: { status: 'none', provider: null } },
    );
    const step = decide(parked).nextStep;
    expect(step.body).toContain('v=DMARC1; p=reject; rua=mailto:dmarc-reports@example.com');
    expect(step.body).toContain('v=spf1 -all');
    expect(step.body).toMatch(/null MX .*\n  MX 0 \.$/);
  });

  it('replaces +all and removes an open range', () => {
    const plusAll = facts({}, { spf: { status: 'found', rawRecord: 'v=spf1 mx +all', terminalAll: '+all', lookupCount: 1, openToAnyone: openSpf('+all', 'v=spf1 mx +all') } });
    expect(decide(plusAll).nextStep.body).toContain('v=spf1 mx ~all');
    const open = facts({}, { spf: { status: 'found', rawRecord: 'v=spf1 ip4:0.0.0.0/0 -all', terminalAll: '-all', lookupCount: 0, openToAnyone: openSpf('ip4:0.0.0.0/0', 'v=spf1 ip4:0.0.0.0/0 -all') } });
    expect(decide(open).nextStep.body).toContain('\n  v=spf1 -all\n');
  });

  it('removes pct and t=y', () => {
    expect(decide(facts({ pct: 0, rawRecord: 'v=DMARC1; p=reject; pct=0' })).nextStep.body).toContain('\n  v=DMARC1; p=reject\n');
    expect(decide(facts({ testing: true, rawRecord: 'v=DMARC1; p=reject; t=y' })).nextStep.body).toContain('\n  v=DMARC1; p=reject\n');
  });

  // A good verdict still gets the most important fix: what loses the owner's own mail, then the
  // subdomain gap, then another warning; "protected" only when nothing is left.
  const finding = (id: string, severity: 'warning' | 'critical' | 'info' = 'warning') => ({ id, severity, title: id, detail: `detail of ${id}` });
  it.each([
    ['spf-permerror', 'Bring your SPF record down to 10 DNS lookups', 'spf-repair'],
    ['spf-include-missing', 'Remove the include that has no SPF record', 'spf-repair'],
    ['spf-multiple-records', 'Merge your SPF records into one', 'spf-repair'],
    ['spf-syntax-error', 'Fix the syntax error in your SPF record', 'spf-repair'],
    ['spf-include-loop', 'Break the include loop in your SPF record', 'spf-repair'],
    ['spf-void-lookups', 'Remove SPF terms for names that no longer exist', 'spf-repair'],
    ['dkim-weak-key', 'Move your DKIM key to 2048 bits', 'protected'],
  ])('protected with %s: the next step is "%s"', (id, title, guide) => {
    const decision = decide(facts({}, { findings: [finding(id)] }));
    expect(decision.verdict).toBe('protected');
    expect(decision.nextStep.title).toBe(title);
    expect(decision.nextStep.href).toContain(`/${guide}?`);
    expect(decision.summary).toContain('one fix is still worth making');
  });

  it('puts an SPF repair before the subdomain gap, and says what reject does to the owner\'s mail', () => {
    const decision = decide(facts({ subdomainPolicy: 'none' }, { findings: [finding('spf-permerror')], spf: { lookupCount: 12 } }));
    expect(decision.nextStep.title).toBe('Bring your SPF record down to 10 DNS lookups');
    expect(decision.nextStep.body).toContain('takes 12 DNS lookups');
    expect(decision.nextStep.body).toContain("Under your DMARC policy ('reject'), your own mail that fails SPF is rejected");
  });

  it('asks for an SPF record under reject when the name exists and has none, not when it does not exist', () => {
    const missing = { status: 'none' as const, rawRecord: null, terminalAll: null, lookupCount: 0 };
    expect(decide(facts({}, { spf: missing })).nextStep.title).toBe('Publish an SPF record');
    expect(decide(facts({ nameExists: false }, { spf: missing })).nextStep.title).not.toBe('Publish an SPF record');
  });

  it('stays "protected" for an info finding, and the summary then says nothing is left', () => {
    const decision = decide(facts({}, { findings: [finding('dkim-not-found', 'info')] }));
    expect(decision.nextStep.title).toBe('Your domain is protected');
    expect(decision.summary).toBe("Receivers that check DMARC refuse forged mail as example.com ('p=reject').");
  });

  it('uses the configured base URL', () => {
    expect(decide(facts(), { guideBaseUrl: 'https://help.example/guides/' }).nextStep.href).toBe('https://help.example/guides/protected?domain=example.com');
  });
});

describe('rewriteDmarc', () => {
  it.each([
    ['v=DMARC1; p=none', { p: 'reject' }, 'v=DMARC1; p=reject', 'changes p'],
    ['v=DMARC1;p=none;pct=20;rua=mailto:a@b.c', { pct: null }, 'v=DMARC1; p=none; rua=mailto:a@b.c', 'removes a tag'],
    ['v=DMARC1; rua=mailto:a@b.c', { p: 'none' }, 'v=DMARC1; p=none; rua=mailto:a@b.c', 'puts a new p right after v'],
    ['V=DMARC1; P=quarantine; SP=none', { sp: 'reject' }, 'v=DMARC1; p=quarantine; sp=reject', 'tag names are case-insensitive'],
  ] as [string, Record<string, string | null>, string, string][])('%s + %j → %s (%s)', (raw, changes, expected) => {
    expect(rewriteDmarc(raw, changes)).toBe(expected);
  });
});

describe('next step for names that do not exist', () => {
  it('goes straight to np=reject (nothing legitimate sends from a name that does not exist)', () => {
    const step = decide(facts({ ...none, appliedTag: 'np', nameExists: false, rawRecord: 'v=DMARC1; p=none; rua=mailto:d@example.com' })).nextStep;
    expect(step.title).toBe("Upgrade to strict enforcement ('np=reject')");
    expect(step.body).toContain('v=DMARC1; p=none; np=reject; rua=mailto:d@example.com');
  });
});

describe('when anyone can pass SPF', () => {
  const open = facts({}, {
    spf: { status: 'found', rawRecord: 'v=spf1 ip4:0.0.0.0/0 -all', terminalAll: '-all', lookupCount: 0, openToAnyone: openSpf('ip4:0.0.0.0/0', 'v=spf1 ip4:0.0.0.0/0 -all') },
    findings: [
      { id: 'spf-plus-all', severity: 'critical', title: 'SPF Allows Any Server', detail: 'from the analyzer' },
      { id: 'spf-valid', severity: 'success', title: "SPF Configured ('-all')", detail: 'from the analyzer' },
      { id: 'dkim-not-found', severity: 'info', title: 'No DKIM', detail: 'from the prober' },
    ],
  });

  it('says it once, and claims nothing about subdomains or a valid SPF record', () => {
    expect(decide(open).reasons.map((r) => r.id)).toEqual(['spf-open-to-anyone', 'dkim-not-found']);
    expect(decide(open).subdomainNote).toBeNull();
  });
});

describe('each fact is stated once', () => {
  it.each([
    ['dmarc-pct-low', facts({ pct: 20 }, { findings: [{ id: 'dmarc-pct-partial', severity: 'warning', title: 't', detail: 'd' }] }), 'dmarc-pct-partial'],
    ['dmarc-testing-mode', facts({ testing: true }, { findings: [{ id: 'dmarc-testing', severity: 'warning', title: 't', detail: 'd' }] }), 'dmarc-testing'],
    ['dmarc-unusable', facts({ status: 'unusable', appliedTag: null, appliedPolicy: null }, { findings: [{ id: 'dmarc-invalid-policy', severity: 'critical', title: 't', detail: 'd' }] }), 'dmarc-invalid-policy'],
  ] as [string, VerdictFacts, string][])('%s replaces the analyzer finding %s', (mainId, input, dropped) => {
    const ids = decide(input).reasons.map((r) => r.id);
    expect(ids[0]).toBe(mainId);
    expect(ids).not.toContain(dropped);
  });
});

describe('guides', () => {
  it('has a page in docs/guides for every topic a next step can link to', async () => {
    const { existsSync } = await import('node:fs');
    const { GUIDE_TOPICS } = await import('../../src/verdict/index.js');
    const missing = GUIDE_TOPICS.filter((topic) => !existsSync(new URL(`../../../../docs/guides/${topic}.md`, import.meta.url)));
    expect(missing).toEqual([]);
  });
});

describe('relaxed SPF alignment: an open SPF at the organizational domain', () => {
  const sub = (spfAlignment: 'r' | 's', own: OpenSpf | null = null): VerdictFacts => ({
    ...facts({ appliedTag: 'sp', spfAlignment, policySources: { applied: 'p', subdomain: 'p', nonExistent: 'p' } }, {
      spf: { openToAnyone: own, organizational: { domain: 'example.com', openToAnyone: openSpf('+all', 'v=spf1 -ip4:192.0.2.0/24 +all') } },
    }),
    domain: 'www.example.com',
    displayDomain: 'www.example.com',
  });

  it('makes a subdomain under p=reject spoofable with aspf=r, and says whose SPF lets mail through', () => {
    const decision = decide(sub('r'));
    expect(decision).toMatchObject({ verdict: 'spoofable', rule: 'spf-open-to-anyone' });
    expect(decision.reasons[0]).toMatchObject({ id: 'spf-open-to-anyone', title: 'SPF of example.com Allows Any Server' });
    expect(decision.reasons[0]!.detail).toMatch(/SPF record of example\.com.*relaxed SPF alignment \(aspf=r, the default\).*www\.example\.com/);
    expect(decision.nextStep.body).toContain('Change the TXT record at example.com from\n  v=spf1 -ip4:192.0.2.0/24 +all\nto\n  v=spf1 -ip4:192.0.2.0/24 ~all');
    expect(decision.nextStep.body).toContain("'aspf=s'");
  });

  it('leaves it protected with aspf=s (the envelope must be the name itself)', () => {
    expect(decide(sub('s'))).toMatchObject({ verdict: 'protected', rule: 'dmarc-reject' });
  });

  it('an open SPF at the name itself counts whatever aspf says', () => {
    const decision = decide(sub('s', openSpf('ip4:0.0.0.0/1', 'v=spf1 ip4:0.0.0.0/1 ip4:128.0.0.0/1 -all', 'www.example.com')));
    expect(decision).toMatchObject({ verdict: 'spoofable', rule: 'spf-open-to-anyone' });
    expect(decision.reasons[0]).toMatchObject({ id: 'spf-open-to-anyone', title: 'SPF Allows Any Server' });
  });
});

describe('explanations say what is published', () => {
  it("a name that does not exist under a record with only p=reject: np follows p, and the summary says so", () => {
    const decision = decide(facts({ appliedTag: 'np', nameExists: false, policySources: { applied: 'p', subdomain: 'p', nonExistent: 'p' } }));
    expect(decision.rule).toBe('dmarc-reject');
    expect(decision.summary).toContain("your DMARC record's 'p=reject' (it has no 'np' tag, so names that do not exist follow p)");
    expect(decision.summary).not.toContain("'np=reject'");
  });

  it("a published np=reject is quoted as such", () => {
    const decision = decide(facts({ appliedTag: 'np', nameExists: false, policySources: { applied: 'np', subdomain: 'p', nonExistent: 'np' } }));
    expect(decision.summary).toContain("your DMARC record's 'np=reject' tells receivers");
  });

  it('a subdomain hole from an np that follows sp=none names sp, once', () => {
    const decision = decide(facts({ subdomainPolicy: 'none', nonExistentPolicy: 'none', policySources: { applied: 'p', subdomain: 'sp', nonExistent: 'sp' } }));
    const hole = decision.reasons.find((reason) => reason.id === 'subdomain-hole')!;
    expect(hole.title).toBe("Subdomains Are Weaker ('sp=none')");
    expect(hole.detail).toContain("names that do not exist fall under 'sp=none' (there is no 'np' tag, so np follows sp)");
  });

  it('a subdomain under an inherited sp=none says the policy is p=none', () => {
    const decision = decide(facts({ ...none, appliedTag: 'sp', policySources: { applied: 'p', subdomain: 'p', nonExistent: 'p' } }));
    expect(decision.reasons[0]).toMatchObject({ id: 'dmarc-sp-none', title: "DMARC Policy Is 'p=none'" });
    expect(decision.reasons[0]!.detail).toContain("'p=none' (there is no 'sp' tag, so sp follows p)");
  });

  it.each([
    ['np', false, "'p=quarantine' (there is no 'np' tag, so np follows p) applies to"],
    ['sp', true, "'p=quarantine' (there is no 'sp' tag, so sp follows p) applies to"],
  ] as const)('a name under an inherited %s=quarantine says the policy is p=quarantine, and that it was inherited', (tag, exists, text) => {
    const decision = decide(facts({ ...quarantine, appliedTag: tag, nameExists: exists, policySources: { applied: 'p', subdomain: 'p', nonExistent: 'p' } }));
    expect(decision.rule).toBe('dmarc-policy-quarantine');
    expect(decision.reasons[0]).toMatchObject({ id: `dmarc-${tag}-quarantine`, title: "DMARC Policy Is 'p=quarantine'" });
    expect(decision.reasons[0]!.detail).toContain(text);
  });
});
