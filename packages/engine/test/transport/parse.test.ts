import { describe, expect, it } from 'vitest';
import { certificateNameMatches, matchesOneLabelPattern, mxCovered } from '../../src/transport/mx-pattern.js';
import { parseStsPolicy, parseStsRecord, parseTlsRptRecord, selectRecord } from '../../src/transport/parse.js';

describe('selectRecord (RFC 8461 §3.1, RFC 8460 §3)', () => {
  const rows: [string, string[][], 'mta-sts' | 'tlsrpt', string, RegExp | string | null][] = [
    ['nothing', [], 'mta-sts', 'absent', null],
    ['only unrelated TXT', [['v=spf1 -all']], 'mta-sts', 'absent', null],
    ['one record', [['v=STSv1; id=1']], 'mta-sts', 'one', 'v=STSv1; id=1'],
    ['strings joined without spaces', [['v=STSv1; i', 'd=20240101']], 'mta-sts', 'one', 'v=STSv1; id=20240101'],
    ['one among unrelated', [['hello'], ['v=STSv1;id=abc']], 'mta-sts', 'one', 'v=STSv1;id=abc'],
    ['two records', [['v=STSv1; id=1'], ['v=STSv1; id=2']], 'mta-sts', 'invalid', /2 records/],
    ['wrong case', [['v=stsv1; id=1']], 'mta-sts', 'invalid', /does not begin/],
    ['no semicolon', [['v=STSv1 id=1']], 'mta-sts', 'invalid', /does not begin/],
    ['tlsrpt one', [['v=TLSRPTv1; rua=mailto:a@b.example']], 'tlsrpt', 'one', 'v=TLSRPTv1; rua=mailto:a@b.example'],
    ['tlsrpt without ;', [['v=TLSRPTv1 rua=mailto:a@b.example']], 'tlsrpt', 'invalid', /does not begin/],
    ['tlsrpt two', [['v=TLSRPTv1;rua=mailto:a@b.example'], ['v=TLSRPTv1;rua=mailto:c@b.example']], 'tlsrpt', 'invalid', /2 records/],
  ];
  it.each(rows)('%s', (_name, txt, kind, expected, detail) => {
    const selection = selectRecord(txt, kind);
    expect(selection.kind).toBe(expected);
    if (selection.kind === 'one') expect(selection.text).toBe(detail);
    if (selection.kind === 'invalid') expect(selection.problem).toMatch(detail as RegExp);
  });
});

describe('parseStsRecord (RFC 8461 §3.1)', () => {
  const rows: [string, string | null, string | null][] = [
    ['v=STSv1; id=20160831085700Z', '20160831085700Z', null],
    ['v=STSv1;id=abc;', 'abc', null],
    ['v=STSv1 ; id=abc ; ', 'abc', null],
    ['v=STSv1; id=abc; future=thing', 'abc', null], // unknown fields ignored
    ['v=STSv1; ext_1.x-y=a:b; id=abc', 'abc', null],
    ['v=STSv1; id=first; id=second', 'first', null], // first value kept
    [`v=STSv1; id=${'a'.repeat(32)}`, 'a'.repeat(32), null],
    [`v=STSv1; id=${'a'.repeat(33)}`, null, 'letters and digits'],
    ['v=STSv1; id=2024-01-01', null, 'letters and digits'],
    ['v=STSv1; id=', null, 'letters and digits'],
    ['v=STSv1;', null, 'no field'],
    ['v=STSv1; foo=bar', null, 'no id'],
    ['v=STSv1; id=1; garbage', null, 'not a name=value'],
    ['v=STSv1; id=1; _x=y', null, 'not a valid field'],
  ];
  it.each(rows)('%s', (text, id, problem) => {
    const parsed = parseStsRecord(text);
    if (id !== null) expect(parsed).toEqual({ ok: true, id });
    else {
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toContain(problem);
    }
  });
});

describe('parseTlsRptRecord (RFC 8460 §3)', () => {
  const rows: [string, string[] | null, string | null][] = [
    ['v=TLSRPTv1; rua=mailto:tlsrpt@example.com', ['mailto:tlsrpt@example.com'], null],
    ['v=TLSRPTv1;rua=https://reports.example.com/tlsrpt', ['https://reports.example.com/tlsrpt'], null],
    ['v=TLSRPTv1; rua=mailto:a@example.com , https://r.example.net/x;', ['mailto:a@example.com', 'https://r.example.net/x'], null],
    ['v=TLSRPTv1; rua=mailto:a@example.com; ext=1', ['mailto:a@example.com'], null],
    ['v=TLSRPTv1; rua=mailto:a@example.com; rua=mailto:b@example.com', ['mailto:a@example.com'], null],
    ['v=TLSRPTv1; rua=http://r.example.com/', null, 'mailto: or https:'],
    ['v=TLSRPTv1; rua=mailto:nobody', null, 'not a mailto'],
    ['v=TLSRPTv1; rua=', null, 'empty'],
    ['v=TLSRPTv1; ext=1', null, 'no rua'],
    ['v=TLSRPTv1', null, 'no field'],
  ];
  it.each(rows)('%s', (text, rua, problem) => {
    const parsed = parseTlsRptRecord(text);
    if (rua !== null) expect(parsed).toEqual({ ok: true, rua });
    else {
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toContain(problem);
    }
  });
});

describe('parseStsPolicy (RFC 8461 §3.2)', () => {
  const good = 'version: STSv1\nmode: enforce\nmx: mail.example.com\nmx: *.example.net\nmax_age: 604800\n';
  it('reads a policy with LF line ends', () => {
    expect(parseStsPolicy(good)).toEqual({ ok: true, policy: { mode: 'enforce', maxAge: 604800, mx: ['mail.example.com', '*.example.net'] }, ignored: [] });
  });
  it('reads CRLF and no final line end the same', () => {
    expect(parseStsPolicy(good.replace(/\n/g, '\r\n'))).toEqual(parseStsPolicy(good));
    expect(parseStsPolicy(good.trimEnd())).toEqual(parseStsPolicy(good));
  });
  const rows: [string, string, Record<string, unknown> | string][] = [
    ['unknown fields ignored', 'version: STSv1\nmode: testing\nmx: a.example\nmax_age: 86400\nfuture_field: yes\n', { mode: 'testing', mx: ['a.example'], ignored: ['future_field'] }],
    ['first value of a duplicated field', 'version: STSv1\nmode: testing\nmode: enforce\nmx: a.example\nmax_age: 86400\nmax_age: 5\n', { mode: 'testing', maxAge: 86400 }],
    ['no whitespace after colon', 'version:STSv1\nmode:none\nmax_age:0\n', { mode: 'none', maxAge: 0, mx: [] }],
    ['mx lower-cased, trailing dot dropped', 'version: STSv1\nmode: enforce\nmx: MAIL.Example.COM.\nmax_age: 1\n', { mx: ['mail.example.com'] }],
    ['max_age at the maximum', 'version: STSv1\nmode: none\nmax_age: 31557600\n', { maxAge: 31557600 }],
    ['max_age over the maximum', 'version: STSv1\nmode: none\nmax_age: 31557601\n', 'exceeds the maximum'],
    ['max_age with 11 digits', 'version: STSv1\nmode: none\nmax_age: 00000000001\n', 'not a number'],
    ['max_age negative', 'version: STSv1\nmode: none\nmax_age: -1\n', 'not a number'],
    ['mode in the wrong case', 'version: STSv1\nmode: Enforce\nmx: a.example\nmax_age: 1\n', 'not enforce, testing or none'],
    ['version missing', 'mode: none\nmax_age: 1\n', 'no version'],
    ['version wrong', 'version: STSv2\nmode: none\nmax_age: 1\n', 'not STSv1'],
    ['mode missing', 'version: STSv1\nmax_age: 1\n', 'no mode'],
    ['max_age missing', 'version: STSv1\nmode: none\n', 'no max_age'],
    ['enforce without mx', 'version: STSv1\nmode: enforce\nmax_age: 1\n', 'at least one mx'],
    ['a line that is not a field', 'version: STSv1\nmode: none\nmax_age: 1\n<html>\n', 'not a "key: value"'],
    ['an HTML page', '<!doctype html><html><body>hi</body></html>', 'not a "key: value"'],
    ['mx with a wildcard in the middle', 'version: STSv1\nmode: enforce\nmx: mail.*.example\nmax_age: 1\n', 'not a host name'],
    ['mx as a bare wildcard', 'version: STSv1\nmode: enforce\nmx: *\nmax_age: 1\n', 'not a host name'],
  ];
  it.each(rows)('%s', (_name, body, expected) => {
    const parsed = parseStsPolicy(body);
    if (typeof expected === 'string') {
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toContain(expected);
    } else {
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect({ ...parsed.policy, ignored: parsed.ignored }).toMatchObject(expected);
    }
  });
});

describe('MX patterns (RFC 8461 §4.1) and certificate names', () => {
  const rows: [string, string, boolean][] = [
    ['mail.example.com', 'mail.example.com', true],
    ['mail.example.com', 'MAIL.Example.com.', true],
    ['mail.example.com.', 'mail.example.com', true],
    ['*.example.com', 'mail.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'a.b.example.com', false], // one label only (checkdmarc and mailauth get this wrong)
    ['mail.example.com', 'mail.example.com.evil.net', false], // whole-name match only
    ['example.com', 'mail.example.com', false],
    ['*.mx.microsoft', 'icewolf-li.h-v1.mx.microsoft', false],
    ['*.mx.microsoft', 'h-v1.mx.microsoft', true],
    ['*.example.com', 'mailexample.com', false],
    ['*.example.com', '.example.com', false],
    ['*', 'com', false],
  ];
  it.each(rows)('%s covers %s: %s', (pattern, host, expected) => {
    expect(matchesOneLabelPattern(pattern, host)).toBe(expected);
    expect(mxCovered([pattern], host)).toBe(expected);
    expect(certificateNameMatches([pattern], host)).toBe(expected);
  });
  it('any of several patterns', () => {
    expect(mxCovered(['a.example', '*.b.example'], 'x.b.example')).toBe(true);
    expect(mxCovered([], 'x.b.example')).toBe(false);
  });
});
