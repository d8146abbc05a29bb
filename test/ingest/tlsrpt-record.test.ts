/**
 * The TLS-RPT record a report address is looked up in (RFC 8460 §3) is read by the engine's own
 * parser (`parseTlsRptRecord`, as the transport check reads it): the same record is valid or not in
 * both places. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { tlsRptMailtos } from '../../src/ingest/report-address.js';

const CASES: { record: string; mailtos: string[] | null; why: string }[] = [
  { record: 'v=TLSRPTv1; rua=mailto:tls@reports.example', mailtos: ['tls@reports.example'], why: 'one mailto' },
  { record: 'v=TLSRPTv1;rua=mailto:A@Reports.Example,https://reports.example/tlsrpt', mailtos: ['a@reports.example'], why: 'mailto beside https, compared without case' },
  { record: 'v=TLSRPTv1; rua=mailto:tls%2Bx@reports.example?subject=tls', mailtos: ['tls+x@reports.example'], why: 'percent-decoded, the query left out' },
  { record: 'v=TLSRPTv1; rua=https://reports.example/tlsrpt', mailtos: [], why: 'https only: no address' },
  { record: 'v=TLSRPTv1; rua=mailto:a@reports.example; rua=mailto:b@reports.example', mailtos: ['a@reports.example'], why: 'the first rua only' },
  { record: 'v=TLSRPTv1; rua=mailto:a@reports.example,ftp://reports.example', mailtos: null, why: 'a URI that is neither mailto nor https makes the record invalid (RFC 8460 §3)' },
  { record: 'v=TLSRPTv1; rua=mailto:a@reports.example, mailto:b c@reports.example', mailtos: null, why: 'a space must be percent-encoded' },
  { record: 'v=TLSRPTv2; rua=mailto:a@reports.example', mailtos: null, why: 'another version' },
  { record: 'v=TLSRPTv1', mailtos: null, why: 'rua is required' },
];

describe('tlsRptMailtos (the engine’s TLS-RPT parser)', () => {
  it.each(CASES)('$why', ({ record, mailtos }) => {
    expect(tlsRptMailtos(record)).toEqual(mailtos);
  });
});
