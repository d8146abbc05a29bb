/** SMTP TLS reports (RFC 8460 §4) parsed: the fixtures, the tolerated deviations, the refusals. */
import { describe, expect, it } from 'vitest';
import { reportIdentity } from '../../src/reports/identity.js';
import { jsonDepthOver, MAX_JSON_DEPTH, parseDateTime, parseTlsReport } from '../../src/reports/parse-tls.js';
import { unpackReportFile } from '../../src/reports/unpack.js';
import { fixture } from './helpers.js';

describe('parseTlsReport', () => {
  it('reads Google’s report (RFC 8460 §4.4 shape, mx-host as a list, no failures)', () => {
    const outcome = parseTlsReport(fixture('src/google.com!spf-cloud-ec2.example!2026-11-21.json'));
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.report).toMatchObject({
      kind: 'tls',
      organizationName: 'Google Inc.',
      reportId: '2026-11-21T00:00:00Z_spf-cloud-ec2.example',
      dateRange: { start: 1795219200, end: 1795305599 },
      contactInfo: 'smtp-tls-reporting@google.com',
    });
    expect(outcome.report.policies[0]).toMatchObject({ policy: { type: 'sts', domain: 'spf-cloud-ec2.example', mxHosts: ['mx1.spf-cloud-ec2.example', 'mx2.spf-cloud-ec2.example'] }, summary: { successful: 1500, failed: 0 }, failureDetails: [] });
    expect(outcome.warnings).toEqual([]);
  });

  it('reads Microsoft’s .json.gz: naive date-times as UTC, mx-host as a string, details without addresses', () => {
    const unpacked = unpackReportFile(fixture('microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz'));
    expect(unpacked.ok).toBe(true);
    const outcome = parseTlsReport(unpacked.ok ? unpacked.documents[0]!.bytes : '');
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.report.dateRange).toEqual({ start: 1795219200, end: 1795305600 });
    expect(outcome.warnings).toContain('date-times without a time zone: read as UTC');
    const policy = outcome.report.policies[0]!;
    expect(policy.policy.mxHosts).toEqual(['mx1.spf-cloud-ec2.example']);
    expect(policy.failureDetails).toEqual([
      { resultType: 'certificate-expired', sendingMtaIp: '2a01:111:f400::1', receivingIp: '198.51.100.26', receivingMxHostname: 'mx2.spf-cloud-ec2.example', receivingMxHelo: null, failedSessionCount: 4, additionalInformation: null, failureReasonCode: null },
      { resultType: 'sts-policy-fetch-error', sendingMtaIp: null, receivingIp: null, receivingMxHostname: null, receivingMxHelo: null, failedSessionCount: 2, additionalInformation: null, failureReasonCode: 'bad https response code: 404' },
    ]);
    expect(reportIdentity(outcome.report)).toMatch(/^[0-9a-f]{64}$/);
  });

  const base = {
    'organization-name': 'r.example',
    'date-range': { 'start-datetime': '2026-11-21T00:00:00Z', 'end-datetime': '2026-11-21T23:59:59Z' },
    'contact-info': 'tls@r.example',
    'report-id': 'r-1',
    policies: [{ policy: { 'policy-type': 'tlsa', 'policy-string': ['3 1 1 abcd'], 'policy-domain': 'Example.COM', 'mx-host-pattern': 'mx.example.com' }, summary: { 'total-successful-session-count': 3, 'total-failure-session-count': 1 }, 'failure-details': [{ 'result-type': 'TLSA-Invalid', 'failed-session-count': 1, 'additional-info-uri': 'https://r.example/why' }] }],
  };

  it('takes the draft names mx-host-pattern and additional-info-uri, and lower-cases words', () => {
    const outcome = parseTlsReport(JSON.stringify(base));
    expect(outcome.ok && outcome.report.policies[0]).toMatchObject({ policy: { type: 'tlsa', domain: 'example.com', mxHosts: ['mx.example.com'] }, failureDetails: [{ resultType: 'tlsa-invalid', additionalInformation: 'https://r.example/why' }] });
  });

  it.each([
    ['not JSON (truncated)', JSON.stringify(base).slice(0, 50), 'malformed'],
    ['an array', '[]', 'not-a-report'],
    ['no report-id', JSON.stringify({ ...base, 'report-id': undefined }), 'missing-field'],
    ['policies as an object', JSON.stringify({ ...base, policies: { a: 1 } }), 'invalid-field'],
    ['no date-range', JSON.stringify({ ...base, 'date-range': undefined }), 'missing-field'],
    ['a date that is not RFC 3339', JSON.stringify({ ...base, 'date-range': { 'start-datetime': 'yesterday', 'end-datetime': 'today' } }), 'invalid-field'],
    ['a range that ends before it starts', JSON.stringify({ ...base, 'date-range': { 'start-datetime': '2026-11-22T00:00:00Z', 'end-datetime': '2026-11-21T00:00:00Z' } }), 'invalid-field'],
    ['a negative session count', JSON.stringify({ ...base, policies: [{ ...base.policies[0], summary: { 'total-successful-session-count': -1, 'total-failure-session-count': 0 } }] }), 'invalid-field'],
    ['a count written as a string', JSON.stringify({ ...base, policies: [{ ...base.policies[0], summary: { 'total-successful-session-count': '3', 'total-failure-session-count': 0 } }] }), 'invalid-field'],
    ['no summary', JSON.stringify({ ...base, policies: [{ policy: base.policies[0]!.policy }] }), 'missing-field'],
    ['a failure detail without result-type', JSON.stringify({ ...base, policies: [{ ...base.policies[0], 'failure-details': [{ 'failed-session-count': 1 }] }] }), 'missing-field'],
    ['nesting deep enough to exhaust the stack', '['.repeat(200_000), 'too-deep'],
  ])('refuses %s', (_, text, reason) => {
    expect(parseTlsReport(text)).toMatchObject({ ok: false, reason });
  });

  it('refuses a period that ends in the future, when now is given', () => {
    expect(parseTlsReport(JSON.stringify(base), { now: new Date('2026-11-20T00:00:00Z') })).toMatchObject({ ok: false, reason: 'invalid-field' });
  });

  it('every truncation is refused', () => {
    const text = JSON.stringify(base);
    for (let cut = 0; cut < text.length; cut++) expect(parseTlsReport(text.slice(0, cut)).ok, `cut at ${cut}`).toBe(false);
  });

  it('refuses more policies and details than the cap', () => {
    const many = { ...base, policies: Array.from({ length: 11 }, () => base.policies[0]) };
    expect(parseTlsReport(JSON.stringify(many), { maxRecords: 10 })).toMatchObject({ ok: false, reason: 'too-many-records' });
  });

  it.each([
    ['2026-11-21T00:00:00Z', 1795219200],
    ['2026-11-21T01:00:00+01:00', 1795219200],
    ['2026-11-21T00:00:00.999z', 1795219200],
    ['2026-11-21 00:00:00', 1795219200],
    ['2026-11-21', null],
    ['2026-13-40T00:00:00Z', null],
  ])('parseDateTime(%s)', (text, expected) => {
    expect(parseDateTime(text)).toBe(expected);
  });
});

describe('JSON nesting is bounded before JSON.parse (issue 38 item 5)', () => {
  it.each([
    ['flat', '{"a":[1,2,{"b":3}]}', null],
    ['brackets inside strings do not count', `{"a":"${'['.repeat(100)}"}`, null],
    ['an escaped quote does not end the string', `{"a":"\\"${'['.repeat(100)}"}`, null],
    ['33 arrays deep', `${'['.repeat(33)}${']'.repeat(33)}`, 32],
    ['deep objects', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`, 160],
  ])('%s', (_, text, offset) => {
    const over = jsonDepthOver(text, MAX_JSON_DEPTH);
    expect(over === null ? null : over.offset).toBe(offset);
  });

  it('a TLS report nested deeper than MAX_JSON_DEPTH is refused as too-deep, naming the cap', () => {
    const outcome = parseTlsReport(`{"report-id":${'['.repeat(1_000_000)}`);
    expect(outcome).toMatchObject({ ok: false, reason: 'too-deep' });
    expect(!outcome.ok && outcome.detail).toContain('MAX_JSON_DEPTH');
  });
});
