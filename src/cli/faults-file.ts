/**
 * The faults file of `--faults FILE`: the DNS faults (SERVFAIL, REFUSED, a dropped query…) that the
 * fixture scenarios inject, read so that the CLI, the demo and `dns-serve` show them too.
 *
 * A file is a JSON list in one of two shapes:
 * - fault rules: `[{ "name": "_dmarc.a.example", "type": "TXT", "fault": { "kind": "servfail" } }]`;
 * - scenarios, as in `fixtures/scenarios.json`: every `faults` list of every scenario is taken, in
 *   order, each rule scoped to its scenario's domain. A scenario's fault may be on a name other
 *   scenarios share (`include-timeout-reject` drops `_spf.esp.example`, which every baseline zone
 *   includes): applied to every check, it would change the verdicts of every other scenario, so
 *   in memory it applies only to checks of its scenario's domain (as the corpus injects it), and on
 *   the wire (`dns-serve`, which cannot tell the checks apart) to every query.
 *
 * The whole file is validated before anything uses it; the first problem is reported with its JSON
 * path (`fixtures/x.json: /3/fault/kind must be one of servfail, …`), as seed file errors are.
 */
import type { Fault, FaultPlan, FaultRule } from '@spoof-checker/engine';
import { dnsNameProblem, isAtOrBelow } from '@spoof-checker/engine';
import type { RecordType } from '@spoof-checker/engine';
import { normaliseDomainInput } from '@spoof-checker/engine';
import { readJsonFile } from '@spoof-checker/engine';
import { SUPPORTED_RECORD_TYPES } from '@spoof-checker/engine';
import { UsageError } from './args.js';

/** The longest `delay` a rule may ask for, in milliseconds: beyond any client's timeout, so longer is a typo. */
export const MAX_FAULT_DELAY_MS = 60_000;

/** The fault kinds a rule may name (the `Fault` union of src/dns/faults.ts). */
export const FAULT_KINDS = ['servfail', 'refused', 'drop', 'delay', 'truncate', 'malformed'] as const satisfies readonly Fault['kind'][];

/** The fields a rule may have. */
const RULE_KEYS = ['name', 'type', 'fault'] as const;
/** The fields a fault may have beside `kind`, by kind. */
const FAULT_KEYS: Record<Fault['kind'], readonly string[]> = {
  servfail: [],
  refused: [],
  drop: [],
  delay: ['ms'],
  truncate: ['tcp'],
  malformed: [],
};
/** The fields of a scenario of `fixtures/scenarios.json` (packages/engine/test/corpus/project.ts `Scenario`). */
const SCENARIO_KEYS = ['name', 'input', 'zone', 'covers', 'description', 'selectors', 'faults'] as const;

/** A rule of a faults file, with the checks it applies to. */
export interface ScopedFaultRule extends FaultRule {
  /** Only checks of this domain (A-labels, lower case) or of names below it; undefined: every check. */
  scope?: string;
}

/** What a faults file held: the rules in file order, and which of the two shapes the file has. */
export interface LoadedFaultPlan {
  /** Every rule of the file, in file order; on the wire (`dns-serve`) they all apply to every query. */
  plan: readonly ScopedFaultRule[];
  /** `rules` for a list of rules (no scope), `scenarios` for a list of scenarios (each rule scoped to its scenario). */
  shape: 'rules' | 'scenarios';
}

/** The rules that apply to every check: those of a list of rules (a list of scenarios has none). */
export function faultPlanForEveryCheck(loaded: LoadedFaultPlan): FaultPlan {
  return loaded.plan.filter((rule) => rule.scope === undefined);
}

/** The rules that apply to the checks of `domain` (a normalised domain, as `checkDomain` reports it). */
export function faultPlanForDomain(loaded: LoadedFaultPlan, domain: string): FaultPlan {
  return loaded.plan.filter((rule) => rule.scope === undefined || isAtOrBelow(domain, rule.scope));
}

/**
 * The rules that apply to the check of `input` (what a user typed: a domain, a URL, an address). An
 * input that is not a domain gets the unscoped rules only: its check is refused before any lookup.
 */
export function faultPlanForInput(loaded: LoadedFaultPlan, input: string): FaultPlan {
  const normalised = normaliseDomainInput(input, { specialUseSuffixes: [] });
  return normalised.ok ? faultPlanForDomain(loaded, normalised.domain) : faultPlanForEveryCheck(loaded);
}

/** A problem at a JSON path (RFC 6901 pointer) of the file. */
class FaultsFileProblem extends Error {
  constructor(
    readonly pointer: string,
    problem: string,
  ) {
    super(problem);
  }
}

/**
 * Reads and validates a faults file. Throws `UsageError` with one line naming the file and the first
 * problem: unreadable, not JSON (with the parser's position), or a value that is not a valid rule.
 */
export async function loadFaultPlan(file: string): Promise<LoadedFaultPlan> {
  let data: unknown;
  try {
    data = await readJsonFile(file, 'faults file');
  } catch (error) {
    throw new UsageError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return parseFaultPlan(data);
  } catch (error) {
    if (error instanceof FaultsFileProblem) throw new UsageError(`${file}: ${error.pointer === '' ? '' : `${error.pointer} `}${error.message}`);
    throw error;
  }
}

/**
 * Validates parsed JSON as a faults file (either shape). Throws a problem carrying the JSON path of
 * the first bad value; `loadFaultPlan` turns it into a `UsageError` naming the file.
 */
function parseFaultPlan(data: unknown): LoadedFaultPlan {
  if (!Array.isArray(data)) {
    throw new FaultsFileProblem('', `must be a JSON list of fault rules ({ "name", "type", "fault" }) or of scenarios with "faults" (got ${describe(data)})`);
  }
  if (data.length === 0) return { plan: [], shape: 'rules' };
  // The first entry decides the shape: a scenario has an input (or a faults list), a rule has neither.
  const shape = isScenarioLike(data[0]) ? 'scenarios' : 'rules';
  const plan: ScopedFaultRule[] = [];
  for (const [index, entry] of data.entries()) {
    const pointer = `/${index}`;
    if (shape === 'rules') {
      if (isScenarioLike(entry)) throw new FaultsFileProblem(pointer, 'is a scenario, but /0 is a fault rule: a file holds one or the other');
      plan.push(parseRule(entry, pointer));
      continue;
    }
    const scenario = objectAt(entry, pointer, 'a scenario');
    if (!isScenarioLike(scenario)) throw new FaultsFileProblem(pointer, 'is a fault rule, but /0 is a scenario: a file holds one or the other');
    rejectUnknownKeys(scenario, SCENARIO_KEYS, pointer);
    const faults = scenario['faults'];
    if (faults === undefined) continue;
    if (!Array.isArray(faults)) throw new FaultsFileProblem(`${pointer}/faults`, `must be a list of fault rules (got ${describe(faults)})`);
    const scope = scenarioDomain(scenario['input'], `${pointer}/input`);
    for (const [ruleIndex, rule] of faults.entries()) plan.push({ ...parseRule(rule, `${pointer}/faults/${ruleIndex}`), scope });
  }
  return { plan, shape };
}

/** The domain a scenario checks, which scopes its faults. */
function scenarioDomain(input: unknown, pointer: string): string {
  if (typeof input !== 'string') {
    throw new FaultsFileProblem(pointer, `must be the domain the scenario checks, which its faults apply to (got ${describe(input)})`);
  }
  const normalised = normaliseDomainInput(input, { specialUseSuffixes: [] });
  if (!normalised.ok) throw new FaultsFileProblem(pointer, `is not a domain, so its scenario's faults would apply to nothing: ${normalised.message}`);
  return normalised.domain;
}

function isScenarioLike(value: unknown): value is Record<string, unknown> {
  return isObject(value) && ('input' in value || 'faults' in value);
}

function parseRule(value: unknown, pointer: string): FaultRule {
  const rule = objectAt(value, pointer, 'a fault rule ({ "name", "type", "fault" })');
  rejectUnknownKeys(rule, RULE_KEYS, pointer);
  const name = rule['name'];
  if (name === undefined) throw new FaultsFileProblem(`${pointer}/name`, 'is required: the DNS name the fault applies to');
  if (typeof name !== 'string' || name === '') {
    throw new FaultsFileProblem(`${pointer}/name`, `must be a DNS name such as _dmarc.example.com (got ${describe(name)})`);
  }
  // RFC 1035 §2.3.4: a name that cannot be queried can never match a query.
  const problem = dnsNameProblem(name);
  if (problem !== null) throw new FaultsFileProblem(`${pointer}/name`, `is not a valid DNS name: ${problem}`);
  const type = rule['type'];
  if (type !== undefined && !(typeof type === 'string' && (SUPPORTED_RECORD_TYPES as readonly string[]).includes(type))) {
    throw new FaultsFileProblem(`${pointer}/type`, `must be one of ${SUPPORTED_RECORD_TYPES.join(', ')}, or left out for every type (got ${describe(type)})`);
  }
  if (rule['fault'] === undefined) throw new FaultsFileProblem(`${pointer}/fault`, `is required: { "kind": ${FAULT_KINDS.join(' | ')} }`);
  const fault = parseFault(rule['fault'], `${pointer}/fault`);
  return type === undefined ? { name, fault } : { name, type: type as RecordType, fault };
}

function parseFault(value: unknown, pointer: string): Fault {
  const fault = objectAt(value, pointer, 'a fault ({ "kind": … })');
  const kind = fault['kind'];
  if (typeof kind !== 'string' || !(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new FaultsFileProblem(`${pointer}/kind`, `must be one of ${FAULT_KINDS.join(', ')} (got ${describe(kind)})`);
  }
  const known = kind as Fault['kind'];
  rejectUnknownKeys(fault, ['kind', ...FAULT_KEYS[known]], pointer, ` for kind ${known}`);
  switch (known) {
    case 'delay': {
      const ms = fault['ms'];
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_FAULT_DELAY_MS) {
        throw new FaultsFileProblem(`${pointer}/ms`, `must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got ${describe(ms)})`);
      }
      return { kind: 'delay', ms };
    }
    case 'truncate': {
      const tcp = fault['tcp'];
      if (tcp !== undefined && typeof tcp !== 'boolean') {
        throw new FaultsFileProblem(`${pointer}/tcp`, `must be true or false (got ${describe(tcp)})`);
      }
      return tcp === undefined ? { kind: 'truncate' } : { kind: 'truncate', tcp };
    }
    default:
      return { kind: known };
  }
}

function objectAt(value: unknown, pointer: string, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new FaultsFileProblem(pointer, `must be ${what} (got ${describe(value)})`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(object: Record<string, unknown>, allowed: readonly string[], pointer: string, context = ''): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw new FaultsFileProblem(`${pointer}/${escapePointer(key)}`, `is not an allowed field${context} (allowed: ${allowed.join(', ') || 'none'})`);
    }
  }
}

/** RFC 6901 §3: `~` and `/` inside a key are written `~0` and `~1`. */
function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A value as a message quotes it: strings in quotes, short JSON otherwise, the kind for containers. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'an object';
  const json = JSON.stringify(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}
