/**
 * The OpenSPF test suites (conformance/spf/), every test as one vitest test: `describe` per suite
 * file and scenario, `it` per test, named by the test's own name. The 7208 file is the one to pass;
 * the 4408 file is run too, with any test RFC 7208 contradicts listed in RFC4408_SKIPS.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RFC4408_SKIPS, SUITE_FILES, loadSuite, runTest } from './suite.js';

describe('suite files', () => {
  it.each([
    ['rfc7208', 16, 203, '901f561a6e2b1c1590a40a61b1ac7601226fd7045a7aae591a4d25421358d6f9'],
    ['rfc4408', 15, 191, '82b7d1840745d1249f1fe7055be7e1b536ed38eeaeac40c481d7f1825da4415c'],
  ] as const)('%s is the unedited copy with %i scenarios and %i tests', (suite, scenarios, tests, sha256) => {
    // The hashes are the ones SOURCE.md records for the upstream files.
    expect(createHash('sha256').update(readFileSync(SUITE_FILES[suite])).digest('hex')).toBe(sha256);
    const loaded = loadSuite(suite);
    expect(loaded).toHaveLength(scenarios);
    expect(loaded.reduce((sum, scenario) => sum + scenario.tests.length, 0)).toBe(tests);
  });

  it('skips only tests that exist in the 4408 file', () => {
    const names = new Set(loadSuite('rfc4408').flatMap((scenario) => scenario.tests.map((test) => test.name)));
    for (const name of Object.keys(RFC4408_SKIPS)) expect(names).toContain(name);
  });
});

for (const suite of ['rfc7208', 'rfc4408'] as const) {
  describe(suite, () => {
    for (const scenario of loadSuite(suite)) {
      describe(scenario.description, () => {
        for (const test of scenario.tests) {
          const skip = suite === 'rfc4408' ? RFC4408_SKIPS[test.name] : undefined;
          if (skip !== undefined) {
            it.skip(`${test.name} (contradicts RFC 7208: ${skip})`, () => {});
            continue;
          }
          it(test.name, async () => {
            const outcome = await runTest(test, scenario.resolver);
            expect(outcome.failure, `${test.spec}: ${test.description}`).toBeUndefined();
            expect(test.results).toContain(outcome.actual.result);
          });
        }
      });
    }
  });
}
