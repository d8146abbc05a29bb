/**
 * Who sends as a domain: the rows of aggregate reports grouped by source address into senders, each
 * with its message counts (every count is weighted by `row/count`, RFC 7489 Appendix C), the
 * provider it belongs to, and a class:
 *
 * - `legitimate`: passes DMARC (RFC 7489 §3.1: an aligned SPF or DKIM pass, as the receiver's
 *   `policy_evaluated` says), or authenticates unaligned (a DKIM or SPF pass for another domain), or
 *   signs with the domain's own `d=` under a selector that never verifies (a key not published), or
 *   is a known mail service, or sends from the domain's own SPF pass set;
 * - `forwarded`: every failing message carries a forwarding override (`forwarded`,
 *   `trusted_forwarder`, `mailing_list`, or `local_policy` with `arc=pass` or a forwarding comment:
 *   RFC 7489 §6.6.2 and the ARC override of RFC 8617 §7.2.2), or the domain's own signature, which
 *   verifies elsewhere, broke on the way (a forwarder or list changed the message);
 * - `unauthorised`: fails, and nothing for the domain or anyone else authenticates it.
 *
 * The receiver's verdict decides pass or fail; `auth_results` only explain it (research §6.1).
 */
import { isAtOrBelow } from '../dns/name.js';
import { overlap4, overlap6 } from '../ranges/classify.js';
import { serviceLabel } from '../ranges/providers.js';
import type { RangeData } from '../ranges/types.js';
import { parseClientAddress } from '../spf/address.js';
import type { SpfAnalysis } from '../spf/analyze.js';
import { ip6ToBigInt, RangeSet, type AddressSet } from '../spf/ranges.js';
import type { ReverseName } from './reverse-names.js';
import type { AggregateReport } from './types.js';

/** Seconds in a day (the report periods are UTC days: RFC 9990 §3.1.1 "typically … a single UTC day"). */
export const DAY_SECONDS = 86_400;

/** A known mail service: the domains it signs with (DKIM `d=`) or bounces to (SPF MAIL FROM), and its SPF include. */
export interface KnownMailService {
  name: string;
  /** Suffixes matched on label boundaries against DKIM `d=` and SPF domains of `auth_results`. */
  domains: readonly string[];
  /** The include its customers add to SPF (fixtures/guard-corpus/guard.test.zone), or null. */
  include: string | null;
  /** A mailbox provider whose users forward mail: its relays carry forwarded mail. */
  mailbox: boolean;
}

/**
 * The services recognised in reports (includes as the services publish them, see
 * fixtures/guard-corpus/README.md and conformance/providers.md).
 */
export const KNOWN_MAIL_SERVICES: readonly KnownMailService[] = [
  { name: 'Google Workspace', domains: ['google.com', 'googlemail.com', 'gappssmtp.com', 'gmail.com'], include: 'include:_spf.google.com', mailbox: true },
  { name: 'Microsoft 365', domains: ['outlook.com', 'onmicrosoft.com', 'hotmail.com', 'microsoft.com'], include: 'include:spf.protection.outlook.com', mailbox: true },
  { name: 'Amazon SES', domains: ['amazonses.com'], include: 'include:amazonses.com', mailbox: false },
  { name: 'Twilio SendGrid', domains: ['sendgrid.net', 'sendgrid.com'], include: 'include:sendgrid.net', mailbox: false },
  { name: 'Mailgun', domains: ['mailgun.org', 'mailgun.net', 'mailgun.com'], include: 'include:mailgun.org', mailbox: false },
  { name: 'Mailchimp', domains: ['mcsv.net', 'mcdlv.net', 'rsgsv.net', 'mailchimpapp.net'], include: 'include:servers.mcsv.net', mailbox: false },
  { name: 'Mandrill (Mailchimp Transactional)', domains: ['mandrillapp.com'], include: 'include:spf.mandrillapp.com', mailbox: false },
  { name: 'Postmark', domains: ['mtasv.net', 'postmarkapp.com', 'pm.mtasv.net'], include: 'include:spf.mtasv.net', mailbox: false },
  { name: 'SparkPost', domains: ['sparkpostmail.com'], include: 'include:sparkpostmail.com', mailbox: false },
  { name: 'Zoho Mail', domains: ['zoho.com', 'zohomail.com', 'zoho.eu'], include: 'include:spf.zoho.com', mailbox: true },
  { name: 'Proton Mail', domains: ['protonmail.ch', 'proton.me', 'protonmail.com'], include: 'include:_spf.protonmail.ch', mailbox: true },
  { name: 'Fastmail', domains: ['messagingengine.com', 'fastmail.com'], include: 'include:spf.messagingengine.com', mailbox: true },
  { name: 'Salesforce', domains: ['salesforce.com', 'exacttarget.com'], include: 'include:_spf.salesforce.com', mailbox: false },
  { name: 'HubSpot', domains: ['hubspotemail.net', 'hubspot.com'], include: 'include:_spf.hubspotemail.net', mailbox: false },
  { name: 'Zendesk', domains: ['zendesk.com'], include: 'include:mail.zendesk.com', mailbox: false },
  { name: 'Mimecast', domains: ['mimecast.com'], include: 'include:_netblocks.mimecast.com', mailbox: false },
  { name: 'Proofpoint', domains: ['pphosted.com', 'ppe-hosted.com'], include: 'include:_spf.pphosted.com', mailbox: false },
  { name: 'Yahoo Mail', domains: ['yahoo.com', 'yahoodns.net'], include: null, mailbox: true },
];

/** The service a domain belongs to, by suffix on label boundaries; null when none. */
export function knownMailService(domain: string): KnownMailService | null {
  for (const service of KNOWN_MAIL_SERVICES) if (service.domains.some((d) => atOrBelow(domain, d))) return service;
  return null;
}

/** The class of a sender (see the module comment). */
export type SenderClass = 'legitimate' | 'forwarded' | 'unauthorised';

/** One source address and what the reports say it sent as the domain. */
export interface SenderSummary {
  /** The source address. */
  source: string;
  /** A known mail service (by the DKIM `d=` or SPF domain it authenticates as), else the cloud or CDN whose published ranges hold it; null when neither. */
  provider: string | null;
  /** Messages (the sum of `row/count`). */
  messages: number;
  /** Messages with an aligned SPF pass (`policy_evaluated/spf`). */
  spfAligned: number;
  /** Messages with an aligned DKIM pass (`policy_evaluated/dkim`). */
  dkimAligned: number;
  /** Messages that passed DMARC (either aligned pass, RFC 7489 §3.1). */
  dmarcPass: number;
  /** Messages that failed DMARC: what `p=quarantine` or `p=reject` would have acted on. */
  failing: number;
  /** DKIM selectors seen with a `d=` at or below the domain. */
  selectors: string[];
  class: SenderClass;
  /** Why it has its class, in words. */
  why: string;
  /** For a legitimate sender with failing mail: the exact change that makes it pass; else null. */
  fix: string | null;
  /** UTC days (YYYY-MM-DD) of the first and last report period that saw it. */
  firstDay: string;
  lastDay: string;
  /** DKIM `d=` and SPF domains it authenticated as (any result). */
  dkimDomains: string[];
  spfDomains: string[];
}

/** What the analysis of a domain's reports takes. */
export interface SenderOptions {
  /** The domain shown: rows whose `header_from` is at or below it count. */
  domain: string;
  /** The window in days, by the reports' own date ranges. */
  days: number;
  /** Now, as a Date or epoch seconds. */
  now: Date | number;
  /** The domain's SPF analysis (its pass set recognises the domain's own ranges); null when unknown. */
  spf?: SpfAnalysis | null;
  /** Provider ranges to name clouds and CDNs; null to skip. */
  ranges?: RangeData | null;
  /** Reverse names of the sources (`lookupReverseNames`): a confirmed name of a mailbox provider is a source known to forward. */
  reverseNames?: ReadonlyMap<string, ReverseName> | undefined;
}

/** Epoch seconds of `now`. */
export function epochSecondsOf(now: Date | number): number {
  return typeof now === 'number' ? now : Math.floor(now.getTime() / 1000);
}

/**
 * The reports whose period overlaps the last `days` days before `now` (their own date range decides,
 * not when they arrived).
 */
export function reportsInWindow<T extends { dateRange: { begin: number; end: number } | { start: number; end: number } }>(reports: readonly T[], days: number, now: Date | number): T[] {
  const end = epochSecondsOf(now);
  const start = end - days * DAY_SECONDS;
  return reports.filter((r) => {
    const begin = 'begin' in r.dateRange ? r.dateRange.begin : r.dateRange.start;
    return r.dateRange.end > start && begin <= end;
  });
}

const FORWARDING_TYPES = new Set(['forwarded', 'trusted_forwarder', 'mailing_list']);

/** RFC 7489 §6.6.2 override reasons that say the message was forwarded (an ARC pass is written into a `local_policy` comment). */
function isForwardingReason(reason: { type: string; comment: string | null }): boolean {
  if (FORWARDING_TYPES.has(reason.type)) return true;
  return (reason.type === 'local_policy' || reason.type === 'other') && reason.comment !== null && /\barc=pass\b|forward|mailing.?list/i.test(reason.comment);
}

/**
 * `isAtOrBelow` without allocating (it runs for every row and signature): `name` equals `ancestor`
 * or ends with "." + `ancestor`.
 */
export function atOrBelow(name: string, ancestor: string): boolean {
  if (name.length === ancestor.length) return name === ancestor;
  return name.length > ancestor.length && name.charCodeAt(name.length - ancestor.length - 1) === 0x2e && name.endsWith(ancestor);
}

const day = (epoch: number): string => new Date(epoch * 1000).toISOString().slice(0, 10);

/** The counts of one source, kept while reading rows (`Tally`) and in a digest (`SenderDigestEntry`). */
export interface SourceCounts {
  source: string;
  messages: number;
  spfAligned: number;
  dkimAligned: number;
  dmarcPass: number;
  failing: number;
  forwardedFailing: number;
}

/**
 * What one source's rows or digest entries add up to beside its counts, while they are being added:
 * sets united, additive maps added, the lesser word kept (`mergeEntries`). The service's store adds
 * up the rests of its stored rows into one (src/store/reports.ts `sourceRollups`).
 */
export interface SenderRests {
  forwardedFailing: number;
  selectors: Set<string>;
  dkimDomains: Set<string>;
  spfDomains: Set<string>;
  /** Signatures with the domain's own d= that did not verify, on failing mail: "d s" (or the selector alone while reading rows) → result. */
  ownFailed: Map<string, string>;
  ownFailedNoSelector: boolean;
  /** Failing messages without a forwarding reason whose first failed own signature had this key ("d s"). */
  broken: Map<string, number>;
  /** … whose first failed own signature had no selector in the report. */
  brokenNoSelector: number;
  /** Own signatures that verified: the selector when d= is the domain itself (while reading rows), else "d s". */
  verified: Set<string>;
  unalignedDkimPass: string | null;
  unalignedSpfPass: string | null;
  /** An SPF check of a MAIL FROM at or below the domain that did not pass, on failing mail. */
  ownSpfFailed: string | null;
}

/** A {@link SenderRests} with nothing added yet. */
export function emptySenderRests(): SenderRests {
  return {
    forwardedFailing: 0,
    selectors: new Set(),
    dkimDomains: new Set(),
    spfDomains: new Set(),
    ownFailed: new Map(),
    ownFailedNoSelector: false,
    broken: new Map(),
    brokenNoSelector: 0,
    verified: new Set(),
    unalignedDkimPass: null,
    unalignedSpfPass: null,
    ownSpfFailed: null,
  };
}

interface Tally extends SourceCounts, SenderRests {
  first: number;
  last: number;
}

/** The senders of `options.domain` over the window, most messages first. */
export function summariseSenders(reports: readonly AggregateReport[], options: SenderOptions): SenderSummary[] {
  return analyseSenders(reports, options).senders;
}

/** The passes and failures of the domain in one report (what the daily series is made of). */
export interface ReportTotals {
  begin: number;
  end: number;
  pass: number;
  fail: number;
}

/** `summariseSenders`, plus each report's totals from the same pass over the rows (for `summariseReports`). */
export function analyseSenders(reports: readonly AggregateReport[], options: SenderOptions): { senders: SenderSummary[]; totals: ReportTotals[] } {
  const domain = options.domain.toLowerCase().replace(/\.$/, '');
  const { tallies, totals } = tallyRows(reportsInWindow(reports, options.days, options.now), domain, false);
  return { senders: finishSenders(tallies.values(), domain, options), totals };
}

/**
 * One pass over the rows of `reports` for `domain`: a tally per source (or per UTC day and source,
 * for a digest), and each report's totals.
 */
function tallyRows(reports: readonly AggregateReport[], domain: string, byDay: boolean): { tallies: Map<string, Tally>; totals: ReportTotals[] } {
  const totals: ReportTotals[] = [];
  const tallies = new Map<string, Tally>();
  /** Per signing domain: whether it is at or below the domain (a handful of distinct values). */
  const ownDomain = new Map<string, boolean>();
  const isOwn = (name: string): boolean => {
    let own = ownDomain.get(name);
    if (own === undefined) ownDomain.set(name, (own = atOrBelow(name, domain)));
    return own;
  };
  for (const report of reports) {
    const dayStart = report.dateRange.begin - (report.dateRange.begin % DAY_SECONDS);
    let reportPass = 0;
    let reportFail = 0;
    for (const record of report.records) {
      if (!isOwn(record.headerFrom)) continue;
      const key = byDay ? `${dayStart} ${record.sourceIp}` : record.sourceIp;
      let t = tallies.get(key);
      if (t === undefined) {
        t = emptyTally(record.sourceIp, byDay ? dayStart : report.dateRange.begin);
        tallies.set(key, t);
      }
      const n = record.count;
      const spfPass = record.spfResult === 'pass';
      const dkimPass = record.dkimResult === 'pass';
      t.messages += n;
      if (spfPass) t.spfAligned += n;
      if (dkimPass) t.dkimAligned += n;
      const pass = spfPass || dkimPass;
      if (pass) reportPass += n;
      else reportFail += n;
      if (pass) t.dmarcPass += n;
      let ownBroken: string | null | undefined;
      if (!pass) {
        t.failing += n;
        if (record.reasons.some(isForwardingReason)) t.forwardedFailing += n;
        else {
          // The first own signature that failed: if its selector verifies elsewhere, the message was changed on the way.
          for (const signature of record.auth.dkim) {
            if (signature.result !== 'pass' && isOwn(signature.domain)) {
              ownBroken = signature.selector === null ? null : `${signature.domain} ${signature.selector}`;
              break;
            }
          }
          if (ownBroken === null) t.brokenNoSelector += n;
          else if (ownBroken !== undefined) t.broken.set(ownBroken, (t.broken.get(ownBroken) ?? 0) + n);
        }
      }
      t.first = Math.min(t.first, report.dateRange.begin);
      t.last = Math.max(t.last, report.dateRange.begin);
      for (const signature of record.auth.dkim) {
        t.dkimDomains.add(signature.domain);
        const own = isOwn(signature.domain);
        if (own && signature.selector !== null) {
          t.selectors.add(signature.selector);
          // The selector alone when d= is the domain itself (no string built per row), else "d s".
          if (signature.result === 'pass') t.verified.add(signature.domain === domain ? signature.selector : `${signature.domain} ${signature.selector}`);
        }
        if (own && signature.result !== 'pass' && !pass) {
          if (signature.selector === null) t.ownFailedNoSelector = true;
          else {
            const key = `${signature.domain} ${signature.selector}`;
            t.ownFailed.set(key, least(t.ownFailed.get(key) ?? null, signature.result)!);
          }
        }
        if (!own && signature.result === 'pass' && !pass) t.unalignedDkimPass = least(t.unalignedDkimPass, signature.domain);
      }
      for (const check of record.auth.spf) {
        if (check.domain === null) continue;
        t.spfDomains.add(check.domain);
        const own = isOwn(check.domain);
        if (!pass && own && check.result !== 'pass' && check.scope === 'mfrom') t.ownSpfFailed = least(t.ownSpfFailed, check.domain);
        if (!pass && !own && check.result === 'pass') t.unalignedSpfPass = least(t.unalignedSpfPass, check.domain);
      }
    }
    if (reportPass + reportFail > 0) totals.push({ begin: report.dateRange.begin, end: report.dateRange.end, pass: reportPass, fail: reportFail });
  }
  return { tallies, totals };
}

/** Tallies to senders: classified, most messages first. */
function finishSenders(tallies: Iterable<Tally>, domain: string, options: SenderOptions): SenderSummary[] {
  const list = [...tallies];
  /** Signatures of the domain that verify somewhere ("d s"): one that fails elsewhere was broken in transit, not unpublished. */
  const verifying = new Set<string>();
  for (const t of list) for (const key of t.verified) verifying.add(key.includes(' ') ? key : `${domain} ${key}`);
  const ownRanges = options.spf?.passSources?.pass ?? null;
  const senders: SenderSummary[] = [];
  const services = new Map<string, KnownMailService | null>();
  const days = new Map<number, string>();
  const dayOf = (epoch: number): string => {
    let text = days.get(epoch);
    if (text === undefined) days.set(epoch, (text = day(epoch)));
    return text;
  };
  for (const t of list) {
    const service = serviceOf(t, services);
    const provider = service?.name ?? (options.ranges ? cloudOf(t.source, options.ranges) : null);
    const { cls, why, fix } = classify(t, domain, service, ownRanges, verifying, options.spf ?? null, knownForwarder(t, options.reverseNames?.get(t.source)));
    senders.push({
      source: t.source,
      provider,
      messages: t.messages,
      spfAligned: t.spfAligned,
      dkimAligned: t.dkimAligned,
      dmarcPass: t.dmarcPass,
      failing: t.failing,
      selectors: [...t.selectors].sort(),
      class: cls,
      why,
      fix,
      firstDay: dayOf(t.first),
      lastDay: dayOf(t.last),
      dkimDomains: [...t.dkimDomains].sort(),
      spfDomains: [...t.spfDomains].sort(),
    });
  }
  return senders.sort((a, b) => b.messages - a.messages || compareAddresses(a.source, b.source));
}

function serviceOf(t: Tally, cache: Map<string, KnownMailService | null>): KnownMailService | null {
  const lookup = (d: string): KnownMailService | null => {
    let service = cache.get(d);
    if (service === undefined) cache.set(d, (service = knownMailService(d)));
    return service;
  };
  for (const d of t.dkimDomains) {
    const service = lookup(d);
    if (service !== null) return service;
  }
  for (const d of t.spfDomains) {
    const service = lookup(d);
    if (service !== null) return service;
  }
  return null;
}

/** The cloud, CI or CDN service whose published ranges hold `ip` (packages/engine/src/ranges/). */
export function cloudOf(ip: string, ranges: RangeData): string | null {
  const address = parseClientAddress(ip);
  if (address === null) return null;
  const set = address.version === 4 ? RangeSet.cidr(4, BigInt(address.value >>> 0), 32) : RangeSet.cidr(6, ip6ToBigInt(address.words), 128);
  for (const category of ranges.categories) {
    const hit = address.version === 4 ? overlap4(set, category) > 0 : overlap6(set, category) > 0n;
    if (hit) return serviceLabel(category.provider, category.service);
  }
  return null;
}

/** True when `ip` is in `set`. */
export function addressIn(ip: string, set: AddressSet): boolean {
  const address = parseClientAddress(ip);
  if (address === null) return false;
  return address.version === 4 ? set.v4.has(BigInt(address.value >>> 0)) : set.v6.has(ip6ToBigInt(address.words));
}

function includedIn(spf: SpfAnalysis | null, include: string): boolean {
  if (spf === null) return false;
  const wanted = include.toLowerCase();
  const walk = (nodes: SpfAnalysis['tree']): boolean => nodes.some((node) => node.raw.toLowerCase().replace(/^\+/, '') === wanted || walk(node.children));
  return walk(spf.tree);
}

/**
 * Evidence that a source forwards mail, which a spoofer cannot give himself (issue 38 item 12): it
 * passed SPF or DKIM for a mailbox provider whose users forward (a pass the receiver saw, not a
 * domain named in a failing signature), or its forward-confirmed reverse name is in such a provider
 * (RFC 1035 §3.5), or it delivered the domain's own mail with its signature intact (a spoofer cannot
 * sign as the domain). Null when there is none; else the words that say which.
 */
function knownForwarder(t: Tally, reverse: ReverseName | undefined): string | null {
  for (const passed of [t.unalignedDkimPass, t.unalignedSpfPass]) {
    const service = passed === null ? null : knownMailService(passed);
    if (service?.mailbox) return `${service.name} (it authenticates as ${passed}), whose users forward mail`;
  }
  if (reverse?.status === 'found' && reverse.confirmed) {
    const name = reverse.name.toLowerCase().replace(/\.$/, '');
    const service = knownMailService(name);
    if (service?.mailbox) return `${service.name} by its reverse name ${name}, whose users forward mail`;
  }
  if (t.dkimAligned > 0) return `a source that also delivers your mail with your signature intact (${t.dkimAligned} messages)`;
  return null;
}

function classify(
  t: Tally,
  domain: string,
  service: KnownMailService | null,
  ownRanges: AddressSet | null,
  verifying: ReadonlySet<string>,
  spf: SpfAnalysis | null,
  forwarder: string | null,
): { cls: SenderClass; why: string; fix: string | null } {
  if (t.failing === 0) return { cls: 'legitimate', why: 'all its mail passes DMARC', fix: null };
  const failed = `${t.failing} of its ${t.messages} messages fail DMARC`;
  if (t.forwardedFailing === t.failing) {
    return { cls: 'forwarded', why: `its failing mail was forwarded (the receiver says so: an ARC pass, a mailing list or a trusted forwarder); expected, and not stopped by DMARC overrides at receivers that honour ARC`, fix: null };
  }
  // The domain's own signature under a selector that never verifies anywhere: a key not published.
  // The least such key: the same answer whatever order the entries were merged in (by day, or rolled up by blocks of days).
  const unpublished = [...t.ownFailed.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).find(([key]) => !verifying.has(key));
  if (unpublished !== undefined) {
    const [signer, selector] = unpublished[0].split(' ') as [string, string];
    return {
      cls: 'legitimate',
      why: `it signs as ${signer} with selector ${selector}, which never verifies (${unpublished[1]}): ${failed}. If this sender is not yours, it is a forger naming a selector of its choice`,
      fix: `publish selector ${selector}: the DKIM key at ${selector}._domainkey.${signer} that this sender signs with`,
    };
  }
  // Every failing message is explained by forwarding: the receiver says so (rule 2 above), or the
  // domain's own signature broke on the way at a source known to forward. A failing signature alone
  // is no evidence: anyone can add one with any d= (issue 38 item 12).
  let broken = t.brokenNoSelector;
  for (const [key, count] of t.broken) if (verifying.has(key)) broken += count;
  if (forwarder !== null && t.forwardedFailing + broken >= t.failing) {
    return { cls: 'forwarded', why: `your own DKIM signature broke on the way at ${forwarder}: forwarded or changed by a list (${failed}); expected`, fix: null };
  }
  if (t.dmarcPass > 0) {
    return { cls: 'legitimate', why: `${t.dmarcPass} of its messages pass DMARC, ${failed}`, fix: signFix(domain, t, service, spf) };
  }
  if (t.unalignedDkimPass !== null || t.unalignedSpfPass !== null) {
    const as = t.unalignedDkimPass !== null ? `DKIM d=${t.unalignedDkimPass}` : `SPF for ${t.unalignedSpfPass}`;
    return { cls: 'legitimate', why: `it authenticates, but as another domain (${as}), so it is not aligned with ${domain}: ${failed}`, fix: signFix(domain, t, service, spf) };
  }
  if (service !== null) return { cls: 'legitimate', why: `a known mail service (${service.name}): ${failed}`, fix: signFix(domain, t, service, spf) };
  if (ownRanges !== null && addressIn(t.source, ownRanges)) {
    return { cls: 'legitimate', why: `your SPF record lets this address pass, but its mail is sent with another MAIL FROM and no DKIM signature of yours: ${failed}`, fix: signFix(domain, t, null, spf) };
  }
  const maybeForwarded =
    broken > 0 || t.ownFailedNoSelector
      ? '. It carries a failing signature of yours, which anyone can add: it could also be a forwarder that changed the message, but no ARC result, override or known forwarder says so'
      : '';
  return { cls: 'unauthorised', why: `nothing authenticates it for ${domain} or any other domain: what DMARC enforcement exists to stop${maybeForwarded}`, fix: null };
}

/** The exact change that makes a legitimate sender's failing mail pass. */
function signFix(domain: string, t: Tally, service: KnownMailService | null, spf: SpfAnalysis | null): string {
  // MAIL FROM is the domain's own but SPF did not pass: the service's include is missing (RFC 7208 §5.2).
  if (t.ownSpfFailed !== null && service?.include && !includedIn(spf, service.include)) {
    return `add ${service.include} to the SPF record of ${t.ownSpfFailed} (${service.name} sends with MAIL FROM ${t.ownSpfFailed})`;
  }
  const signer = t.unalignedDkimPass !== null ? ` (it signs with d=${t.unalignedDkimPass})` : '';
  const where = service !== null ? ` at ${service.name}: set up its domain authentication (custom DKIM) and publish the selectors it gives` : '';
  return `sign with d=${domain}${where}${signer}`;
}

/** The lesser of two optional words: the same answer whatever order the rows or digests come in. */
function least(a: string | null, b: string | null): string | null {
  return a === null ? b : b === null ? a : a < b ? a : b;
}

function compareAddresses(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * What the analysis needs of one source on one UTC day (the day its report period begins), without
 * the rows: counts add up and sets unite, so digests of separate imports merge (`mergeDigests`) and a
 * summary over 30 days reads one entry per source and day instead of every row. JSON as it is.
 */
export interface SenderDigestEntry extends SourceCounts {
  /** The UTC day (YYYY-MM-DD). */
  day: string;
  selectors: string[];
  dkimDomains: string[];
  spfDomains: string[];
  /** Own signatures that verified ("d s"). */
  verified: string[];
  /** Own signatures that failed on failing mail: ["d s", result]. */
  ownFailed: [string, string][];
  ownFailedNoSelector: boolean;
  /** Failing messages whose first failed own signature had this key: ["d s", messages]. */
  broken: [string, number][];
  brokenNoSelector: number;
  unalignedDkimPass: string | null;
  unalignedSpfPass: string | null;
  ownSpfFailed: string | null;
}

/** The last day asked for and its text (a digest's entries are nearly all of one day: one Date made, not one an entry). */
let lastDay = { epoch: Number.NaN, text: '' };
const dayText = (epoch: number): string => {
  if (epoch !== lastDay.epoch) lastDay = { epoch, text: new Date(epoch * 1000).toISOString().slice(0, 10) };
  return lastDay.text;
};
const dayEpoch = (text: string): number => Date.parse(`${text}T00:00:00Z`) / 1000;

function entryOf(t: Tally, domain: string): SenderDigestEntry {
  return {
    day: dayText(t.first),
    source: t.source,
    messages: t.messages,
    spfAligned: t.spfAligned,
    dkimAligned: t.dkimAligned,
    dmarcPass: t.dmarcPass,
    failing: t.failing,
    forwardedFailing: t.forwardedFailing,
    selectors: [...t.selectors].sort(),
    dkimDomains: [...t.dkimDomains].sort(),
    spfDomains: [...t.spfDomains].sort(),
    verified: [...t.verified].map((key) => (key.includes(' ') ? key : `${domain} ${key}`)).sort(),
    ownFailed: [...t.ownFailed.entries()].sort(),
    ownFailedNoSelector: t.ownFailedNoSelector,
    broken: [...t.broken.entries()].sort(),
    brokenNoSelector: t.brokenNoSelector,
    unalignedDkimPass: t.unalignedDkimPass,
    unalignedSpfPass: t.unalignedSpfPass,
    ownSpfFailed: t.ownSpfFailed,
  };
}

/** The digest entries of `reports` for `domain`, one per source and day, and each report's totals. */
export function digestSenders(reports: readonly AggregateReport[], domain: string): { senders: SenderDigestEntry[]; totals: ReportTotals[] } {
  const canonical = domain.toLowerCase().replace(/\.$/, '');
  const { tallies, totals } = tallyRows(reports, canonical, true);
  return { senders: [...tallies.values()].map((t) => entryOf(t, canonical)), totals };
}

/** Entries of several digests of one domain as one list: those of the same source and day added together. */
export function mergeSenderDigests(entries: Iterable<SenderDigestEntry>, domain: string): SenderDigestEntry[] {
  const canonical = domain.toLowerCase().replace(/\.$/, '');
  return [...mergeEntries(entries, true).values()]
    .map((t) => entryOf(t, canonical))
    .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : compareAddresses(a.source, b.source)));
}

/** A sender's tally before any message is counted, first and last seen at `at` (epoch seconds). */
function emptyTally(source: string, at: number): Tally {
  // The rests' object given the counts (one object made, not a second spread from it).
  return Object.assign(emptySenderRests(), { source, messages: 0, spfAligned: 0, dkimAligned: 0, dmarcPass: 0, failing: 0, first: at, last: at });
}

/** Entries to tallies, keyed by source and day (`byDay`) or by source alone. */
function mergeEntries(entries: Iterable<SenderDigestEntry>, byDay: boolean): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  for (const e of entries) {
    const key = byDay ? `${e.day} ${e.source}` : e.source;
    const at = dayEpoch(e.day);
    let t = tallies.get(key);
    if (t === undefined) {
      t = emptyTally(e.source, at);
      tallies.set(key, t);
    }
    t.messages += e.messages;
    t.spfAligned += e.spfAligned;
    t.dkimAligned += e.dkimAligned;
    t.dmarcPass += e.dmarcPass;
    t.failing += e.failing;
    t.forwardedFailing += e.forwardedFailing;
    t.first = Math.min(t.first, at);
    t.last = Math.max(t.last, at);
    for (const x of e.selectors) t.selectors.add(x);
    for (const x of e.dkimDomains) t.dkimDomains.add(x);
    for (const x of e.spfDomains) t.spfDomains.add(x);
    for (const x of e.verified) t.verified.add(x);
    for (const [key, result] of e.ownFailed) t.ownFailed.set(key, least(t.ownFailed.get(key) ?? null, result)!);
    t.ownFailedNoSelector ||= e.ownFailedNoSelector;
    for (const [key, count] of e.broken) t.broken.set(key, (t.broken.get(key) ?? 0) + count);
    t.brokenNoSelector += e.brokenNoSelector;
    t.unalignedDkimPass = least(t.unalignedDkimPass, e.unalignedDkimPass);
    t.unalignedSpfPass = least(t.unalignedSpfPass, e.unalignedSpfPass);
    t.ownSpfFailed = least(t.ownSpfFailed, e.ownSpfFailed);
  }
  return tallies;
}

/** The senders of a digest over the window (entries whose day overlaps it), as `summariseSenders` gives them from the rows. */
export function summariseDigestSenders(entries: readonly SenderDigestEntry[], options: SenderOptions): SenderSummary[] {
  const domain = options.domain.toLowerCase().replace(/\.$/, '');
  const end = epochSecondsOf(options.now);
  const start = end - options.days * DAY_SECONDS;
  const inWindow = entries.filter((e) => {
    const at = dayEpoch(e.day);
    return at + DAY_SECONDS > start && at <= end;
  });
  return finishSenders(mergeEntries(inWindow, false).values(), domain, options);
}

/** The sorted union of two sorted-or-not lists of words (the order `entryOf` gives: default sort). */
function unionSorted(a: readonly string[], b: readonly string[]): string[] {
  if (b.length === 0) return [...a];
  if (a.length === 0) return [...b];
  return [...new Set([...a, ...b])].sort();
}

/**
 * Two digest entries of one source and day merged into one: what `mergeSenderDigests` gives for
 * them (counts add, sets unite, the lesser word kept), without building tallies: the store merges a
 * report's entries into the stored ones one pair at a time as reports arrive.
 */
export function mergeDigestEntries(a: SenderDigestEntry, b: SenderDigestEntry): SenderDigestEntry {
  const ownFailed = new Map<string, string>(a.ownFailed);
  for (const [key, result] of b.ownFailed) ownFailed.set(key, least(ownFailed.get(key) ?? null, result)!);
  const broken = new Map<string, number>(a.broken);
  for (const [key, count] of b.broken) broken.set(key, (broken.get(key) ?? 0) + count);
  return {
    day: a.day,
    source: a.source,
    messages: a.messages + b.messages,
    spfAligned: a.spfAligned + b.spfAligned,
    dkimAligned: a.dkimAligned + b.dkimAligned,
    dmarcPass: a.dmarcPass + b.dmarcPass,
    failing: a.failing + b.failing,
    forwardedFailing: a.forwardedFailing + b.forwardedFailing,
    selectors: unionSorted(a.selectors, b.selectors),
    dkimDomains: unionSorted(a.dkimDomains, b.dkimDomains),
    spfDomains: unionSorted(a.spfDomains, b.spfDomains),
    verified: unionSorted(a.verified, b.verified),
    ownFailed: [...ownFailed.entries()].sort(),
    ownFailedNoSelector: a.ownFailedNoSelector || b.ownFailedNoSelector,
    broken: [...broken.entries()].sort(),
    brokenNoSelector: a.brokenNoSelector + b.brokenNoSelector,
    unalignedDkimPass: least(a.unalignedDkimPass, b.unalignedDkimPass),
    unalignedSpfPass: least(a.unalignedSpfPass, b.unalignedSpfPass),
    ownSpfFailed: least(a.ownSpfFailed, b.ownSpfFailed),
  };
}
