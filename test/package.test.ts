import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const zones = new URL('./cli/zones/', import.meta.url).pathname;

describe('the package as others use it', () => {
  it('exports the documented surface from src/index.ts', () => {
    for (const name of ['checkDomain', 'SpoofCheckError', 'isSpoofCheckError', 'normaliseDomainInput', 'decide', 'ZoneResolver', 'NetworkResolver', 'CachingResolver', 'ConcurrencyLimitedResolver', 'createCheckResolver', 'FaultyResolver', 'parseZone', 'loadZoneDirectory', 'analyzeSpf', 'checkHost', 'discoverDmarc', 'probeDkim', 'lookupMx']) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it("resolves `import { checkDomain } from 'spoof-checker'` to the built package", async () => {
    const script = `
      import { checkDomain, ZoneResolver, loadZoneDirectory } from 'spoof-checker';
      const resolver = new ZoneResolver(await loadZoneDirectory(${JSON.stringify(zones)}));
      const result = await checkDomain('open.example', { resolver });
      console.log(JSON.stringify([result.verdict, result.reasons[0].id]));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual(['spoofable', 'spf-plus-all']);
  });

  it('runs the bin: spoof-checker check --json', async () => {
    const { stdout } = await run(process.execPath, ['bin/spoof-checker.js', 'check', 'demo.example', '--zones', zones, '--json'], { cwd: root });
    expect(JSON.parse(stdout)).toMatchObject({ domain: 'demo.example', verdict: 'protected', inboxOutcome: 'rejected' });
  });

  it('exits 2 with usage on a bad command', async () => {
    await expect(run(process.execPath, ['bin/spoof-checker.js', 'frobnicate'], { cwd: root })).rejects.toMatchObject({ code: 2 });
  });
});
