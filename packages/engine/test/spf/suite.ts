/**
 * The OpenSPF test-suite harness, shared by the vitest file and the conformance CLI.
 *
 * It follows the driver rules written up in /work/shared/conformance/spf/FORMAT.md: every scenario is
 * its own DNS universe (one root zone), `SPF` items are copied to TXT unless the name has a `TXT`
 * item of its own (`TXT: NONE` included), `TIMEOUT` makes every type not listed before it time out,
 * names are case-insensitive, and the default explanation is the string "DEFAULT".
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { canonicalName } from '../../src/dns/name.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { checkHost } from '../../src/spf/index.js';
import type { CheckHostResult, SpfResult } from '../../src/spf/index.js';
import type { ResourceRecord, Zone } from '../../src/zones/types.js';

/** The suite files, as copied into conformance/spf/. */
export const SUITE_FILES = {
  rfc7208: fileURLToPath(new URL('../../../../conformance/spf/rfc7208-tests.yml', import.meta.url)),
  rfc4408: fileURLToPath(new URL('../../../../conformance/spf/rfc4408-tests.yml', import.meta.url)),
} as const;

/** Which suite file. */
export type SuiteName = keyof typeof SUITE_FILES;

/** The explanation both reference drivers configure as the receiver's default. */
export const DEFAULT_EXPLANATION = 'DEFAULT';
/** %{r}: no test depends on the receiver's name (FORMAT.md), so any constant will do. */
export const RECEIVER = 'receiver.example';

/** One test of the suite. */
export interface SuiteTest {
  scenario: string;
  name: string;
  spec: string;
  description: string;
  helo: string;
  host: string;
  mailfrom: string;
  /** Acceptable results; the first is the preferred one. */
  results: SpfResult[];
  explanation?: string;
}

/** One scenario: its tests and the resolver that answers from its zone data. */
export interface SuiteScenario {
  description: string;
  tests: SuiteTest[];
  resolver: Resolver;
}

/**
 * Tests of the RFC 4408 file that contradict RFC 7208 (its Appendix C lists the changes), by name,
 * with the reason; each is reported as skipped, never dropped. None is needed with this copy: where
 * RFC 7208 changed an answer (mx-limit, multitxt1, exists-dnserr, cidr6-0-ip4, …), pyspf's 4408 file
 * lists the RFC 7208 result among the acceptable ones, so every 4408 test runs.
 */
export const RFC4408_SKIPS: Readonly<Record<string, string>> = {};

/** Loads one suite file. */
export function loadSuite(name: SuiteName): SuiteScenario[] {
  const documents = parseAllDocuments(readFileSync(SUITE_FILES[name], 'utf8'));
  const scenarios: SuiteScenario[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) throw new Error(`${name}: ${document.errors[0]!.message}`);
    const data = document.toJS() as RawScenario | null;
    if (!data || !data.tests) continue;
    const { zone, timeouts } = buildZone(data.zonedata ?? {});
    const zoneResolver = new ZoneResolver([zone]);
    scenarios.push({
      description: data.description,
      tests: Object.entries(data.tests).map(([testName, raw]) => toTest(data.description, testName, raw)),
      resolver: new TimeoutResolver(zoneResolver, timeouts),
    });
  }
  return scenarios;
}

interface RawTest {
  description?: string;
  comment?: string;
  spec: unknown;
  helo: string;
  host: string;
  mailfrom: string;
  result: string | string[];
  explanation?: string;
}

interface RawScenario {
  description: string;
  tests?: Record<string, RawTest>;
  zonedata?: Record<string, unknown[]>;
}

function toTest(scenario: string, name: string, raw: RawTest): SuiteTest {
  const test: SuiteTest = {
    scenario,
    name,
    // Some `spec` values are YAML floats (3.3) or lists; they are labels only.
    spec: Array.isArray(raw.spec) ? raw.spec.map(String).join(', ') : String(raw.spec),
    description: raw.description ?? '',
    helo: String(raw.helo),
    host: String(raw.host),
    mailfrom: String(raw.mailfrom ?? ''),
    results: (Array.isArray(raw.result) ? raw.result : [raw.result]).map((result) => String(result).toLowerCase() as SpfResult),
  };
  if (raw.explanation !== undefined) test.explanation = String(raw.explanation);
  return test;
}

/** FORMAT.md "SPF to TXT duplication" and "TIMEOUT semantics", into one root zone. */
function buildZone(zonedata: Record<string, unknown[]>): { zone: Zone; timeouts: Map<string, Set<string>> } {
  const records: ResourceRecord[] = [];
  const timeouts = new Map<string, Set<string>>();
  for (const [owner, entries] of Object.entries(zonedata)) {
    const name = canonicalName(owner);
    const spfItems: (string | string[])[] = [];
    let hasTxt = false;
    const answered = new Set<string>();
    let timedOut = false;
    for (const entry of entries) {
      if (entry === 'TIMEOUT') {
        if (!timedOut) timeouts.set(name, new Set(answered));
        timedOut = true;
        continue;
      }
      const [type, value] = Object.entries(entry as Record<string, unknown>)[0]!;
      // "TXT: NONE" is a marker, not a record, and the TXT copies of SPF items come after TIMEOUT.
      if (!timedOut && type !== 'SPF' && value !== 'NONE') answered.add(type);
      switch (type) {
        case 'SPF':
          spfItems.push(value as string | string[]);
          break;
        case 'TXT':
          hasTxt = true;
          if (value !== 'NONE') records.push({ name, type: 'TXT', ttl: 300, data: characterStrings(value as string | string[]) });
          break;
        case 'A':
        case 'AAAA':
          records.push({ name, type, ttl: 300, data: String(value) });
          break;
        case 'PTR':
        case 'CNAME':
          records.push({ name, type, ttl: 300, data: canonicalName(String(value)) });
          break;
        case 'MX': {
          const [preference, exchange] = value as [number, string];
          records.push({ name, type: 'MX', ttl: 300, data: { preference: Number(preference), exchange: canonicalName(String(exchange)) } });
          break;
        }
        default:
          throw new Error(`unknown zone entry type ${type} at ${owner}`);
      }
    }
    // pyspf's driver appends a TXT copy of each SPF item, unless the name has TXT items of its own.
    if (!hasTxt) {
      for (const item of spfItems) records.push({ name, type: 'TXT', ttl: 300, data: characterStrings(item) });
    }
  }
  return { zone: { origin: '', records, source: 'OpenSPF suite' }, timeouts };
}

function characterStrings(value: string | string[]): string[] {
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/** A name with a TIMEOUT item answers only the types listed before it; every other type times out. */
class TimeoutResolver implements Resolver {
  constructor(
    private readonly inner: ZoneResolver,
    private readonly timeouts: Map<string, Set<string>>,
  ) {}

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const answered = this.timeouts.get(canonicalName(name));
    if (answered !== undefined && !answered.has(type)) return { kind: 'error', reason: 'timeout', detail: `TIMEOUT in the suite data at ${name}` };
    return this.inner.resolveSync(name, type);
  }
}

/** The check_host() arguments of a test: MAIL FROM's domain, or postmaster@HELO for an empty MAIL FROM. */
export function argumentsOf(test: SuiteTest): { ip: string; domain: string; sender: string; helo: string } {
  const sender = test.mailfrom === '' ? `postmaster@${test.helo}` : test.mailfrom;
  const at = sender.lastIndexOf('@');
  return { ip: test.host, domain: sender.slice(at + 1), sender, helo: test.helo };
}

/** The outcome of running one test. */
export interface TestOutcome {
  passed: boolean;
  actual: CheckHostResult;
  /** Why it failed, in words. */
  failure?: string;
}

/** Runs one test against our check_host(). */
export async function runTest(test: SuiteTest, resolver: Resolver): Promise<TestOutcome> {
  const actual = await checkHost(argumentsOf(test), { resolver, explanationDefault: DEFAULT_EXPLANATION, receiver: RECEIVER });
  if (!test.results.includes(actual.result)) {
    return { passed: false, actual, failure: `expected ${test.results.join(' or ')}, got ${actual.result}${actual.problem ? ` (${actual.problem})` : ''}` };
  }
  // Mail::SPF's driver compares explanations case-insensitively, and so do we: v-macro-ip6 expects
  // upper-case nibbles, while RFC 7208 §7.3's own %{ir} example expands IPv6 to lower case.
  if (test.explanation !== undefined && actual.result === 'fail' && actual.explanation?.toLowerCase() !== test.explanation.toLowerCase()) {
    return { passed: false, actual, failure: `expected the explanation "${test.explanation}", got "${actual.explanation ?? '(none)'}"` };
  }
  return { passed: true, actual };
}

/** Totals for one suite file. */
export interface SuiteReport {
  suite: SuiteName;
  total: number;
  passed: number;
  skipped: { name: string; reason: string }[];
  failed: { scenario: string; name: string; failure: string }[];
}

/** Runs every test of a suite file. */
export async function runSuite(suite: SuiteName): Promise<SuiteReport> {
  const skips = suite === 'rfc4408' ? RFC4408_SKIPS : {};
  const report: SuiteReport = { suite, total: 0, passed: 0, skipped: [], failed: [] };
  for (const scenario of loadSuite(suite)) {
    for (const test of scenario.tests) {
      report.total++;
      const skip = skips[test.name];
      if (skip !== undefined) {
        report.skipped.push({ name: test.name, reason: skip });
        continue;
      }
      const outcome = await runTest(test, scenario.resolver);
      if (outcome.passed) report.passed++;
      else report.failed.push({ scenario: scenario.description, name: test.name, failure: outcome.failure ?? '' });
    }
  }
  return report;
}
