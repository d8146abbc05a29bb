/**
 * Issue 38 item 12: `forwarded` ("expected") needs evidence a spoofer cannot forge by himself: an
 * ARC result or an override the reporter gives (RFC 7489 §6.6.2 reasons; RFC 8617 §7.2.2), or a
 * source known to forward: a pass for a mailbox provider whose users forward, its forward-confirmed
 * reverse name in such a provider, or the domain's own mail delivered with its signature intact. A
 * failing signature of the domain alone (anyone can add one, with any d= and any selector or none)
 * leaves the source `unauthorised`, and its text says it could also be a forwarder. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import type { ReverseName } from '../../src/reports/reverse-names.js';
import { summariseSenders } from '../../src/reports/senders.js';
import type { AggregateRecord, AggregateReport } from '../../src/reports/types.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const DOMAIN = 'test.example';
const SOURCE = '203.0.113.40';

const dkim = (domain: string, selector: string | null, result: string) => ({ domain, selector, result, humanResult: null });
const spf = (domain: string, result: string) => ({ domain, scope: 'mfrom', result, humanResult: null });

function reportOf(records: Partial<AggregateRecord>[]): AggregateReport {
  const begin = 1795219200;
  return {
    kind: 'aggregate', schema: '7489', namespace: null, version: '1.0',
    reporter: { orgName: 'r.example', email: null, extraContactInfo: null, generator: null },
    reportId: 'r', dateRange: { begin, end: begin + 86399 }, errors: [],
    policyPublished: { domain: DOMAIN, adkim: 'r', aspf: 'r', p: 'none', sp: null, np: null, pct: null, fo: null, testing: null, discoveryMethod: null },
    records: records.map((r) => ({ sourceIp: SOURCE, count: 40, disposition: 'none', dkimResult: 'fail', spfResult: 'fail', headerFrom: DOMAIN, envelopeFrom: null, envelopeTo: null, auth: { dkim: [], spf: [] }, reasons: [], ...r })),
  };
}

/** The domain's own mail from another source, whose signature under s1 verifies (so s1 is a published key). */
const OWN_MAIL: Partial<AggregateRecord> = { sourceIp: '192.0.2.1', count: 100, dkimResult: 'pass', auth: { dkim: [dkim(DOMAIN, 's1', 'pass')], spf: [] } };
const google = (name: string, confirmed: boolean): ReverseName => ({ status: 'found', name, confirmed });

const CASES: { why: string; records: Partial<AggregateRecord>[]; reverse?: ReverseName; cls: string; text?: string }[] = [
  // The attack: SPF fails, a failing signature with the domain's own d= and no selector.
  { why: 'a failing own signature with no selector, nothing else: unauthorised', records: [{ auth: { dkim: [dkim(DOMAIN, null, 'fail')], spf: [spf('spoofer.example', 'fail')] } }], cls: 'unauthorised', text: 'could also be a forwarder' },
  { why: 'a failing own signature under a selector that verifies elsewhere, nothing else: unauthorised', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail')], spf: [spf('spoofer.example', 'fail')] } }], cls: 'unauthorised', text: 'could also be a forwarder' },
  // A failing signature naming a mailbox provider is no evidence of forwarding: never `forwarded`
  // (rule 7 of docs/reports.md leans it to `legitimate`, a stream to look at, never "expected").
  { why: 'a failing signature naming a mailbox provider (forgeable): not forwarded', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail'), dkim('gmail.com', 'x', 'fail')], spf: [] } }], cls: 'legitimate' },
  { why: 'an unconfirmed reverse name of a mailbox provider: unauthorised', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail')], spf: [] } }], reverse: google('mail-sor-f41.google.com', false), cls: 'unauthorised', text: 'could also be a forwarder' },
  { why: 'no signature at all: unauthorised, without the forwarder text', records: [{ auth: { dkim: [], spf: [spf(DOMAIN, 'fail')] } }], cls: 'unauthorised' },
  // Evidence the reporter gives.
  { why: 'the reporter says forwarded', records: [{ auth: { dkim: [dkim(DOMAIN, null, 'fail')], spf: [] }, reasons: [{ type: 'forwarded', comment: null }] }], cls: 'forwarded' },
  { why: 'the reporter says mailing_list', records: [{ reasons: [{ type: 'mailing_list', comment: null }] }], cls: 'forwarded' },
  { why: 'an ARC pass the reporter gives (local_policy comment)', records: [{ reasons: [{ type: 'local_policy', comment: 'arc=pass as[2].d=lists.example' }] }], cls: 'forwarded' },
  // A source known to forward.
  { why: 'broken own signature at a source passing SPF for a mailbox provider', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail')], spf: [spf('google.com', 'pass')] } }], cls: 'forwarded', text: 'Google Workspace' },
  { why: 'broken own signature at a source passing DKIM for a mailbox provider', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail'), dkim('outlook.com', 'sel', 'pass')], spf: [] } }], cls: 'forwarded', text: 'Microsoft 365' },
  { why: 'broken own signature at a source whose confirmed reverse name is a mailbox provider', records: [OWN_MAIL, { auth: { dkim: [dkim(DOMAIN, 's1', 'fail')], spf: [] } }], reverse: google('mail-sor-f41.google.com.', true), cls: 'forwarded', text: 'reverse name mail-sor-f41.google.com' },
  { why: 'broken own signature at a source that also delivers the domain’s mail intact', records: [{ count: 30, dkimResult: 'pass', auth: { dkim: [dkim(DOMAIN, 's1', 'pass')], spf: [] } }, { count: 4, auth: { dkim: [dkim(DOMAIN, 's1', 'fail')], spf: [] } }], cls: 'forwarded', text: 'signature intact' },
];

describe('forwarded needs evidence a spoofer cannot forge', () => {
  it.each(CASES)('$why', ({ records, reverse, cls, text }) => {
    const reverseNames = reverse ? new Map([[SOURCE, reverse]]) : undefined;
    const sender = summariseSenders([reportOf(records)], { domain: DOMAIN, days: 30, now: NOW, reverseNames }).find((s) => s.source === SOURCE)!;
    expect(sender.class).toBe(cls);
    if (text) expect(sender.why).toContain(text);
    if (cls === 'unauthorised' && !text) expect(sender.why).not.toContain('forwarder that changed');
  });
});
