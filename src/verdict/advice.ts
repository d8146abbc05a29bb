import { openSpfFor } from './alignment.js';
import type { PolicyName, VerdictFacts } from './types.js';

/** Where `nextStep.href` points when no base URL is configured: the service serves these guides. */
export const DEFAULT_GUIDE_BASE_URL = '/guides';

/** The guide pages `href` can point at (docs/guides/<topic>.md, served at <base>/<topic>). */
export const GUIDE_TOPICS = ['spf-open', 'spf-shared', 'dmarc-publish', 'dmarc-multiple', 'dmarc-enforce', 'dmarc-pct', 'dmarc-testing', 'subdomains', 'protected'] as const;
export type GuideTopic = (typeof GUIDE_TOPICS)[number];

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
  const href = (topic: GuideTopic) => `${baseUrl.replace(/\/+$/, '')}/${topic}?domain=${encodeURIComponent(facts.domain)}`;
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
      return {
        title: 'Your domain is protected',
        body:
          `Receivers are told to reject mail that fakes ${facts.displayDomain}. Keep every sending service aligned` +
          (dmarc.hasRua ? ' and keep reading your aggregate reports' : `, and add 'rua=${reportAddress}' to your DMARC record to get aggregate reports`) +
          ' so that a new service does not get its mail rejected.',
        href: href('protected'),
      };
    }
  }
}

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
