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

/**
 * What the owner of `original` (its Unicode form, for the sentences) should do about the graded names. The parking records are written
 * out for the first name that needs them: one of the owner's own not yet parked, else the worst
 * lookalike, else `likeliest` (the likeliest ASCII candidate, registered or not).
 */
export function nextSteps(original: string, lookalikes: readonly Lookalike[], likeliest: string | undefined): LookalikeNextStep[] {
  const steps: LookalikeNextStep[] = [];
  const theirs = lookalikes.filter((l) => !l.sharedWithOriginal && (l.grade === 'critical' || l.grade === 'high'));
  const critical = theirs.filter((l) => l.grade === 'critical');
  if (theirs.length > 0) {
    steps.push({
      title: critical.length > 0 ? `Report the ${critical.length} critical lookalike(s)` : `Watch the ${theirs.length} lookalike(s) that can handle mail`,
      body:
        'A name that can send and receive mail while looking like yours is a phishing kit waiting to be used. Report it to the ' +
        "registrar's abuse contact (find it with an RDAP lookup, https://lookup.icann.org), to the host of its MX and name " +
        'servers, and phishing seen from it to reportphishing@apwg.org and https://safebrowsing.google.com/safebrowsing/report_phish/. ' +
        `Tell your users and your mail filter: ${theirs.slice(0, 5).map((l) => l.unicode).join(', ')}${theirs.length > 5 ? ', …' : ''}.`,
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
        `${oursArmed.slice(0, 5).map((l) => l.unicode).join(', ')}${oursArmed.length > 5 ? ', …' : ''} share name servers or mail servers with ${original}. ` +
        'If your organisation registered them, park them with the records below; if it did not, report them as above.',
    });
  }
  const parkTarget = ours[0]?.domain ?? lookalikes.find((l) => l.grade !== 'protected')?.domain ?? likeliest;
  if (parkTarget === undefined) return steps;
  steps.push({
    title: 'Register the likeliest lookalikes and park them',
    body:
      'Names that are not registered yet are cheaper to register than to take down. Park every one you hold (and those ' +
      `marked "${DEFENSIVE_HINT}" that are not parked yet) with these three records, so that no mail can be sent from ` +
      'them or delivered to them:',
    records: parkingRecords(parkTarget),
  });
  return steps;
}
