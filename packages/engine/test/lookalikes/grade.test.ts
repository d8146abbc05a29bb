/**
 * The grade of a probed name, as a table over the facts (pure), and the readings of SPF and DMARC it
 * rests on: a failed lookup never lowers a grade, NXDOMAIN is "not resolving" and never "available".
 */
import { describe, expect, it } from 'vitest';
import type { DnsAnswer } from '../../src/dns/types.js';
import { gradeOf, parkingRecords } from '../../src/lookalikes/grade.js';
import { dmarcOf, sameMxAnswer, sharesWithOriginal, spfOf, type ProbeFacts } from '../../src/lookalikes/probe.js';
import type { LookalikeDmarc, LookalikeMx, LookalikeSpf } from '../../src/lookalikes/types.js';

const txt = (...records: string[]): DnsAnswer<'TXT'> => ({ kind: 'records', records: records.map((r) => [r]) });

describe('spfOf', () => {
  it.each<[string, DnsAnswer<'TXT'>, LookalikeSpf['status']]>([
    ['an ip4 term', txt('v=spf1 ip4:192.0.2.0/24 -all'), 'authorises'],
    ['an include with ~all', txt('v=spf1 include:_spf.esp.example ~all'), 'authorises'],
    ['+all', txt('v=spf1 +all'), 'authorises'],
    ['a redirect', txt('v=spf1 redirect=_spf.esp.example'), 'authorises'],
    ['-all alone', txt('v=spf1 -all'), 'fail-all'],
    ['?all alone passes nothing', txt('v=spf1 ?all'), 'fail-all'],
    ['a -ip4 only', txt('v=spf1 -ip4:192.0.2.1 -all'), 'fail-all'],
    ['no SPF among the TXT', txt('site-verification=1'), 'none'],
    ['two records: permerror', txt('v=spf1 -all', 'v=spf1 +all'), 'invalid'],
    ['a syntax error', txt('v=spf1 ip4:300.1.1.1 -all'), 'invalid'],
    ['NODATA', { kind: 'nodata' }, 'none'],
    ['SERVFAIL is unknown, never none', { kind: 'error', reason: 'servfail' }, 'unknown'],
  ])('%s', (_name, answer, status) => {
    expect(spfOf(answer).status).toBe(status);
  });
});

describe('dmarcOf', () => {
  it.each<[string, DnsAnswer<'TXT'>, LookalikeDmarc['status']]>([
    ['p=reject', txt('v=DMARC1; p=reject;'), 'reject'],
    ['p=quarantine', txt('v=DMARC1; p=quarantine'), 'quarantine'],
    ['p=none', txt('v=DMARC1; p=none'), 'none'],
    ['no record', { kind: 'nxdomain' }, 'absent'],
    ['two records: no policy', txt('v=DMARC1; p=reject', 'v=DMARC1; p=none'), 'absent'],
    ['a timeout is unknown', { kind: 'error', reason: 'timeout' }, 'unknown'],
  ])('%s', (_name, answer, status) => {
    expect(dmarcOf(answer).status).toBe(status);
  });
});

const facts = (mx: LookalikeMx['status'], spf: LookalikeSpf['status'], dmarc: LookalikeDmarc['status'] = 'absent'): ProbeFacts => ({
  exists: 'yes',
  failure: null,
  mx: { status: mx, hosts: mx === 'receives' ? ['mx.x.example'] : [] },
  spf: { status: spf, record: null },
  dmarc: { status: dmarc, record: null },
  nameServers: [],
  mxAnswer: { kind: 'nodata' },
});

describe('gradeOf', () => {
  it.each<[LookalikeMx['status'], LookalikeSpf['status'], LookalikeDmarc['status'], string]>([
    ['receives', 'authorises', 'absent', 'critical'],
    ['implicit', 'authorises', 'reject', 'critical'],
    ['receives', 'none', 'absent', 'high'],
    ['receives', 'fail-all', 'reject', 'high'],
    ['implicit', 'invalid', 'absent', 'high'],
    ['none', 'authorises', 'absent', 'high'],
    ['null', 'authorises', 'reject', 'high'],
    ['none', 'none', 'absent', 'medium'],
    ['null', 'fail-all', 'none', 'medium'],
    ['null', 'fail-all', 'reject', 'protected'],
    ['null', 'fail-all', 'unknown', 'unknown'],
    ['receives', 'unknown', 'absent', 'unknown'],
    ['unknown', 'authorises', 'absent', 'unknown'],
    ['unknown', 'none', 'absent', 'unknown'],
    ['none', 'unknown', 'absent', 'unknown'],
    ['unknown', 'unknown', 'absent', 'unknown'],
  ])('MX %s, SPF %s, DMARC %s: %s', (mx, spf, dmarc, grade) => {
    expect(gradeOf(facts(mx, spf, dmarc), null).grade).toBe(grade);
  });

  it('NXDOMAIN is none, said as not resolving and never as available; a failed MX lookup is unknown; a wildcard answer is unknown', () => {
    const none = gradeOf({ ...facts('none', 'none'), exists: 'no' }, null);
    expect(none.grade).toBe('none');
    expect(none.note).toContain('Not resolving');
    expect(none.note).toContain('not "available"');
    expect(gradeOf({ ...facts('unknown', 'unknown'), exists: 'unknown', failure: 'MX x.example: servfail' }, null)).toMatchObject({ grade: 'unknown', note: expect.stringContaining('servfail') });
    expect(gradeOf(facts('receives', 'authorises'), 'ws').grade).toBe('unknown');
  });
});

describe('sharesWithOriginal and the parking records', () => {
  const original = { domain: 'brand.example', mxHosts: ['mx1.brand.example', 'aspmx.l.google.com'], nameServers: ['ns1.host.example', 'ns2.host.example'] };
  it.each<[string, Partial<ProbeFacts>, boolean]>([
    ['the same name servers', { nameServers: ['ns2.host.example', 'ns1.host.example'] }, true],
    ['one name server in common is not enough (a DNS host serves millions)', { nameServers: ['ns1.host.example', 'ns9.host.example'] }, false],
    ['a name server inside the original', { nameServers: ['ns.brand.example'] }, true],
    ['an MX inside the original', { mx: { status: 'receives', hosts: ['mx1.brand.example'] } }, true],
    ["a shared mail provider's MX is not a hint", { mx: { status: 'receives', hosts: ['aspmx.l.google.com'] } }, false],
    ['nothing in common', { mx: { status: 'receives', hosts: ['mx.other.example'] }, nameServers: ['ns.other.example'] }, false],
  ])('%s', (_name, partial, shared) => {
    expect(sharesWithOriginal(original, { ...facts('none', 'none'), ...partial })).toBe(shared);
  });

  it('parks with null MX, SPF -all and DMARC p=reject', () => {
    expect(parkingRecords('x.example')).toEqual(['x.example. MX 0 .', 'x.example. TXT "v=spf1 -all"', '_dmarc.x.example. TXT "v=DMARC1; p=reject;"']);
  });

  it('compares MX answers as sets', () => {
    const a: DnsAnswer<'MX'> = { kind: 'records', records: [{ preference: 10, exchange: 'a.example' }, { preference: 20, exchange: 'b.example' }] };
    const b: DnsAnswer<'MX'> = { kind: 'records', records: [{ preference: 20, exchange: 'b.example' }, { preference: 10, exchange: 'a.example' }] };
    expect(sameMxAnswer(a, b)).toBe(true);
    expect(sameMxAnswer(a, { kind: 'nodata' })).toBe(false);
  });
});
