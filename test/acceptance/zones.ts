/**
 * Zone files for the engine-truth acceptance test (issue 12): one registrable domain per shape under
 * the `.test` TLD (RFC 6761), with TTL 2 and SOA MINIMUM 2, in the standard syntax NSD loads. Two
 * versions: `before` and `after`, where a few records change (an SPF closed, a DMARC record and an
 * SPF record added where there was NXDOMAIN / NODATA) so that the test can watch cached answers
 * expire. `expectations` holds what the issue says is right for each name.
 */

/** The TTL of every record and the SOA MINIMUM (negative answers, RFC 2308 §5). */
export const ACCEPTANCE_TTL_SECONDS = 2;

/** Which version of the zones is served. */
export type ZoneVersion = 'before' | 'after';

/** Characters of padding in the hostile records: with the record itself, about 60 KB of TXT. */
export const HOSTILE_PADDING = 60_000;

/** One TXT RDATA written as quoted character-strings of at most 255 octets (RFC 1035 §3.3.14). */
function txt(value: string): string {
  const strings: string[] = [];
  for (let at = 0; at < value.length; at += 255) strings.push(`"${value.slice(at, at + 255).replaceAll('"', '\\"')}"`);
  return strings.length === 1 ? strings[0]! : `( ${strings.join('\n    ')} )`;
}

/** The zone file of `origin` (no trailing dot), with `body` lines after the SOA and NS records. */
function zone(origin: string, body: string[], serial = 1): string {
  return [
    `$ORIGIN ${origin}.`,
    `$TTL ${ACCEPTANCE_TTL_SECONDS}`,
    `@ IN SOA ns1.dns.test. hostmaster.${origin}. ( ${serial} 3600 900 1209600 ${ACCEPTANCE_TTL_SECONDS} )`,
    '  IN NS ns1.dns.test.',
    ...body,
    '',
  ].join('\n');
}

const REJECT = `_dmarc IN TXT "v=DMARC1; p=reject"`;

/** A domain that publishes `spf` at its apex under p=reject, with an A record and a mail host. */
function spfDomain(origin: string, spf: string, extra: string[] = []): string {
  return zone(origin, ['  IN A 198.51.100.10', '  IN MX 10 mx', `  IN TXT ${txt(spf)}`, 'mx IN A 198.51.100.25', REJECT, ...extra]);
}

/** The zone files (name → text) of one version. */
export function acceptanceZones(version: ZoneVersion): Map<string, string> {
  const zones = new Map<string, string>();
  const add = (origin: string, text: string) => zones.set(origin, text);
  // NSD reloads a zone file whose mtime changed; the serial grows too, as an operator's would.
  const serial = version === 'before' ? 1 : 2;

  // The TLD itself, as a registry would serve it: names under it that no zone serves get NXDOMAIN.
  add('test', zone('test', []));
  // SPF that lets anyone pass without a plain +all.
  add('minus-plus-all.test', spfDomain('minus-plus-all.test', 'v=spf1 -ip4:192.0.2.0/24 -ip4:198.51.100.0/24 -ip6:2001:db8::/32 +all'));
  add('halves.test', spfDomain('halves.test', 'v=spf1 ip4:0.0.0.0/1 ip4:128.0.0.0/2 -all'));
  add('eighth.test', spfDomain('eighth.test', 'v=spf1 ip4:32.0.0.0/3 ~all'));
  add('exists-wild.test', spfDomain('exists-wild.test', 'v=spf1 exists:%{i}._spf.exists-wild.test -all', ['*._spf IN A 127.0.0.2']));
  add('exists-listed.test', spfDomain('exists-listed.test', 'v=spf1 exists:%{i}._spf.exists-listed.test -all', ['198.51.100.7._spf IN A 127.0.0.2']));
  add('ip6-wide.test', spfDomain('ip6-wide.test', 'v=spf1 ip6:::/1 -all'));
  add('ip6-narrow.test', spfDomain('ip6-narrow.test', 'v=spf1 ip6:2001:db8::/9 -all'));
  add('include-chain.test', spfDomain('include-chain.test', 'v=spf1 ip4:198.51.100.10 include:_a.include-chain.test -all', [
    `_a IN TXT ${txt('v=spf1 ip4:198.51.100.20 include:_b.include-chain.test ~all')}`,
    `_b IN TXT ${txt('v=spf1 include:_c.include-chain.test -all')}`,
    `_c IN TXT ${txt('v=spf1 +all')}`,
  ]));
  add('redirect-open.test', spfDomain('redirect-open.test', 'v=spf1 ip4:198.51.100.10 redirect=_open.redirect-open.test', [`_open IN TXT ${txt('v=spf1 ?ip4:192.0.2.1 +all')}`]));
  add('ptr.test', spfDomain('ptr.test', 'v=spf1 ptr -all'));
  add('macro-a.test', spfDomain('macro-a.test', 'v=spf1 a:%{d} a:%{d2} mx -all'));
  // The forger chooses the HELO name: it points wherever they like.
  add('helo-macro.test', spfDomain('helo-macro.test', 'v=spf1 ip4:198.51.100.10 a:%{h} -all'));
  // Huge ranges that are not "anyone": warnings, the verdict stays with DMARC.
  add('neutral-wide.test', spfDomain('neutral-wide.test', 'v=spf1 ip4:10.0.0.0/7 ?all'));
  add('softfail-wide.test', spfDomain('softfail-wide.test', 'v=spf1 ip4:64.0.0.0/4 ip4:80.0.0.0/5 ~all'));
  // Relaxed alignment: www has a strict SPF of its own, the organizational domain an open one.
  for (const [origin, dmarc] of [
    ['org-relaxed.test', 'v=DMARC1; p=reject'],
    ['org-strict.test', 'v=DMARC1; p=reject; aspf=s'],
  ] as const) {
    add(origin, zone(origin, [
      '  IN A 198.51.100.10',
      `  IN TXT ${txt('v=spf1 ?ip4:192.0.2.0/24 +all')}`,
      `_dmarc IN TXT ${txt(dmarc)}`,
      'www IN A 198.51.100.10',
      `www IN TXT ${txt('v=spf1 ip4:198.51.100.10 -all')}`,
    ]));
  }
  // np / sp: published, and inherited from p.
  add('np-reject.test', zone('np-reject.test', [
    '  IN A 198.51.100.10',
    `  IN TXT ${txt('v=spf1 ip4:198.51.100.10 -all')}`,
    `_dmarc IN TXT ${txt('v=DMARC1; p=reject; sp=none; np=reject')}`,
    'www IN A 198.51.100.10',
  ]));
  add('inherit.test', zone('inherit.test', [
    '  IN A 198.51.100.10',
    `  IN TXT ${txt('v=spf1 ip4:198.51.100.10 -all')}`,
    `_dmarc IN TXT ${txt('v=DMARC1; p=quarantine')}`,
    'www IN A 198.51.100.10',
  ]));
  // 60 KB records: legal padding (spaces between SPF terms, around a DMARC URI) and hostile input
  // that made the old parsers backtrack. Over UDP they are truncated: the answer needs TCP.
  add('padded.test', zone('padded.test', [
    '  IN A 198.51.100.10',
    `  IN TXT ${txt(`v=spf1 ip4:198.51.100.10${' '.repeat(HOSTILE_PADDING)} -all`)}`,
    `_dmarc IN TXT ${txt(`v=DMARC1; p=reject; rua=mailto:dmarc@padded.test${' '.repeat(HOSTILE_PADDING)}`)}`,
  ]));
  add('hostile.test', zone('hostile.test', [
    '  IN A 198.51.100.10',
    `  IN TXT ${txt(`v=spf1 a:x.${'a'.repeat(HOSTILE_PADDING)}! -all`)}`,
    `_dmarc IN TXT ${txt(`v=DMARC1; p=reject; rua=mailto:${' '.repeat(HOSTILE_PADDING)}x`)}`,
  ]));
  add('hostile-macro.test', zone('hostile-macro.test', [
    '  IN A 198.51.100.10',
    // 15,000 macros: the expansion (270 KB) is cut from the left to 253 octets (RFC 7208 §7.3).
    `  IN TXT ${txt(`v=spf1 a:${'%{d}'.repeat(HOSTILE_PADDING / 4)} -all`)}`,
    REJECT,
  ]));

  // Records that change between the versions.
  add('flip.test', spfDomain('flip.test', version === 'before' ? 'v=spf1 +all' : 'v=spf1 ip4:198.51.100.10 -all').replace('( 1 ', `( ${serial} `));
  add('late-dmarc.test', zone('late-dmarc.test', [
    '  IN A 198.51.100.10',
    `  IN TXT ${txt('v=spf1 ip4:198.51.100.10 -all')}`,
    ...(version === 'after' ? [REJECT] : []),
  ], serial));
  add('late-spf.test', zone('late-spf.test', [
    '  IN A 198.51.100.10',
    REJECT,
    ...(version === 'after' ? [`@ IN TXT ${txt('v=spf1 +all')}`] : []),
  ], serial));
  return zones;
}

/**
 * What a name must come out as: a verdict with the verdict rule that decided it (`details.rule`) and a
 * finding that must be among its reasons, or an error code.
 */
export type Expectation =
  | { verdict: 'spoofable' | 'partially_protected' | 'protected'; rule: string; finding?: string }
  | { error: string };

/** The right answer for each name in the `before` version, per issue 12. */
export const expectations: Record<string, Expectation> = {
  'minus-plus-all.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'halves.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'eighth.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'exists-wild.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'exists-listed.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'ip6-wide.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  // 2000::/9 is not open to anyone, but holds cloud providers' IPv6 space: rentable (issue 17).
  'ip6-narrow.test': { verdict: 'spoofable', rule: 'spf-shared-infrastructure' },
  'include-chain.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'redirect-open.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'ptr.test': { verdict: 'protected', rule: 'dmarc-reject', finding: 'spf-ptr-used' },
  'macro-a.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'helo-macro.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'neutral-wide.test': { verdict: 'protected', rule: 'dmarc-reject', finding: 'spf-wide-pass' },
  // 64.0.0.0/4 and 80.0.0.0/5 hold EC2 and Azure space: anyone who rents there passes (issue 17).
  'softfail-wide.test': { verdict: 'spoofable', rule: 'spf-shared-infrastructure', finding: 'spf-wide-pass' },
  'www.org-relaxed.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'www.org-strict.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'org-strict.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'nope.test': { error: 'domain_not_found' },
  'ghost.nope.test': { error: 'domain_not_found' },
  'ghost.np-reject.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'www.np-reject.test': { verdict: 'spoofable', rule: 'dmarc-policy-none' },
  'www.inherit.test': { verdict: 'partially_protected', rule: 'dmarc-policy-quarantine' },
  'ghost.inherit.test': { verdict: 'partially_protected', rule: 'dmarc-policy-quarantine' },
  'padded.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'hostile.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'hostile-macro.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'flip.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
  'late-dmarc.test': { verdict: 'spoofable', rule: 'dmarc-missing' },
  'late-spf.test': { verdict: 'protected', rule: 'dmarc-reject' },
};

/** The right answer for the names that change, in the `after` version. */
export const expectationsAfter: Record<string, Expectation> = {
  'flip.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'late-dmarc.test': { verdict: 'protected', rule: 'dmarc-reject' },
  'late-spf.test': { verdict: 'spoofable', rule: 'spf-open-to-anyone' },
};
