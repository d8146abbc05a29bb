/**
 * The regression corpus: every scenario of `fixtures/scenarios.json` checked over the fixture zones
 * (in memory, with the scenario's DNS faults injected by `FaultyResolver`) must give exactly its golden.
 * Then the corpus itself is checked: it covers every verdict rule and every finding id the issue
 * names, each scenario pins what it says it covers, and every zone loads.
 *
 * A failing scenario means the engine's answer changed. Run `npm run record-goldens` to see the diff;
 * record it with `-- --write` only when the new answer is the right one.
 */
import { readdir } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalName, isAtOrBelow } from '../../src/dns/name.js';
import type { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { normaliseDomainInput } from '../../src/input.js';
import { VERDICT_RULES } from '../../src/verdict/rules.js';
import { loadZoneFile } from '../../src/zones/load.js';
import {
  EXPECTED_DIR,
  isProjectedError,
  loadCorpusResolver,
  loadScenarios,
  MIN_SCENARIOS,
  readGolden,
  runScenario,
  ZONES_DIR,
  type Projection,
} from './project.js';

/**
 * The finding ids the issue asks the corpus to pin, by protocol. Each must be among the reasons of at
 * least one golden, so a change that stops emitting one cannot go unnoticed.
 */
const REQUIRED_FINDING_IDS: readonly string[] = [
  // Verdict reasons (src/verdict/rules.ts)
  'spf-plus-all', 'spf-open-to-anyone', 'dmarc-missing', 'dmarc-multiple', 'dmarc-unusable', 'dmarc-p-none', 'dmarc-sp-none',
  'dmarc-np-none', 'dmarc-p-quarantine', 'dmarc-testing-mode', 'dmarc-pct-low', 'dmarc-protected', 'subdomain-hole',
  'subdomain-locked', 'spf-missing-with-reject',
  // SPF: lookup limits, syntax, several records, weak endings, redirects, loops, missing targets, ptr, macros, size, failures
  'spf-permerror', 'spf-void-lookups', 'spf-syntax-error', 'spf-multiple-records', 'spf-neutral', 'spf-no-all', 'spf-redirect-ignored',
  'spf-include-loop', 'spf-include-missing', 'spf-ptr-used', 'spf-macro-unresolvable', 'spf-record-too-long', 'spf-missing',
  'spf-valid', 'spf-temperror', 'spf-evaluation-temperror', 'spf-wide-pass',
  // SPF: shared infrastructure (BreakSPF): rentable cloud, CI runner or CDN edge space passes
  'spf-shared-infrastructure', 'spf-shared-infrastructure-fixed',
  // DMARC: unusable policy, test mode, legacy pct and tags, reports, look-alike records
  'dmarc-invalid-policy', 'dmarc-pct-partial', 'dmarc-no-rua', 'dmarc-report-destination-unverified',
  'dmarc-legacy-tag', 'dmarc-syntax',
  // DKIM: key sizes, revoked, testing, none found, failed probes, dangling aliases
  'dkim-found', 'dkim-weak-key', 'dkim-key-too-short', 'dkim-key-revoked', 'dkim-testing', 'dkim-not-found', 'dkim-probe-failed',
  'dkim-cname-dangling',
  // MX: none, null MX, provider, IP literal, alias, mixed null MX, failures, unresolvable and duplicate hosts
  'mx-missing', 'mx-null', 'mx-provider', 'mx-ip-literal', 'mx-cname', 'mx-null-mixed', 'mx-temperror', 'mx-host-unresolvable',
  'mx-duplicate',
];

/** The refusals `checkDomain` can make (src/errors.ts); each must be the outcome of some scenario. */
const REQUIRED_ERROR_CODES: readonly string[] = ['invalid_domain', 'dns_failure', 'dns_timeout', 'domain_not_found'];

const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const scenarios = await loadScenarios();
const goldens = new Map<string, Projection | undefined>(
  await Promise.all(scenarios.map(async (scenario) => [scenario.name, await readGolden(scenario.name)] as const)),
);

/** Everything a golden pins that a scenario's `covers` may name: its rule, reason ids, error code. */
function pinnedIds(golden: Projection): Set<string> {
  if (isProjectedError(golden)) return new Set([golden.error.code]);
  return new Set([golden.rule, ...golden.reasons.map(([id]) => id)]);
}

describe('regression corpus: each scenario gives its golden', () => {
  let resolver: ZoneResolver;
  beforeAll(async () => {
    resolver = await loadCorpusResolver();
  });

  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const golden = goldens.get(scenario.name);
      expect(golden, `no golden fixtures/expected/${scenario.name}.json: run npm run record-goldens`).toBeDefined();
      expect(await runScenario(scenario, resolver)).toEqual(golden);
    });
  }
});

describe('regression corpus: coverage', () => {
  const recorded = [...goldens.values()].filter((golden): golden is Projection => golden !== undefined);
  const results = recorded.filter((golden) => !isProjectedError(golden));

  it('has every verdict rule as the rule of at least one golden', () => {
    const rules = new Set(results.map((golden) => ('rule' in golden ? golden.rule : '')));
    expect(VERDICT_RULES.map((rule) => rule.id).filter((id) => !rules.has(id))).toEqual([]);
  });

  it('has every finding id the issue names among the reasons of at least one golden', () => {
    const ids = new Set(results.flatMap((golden) => ('reasons' in golden ? golden.reasons.map(([id]) => id) : [])));
    expect(REQUIRED_FINDING_IDS.filter((id) => !ids.has(id))).toEqual([]);
  });

  it('has every refusal code as the outcome of at least one golden', () => {
    const codes = new Set<string>(recorded.filter(isProjectedError).map((golden) => golden.error.code));
    expect(REQUIRED_ERROR_CODES.filter((code) => !codes.has(code))).toEqual([]);
  });

  it('pins, in each golden, every rule, finding id or error code its scenario says it covers', () => {
    const unpinned = scenarios.flatMap((scenario) => {
      const golden = goldens.get(scenario.name);
      if (golden === undefined) return [`${scenario.name}: no golden`];
      const pinned = pinnedIds(golden);
      return scenario.covers.filter((id) => !pinned.has(id)).map((id) => `${scenario.name}: ${id}`);
    });
    expect(unpinned).toEqual([]);
  });
});

describe('regression corpus: the scenario list and its zones', () => {
  it(`holds at least ${MIN_SCENARIOS} scenarios with unique kebab-case names, each covering something`, () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(MIN_SCENARIOS);
    const names = scenarios.map((scenario) => scenario.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((name) => !KEBAB_CASE.test(name))).toEqual([]);
    expect(scenarios.filter((scenario) => scenario.covers.length === 0 || scenario.description.trim() === '').map((s) => s.name)).toEqual([]);
  });

  it('has a scenario for every golden file (no orphans)', async () => {
    const files = (await readdir(EXPECTED_DIR)).filter((file) => file.endsWith('.json'));
    const names = new Set(scenarios.map((scenario) => scenario.name));
    expect(files.filter((file) => !names.has(file.slice(0, -'.json'.length)))).toEqual([]);
  });

  it("loads each scenario's zone file, and the name checked lies in that zone", async () => {
    const problems: string[] = [];
    for (const scenario of scenarios) {
      const input = normaliseDomainInput(scenario.input);
      if (scenario.zone === null) {
        // Refused input: no zone, and the golden must be a refusal.
        const golden = goldens.get(scenario.name);
        if (input.ok || (golden !== undefined && !isProjectedError(golden))) problems.push(`${scenario.name}: zone null but the input is accepted`);
        continue;
      }
      if (!input.ok) {
        problems.push(`${scenario.name}: the input is refused (${input.message}) but a zone is named`);
        continue;
      }
      // Throws (failing the test with file, line and column) when the file does not load.
      const zone = await loadZoneFile(`${ZONES_DIR}${scenario.zone}`);
      if (!isAtOrBelow(canonicalName(input.domain), zone.origin)) problems.push(`${scenario.name}: ${input.domain} is outside ${zone.origin}`);
    }
    expect(problems).toEqual([]);
  });
});
