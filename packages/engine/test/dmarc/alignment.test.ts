import { describe, expect, it } from 'vitest';
import { checkAlignment } from '../../src/dmarc/alignment.js';
import type { AlignmentMode } from '../../src/dmarc/types.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { recording, txt } from './helpers.js';

const ORG = txt('_dmarc.example.org', 'v=DMARC1; p=reject; aspf=s; adkim=s; fo=1; rua=mailto:d@example.org');
const TW4 = [txt('_dmarc.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.signing.example.com', 'v=DMARC1; p=reject')];
const TW6 = [txt('_dmarc.bank.example', 'v=DMARC1; p=reject; psd=y; rua=mailto:psd@bank.example'), txt('_dmarc.giant.bank.example', 'v=DMARC1; p=quarantine')];

describe('checkAlignment (cases.md §12 and §10)', () => {
  it.each<[string, ResourceRecord[], string, string, AlignmentMode, 'aligned' | 'not-aligned', string]>([
    ['L1', [ORG], 'example.org', 'example.org', 's', 'aligned', 'strict: identical names'],
    ['L2', [ORG], 'example.org', 'subdomain.example.org', 'r', 'aligned', 'relaxed: same organizational domain'],
    ['L3', [ORG], 'example.org', 'subdomain.example.org', 's', 'not-aligned', 'strict: not identical'],
    ['L4', [ORG], 'example.org', 'example.org', 's', 'aligned', 'aligned identifiers; the failure comes from SPF/DKIM themselves, outside alignment'],
    ['L5', [txt('_dmarc.strict.example', 'v=DMARC1; p=reject; adkim=s; aspf=s')], 'strict.example', 'sub.strict.example', 's', 'not-aligned', 'strict subdomain'],
    ['L6', [txt('_dmarc.reject.example', 'v=DMARC1; p=reject')], 'reject.example', 'sub.reject.example', 'r', 'aligned', 'relaxed subdomain'],
    ['L7', [txt('_dmarc.example.com', 'v=DMARC1; p=reject; adkim=S')], 'mail.example.com', 'example.com', 's', 'not-aligned', 'strict parent'],
    ['TW4-spf', TW4, 'example.com', 'example.com', 'r', 'aligned', 'same name'],
    ['TW4-dkim', TW4, 'example.com', 'signing.example.com', 'r', 'aligned', 'both records: fewest labels is example.com'],
    ['TW5-spf', TW4, 'a.b.c.d.e.f.g.h.i.j.k.example.com', 'example.com', 'r', 'aligned', 'deep author, walk with the shortcut'],
    ['TW5-dkim', TW4, 'a.b.c.d.e.f.g.h.i.j.k.example.com', 'signing.example.com', 'r', 'aligned', 'deep author, signing subdomain'],
    ['TW6-spf', TW6, 'giant.bank.example', 'mail.giant.bank.example', 'r', 'aligned', 'one below the PSD'],
    ['TW6-dkim', TW6, 'giant.bank.example', 'mail.mega.bank.example', 'r', 'not-aligned', 'mega.bank.example is another organization'],
    ['case', [ORG], 'Example.ORG', 'example.org.', 's', 'aligned', 'names compare case-insensitively (RFC 4343)'],
  ])('%s: %s vs %s, %s (%s)', async (_id, records, author, identifier, mode, status) => {
    const result = await checkAlignment(author, identifier, mode, recording(...records));
    expect(result.status).toBe(status);
  });

  it('TW6: reports the organizational domains it compared', async () => {
    const result = await checkAlignment('giant.bank.example', 'mail.mega.bank.example', 'r', recording(...TW6));
    expect(result).toMatchObject({ authorOrganizationalDomain: 'giant.bank.example', identifierOrganizationalDomain: 'mega.bank.example' });
  });

  it('strict alignment asks no DNS question', async () => {
    const resolver = recording(ORG);
    await checkAlignment('example.org', 'subdomain.example.org', 's', resolver);
    expect(resolver.calls).toEqual([]);
  });

  it('a failed walk query is a temperror, not "not aligned"', async () => {
    const resolver = recording(ORG).fail('_dmarc.example.org', 'servfail');
    const result = await checkAlignment('example.org', 'subdomain.example.org', 'r', resolver);
    expect(result).toMatchObject({ status: 'temperror', failedQuery: { name: '_dmarc.example.org', reason: 'servfail' } });
  });
});
