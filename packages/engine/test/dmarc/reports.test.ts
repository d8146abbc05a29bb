import { describe, expect, it } from 'vitest';
import { parseDmarcRecord } from '../../src/dmarc/parse.js';
import { verifyReportDestinations } from '../../src/dmarc/reports.js';
import type { DmarcRecord } from '../../src/dmarc/types.js';
import type { DnsErrorReason } from '../../src/dns/types.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { recording, txt } from './helpers.js';

function record(text: string): DmarcRecord {
  const parsed = parseDmarcRecord(text);
  if (parsed.kind !== 'record') throw new Error(`test record does not parse: ${text}`);
  return parsed.record;
}

const AUTH = 'example.com._report._dmarc.thirdparty.example.net';
// cases.md E3: an external ruf.
const E3 = record('v=DMARC1; p=none; rua=mailto:dmarc-feedback@example.com; ruf=mailto:auth-reports@thirdparty.example.net');

describe('verifyReportDestinations: third-party authorization (cases.md §8)', () => {
  it.each<[string, ResourceRecord[], string, string]>([
    ['X1', [txt(AUTH, 'v=DMARC1')], 'verified', 'a bare version tag authorizes'],
    ['X2', [txt(AUTH, 'v=DMARC1;')], 'verified', 'cases.md E5: v=DMARC1; (erratum 5440 spelling)'],
    ['X3', [txt(AUTH, 'v=DMARC1; p=none;'), txt(AUTH, 'other')], 'verified', 'the non-DMARC record is ignored'],
    ['X4', [txt(AUTH, 'v=DMARC1; p=none;'), txt(AUTH, 'v=DMARC1')], 'verified', 'several DMARC records are fine here (step 8: at least one)'],
    ['X5', [], 'unverified', 'no record'],
    ['X5b', [txt('other.example._report._dmarc.thirdparty.example.net', 'v=DMARC1;')], 'unverified', 'a record for a different source domain does not count'],
    ['X6', [txt(AUTH, 'v=DMARC1; p=none; bogus;')], 'verified', 'deliberate (mox rejects): RFC 7489 §7.1 step 6 only needs v=DMARC1 first; the syntax error is discarded'],
    ['E6', [txt(AUTH, 'v=DMARC1; rua=mailto:aggregate-reports@thirdparty.example.net; ruf=mailto:failure-reports@thirdparty.example.net')], 'verified', 'an authorization with override addresses'],
    ['spf', [txt(AUTH, 'v=spf1 -all')], 'unverified', 'a TXT record that is not DMARC does not authorize'],
  ])('%s: %s (%s)', async (_id, records, status) => {
    const resolver = recording(...records);
    const check = await verifyReportDestinations('example.com', E3, resolver);
    const external = check.destinations.find((destination) => destination.destination === 'thirdparty.example.net');
    expect(external).toMatchObject({ status, recordName: AUTH, uris: [{ tag: 'ruf', uri: 'mailto:auth-reports@thirdparty.example.net' }] });
    expect(check.destinations.find((destination) => destination.destination === 'example.com')?.status).toBe('same-organization');
    expect(resolver.names()[0]).toBe(AUTH);
    const unverified = check.findings.filter((finding) => finding.id === 'dmarc-report-destination-unverified');
    expect(unverified).toHaveLength(status === 'unverified' ? 1 : 0);
  });

  it.each<DnsErrorReason>(['timeout', 'servfail'])('X7: %s is "could not check", never "unverified"', async (reason) => {
    const resolver = recording(txt(AUTH, 'v=DMARC1;')).fail(AUTH, reason);
    const check = await verifyReportDestinations('example.com', E3, resolver);
    expect(check.destinations.find((destination) => destination.destination === 'thirdparty.example.net')).toMatchObject({
      status: 'error',
      failure: { name: AUTH, type: 'TXT', reason },
    });
    expect(check.findings.map((finding) => finding.id)).toEqual(['dmarc-report-destination-unchecked']);
    expect(check.findings[0]?.detail).toContain('not the same as a missing authorization');
    // No wildcard fallback query after a failure.
    expect(check.queries).toEqual([AUTH]);
  });

  it('the unverified finding names the destination and the record to publish', async () => {
    const check = await verifyReportDestinations('example.com', E3, recording());
    expect(check.findings).toHaveLength(1);
    expect(check.findings[0]).toMatchObject({ id: 'dmarc-report-destination-unverified', severity: 'warning' });
    expect(check.findings[0]?.detail).toContain('thirdparty.example.net');
    expect(check.findings[0]?.detail).toContain(`${AUTH} TXT "v=DMARC1;"`);
    expect(check.findings[0]?.detail).toMatch(/^Your ruf sends reports/);
  });
});

describe('verifyReportDestinations: wildcards (RFC 7489 §7.1)', () => {
  const WILDCARD = '*._report._dmarc.thirdparty.example.net';

  it('a wildcard record answers the exact query through the DNS: verified with one query', async () => {
    const resolver = recording(txt(WILDCARD, 'v=DMARC1;'));
    const check = await verifyReportDestinations('example.com', E3, resolver);
    expect(check.destinations.find((destination) => destination.destination === 'thirdparty.example.net')?.status).toBe('verified');
    expect(check.queries).toEqual([AUTH]);
    expect(check.findings).toEqual([]);
  });

  it('a wildcard shadowed by an existing name does not verify; the finding explains why', async () => {
    const resolver = recording(txt(WILDCARD, 'v=DMARC1;'), txt(AUTH, 'some other record'));
    const check = await verifyReportDestinations('example.com', E3, resolver);
    expect(check.queries).toEqual([AUTH, WILDCARD]);
    expect(check.destinations.find((destination) => destination.destination === 'thirdparty.example.net')).toMatchObject({ status: 'unverified', wildcardShadowed: true });
    expect(check.findings[0]?.detail).toContain('A wildcard record at *._report._dmarc.thirdparty.example.net exists');
  });

  it('a wildcard shadowed by a name between them (RFC 4592 closest encloser) does not verify', async () => {
    const resolver = recording(txt(WILDCARD, 'v=DMARC1;'), txt('other.com._report._dmarc.thirdparty.example.net', 'v=DMARC1;'));
    const check = await verifyReportDestinations('example.com', E3, resolver);
    expect(check.destinations.find((destination) => destination.destination === 'thirdparty.example.net')).toMatchObject({ status: 'unverified', wildcardShadowed: true });
  });

  it('no wildcard either: unverified, without the shadow note', async () => {
    const check = await verifyReportDestinations('example.com', E3, recording());
    const destination = check.destinations.find((candidate) => candidate.destination === 'thirdparty.example.net');
    expect(destination?.status).toBe('unverified');
    expect(destination?.wildcardShadowed).toBeUndefined();
    expect(check.findings[0]?.detail).not.toContain('wildcard');
  });
});

describe('verifyReportDestinations: which destinations are checked', () => {
  it('destinations in the same organization need no query', async () => {
    const resolver = recording();
    const check = await verifyReportDestinations('mail.example.com', record('v=DMARC1; p=reject; rua=mailto:a@example.com,mailto:b@reports.example.com'), resolver);
    expect(check.destinations.map((destination) => destination.status)).toEqual(['same-organization', 'same-organization']);
    expect(resolver.calls).toEqual([]);
  });

  it('one query per destination host, for rua and ruf together', async () => {
    const resolver = recording();
    const check = await verifyReportDestinations(
      'example.com',
      record('v=DMARC1; p=reject; rua=mailto:a@thirdparty.example.net,mailto:b@thirdparty.example.net; ruf=mailto:c@thirdparty.example.net'),
      resolver,
    );
    expect(resolver.names().filter((name) => name === AUTH)).toHaveLength(1);
    expect(check.findings).toHaveLength(1);
    expect(check.findings[0]?.detail).toMatch(/^Your rua and ruf sends reports/);
  });

  it('checks the exact destination host, not its organizational domain', async () => {
    const resolver = recording(txt('example.com._report._dmarc.thirdparty.example.net', 'v=DMARC1;'));
    const check = await verifyReportDestinations('example.com', record('v=DMARC1; p=reject; rua=mailto:d@mx.thirdparty.example.net'), resolver);
    expect(resolver.names()[0]).toBe('example.com._report._dmarc.mx.thirdparty.example.net');
    expect(check.destinations[0]?.status).toBe('unverified');
  });

  it('a URI without a host cannot be checked', async () => {
    const resolver = recording();
    const check = await verifyReportDestinations('example.com', record('v=DMARC1; p=reject; rua=urn:dmarc:reports'), resolver);
    expect(check.destinations).toEqual([{ destination: null, uris: [{ tag: 'rua', uri: 'urn:dmarc:reports' }], status: 'not-checkable', recordName: null }]);
    expect(resolver.calls).toEqual([]);
  });

  it('an authorization name longer than DNS allows is unverified without a query', async () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.net`;
    const source = `${'d'.repeat(50)}.example.com`;
    const resolver = recording();
    const check = await verifyReportDestinations(source, record(`v=DMARC1; p=reject; rua=mailto:r@${long}`), resolver);
    expect(check.destinations[0]?.status).toBe('unverified');
    expect(resolver.calls).toEqual([]);
    expect(check.findings[0]?.detail).toContain('longer than DNS allows');
  });
});
