/**
 * The summary never contradicts the verdict, in every corpus scenario: a spoofable domain's summary
 * says forged mail reaches inboxes and never that receivers refuse it; a protected domain's never
 * says it reaches inboxes. (A new verdict rule once fell through to the protected sentence: "refuse
 * forged mail" under a SPOOFABLE badge.) Every rule also has a sentence of its own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { FaultyResolver } from '../../src/dns/faults.js';
import type { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { isSpoofCheckError } from '../../src/errors.js';
import { VERDICT_RULES } from '../../src/verdict/rules.js';
import { CORPUS_CLOCK, loadCorpusResolver, loadScenarios } from '../corpus/project.js';

const scenarios = await loadScenarios();

describe('the summary agrees with the verdict', () => {
  let resolver: ZoneResolver;
  const seenRules = new Set<string>();
  beforeAll(async () => {
    resolver = await loadCorpusResolver();
  });

  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))('%s', async (_name, scenario) => {
    const effective = scenario.faults && scenario.faults.length > 0 ? new FaultyResolver(resolver, scenario.faults) : resolver;
    let result;
    try {
      result = await checkDomain(scenario.input, { resolver: effective, selectors: scenario.selectors, now: () => CORPUS_CLOCK });
    } catch (error) {
      if (isSpoofCheckError(error)) return; // no verdict, no summary
      throw error;
    }
    seenRules.add(result.details.rule);
    if (result.verdict === 'spoofable') {
      expect(result.summary).not.toMatch(/refuse forged mail/i);
      expect(result.summary).toMatch(/reaches inboxes|does not exist/);
    }
    if (result.verdict === 'protected') expect(result.summary).not.toMatch(/reaches inboxes/);
    if (result.verdict === 'partially_protected') expect(result.summary).toMatch(/spam|in part/);
  });

  it('covers every verdict rule', () => {
    expect([...seenRules].sort()).toEqual(VERDICT_RULES.map((rule) => rule.id).sort());
  });
});
