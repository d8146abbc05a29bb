/**
 * A failed lookup is never summarised as absent: SERVFAIL on MX, or on every DKIM selector, makes
 * the summary's `published` null with `status` 'error' (an answer NXDOMAIN/NODATA keeps it false),
 * and every view says "could not be checked": the CLI report, the CSV line, the page.
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { csvLine, CSV_COLUMNS } from '../../src/cli/scan.js';
import { formatReport } from '../../src/cli/report.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import type { DnsAnswer, RecordType, Resolver } from '../../packages/engine/src/dns/types.js';
import { toHtmlString } from '../../src/web/html.js';
import { resultPage } from '../../src/web/result-view.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';

const zones = new ZoneResolver(await loadZoneDirectory(new URL('../../fixtures/zones', import.meta.url).pathname));

/** The fixture zones, with SERVFAIL for every query `fails` matches. */
function failing(fails: (name: string, type: RecordType) => boolean): Resolver {
  return {
    async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
      if (fails(name.toLowerCase(), type)) return { kind: 'error', reason: 'servfail', detail: 'injected' };
      return zones.resolve(name, type);
    },
  };
}

function csvCell(line: string, column: (typeof CSV_COLUMNS)[number]): string {
  return line.trim().split(',')[CSV_COLUMNS.indexOf(column)] ?? '';
}

describe('a failed lookup is not a missing record', () => {
  it('SERVFAIL on MX: mx.published is null with status error, everywhere', async () => {
    const result = await checkDomain('mx-servfail.example', { resolver: failing((name, type) => name === 'mx-servfail.example' && type === 'MX') });
    expect(result.mx).toEqual({ published: null, status: 'error', provider: null });
    expect(formatReport(result)).toMatch(/MX {5}could not be checked \(the MX lookup failed\)/);
    expect(formatReport(result)).not.toMatch(/MX {5}none/);
    expect(csvCell(csvLine('mx-servfail.example', result), 'mx_published')).toBe('error');
    expect(toHtmlString(resultPage(result, { origin: null }))).toContain('Could not be checked: the MX lookup failed');
  });

  it('SERVFAIL on every DKIM selector: dkim.published is null with status error, everywhere', async () => {
    const result = await checkDomain('dkim-none.example', { resolver: failing((name) => name.endsWith('._domainkey.dkim-none.example')) });
    expect(result.dkim).toEqual({ published: null, status: 'error', selector: null, keyLength: null });
    expect(formatReport(result)).toMatch(/DKIM {3}could not be checked \(\d+ selector lookups failed\)/);
    expect(csvCell(csvLine('dkim-none.example', result), 'dkim_published')).toBe('error');
    expect(toHtmlString(resultPage(result, { origin: null }))).toMatch(/Could not be checked: \d+ selector lookups failed/);
  });

  it('answers that say "none" stay false with status ok', async () => {
    const result = await checkDomain('dkim-none.example', { resolver: zones });
    expect(result.dkim).toMatchObject({ published: false, status: 'ok' });
    expect(result.mx.status).toBe('ok');
    expect(csvCell(csvLine('dkim-none.example', result), 'dkim_published')).toBe('false');
    expect(formatReport(result)).toContain('no usable key found');
  });

  it('a usable key found elsewhere settles it, even with some selectors failing (dkim-servfail.example)', async () => {
    const result = await checkDomain('dkim-servfail.example', { resolver: failing((name) => name === 'google._domainkey.dkim-servfail.example') });
    expect(result.dkim).toMatchObject({ published: true, status: 'ok', selector: 's1' });
  });
});
