/**
 * The section envelope's parts (issue 39 item 4): `nextStepsOf` reads the steps the findings name
 * (most serious first, once each), and `withDnssecEnvelope` gives each DNSSEC state (RFC 4035 §4.3)
 * its finding and, for a bogus one, the fix its Extended DNS Error (RFC 8914) points to.
 */
import { describe, expect, it } from 'vitest';
import { nextStepsOf, type Finding } from '../../src/findings.js';
import { dnssecNotChecked, withDnssecEnvelope, type DnssecResultStatus } from '../../src/dnssec/check.js';

const finding = (severity: Finding['severity'], detail: string): Finding => ({ id: 'x', severity, title: 't', detail });

describe('nextStepsOf', () => {
  it.each<[string, Finding[], string[]]>([
    ['no findings', [], []],
    ['a finding without a step', [finding('warning', 'Something is off.')], []],
    ['one step, capitalised', [finding('warning', 'Off. Next step: renew the certificate.')], ['Renew the certificate.']],
    ['the most serious first', [finding('info', 'A. Next step: later.'), finding('critical', 'B. Next step: now.')], ['Now.', 'Later.']],
    ['same severity keeps order', [finding('warning', 'Next step: one.'), finding('warning', 'Next step: two.')], ['One.', 'Two.']],
    ['a repeated step once', [finding('warning', 'Next step: same.'), finding('critical', 'Next step: same.')], ['Same.']],
    ['success findings add nothing', [finding('success', 'Fine. Next step: nothing.')], []],
    ['an empty step adds nothing', [finding('warning', 'Next step: ')], []],
  ])('%s', (_name, findings, steps) => {
    expect(nextStepsOf(findings)).toEqual(steps);
  });
});

describe('withDnssecEnvelope', () => {
  const state = (status: Exclude<DnssecResultStatus, 'not-checked'>, code: number | null) => ({ status, reason: { code, text: 'Why.' }, rrsets: [], signaturesExpire: null });
  it.each<[Exclude<DnssecResultStatus, 'not-checked'>, number | null, string, string, RegExp | null]>([
    ['secure', null, 'dnssec-secure', 'success', null],
    ['insecure', null, 'dnssec-insecure', 'info', null],
    ['indeterminate', 5, 'dnssec-indeterminate', 'warning', null],
    ['bogus', 7, 'dnssec-bogus', 'critical', /^Sign the zone again \(its signatures have expired\)/],
    ['bogus', 8, 'dnssec-bogus', 'critical', /clock right/],
    ['bogus', 9, 'dnssec-bogus', 'critical', /DS at the registrar/],
    ['bogus', 6, 'dnssec-bogus', 'critical', /remove the DS/],
  ])('%s (EDE %s): %s, %s', (status, code, id, severity, step) => {
    const section = withDnssecEnvelope(state(status, code));
    expect(section.status).toBe(status);
    expect(section.findings).toEqual([expect.objectContaining({ id, severity, detail: expect.stringMatching(/^Why\./) })]);
    if (step === null) expect(section.nextSteps).toEqual([]);
    else expect(section.nextSteps).toEqual([expect.stringMatching(step)]);
  });

  it('not-checked: no finding, no step, the reason kept', () => {
    expect(withDnssecEnvelope(dnssecNotChecked('Off.'))).toEqual({ status: 'not-checked', reason: { code: null, text: 'Off.' }, rrsets: [], signaturesExpire: null, findings: [], nextSteps: [] });
  });
});
