import { describe, expect, it } from 'vitest';
import {
  oneLabelBelow,
  pslOrganizationalDomain,
  selectOrganizationalDomain,
  TREE_WALK_MAX_QUERIES,
  treeWalkTargets,
} from '../../src/dmarc/orgdomain.js';
import type { WalkRecord } from '../../src/dmarc/orgdomain.js';

describe('treeWalkTargets (RFC 9989 §4.10)', () => {
  it.each<[string, string[], string]>([
    ['example.com', ['example.com', 'com'], 'two labels'],
    ['sub.example.com', ['sub.example.com', 'example.com', 'com'], 'TW13: down to the TLD'],
    ['com', ['com'], 'a TLD alone'],
    ['a.b.c.d.e.f.example.com', ['a.b.c.d.e.f.example.com', 'b.c.d.e.f.example.com', 'c.d.e.f.example.com', 'd.e.f.example.com', 'e.f.example.com', 'f.example.com', 'example.com', 'com'], 'eight labels: one at a time, eight names'],
    [
      'a.b.c.d.e.f.g.example.com',
      ['a.b.c.d.e.f.g.example.com', 'c.d.e.f.g.example.com', 'd.e.f.g.example.com', 'e.f.g.example.com', 'f.g.example.com', 'g.example.com', 'example.com', 'com'],
      'nine labels: straight to the rightmost seven',
    ],
    [
      'a.b.c.d.e.f.g.h.i.j.k.example.com',
      ['a.b.c.d.e.f.g.h.i.j.k.example.com', 'g.h.i.j.k.example.com', 'h.i.j.k.example.com', 'i.j.k.example.com', 'j.k.example.com', 'k.example.com', 'example.com', 'com'],
      'TW1: thirteen labels',
    ],
    [
      'a.b.c.d.e.f.g.h.i.j.mail.example.com',
      ['a.b.c.d.e.f.g.h.i.j.mail.example.com', 'g.h.i.j.mail.example.com', 'h.i.j.mail.example.com', 'i.j.mail.example.com', 'j.mail.example.com', 'mail.example.com', 'example.com', 'com'],
      'TW2: the RFC 9989 §4.10 example',
    ],
  ])('%s (%s)', (start, expected) => {
    expect(treeWalkTargets(start)).toEqual(expected);
  });

  it('never gives more than the query cap, however deep the name', () => {
    const deep = Array.from({ length: 100 }, (_, index) => `l${index}`).join('.');
    const targets = treeWalkTargets(deep);
    expect(targets).toHaveLength(TREE_WALK_MAX_QUERIES);
    expect(targets[1]?.split('.')).toHaveLength(TREE_WALK_MAX_QUERIES - 1);
  });

  it('gives nothing for the root', () => {
    expect(treeWalkTargets('')).toEqual([]);
  });
});

describe('selectOrganizationalDomain (RFC 9989 §4.10.2)', () => {
  it.each<[string, string, WalkRecord[], string, string]>([
    ['TW7', 'a.mail.example.com', [{ domain: 'mail.example.com', psd: 'u' }, { domain: 'example.com', psd: 'u' }], 'example.com', 'fewest labels wins'],
    ['TW8', 'a.mail.example.com', [{ domain: 'mail.example.com', psd: 'n' }], 'mail.example.com', 'psd=n marks its own name'],
    ['TW9', 'a.mail.example.com', [{ domain: 'com', psd: 'y' }], 'example.com', 'one label below a psd=y name'],
    ['TW10', 'a.b.example.com', [{ domain: 'b.example.com', psd: 'n' }], 'b.example.com', 'psd=n stops the walk'],
    ['TW12', 'bank.example', [{ domain: 'bank.example', psd: 'y' }], 'bank.example', 'psd=y at the start does not count for rule 2; rule 3 picks it'],
    ['TW6', 'mail.giant.bank.example', [{ domain: 'giant.bank.example', psd: 'u' }, { domain: 'bank.example', psd: 'y' }], 'giant.bank.example', 'PSD example: one below bank.example'],
    ['TW6-dkim', 'mail.mega.bank.example', [{ domain: 'bank.example', psd: 'y' }], 'mega.bank.example', 'no record at mega: one below the PSD'],
    ['TW13', 'sub.example.com', [], 'sub.example.com', 'no record: the start itself'],
  ])('%s: %s → %s (%s)', (_id, start, found, expected) => {
    expect(selectOrganizationalDomain(start, found)).toBe(expected);
  });

  it('counts labels, not characters, for one label below', () => {
    expect(oneLabelBelow('a.b.c.d.e.f.g.h.example.com', 'com')).toBe('example.com');
    expect(oneLabelBelow('example.com', 'com')).toBe('example.com');
  });
});

describe('pslOrganizationalDomain (RFC 7489 §3.2, ICANN section only)', () => {
  it.each<[string, string, string]>([
    ['a.b.c.d.example.com', 'example.com', 'the registered domain'],
    ['mail.example.co.uk', 'example.co.uk', 'a two-label public suffix'],
    ['foo.github.io', 'github.io', 'private-section suffixes are not used'],
    ['foo.blogspot.com', 'blogspot.com', 'private-section suffixes are not used'],
    ['giant.bank.example', 'bank.example', 'an unlisted TLD counts as a one-label suffix'],
    ['com', 'com', 'a public suffix is its own'],
    ['co.uk', 'co.uk', 'a two-label public suffix is its own'],
  ])('%s → %s (%s)', (name, expected) => {
    expect(pslOrganizationalDomain(name)).toBe(expected);
    expect(pslOrganizationalDomain(name)).toBe(expected); // the second answer comes from the memo
  });
});
