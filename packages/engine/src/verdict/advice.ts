import type { Finding } from '../findings.js';
import { MAX_DNS_TERMS, MAX_VOID_LOOKUPS } from '../spf/evaluate.js';
import { openSpfFor } from './alignment.js';
import type { PolicyName, VerdictFacts } from './types.js';

/** Where `nextStep.href` points when no base URL is configured: the service serves these guides. */
export const DEFAULT_GUIDE_BASE_URL = '/guides';

/** The guide pages `href` can point at (docs/guides/<topic>.md, served at <base>/<topic>). */
export const GUIDE_TOPICS = ['spf-open', 'spf-repair', 'spf-shared', 'dmarc-publish', 'dmarc-multiple', 'dmarc-enforce', 'dmarc-pct', 'dmarc-testing', 'subdomains', 'protected'] as const;
export type GuideTopic = (typeof GUIDE_TOPICS)[number];

/** The last base URL `guideBase` was given, and it without trailing slashes. */
let lastBaseUrl = DEFAULT_GUIDE_BASE_URL;
let lastGuideBase = DEFAULT_GUIDE_BASE_URL;

/** `baseUrl` without trailing slashes; a service passes the same one to every check, so it is trimmed once. */
function guideBase(baseUrl: string): string {
  if (baseUrl !== lastBaseUrl) {
    lastBaseUrl = baseUrl;
    lastGuideBase = baseUrl.replace(/\/+$/, '');
  }
  return lastGuideBase;
}

/** The next step's title when nothing is left to fix. */
export const PROTECTED_TITLE = 'Your domain is protected';

export interface NextStep {
  title: string;
  body: string;
  href: string;
}

/**
 * The one change that moves the domain up a rung, as an exact record built from what is published
 * now (tags the owner set are kept; only what must change changes).
 */
export function nextStepFor(
  ruleId: string,
  facts: VerdictFacts,
  effective: PolicyName | null,
  weakest: { tag: 'sp' | 'np'; policy: PolicyName } | null,
  baseUrl: string = DEFAULT_GUIDE_BASE_URL,
): NextStep {
  const base = guideBase(baseUrl);
  const domainQuery = `?domain=${encodeURIComponent(facts.domain)}`;
  const href = (topic: GuideTopic) => `${base}/${topic}${domainQuery}`;
  const { dmarc, spf } = facts;
  const dmarcName = dmarc.foundAt ?? `_dmarc.${dmarc.organizationalDomain}`;
  const reportAddress = `mailto:dmarc-reports@${dmarc.organizationalDomain}`;

  switch (ruleId) {
    case 'spf-open-to-anyone': {
      const open = openSpfFor(facts);
      const current = open?.rawRecord ?? spf.rawRecord ?? '';
      // The term as written in the open record (the first step of a path such as 'include:x → +all').
      const term = open?.term?.split(' → ')[0] ?? null;
      const matched = term !== null && !/^[+]?all$/i.test(term) ? term.toLowerCase() : null;
      const broad = new Set(broadRanges(current).map((t) => t.toLowerCase()));
      // Every term that opens the record, once each, in the record's order.
      const openTerms = [...new Set(current.trim().split(/\s+/).filter((t) => t.toLowerCase() === matched || broad.has(t.toLowerCase())))];
      const fixed = openTerms.length > 0 ? removeTerms(current, openTerms) : replaceAll(current, '~all');
      return {
        title: openTerms.length > 0 ? `Remove ${openTerms.map((t) => `'${t}'`).join(' and ')} from your SPF record` : "Replace '+all' in your SPF record",
        body:
          `Change the TXT record at ${open?.domain ?? facts.domain} from\n  ${current}\nto\n  ${fixed}\n` +
          (open && open.domain !== facts.domain
            ? `Under relaxed SPF alignment a pass at ${open.domain} counts for ${facts.displayDomain}; alternatively set 'aspf=s' in the DMARC record, if all your mail for ${facts.displayDomain} uses an envelope sender at that exact name. `
            : '') +
          (term && /^(include|redirect)/i.test(term)
            ? `The term '${term}' leads to a record that authorises every address; drop it or have its owner fix it. `
            : '') +
          'List only the servers and providers that really send your mail.',
        href: href('spf-open'),
      };
    }
    case 'spf-shared-infrastructure': {
      const fix = spf.sharedInfrastructure?.fix ?? null;
      if (fix === null) {
        return { title: 'List only your own senders in your SPF record', body: 'Your SPF record authorises shared infrastructure that anyone can rent: replace it with your mail provider\'s include or your exact addresses.', href: href('spf-shared') };
      }
      const quoted = (terms: readonly string[]) => terms.map((t) => `'${t}'`).join(' and ');
      const instead = `use instead ${fix.instead.join(', or ')}.`;
      const parts: string[] = [];
      if (fix.terms.length > 0) parts.push(`Change the TXT record at ${fix.domain} from\n  ${fix.rawRecord}\nto\n  ${removeTerms(fix.rawRecord, fix.terms)}\nand ${instead}`);
      for (const inc of fix.included) {
        parts.push(
          inc.own
            ? `In the record at ${inc.recordDomain} (which '${inc.via}' brings in), replace ${quoted(inc.terms)}: ${instead}`
            : `'${inc.via}' brings in the record at ${inc.recordDomain}, whose ${quoted(inc.terms)} authorises shared infrastructure: ask its owner to list only their mail servers, or remove '${inc.via}' from the record at ${fix.domain}.`,
        );
      }
      const first = fix.terms.length > 0 ? fix.terms : (fix.included.find((i) => i.own)?.terms ?? []);
      return {
        title: first.length > 0 ? `Replace ${quoted(first)} in your SPF record` : `Drop or fix ${quoted(fix.included.map((i) => i.via))} in your SPF record`,
        body:
          parts.join('\n') +
          (fix.domain !== facts.domain ? `\nUnder relaxed SPF alignment a pass at ${fix.domain} counts for ${facts.displayDomain}.` : '') +
          '\nUntil then, anyone who rents a server (or starts a job) in the space you authorise can send as you.',
        href: href('spf-shared'),
      };
    }
    case 'dmarc-missing': {
      if (dmarc.lookalike) {
        const repaired = rewriteDmarc(repairVersion(dmarc.lookalike.rawRecord), {});
        return {
          title: 'Fix your DMARC record',
          body: `Change the TXT record at ${dmarc.lookalike.foundAt} from\n  ${dmarc.lookalike.rawRecord}\nto\n  ${repaired}\nReceivers ignore it as written: a DMARC record must start with exactly 'v=DMARC1;'.`,
          href: href('dmarc-publish'),
        };
      }
      const parked = isParked(facts);
      const record = parked ? `v=DMARC1; p=reject; rua=${reportAddress}` : `v=DMARC1; p=none; rua=${reportAddress}`;
      return {
        title: parked ? 'Publish a DMARC reject policy' : 'Publish a DMARC record',
        body: parked
          ? `${facts.displayDomain} sends and receives no mail, so lock it at once. Add a TXT record at _dmarc.${dmarc.organizationalDomain}:\n  ${record}` +
            (spf.status === 'none' ? `\nand a TXT record at ${dmarc.organizationalDomain}:\n  v=spf1 -all` : '') +
            (facts.mx.status === 'none' ? `\nand a null MX at ${facts.domain} (RFC 7505: this domain accepts no mail):\n  MX 0 .` : '')
          : `Add a TXT record at _dmarc.${dmarc.organizationalDomain}:\n  ${record}\nRead the aggregate reports for two to four weeks to find every service that sends as you, then move to 'p=quarantine' and 'p=reject'.`,
        href: href('dmarc-publish'),
      };
    }
    case 'dmarc-multiple':
      return {
        title: 'Keep exactly one DMARC record',
        body: `${dmarcName} has several TXT records that start with 'v=DMARC1', so receivers ignore all of them. Delete all but one, and make the one you keep say what you want, for example:\n  v=DMARC1; p=quarantine; rua=${reportAddress}`,
        href: href('dmarc-multiple'),
      };
    case 'dmarc-unusable':
      return {
        title: "Give your DMARC record a valid 'p=' tag",
        body: `Change the TXT record at ${dmarcName} to\n  ${rewriteDmarc(dmarc.rawRecord, { p: 'none', rua: dmarc.hasRua ? undefined : reportAddress })}`,
        href: href('dmarc-publish'),
      };
    case 'dmarc-policy-none':
    case 'dmarc-policy-quarantine': {
      const tag = dmarc.appliedTag ?? 'p';
      if (dmarc.testing) {
        return {
          title: "Leave testing mode (remove 't=y')",
          body: `Change the TXT record at ${dmarcName} to\n  ${rewriteDmarc(dmarc.rawRecord, { t: null })}\nso that receivers apply '${tag}=${dmarc.appliedPolicy}' as written.`,
          href: href('dmarc-testing'),
        };
      }
      // Names that do not exist never send real mail: np can go straight to reject.
      const target: PolicyName = effective === 'none' && tag !== 'np' ? 'quarantine' : 'reject';
      const changes: DmarcChanges = { [tag]: target, rua: dmarc.hasRua ? undefined : reportAddress };
      // Reject applied to part of the mail is not reject: drop a legacy pct on the way.
      if (target === 'reject' && dmarc.pct !== null && dmarc.pct < 100) changes.pct = null;
      return {
        title: target === 'reject' ? `Upgrade to strict enforcement ('${tag}=reject')` : `Move to '${tag}=quarantine'`,
        body:
          `Change the TXT record at ${dmarcName} to\n  ${rewriteDmarc(dmarc.rawRecord, changes)}\n` +
          (tag === 'np'
            ? 'Names that do not exist send no real mail, so rejecting forgeries of them breaks nothing.'
            : target === 'quarantine'
              ? 'Check your aggregate reports first: every service that sends as you must pass SPF or DKIM with your domain aligned. Then move on to reject.'
              : 'Forged mail is then refused outright instead of landing in spam.'),
        href: href('dmarc-enforce'),
      };
    }
    case 'dmarc-reject-partial':
      return {
        title: `Apply the policy to all mail (remove 'pct=${dmarc.pct}')`,
        body: `Change the TXT record at ${dmarcName} to\n  ${rewriteDmarc(dmarc.rawRecord, { pct: null })}\nRFC 9989 dropped 'pct'; receivers that still read it apply your policy to only ${dmarc.pct}% of forged mail.`,
        href: href('dmarc-pct'),
      };
    default: {
      // The verdict is good, but that does not make the advice "nothing to do": first what loses the
      // owner's own mail (an SPF record that fails at receivers), then the subdomain gap, then any
      // other warning; "protected" only when nothing is left.
      const repair = spfRepairStep(facts, effective, href('spf-repair'));
      if (repair) return repair;
      if (weakest) {
        // Names below the one checked follow this record (the organizational domain's, when the name
        // has a record of its own).
        const governing = dmarc.subdomainRecord ?? { foundAt: dmarcName, rawRecord: dmarc.rawRecord ?? '' };
        return {
          title: `Close the subdomain gap ('${weakest.tag}=reject')`,
          body: `Change the TXT record at ${governing.foundAt} to\n  ${rewriteDmarc(governing.rawRecord, { [weakest.tag]: 'reject' })}\nor publish a DMARC record of its own for each subdomain that sends mail.`,
          href: href('subdomains'),
        };
      }
      const warning = remainingWarningStep(facts, href('protected'));
      if (warning) return warning;
      return {
        title: PROTECTED_TITLE,
        body:
          `Receivers are told to reject mail that fakes ${facts.displayDomain}. Keep every sending service aligned` +
          (dmarc.hasRua ? ' and keep reading your aggregate reports' : `, and add 'rua=${reportAddress}' to your DMARC record to get aggregate reports`) +
          ' so that a new service does not get its mail rejected.',
        href: href('protected'),
      };
    }
  }
}

/**
 * SPF problems that make receivers answer permerror (RFC 7208 §4.6, §4.6.4, §4.5, §5.2), most
 * certain first: past them SPF fails for the owner's own mail too, and under an enforcing DMARC
 * policy that mail is refused or filed as spam unless it carries an aligned DKIM signature.
 */
export const SPF_REPAIR_FINDINGS = [
  'spf-multiple-records',
  'spf-syntax-error',
  'spf-include-loop',
  'spf-include-missing',
  'spf-permerror',
  'spf-void-lookups',
  'spf-mx-too-many',
] as const;

/** The step that repairs an SPF record receivers fail on, or that publishes a missing one under reject; null when SPF is sound. */
function spfRepairStep(facts: VerdictFacts, effective: PolicyName | null, href: string): NextStep | null {
  const { spf, displayDomain: d } = facts;
  const ids = new Set(facts.findings.map((f) => f.id));
  const id = SPF_REPAIR_FINDINGS.find((candidate) => ids.has(candidate));
  const consequence =
    effective === 'reject' || effective === 'quarantine'
      ? `\nUnder your DMARC policy ('${effective}'), your own mail that fails SPF is ${effective === 'reject' ? 'rejected' : 'sent to spam'} unless it carries an aligned DKIM signature.`
      : '';
  const now = spf.rawRecord !== null ? `\nThe record at ${facts.domain} reads:\n  ${spf.rawRecord}` : '';
  switch (id) {
    case 'spf-multiple-records':
      return {
        title: 'Merge your SPF records into one',
        body: `${d} publishes more than one TXT record that starts with 'v=spf1', and receivers treat that as a permanent error (RFC 7208 §4.5): SPF fails for all your mail. Put the terms of all of them into one record, with one 'all' at the end, and delete the others.${consequence}`,
        href,
      };
    case 'spf-syntax-error':
      return { title: 'Fix the syntax error in your SPF record', body: `Receivers treat a record with any syntax error as a permanent error (RFC 7208 §4.6), so SPF fails for all your mail. Correct the term the reasons name.${now}${consequence}`, href };
    case 'spf-include-loop':
      return { title: 'Break the include loop in your SPF record', body: `An include or redirect leads back to a record already on the way; receivers follow it until the lookup limit and stop with a permanent error. Remove the term that closes the loop.${now}${consequence}`, href };
    case 'spf-include-missing':
      return {
        title: 'Remove the include that has no SPF record',
        body: `A domain your SPF record includes (or redirects to) publishes no usable SPF record, and receivers that reach it stop with a permanent error (RFC 7208 §5.2). Remove that term if you no longer use the service, or ask the service which name to include now.${now}${consequence}`,
        href,
      };
    case 'spf-permerror':
      return {
        title: `Bring your SPF record down to ${MAX_DNS_TERMS} DNS lookups`,
        body: `Checking it takes ${spf.lookupCount} DNS lookups; receivers stop at ${MAX_DNS_TERMS} with a permanent error (RFC 7208 §4.6.4), so mail from the servers listed past that point fails SPF. Remove includes you no longer use, or replace an include by the ip4:/ip6: ranges it lists.${now}${consequence}`,
        href,
      };
    case 'spf-void-lookups':
      return { title: 'Remove SPF terms for names that no longer exist', body: `More than ${MAX_VOID_LOOKUPS} terms of your SPF record look up names that have no records, and receivers may stop there with a permanent error (RFC 7208 §4.6.4). Remove the terms for hosts and services you no longer use.${now}${consequence}`, href };
    case 'spf-mx-too-many':
      return { title: "Replace 'mx' in your SPF record by ip4:/ip6: ranges", body: `An 'mx' term names more mail servers than receivers may look up (RFC 7208 §4.6.4), which is a permanent error. List the servers' addresses with ip4:/ip6: instead.${now}${consequence}`, href };
    case undefined:
      break;
  }
  // Reject with no SPF at a name that exists: the owner's mail passes DMARC only through DKIM.
  if (effective === 'reject' && spf.status === 'none' && facts.dmarc.nameExists !== false) {
    return {
      title: 'Publish an SPF record',
      body: `Forged mail is rejected, but ${d} has no SPF record, so your own mail passes DMARC only where it carries an aligned DKIM signature. If ${d} sends mail, add a TXT record at ${facts.domain} that lists its servers, such as\n  v=spf1 include:<your mail provider> -all\nIf it sends none, publish\n  v=spf1 -all`,
      href,
    };
  }
  return null;
}

/** Warnings that stay worth acting on once forged mail is rejected: the most serious first, in the analyzers' order. */
function remainingWarningStep(facts: VerdictFacts, href: string): NextStep | null {
  const worst = (severity: Finding['severity']) => facts.findings.find((f) => f.severity === severity && f.id in WARNING_STEP_TITLES);
  const finding = worst('critical') ?? worst('warning');
  if (!finding) return null;
  return {
    title: WARNING_STEP_TITLES[finding.id]!,
    body: `Forged mail as ${facts.displayDomain} is rejected; this is what is left to fix. ${finding.detail}`,
    href,
  };
}

/** The next step's title for a warning that remains when the domain is protected (others are not advice). */
const WARNING_STEP_TITLES: Readonly<Record<string, string>> = {
  'spf-wide-pass': 'Narrow the wide ranges in your SPF record',
  'spf-no-all': "End your SPF record with '-all'",
  'spf-neutral': "Replace '?all' in your SPF record with '-all'",
  'spf-ptr-used': "Replace 'ptr' in your SPF record",
  'spf-record-too-long': 'Shorten your SPF record',
  'spf-temperror': 'Fix the DNS lookup your SPF record needs',
  'dkim-key-too-short': 'Replace your DKIM key with a 2048-bit one',
  'dkim-weak-key': 'Move your DKIM key to 2048 bits',
  'dkim-testing': "Take your DKIM key out of testing mode ('t=y')",
  'mx-cname': 'Point your MX records at host names, not aliases',
  'mx-host-unresolvable': 'Fix the MX host that has no address',
  'mx-ip-literal': 'Point your MX records at host names, not addresses',
  'mx-null-mixed': 'Keep either the null MX or the real MX records',
  'dmarc-report-destination-unverified': 'Authorise your DMARC report address',
};

/** A domain that neither sends nor receives mail: no MX (or null MX), no DKIM key, SPF absent or `-all` only. */
export function isParked(facts: VerdictFacts): boolean {
  const noMail = facts.mx.status === 'none' || facts.mx.status === 'null-mx';
  const noKeys = facts.dkim.keys.every((k) => !k.usable);
  const spfSendsNothing = facts.spf.status === 'none' || /^v=spf1\s+-all\s*$/i.test(facts.spf.rawRecord ?? '');
  return noMail && noKeys && spfSendsNothing;
}

/** Tag changes: a value sets the tag, null removes it, undefined leaves it as it is. */
type DmarcChanges = Partial<Record<string, string | null | undefined>>;

/**
 * Rewrites a DMARC record with some tags changed, keeping the owner's other tags in their order.
 * `v` stays first and `p` second (RFC 7489 §6.4 wants p right after v).
 */
export function rewriteDmarc(raw: string | null, changes: DmarcChanges): string {
  const tags: [string, string][] = [];
  for (const part of (raw ?? 'v=DMARC1').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (name === '' || tags.some(([n]) => n === name)) continue;
    tags.push([name, part.slice(eq + 1).trim()]);
  }
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const at = tags.findIndex(([n]) => n === name);
    if (value === null) {
      if (at !== -1) tags.splice(at, 1);
    } else if (at !== -1) {
      tags[at] = [name, value];
    } else {
      tags.push([name, value]);
    }
  }
  // v first, then the policy tags (p right after v, RFC 7489 §6.4), then the rest in the owner's order.
  let text = 'v=DMARC1';
  for (const name of POLICY_TAGS) for (const [n, v] of tags) if (n === name) text += `; ${n}=${v}`;
  for (const [n, v] of tags) if (n !== 'v' && !POLICY_TAGS.includes(n)) text += `; ${n}=${v}`;
  return text;
}

/** The DMARC policy tags, in the order a rewritten record lists them after `v`. */
const POLICY_TAGS: readonly string[] = ['p', 'sp', 'np'];

/** Replaces the record's terminal `all` (with any qualifier) by `replacement`, or appends it. */
function replaceAll(record: string, replacement: string): string {
  const terms = record.trim().split(/\s+/);
  const at = terms.findIndex((t) => /^[+?~-]?all$/i.test(t));
  if (at === -1) return [...terms, replacement].join(' ');
  terms[at] = replacement;
  return terms.join(' ');
}

/** The record without `remove`; a record left with no `all` and no redirect gets `~all`. */
function removeTerms(record: string, remove: readonly string[]): string {
  const gone = new Set(remove.map((t) => t.toLowerCase()));
  const terms = record.trim().split(/\s+/).filter((t) => !gone.has(t.toLowerCase()));
  return terms.some((t) => /^[+?~-]?all$/i.test(t) || /^redirect=/i.test(t)) ? terms.join(' ') : [...terms, '~all'].join(' ');
}

/**
 * The shortest prefixes a real sender publishes are about /10 (large clouds); an `ip4` range wider
 * than /8 or an `ip6` range wider than /16 authorises a large part of the internet.
 */
export const BROADEST_REASONABLE_IP4_PREFIX = 8;
export const BROADEST_REASONABLE_IP6_PREFIX = 16;

/** The passing `ip4:`/`ip6:` terms of a record that are wider than any real sender needs. */
function broadRanges(record: string): string[] {
  return record
    .trim()
    .split(/\s+/)
    .filter((term) => {
      const match = /^\+?(ip4|ip6):[^/]+\/(\d+)$/i.exec(term);
      if (!match) return false;
      const prefix = Number(match[2]);
      return match[1]!.toLowerCase() === 'ip4' ? prefix < BROADEST_REASONABLE_IP4_PREFIX : prefix < BROADEST_REASONABLE_IP6_PREFIX;
    });
}

/** `v=DMARC1 p=…`, `v = dmarc1;…`: the version tag written as receivers require (RFC 7489 §6.4). */
function repairVersion(raw: string): string {
  return raw.replace(/^\s*v\s*=\s*dmarc1\s*;?\s*/i, 'v=DMARC1; ');
}
