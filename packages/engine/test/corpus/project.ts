/**
 * The regression corpus: scenarios (`fixtures/scenarios.json`) run through `checkDomain` over the
 * fixture zones, reduced to the fields a golden (`fixtures/expected/<name>.json`) pins. One projection,
 * shared by the corpus test, the over-DNS test and `scripts/record-goldens.ts`, so the three can never
 * disagree on what "the same result" means.
 *
 * A golden keeps what a reader of the result relies on (verdict, rule, the spec's protocol objects,
 * reasons as id + severity in order, next step, subdomain note) plus a few facts from `details` that
 * a scenario is about (where DMARC was found and which tag applied, SPF void lookups, every DKIM key
 * found). It leaves out what changes from run to run (`resolvedAt`, `responseTimeMs`, DNS counters,
 * `nextStep.href`) and the long prose of each finding, which the unit tests of each analyzer cover.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { checkDomain } from '../../src/check.js';
import { FaultyResolver } from '../../src/dns/faults.js';
import type { FaultPlan } from '../../src/dns/faults.js';
import type { Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { isSpoofCheckError } from '../../src/errors.js';
import type { CheckErrorCode } from '../../src/errors.js';
import type { Severity } from '../../src/findings.js';
import type { SpoofCheckResult } from '../../src/result.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

/** The repository's `fixtures/` folder. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../../../fixtures/', import.meta.url));
/** The zone files every scenario is checked against, as one DNS. */
export const ZONES_DIR = fileURLToPath(new URL('../../../../fixtures/zones/', import.meta.url));
/** Where the goldens live, one `<scenario name>.json` each. */
export const EXPECTED_DIR = fileURLToPath(new URL('../../../../fixtures/expected/', import.meta.url));
/** The scenario list. */
export const SCENARIOS_FILE = fileURLToPath(new URL('../../../../fixtures/scenarios.json', import.meta.url));
/** The fewest scenarios the corpus may hold (the issue asks for at least 60). */
export const MIN_SCENARIOS = 60;
/**
 * A fixed clock for `resolvedAt`: nothing in a golden depends on it, but a fixed value keeps two runs
 * of one scenario byte-identical.
 */
export const CORPUS_CLOCK = new Date('2025-06-01T00:00:00.000Z');

/** One entry of `fixtures/scenarios.json`. */
export interface Scenario {
  /** Kebab-case; also the golden's file name. */
  name: string;
  /** The exact string checked (a domain, an address, a URL, an IDN…). */
  input: string;
  /** The scenario's own zone file in `fixtures/zones/`; null when the input is refused before any lookup. */
  zone: string | null;
  /** Rule ids, finding ids and error codes this scenario is meant to pin. */
  covers: string[];
  description: string;
  /** Caller-supplied DKIM selectors (`CheckOptions.selectors`). */
  selectors?: string[];
  /** DNS faults injected for this scenario only (in memory through `FaultyResolver`, on the wire through the server). */
  faults?: FaultPlan;
}

/** A reason as a golden keeps it: id and severity, in the order the result lists them. */
export type ProjectedReason = [id: string, severity: Severity];

/** What a golden pins of a result that has a verdict. */
export interface ProjectedResult {
  verdict: SpoofCheckResult['verdict'];
  spoofable: boolean;
  inboxOutcome: SpoofCheckResult['inboxOutcome'];
  headline: string;
  /** `details.rule`: the id of the verdict rule that decided. */
  rule: string;
  dmarc: SpoofCheckResult['dmarc'];
  spf: SpoofCheckResult['spf'];
  dkim: SpoofCheckResult['dkim'];
  mx: SpoofCheckResult['mx'];
  reasons: ProjectedReason[];
  /** `href` is left out: it depends on the base URL, not on the domain's DNS. */
  nextStep: { title: string; body: string };
  subdomainNote: string | null;
  /** Facts from `details` the scenarios are about. */
  facts: ProjectedFacts;
}

/** The part of `details` a golden pins. */
export interface ProjectedFacts {
  /** The name checked, in A-labels, and as shown. */
  domain: string;
  displayDomain: string;
  dmarc: { status: string; foundAt: string | null; appliedTag: string | null; effectivePolicy: string | null; nameExists: boolean | null };
  spf: { status: string; terminalAll: string | null; voidLookups: number };
  /** Every DKIM key found: selector, outcome, key type, bits, provider hint. */
  dkimKeys: [selector: string, outcome: string, keyType: string | null, keyLength: number | null, provider: string | null][];
  /** Selectors whose lookup failed (never "no key"). */
  dkimFailed: string[];
  mxHosts: [preference: number, exchange: string][];
  /**
   * What of the SPF pass set lies in shared infrastructure, one entry per provider service and term
   * (left out of the golden when nothing does, so goldens from before the classification stand).
   */
  sharedInfrastructure?: [provider: string, service: string, term: string, ipv4Addresses: number, ipv6Addresses: number, severity: string][] | undefined;
}

/** What a golden pins of a check that was refused. */
export interface ProjectedError {
  error: { code: CheckErrorCode; message: string };
}

/** A golden: a result or a refusal. */
export type Projection = ProjectedResult | ProjectedError;

/** Reads the scenario list. */
export async function loadScenarios(): Promise<Scenario[]> {
  return JSON.parse(await readFile(SCENARIOS_FILE, 'utf8')) as Scenario[];
}

/** Loads every zone of `fixtures/zones/` into one in-memory DNS. */
export async function loadCorpusResolver(): Promise<ZoneResolver> {
  return new ZoneResolver(await loadZoneDirectory(ZONES_DIR));
}

/** The golden file of a scenario. */
export function goldenPath(name: string): string {
  return `${EXPECTED_DIR}${name}.json`;
}

/** Reads a scenario's golden, or undefined when none has been recorded. */
export async function readGolden(name: string): Promise<Projection | undefined> {
  try {
    return JSON.parse(await readFile(goldenPath(name), 'utf8')) as Projection;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The text a golden file holds: two-space JSON with every array of plain values (a reason, a DKIM key,
 * an MX host) kept on one line, so a diff shows one changed reason as one changed line. Ends in a newline.
 */
export function formatGolden(projection: Projection): string {
  return `${formatJson(projection, '')}\n`;
}

function formatJson(value: unknown, indent: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => item === null || typeof item !== 'object')) return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`;
    return `[\n${value.map((item) => `${inner}${formatJson(item, inner)}`).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`;
}

/**
 * Runs one scenario through `checkDomain` over `resolver`, with the scenario's faults applied in
 * memory unless `applyFaults` is false (the over-DNS test applies them on the server instead), and
 * projects the outcome. Errors other than `SpoofCheckError` are bugs and propagate.
 */
export async function runScenario(scenario: Scenario, resolver: Resolver, options: { applyFaults?: boolean } = {}): Promise<Projection> {
  const faults = options.applyFaults === false ? undefined : scenario.faults;
  const effective = faults && faults.length > 0 ? new FaultyResolver(resolver, faults) : resolver;
  try {
    const result = await checkDomain(scenario.input, {
      resolver: effective,
      selectors: scenario.selectors,
      now: () => CORPUS_CLOCK,
    });
    return projectResult(result);
  } catch (error) {
    if (isSpoofCheckError(error)) return { error: { code: error.code, message: error.message } };
    throw error;
  }
}

/** The fields of a result a golden pins (see the module comment). */
export function projectResult(result: SpoofCheckResult): ProjectedResult {
  const details = result.details as unknown as ResultDetails;
  return {
    verdict: result.verdict,
    spoofable: result.spoofable,
    inboxOutcome: result.inboxOutcome,
    headline: result.headline,
    rule: details.rule,
    dmarc: result.dmarc,
    spf: result.spf,
    dkim: result.dkim,
    mx: result.mx,
    reasons: result.reasons.map((reason) => [reason.id, reason.severity]),
    nextStep: { title: result.nextStep.title, body: result.nextStep.body },
    subdomainNote: result.subdomainNote,
    facts: {
      domain: result.domain,
      displayDomain: details.displayDomain,
      dmarc: {
        status: details.dmarc.status,
        foundAt: details.dmarc.foundAt,
        appliedTag: details.dmarc.appliedTag,
        effectivePolicy: details.dmarc.effectivePolicy,
        nameExists: details.dmarc.nameExists,
      },
      spf: { status: details.spf.status, terminalAll: details.spf.terminalAll, voidLookups: details.spf.voidLookups },
      dkimKeys: details.dkim.found.map((key) => [key.selector, key.outcome, key.keyType, key.keyLength, key.provider]),
      dkimFailed: details.dkim.failed.map((failure) => failure.selector),
      mxHosts: details.mx.hosts.map((host) => [host.preference, host.exchange]),
      sharedInfrastructure: details.spf.sharedInfrastructure?.exposures.length
        ? details.spf.sharedInfrastructure.exposures.map((e) => [e.provider, e.service, e.path, e.ipv4Addresses, e.ipv6Addresses, e.severity])
        : undefined,
    },
  };
}

/** The shape of the `details` fields the projection reads (`src/check.ts` builds them). */
interface ResultDetails {
  rule: string;
  displayDomain: string;
  dmarc: { status: string; foundAt: string | null; appliedTag: string | null; effectivePolicy: string | null; nameExists: boolean | null };
  spf: {
    status: string;
    terminalAll: string | null;
    voidLookups: number;
    sharedInfrastructure: { exposures: { provider: string; service: string; path: string; ipv4Addresses: number; ipv6Addresses: number; severity: string }[] } | null;
  };
  dkim: {
    found: { selector: string; outcome: string; keyType: string | null; keyLength: number | null; provider: string | null }[];
    failed: { selector: string }[];
  };
  mx: { hosts: { preference: number; exchange: string }[] };
}

/** True when the projection is a refusal. */
export function isProjectedError(projection: Projection): projection is ProjectedError {
  return 'error' in projection;
}
