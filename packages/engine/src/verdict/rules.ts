import type { Finding } from '../findings.js';
import { nextStepFor, PROTECTED_TITLE } from './advice.js';
import { openSpfFor } from './alignment.js';
import type { Decision, InboxOutcome, PolicyName, Verdict, VerdictFacts } from './types.js';

const STRENGTH: Record<PolicyName, number> = { none: 0, quarantine: 1, reject: 2 };

/**
 * The policy receivers apply to the exact name checked (the governing tag, one level lower under
 * `t=y`), as src/dmarc/policy.ts computed it; null unless a usable record applies.
 */
export function effectivePolicyOf(facts: VerdictFacts): PolicyName | null {
  return facts.dmarc.status === 'found' ? facts.dmarc.effectivePolicy : null;
}

/** `+all` or a bare `all`, written at the top of the record. */
function isPlainPlusAll(term: string | null): boolean {
  return term !== null && /^\+?all$/i.test(term);
}

/** The DMARC tag a policy was read from, in words: "'np=reject'" or "'p=reject' (no 'np' tag is published)". */
export function describeTag(tag: 'p' | 'sp' | 'np', source: 'p' | 'sp' | 'np' | null, policy: PolicyName): string {
  if (source === null || source === tag) return `'${tag}=${policy}'`;
  return `'${source}=${policy}' (there is no '${tag}' tag, so ${tag} follows ${source})`;
}

/** One row of the verdict table: the first rule whose `when` holds decides. */
export interface VerdictRule {
  id: string;
  /** The condition in words, as the README's table shows it. */
  condition: string;
  verdict: Verdict;
  inboxOutcome: InboxOutcome;
  when(facts: VerdictFacts, effective: PolicyName | null): boolean;
  reason(facts: VerdictFacts, effective: PolicyName | null): Finding;
}

/**
 * The verdict table, in order. Rows 1 to 8 keep the reference service's reason ids where the meaning is
 * the same; its defects (SPF ignored beyond `+all`, `pct=0` read as 100, `np` and `t=y` ignored,
 * reject-without-SPF called partial) are fixed here.
 */
export const VERDICT_RULES: readonly VerdictRule[] = [
  {
    id: 'spf-open-to-anyone',
    condition:
      "Anyone can pass SPF (at least 1/8 of IPv4 or an IPv6 /8 passes, or a probe outside every listed range does) at the name, or, under relaxed SPF alignment (aspf=r, the default), at its organizational domain",
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (f) => openSpfFor(f) !== null,
    reason: (f) => {
      const open = openSpfFor(f)!;
      const own = open.domain === f.domain;
      const plusAll = own && isPlainPlusAll(open.term);
      if (!own) {
        return {
          id: 'spf-open-to-anyone',
          severity: 'critical',
          title: `SPF of ${open.domain} Allows Any Server`,
          detail:
            `In the SPF record of ${open.domain}, ${open.evidence}. DMARC's relaxed SPF alignment (aspf=r, the default) accepts an envelope sender at ${open.domain} for mail from ${f.displayDomain}, ` +
            'so a forger gets an aligned SPF pass and DMARC passes, whatever the DMARC policy says.',
        };
      }
      return {
        id: plusAll ? 'spf-plus-all' : 'spf-open-to-anyone',
        severity: 'critical',
        title: plusAll ? "SPF Allows Anyone ('+all')" : 'SPF Allows Any Server',
        detail: `Your SPF record lets any server send as ${f.displayDomain}: ${open.evidence}. A forger gets an aligned SPF pass, so DMARC passes too, whatever your DMARC policy says.`,
      };
    },
  },
  {
    id: 'dmarc-missing',
    condition: 'No DMARC record for the name or its organizational domain',
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (f) => f.dmarc.status === 'none',
    reason: (f) => ({
      id: 'dmarc-missing',
      severity: 'critical',
      title: 'No DMARC Record',
      detail:
        `No DMARC record is published at _dmarc.${f.domain}` +
        (f.dmarc.organizationalDomain !== f.domain ? ` or _dmarc.${f.dmarc.organizationalDomain}` : '') +
        '. Receiving servers such as Gmail and Outlook have no instruction to block mail that fakes your domain.',
    }),
  },
  {
    id: 'dmarc-multiple',
    condition: 'Several DMARC records at one name',
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (f) => f.dmarc.status === 'multiple',
    reason: (f) => ({
      id: 'dmarc-multiple',
      severity: 'critical',
      title: 'Multiple DMARC Records',
      detail: `${f.dmarc.foundAt ?? `_dmarc.${f.domain}`} has more than one DMARC record. Receivers then apply no policy at all (RFC 7489 §6.6.3, RFC 9989 §4.10), as if none were published.`,
    }),
  },
  {
    id: 'dmarc-unusable',
    condition: 'A DMARC record whose p is missing or invalid, with no valid rua',
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (f) => f.dmarc.status === 'unusable',
    reason: (f) => ({
      id: 'dmarc-unusable',
      severity: 'critical',
      title: 'DMARC Record Has No Valid Policy',
      detail: `Your DMARC record at ${f.dmarc.foundAt} has no valid 'p=' tag and no valid 'rua', so receivers ignore it entirely (RFC 9989 §4.10.1).`,
    }),
  },
  {
    id: 'dmarc-policy-none',
    condition: "The policy for this name is none (p, sp or np = none, a missing p read as none, or quarantine with t=y)",
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (_f, effective) => effective === 'none',
    reason: (f) => {
      const tag = f.dmarc.appliedTag ?? 'p';
      if (f.dmarc.testing && f.dmarc.appliedPolicy !== 'none') {
        return {
          id: 'dmarc-testing-mode',
          severity: 'critical',
          title: "DMARC In Testing Mode ('t=y')",
          detail: `Your DMARC record asks for ${describeTag(tag, f.dmarc.policySources.applied, f.dmarc.appliedPolicy!)} but also sets 't=y', so receivers apply one level lower: none (RFC 9989 §4.7). Forged mail is delivered.`,
        };
      }
      return {
        id: tag === 'p' ? 'dmarc-p-none' : `dmarc-${tag}-none`,
        severity: 'critical',
        title: f.dmarc.asNone ? "DMARC Policy Missing (Read As 'p=none')" : `DMARC Policy Is '${f.dmarc.policySources.applied ?? tag}=none'`,
        detail:
          (f.dmarc.asNone
            ? "Your DMARC record has no valid 'p=' tag; because it has a valid 'rua', receivers treat it as 'p=none' (monitoring only)."
            : `The DMARC policy that applies to ${f.displayDomain} is ${describeTag(tag, f.dmarc.policySources.applied, 'none')} (monitoring only).`) +
          ' Receiving servers will still deliver unauthorized mail directly to inboxes.',
      };
    },
  },
  {
    id: 'spf-shared-infrastructure',
    condition:
      'The policy for this name is quarantine or reject, but SPF (at the name or, under relaxed alignment, its organizational domain) lets a block of shared infrastructure pass that an attacker can land in: 4,096 or more IPv4 addresses (or a /48 of IPv6) of one cloud service, or any address of a CI runner pool or a CDN edge',
    verdict: 'spoofable',
    inboxOutcome: 'delivered',
    when: (f, effective) => (effective === 'quarantine' || effective === 'reject') && f.spf.sharedInfrastructure?.critical != null,
    reason: (f) => f.spf.sharedInfrastructure!.critical!,
  },
  {
    id: 'dmarc-policy-quarantine',
    condition: 'The policy for this name is quarantine (or reject with t=y)',
    verdict: 'partially_protected',
    inboxOutcome: 'spam',
    when: (_f, effective) => effective === 'quarantine',
    reason: (f) => {
      const tag = f.dmarc.appliedTag ?? 'p';
      if (f.dmarc.testing) {
        return {
          id: 'dmarc-testing-mode',
          severity: 'warning',
          title: "DMARC In Testing Mode ('t=y')",
          detail: `Your DMARC record asks for ${describeTag(tag, f.dmarc.policySources.applied, 'reject')} but also sets 't=y', so receivers apply quarantine instead (RFC 9989 §4.7). Forged mail lands in spam folders rather than being refused.`,
        };
      }
      return {
        id: tag === 'p' ? 'dmarc-p-quarantine' : `dmarc-${tag}-quarantine`,
        severity: 'warning',
        title: `DMARC Policy Is '${f.dmarc.policySources.applied ?? tag}=quarantine'`,
        detail:
          `Receivers are told to put mail that fails DMARC in the spam folder` +
          // Say which tag applies to a subdomain, and that it was inherited when it was (RFC 9989 §4.7).
          (tag !== 'p' ? `: ${describeTag(tag, f.dmarc.policySources.applied, 'quarantine')} applies to ${f.displayDomain}.` : '.') +
          ` Forged mail as ${f.displayDomain} can still reach recipients there.` +
          (f.dmarc.pct !== null && f.dmarc.pct < 100 ? ` With 'pct=${f.dmarc.pct}', receivers that still honour pct quarantine only ${f.dmarc.pct}% of it.` : ''),
      };
    },
  },
  {
    id: 'dmarc-reject-partial',
    condition: 'The policy for this name is reject, with a legacy pct under 100 (pct=0 included)',
    verdict: 'partially_protected',
    inboxOutcome: 'spam',
    when: (f, effective) => effective === 'reject' && f.dmarc.pct !== null && f.dmarc.pct < 100,
    reason: (f) => ({
      id: 'dmarc-pct-low',
      severity: 'warning',
      title: `DMARC Applies To ${f.dmarc.pct}% Of Mail ('pct=${f.dmarc.pct}')`,
      detail: `Your policy is reject, but 'pct=${f.dmarc.pct}' tells receivers that still honour it (RFC 7489) to apply it to only ${f.dmarc.pct}% of failing mail. The remaining ${100 - f.dmarc.pct!}% is quarantined instead. RFC 9989 dropped pct; remove it.`,
    }),
  },
  {
    id: 'dmarc-reject',
    condition: 'The policy for this name is reject',
    verdict: 'protected',
    inboxOutcome: 'rejected',
    when: (_f, effective) => effective === 'reject',
    reason: (f) => ({
      id: 'dmarc-protected',
      severity: 'success',
      title: `DMARC Enforced ('${f.dmarc.policySources.applied ?? f.dmarc.appliedTag ?? 'p'}=reject')`,
      detail: `Receivers are told to reject mail that fails DMARC as ${f.displayDomain}` + (f.dmarc.appliedTag !== null && f.dmarc.appliedTag !== 'p' ? `: ${describeTag(f.dmarc.appliedTag, f.dmarc.policySources.applied, 'reject')} applies to it.` : '.'),
    }),
  },
];

/**
 * Analyzer findings that say again what the verdict's first reason says: dropped, so each fact is
 * stated once (and a "valid SPF" success never stands beside "anyone passes SPF").
 */
const SUPERSEDES: Record<string, readonly string[]> = {
  'spf-plus-all': ['spf-plus-all', 'spf-valid'],
  'spf-open-to-anyone': ['spf-plus-all', 'spf-valid'],
  'spf-shared-infrastructure': ['spf-valid'],
  'dmarc-pct-low': ['dmarc-pct-partial'],
  'dmarc-testing-mode': ['dmarc-testing'],
  'dmarc-unusable': ['dmarc-invalid-policy'],
};

const HEADLINE: Record<Verdict, (display: string) => string> = {
  spoofable: (d) => `Yes — anyone can send as you@${d}`,
  partially_protected: (d) => `Sometimes — fake mail can still get through as you@${d}`,
  protected: (d) => `No — receivers are told to reject fakes as you@${d}`,
};

/**
 * Turns facts into the verdict, reasons, next step and subdomain note. Pure: no I/O, no clock.
 */
export function decide(facts: VerdictFacts, options: { guideBaseUrl?: string } = {}): Decision {
  const effective = effectivePolicyOf(facts);
  const rule = VERDICT_RULES.find((r) => r.when(facts, effective)) ?? VERDICT_RULES[1]!;
  const main = rule.reason(facts, effective);
  const spfOpen = rule.id === 'spf-open-to-anyone' || rule.id === 'spf-shared-infrastructure';
  // When anyone passes SPF, the DMARC policy protects nothing, subdomains included.
  const subdomain = spfOpen ? { findings: [], note: null, weakest: null } : subdomainFindings(facts, effective);
  const extras: Finding[] = [];
  // A name that does not exist should not get an SPF record: publishing one would make it exist,
  // moving it from np to sp.
  if (effective === 'reject' && facts.spf.status === 'none' && facts.dmarc.nameExists !== false) {
    extras.push({
      id: 'spf-missing-with-reject',
      severity: 'warning',
      title: 'Reject Is Set But SPF Is Missing',
      detail: `Forged mail is rejected, but your own mail can pass DMARC only through DKIM. Publish an SPF record listing your senders so that mail without a DKIM signature is not rejected too.`,
    });
  }
  // The verdict's own reasons come first; an analyzer finding with one of their ids, or one they
  // supersede, says the same thing again and is dropped. Analyzer findings may share an id among
  // themselves (one `dkim-found` per key) and are all kept.
  const own = [main, ...subdomain.findings, ...extras];
  const dropped = new Set([...own.map((f) => f.id), ...(SUPERSEDES[main.id] ?? [])]);
  const reasons = [...own, ...facts.findings.filter((f) => !dropped.has(f.id))];
  const nextStep = nextStepFor(rule.id, facts, effective, subdomain.weakest, options.guideBaseUrl);
  return {
    verdict: rule.verdict,
    spoofable: rule.verdict !== 'protected',
    inboxOutcome: rule.inboxOutcome,
    rule: rule.id,
    headline: HEADLINE[rule.verdict](facts.displayDomain),
    summary: summaryFor(rule.id, main, facts, nextStep.title !== PROTECTED_TITLE),
    reasons,
    nextStep,
    subdomainNote: subdomain.note,
    effectivePolicy: effective,
  };
}

/**
 * One sentence: what happens to forged mail and why, in other words than the first reason (which
 * the result lists right below it, with the detail), and whether something is still to fix.
 */
function summaryFor(ruleId: string, main: Finding, facts: VerdictFacts, fixLeft: boolean): string {
  const d = facts.displayDomain;
  const { dmarc } = facts;
  const tag = dmarc.policySources.applied ?? dmarc.appliedTag ?? 'p';
  if (ruleId === 'dmarc-reject' && dmarc.appliedTag === 'np') {
    const source = dmarc.policySources.applied;
    const said = source === 'np' || source === null ? "your DMARC record's 'np=reject'" : `your DMARC record's '${source}=reject' (it has no 'np' tag, so names that do not exist follow ${source})`;
    return `${d} does not exist, and ${said} tells receivers to reject mail that claims to come from names that do not exist.`;
  }
  switch (ruleId) {
    case 'spf-open-to-anyone': {
      const open = openSpfFor(facts);
      const whose = open !== null && open.domain !== facts.domain ? `the SPF record of ${open.domain}` : 'its SPF record';
      return `Forged mail as ${d} reaches inboxes: ${whose} lets any server pass, and that pass is enough for DMARC.`;
    }
    case 'spf-shared-infrastructure': {
      // The policy says reject or quarantine, but SPF passes servers anyone can rent (BreakSPF), and
      // an aligned SPF pass is all DMARC asks for.
      const fixAt = facts.spf.sharedInfrastructure?.fix?.domain;
      const whose = fixAt !== undefined && fixAt !== facts.domain ? `the SPF record of ${fixAt}` : 'its SPF record';
      return `Forged mail as ${d} reaches inboxes despite '${tag}=${dmarc.effectivePolicy ?? 'reject'}': ${whose} lets servers anyone can rent pass, and that pass is enough for DMARC.`;
    }
    case 'dmarc-missing':
      return `Forged mail as ${d} reaches inboxes: ${dmarc.lookalike ? 'its DMARC record is not written the way receivers read it' : 'no DMARC policy tells receivers what to do with it'}.`;
    case 'dmarc-multiple':
      return `Forged mail as ${d} reaches inboxes: two DMARC records at one name cancel each other out.`;
    case 'dmarc-unusable':
      return `Forged mail as ${d} reaches inboxes: its DMARC record gives receivers no policy to apply.`;
    case 'dmarc-policy-none':
      return main.id === 'dmarc-testing-mode'
        ? `Forged mail as ${d} reaches inboxes: 't=y' lowers the DMARC policy to none.`
        : `Forged mail as ${d} reaches inboxes: the DMARC policy ('${tag}=none') only asks for reports.`;
    case 'dmarc-policy-quarantine':
      return main.id === 'dmarc-testing-mode'
        ? `Forged mail as ${d} goes to spam rather than being refused: 't=y' lowers reject to quarantine.`
        : `Forged mail as ${d} goes to spam rather than being refused ('${tag}=quarantine').`;
    case 'dmarc-reject-partial':
      return `Forged mail as ${d} is refused only in part: receivers that still read 'pct=${dmarc.pct}' send the rest to spam.`;
    case 'dmarc-reject':
      return `Receivers that check DMARC refuse forged mail as ${d} ('${tag}=reject')${fixLeft ? '; one fix is still worth making (the next step)' : ''}.`;
    default:
      // A rule without a sentence of its own must not borrow another's: say what the verdict says.
      return `${main.title}.`;
  }
}

interface SubdomainOutcome {
  findings: Finding[];
  note: string | null;
  /** The weaker tag and its value, when subdomains are weaker than the name checked. */
  weakest: { tag: 'sp' | 'np'; policy: PolicyName } | null;
}

/**
 * Existing subdomains fall under `sp`, names that do not exist under `np` (RFC 9989 §4.7). When either is
 * weaker than what protects the name checked, forgers use a subdomain instead: say so with an example.
 */
function subdomainFindings(facts: VerdictFacts, effective: PolicyName | null): SubdomainOutcome {
  const { dmarc } = facts;
  if (dmarc.status !== 'found' || effective === null || dmarc.appliedTag === 'np') return { findings: [], note: null, weakest: null };
  // As applied (after t=y), computed once in src/dmarc/policy.ts.
  const sp = dmarc.subdomainEffectivePolicy;
  const np = dmarc.nonExistentEffectivePolicy;
  const checkSp = dmarc.appliedTag === 'p'; // a subdomain checked under sp: its children fall under sp too
  const holes: { tag: 'sp' | 'np'; policy: PolicyName; applied: PolicyName; example: string }[] = [];
  if (checkSp && sp !== null && STRENGTH[sp] < STRENGTH[effective]) holes.push({ tag: 'sp', policy: dmarc.subdomainPolicy!, applied: sp, example: `ceo@mail.${facts.displayDomain}` });
  if (np !== null && STRENGTH[np] < STRENGTH[effective]) holes.push({ tag: 'np', policy: dmarc.nonExistentPolicy!, applied: np, example: `ceo@no-such-host.${facts.displayDomain}` });
  if (holes.length === 0) {
    const locked = effective === 'reject' && (!checkSp || sp === 'reject') && np === 'reject';
    return {
      findings: locked
        ? [{ id: 'subdomain-locked', severity: 'success', title: 'Subdomains Locked', detail: `Your DMARC record also tells receivers to reject forged mail from subdomains of ${facts.displayDomain}, existing or not.` }]
        : [],
      note: null,
      weakest: null,
    };
  }
  const [first] = holes;
  const parts = holes.map((h) =>
    h.tag === 'sp'
      ? `existing subdomains fall under ${describeTag('sp', dmarc.policySources.subdomain, h.policy)}, so mail from an address such as ${h.example} ${outcomeWords(h.applied)}`
      : `names that do not exist fall under ${describeTag('np', dmarc.policySources.nonExistent, h.policy)}, so mail from an address such as ${h.example} ${outcomeWords(h.applied)}`,
  );
  const note = `${facts.displayDomain} itself is ${effective === 'reject' ? 'protected' : 'partly protected'}, but ${parts.join('; and ')}.`;
  return {
    findings: [
      {
        id: 'subdomain-hole',
        severity: 'warning',
        // The tags as published: an inherited np that follows sp=none is the one 'sp=none'.
        title: `Subdomains Are Weaker ('${[...new Set(holes.map((h) => `${(h.tag === 'sp' ? dmarc.policySources.subdomain : dmarc.policySources.nonExistent) ?? h.tag}=${h.policy}`))].join("', '")}')`,
        detail: note,
      },
    ],
    note,
    weakest: first ? { tag: first.tag, policy: first.policy } : null,
  };
}

function outcomeWords(policy: PolicyName): string {
  return policy === 'none' ? 'is still delivered to inboxes' : policy === 'quarantine' ? 'lands in spam instead of being rejected' : 'is rejected';
}


