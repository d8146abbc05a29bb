/**
 * Grades: what a lookalike can do with mail, from the probe's facts. A pure function; a failed
 * lookup that could change the grade makes it `unknown`, never a lower grade.
 */
import type { ProbeFacts } from './probe.js';
import type { Lookalike, LookalikeGrade, LookalikeNextStep } from './types.js';
import { LOOKALIKE_GRADES } from './types.js';

/** The hint on a lookalike that shares name servers or MX hosts with the original. */
export const DEFENSIVE_HINT = 'probably yours (defensive registration)';

/** The records that park a name (RFC 7505 null MX, RFC 7208 SPF that passes nothing, RFC 9989 DMARC reject). */
export function parkingRecords(domain: string): string[] {
  return [`${domain}. MX 0 .`, `${domain}. TXT "v=spf1 -all"`, `_dmarc.${domain}. TXT "v=DMARC1; p=reject;"`];
}

/** The grade of one probed name, and the sentence that says why. */
export function gradeOf(facts: ProbeFacts, wildcardSuffix: string | null): { grade: LookalikeGrade; note: string } {
  if (facts.exists === 'no') return { grade: 'none', note: 'Not resolving (NXDOMAIN). It may still be registered and on hold; this is not "available".' };
  if (facts.exists === 'unknown') return { grade: 'unknown', note: `Could not tell whether it resolves: ${facts.failure ?? 'the lookup failed'}.` };
  if (wildcardSuffix !== null) {
    return { grade: 'unknown', note: `The .${wildcardSuffix} registry answers every name (a wildcard): this answer says nothing about a registration.` };
  }
  const receives = facts.mx.status === 'receives' || facts.mx.status === 'implicit';
  const authorises = facts.spf.status === 'authorises';
  const how = facts.mx.status === 'implicit' ? 'receives mail at its address (no MX: the implicit MX)' : 'receives mail (MX)';
  if (receives && authorises) return { grade: 'critical', note: `It ${how} and its SPF authorises senders: it can send phishing that passes SPF and DMARC for itself, and get the replies.` };
  const mxUnknown = facts.mx.status === 'unknown';
  const spfUnknown = facts.spf.status === 'unknown';
  // A failed lookup that could make it critical: say so rather than grade it lower.
  if ((receives && spfUnknown) || (authorises && mxUnknown) || (mxUnknown && spfUnknown)) {
    return { grade: 'unknown', note: `It resolves, but a lookup failed: ${facts.failure ?? 'unknown'}.` };
  }
  if (receives) return { grade: 'high', note: `It ${how}: mail mistyped to it is delivered to whoever runs it.` };
  if (authorises) return { grade: 'high', note: 'Its SPF authorises senders: mail from it passes SPF and DMARC for itself.' };
  if (mxUnknown || spfUnknown) return { grade: 'unknown', note: `It resolves, but a lookup failed: ${facts.failure ?? 'unknown'}.` };
  if (facts.mx.status === 'null' && facts.spf.status === 'fail-all' && facts.dmarc.status === 'reject') {
    return { grade: 'protected', note: 'Parked: null MX, SPF that passes nothing and DMARC p=reject (the defensive-registration recipe).' };
  }
  if (facts.mx.status === 'null' && facts.spf.status === 'fail-all' && facts.dmarc.status === 'unknown') {
    return { grade: 'unknown', note: `It looks parked, but its DMARC lookup failed: ${facts.failure ?? 'unknown'}.` };
  }
  return { grade: 'medium', note: 'It resolves but has no mail set-up yet: it can be armed in minutes.' };
}

/** Worst grade first, then the likeliest lookalike (the candidate order) within a grade. */
export function gradeRank(grade: LookalikeGrade): number {
  return LOOKALIKE_GRADES.indexOf(grade);
}

/** A name as people read it, with the A-label form the DNS uses beside an IDN (`bücher.example (xn--bcher-kva.example)`). */
export function namedWithALabel(l: Pick<Lookalike, 'domain' | 'unicode'>): string {
  return l.unicode !== l.domain ? `${l.unicode} (${l.domain})` : l.domain;
}

/**
 * What the owner of `original` (its Unicode form, for the sentences) should do about the graded
 * names. Each step names the names it is about, every one of them (a heading's count is the length
 * of its list), each IDN with its `xn--` form beside it. The parking records go to names that need
 * them: the owner's own lookalikes not yet parked, and `unregistered`, the likeliest ASCII candidate
 * that was not found registered (never a name someone else holds).
 */
export function nextSteps(original: string, lookalikes: readonly Lookalike[], unregistered: string | undefined): LookalikeNextStep[] {
  const steps: LookalikeNextStep[] = [];
  const theirs = lookalikes.filter((l) => !l.sharedWithOriginal && (l.grade === 'critical' || l.grade === 'high'));
  const critical = theirs.filter((l) => l.grade === 'critical');
  const reported = critical.length > 0 ? critical : theirs;
  if (reported.length > 0) {
    steps.push({
      title: critical.length > 0 ? `Report the ${critical.length} critical lookalike(s)` : `Watch the ${theirs.length} lookalike(s) that can handle mail`,
      body:
        `${reported.map(namedWithALabel).join(', ')}: ` +
        'a name that can send and receive mail while looking like yours is a phishing kit waiting to be used. Report it to the ' +
        "registrar's abuse contact (find it with an RDAP lookup, https://lookup.icann.org), to the host of its MX and name " +
        'servers, and phishing seen from it to reportphishing@apwg.org and https://safebrowsing.google.com/safebrowsing/report_phish/. ' +
        'Tell your users and your mail filter about each.',
    });
  }
  const ours = lookalikes.filter((l) => l.sharedWithOriginal && l.grade !== 'protected' && l.grade !== 'none');
  // Sharing name servers is a hint, not proof (a registrar's default pair serves millions of names):
  // the ones that can handle mail are named, to be parked if they are yours and reported if not.
  const oursArmed = ours.filter((l) => l.grade === 'critical' || l.grade === 'high');
  if (oursArmed.length > 0) {
    steps.push({
      title: `Check the ${oursArmed.length} lookalike(s) that can handle mail and look like yours`,
      body:
        `${oursArmed.map(namedWithALabel).join(', ')} ${oursArmed.length === 1 ? 'shares' : 'share'} name servers or mail servers with ${original}. ` +
        'If your organisation registered them, park them with the records below; if it did not, report them as above.',
    });
  }
  const first = ours[0];
  if (first !== undefined) {
    steps.push({
      title: `Park ${namedWithALabel(first)}${ours.length > 1 ? ` and the ${ours.length - 1} other lookalike(s) that may be yours` : ''}`,
      body:
        `${ours.map(namedWithALabel).join(', ')} ${ours.length === 1 ? 'shares' : 'share'} name servers or mail servers with ${original}. If ${ours.length === 1 ? 'it is' : 'they are'} yours, park ${ours.length === 1 ? 'it' : 'each'} ` +
        `with these three records (here for ${first.domain}), so that no mail can be sent from ${ours.length === 1 ? 'it' : 'them'} or delivered to ${ours.length === 1 ? 'it' : 'them'}:`,
      records: parkingRecords(first.domain),
    });
  }
  if (unregistered !== undefined) {
    steps.push({
      title: `Register ${unregistered} and park it`,
      body:
        `${unregistered} is the likeliest lookalike of ${original} that was not found registered (it does not resolve; it may still be ` +
        `held, so check with your registrar). A name is cheaper to register than to take down. Park it, and any other you register (and those marked "${DEFENSIVE_HINT}" that are not parked yet), ` +
        'with these three records, so that no mail can be sent from it or delivered to it:',
      records: parkingRecords(unregistered),
    });
  }
  return steps;
}
