/**
 * The optional sections of a spoof check result, run from one table (issue 39 item 4): each adds
 * one field beside the verdict (`dnssec`, `transport`, `bimi`), starts beside the spoof check on its
 * own lookups (outside the check's DNS budget, so the spoof check's figures do not move), and never
 * changes the verdict. Each result carries the one envelope (`SectionEnvelope`: `status`,
 * `findings`, `nextSteps`) beside its own fields. docs/architecture.md ("How to add a section")
 * lists every file a new section touches; test/sections/registry.test.ts fails when one is missed.
 */
import { checkBimi, type BimiOptions } from './bimi/check.js';
import type { BimiSection } from './bimi/types.js';
import { DEFAULT_CHECK_DEADLINE_MS } from './dns/limits.js';
import type { Resolver } from './dns/types.js';
import { dnssecNotChecked, startDnssec, withDnssecEnvelope, type CheckDnssecOptions, type DnssecSection } from './dnssec/check.js';
import { nextStepsOf } from './findings.js';
import type { NormaliseOptions } from './input.js';
import { checkTransport, type TransportOptions } from './transport/check.js';
import type { TransportSection } from './transport/types.js';

/** `checkBimi`'s options as `checkDomain` takes them (the resolver and input rules are the check's). */
export type CheckBimiOptions = Omit<BimiOptions, 'resolver' | 'input'>;

/** `checkTransport`'s options as `checkDomain` takes them (the resolver and input rules are the check's). */
export type CheckTransportOptions = Omit<TransportOptions, 'resolver' | 'input'>;

/** What of `CheckOptions` the sections read (the fields keep `CheckOptions`'s names and meanings). */
export interface SectionOptions {
  resolver: Resolver;
  input?: NormaliseOptions | undefined;
  deadlineMs?: number | undefined;
  signal?: AbortSignal | undefined;
  transport?: boolean | CheckTransportOptions | undefined;
  dnssec?: CheckDnssecOptions | false | string | undefined;
  bimi?: boolean | CheckBimiOptions | undefined;
}

/** The results of the optional sections, by their field in `SpoofCheckResult`. */
export interface SectionResults {
  dnssec: DnssecSection;
  transport: TransportSection;
  bimi: BimiSection;
}

/** The name of an optional section: its field in the result, its entry in the API's `checks`. */
export type SectionName = keyof SectionResults;

/** What the spoof check has learnt that a section may need to finish. */
export interface SectionFacts {
  /** The name the DMARC record was read from (`_dmarc.<domain>` when none was found). */
  dmarcName: string;
}

/** A section under way: a failure is held as a value (a refused spoof check leaves nothing unhandled). */
export type SectionWork<Result> = (facts: SectionFacts) => Promise<Result | Error>;

/** One optional section: how to start it, and what the result says when it was not started. */
export interface OptionalSection<Name extends SectionName> {
  name: Name;
  /** Starts the section beside the spoof check, or null when the options do not ask for it. */
  start(domain: string, input: string, options: SectionOptions): SectionWork<SectionResults[Name]> | null;
  /** The field when the section was not started: a value, or undefined to leave the field out. */
  notStarted(options: SectionOptions): SectionResults[Name] | undefined;
  /** Whether the result's `responseTimeMs` is taken again once the section is in (it takes seconds). */
  timed: boolean;
}

/** `result.dnssec` when validation was not asked for. */
export const DNSSEC_NOT_ASKED: DnssecSection = withDnssecEnvelope(dnssecNotChecked('DNSSEC validation was not asked for.'));

/** A rejection as a value. */
function held(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** Work already running: its result wrapped in the envelope, a rejection held as a value. */
function running<Result, Section>(work: Promise<Result>, envelope: (result: Result) => Section): SectionWork<Section> {
  const done = work.then(envelope, held);
  return () => done;
}

const dnssecSection: OptionalSection<'dnssec'> = {
  name: 'dnssec',
  // DNSSEC runs beside the check on its own queries (DO and CD), outside its DNS budget. It shares the
  // check's DNS deadline and cancellation: slow DO answers cannot hold the check past it.
  start(domain, _input, options) {
    if (typeof options.dnssec !== 'object') return null;
    const work = startDnssec(domain, options.dnssec, { deadlineMs: options.deadlineMs ?? DEFAULT_CHECK_DEADLINE_MS, signal: options.signal });
    return (facts) => work.finish(facts.dmarcName).then(withDnssecEnvelope, held);
  },
  notStarted(options) {
    if (options.dnssec === false) return withDnssecEnvelope(dnssecNotChecked('DNSSEC validation was turned off.'));
    if (typeof options.dnssec === 'string') return withDnssecEnvelope(dnssecNotChecked(options.dnssec));
    return undefined; // buildResult's DNSSEC_NOT_ASKED stays
  },
  timed: false,
};

const transportSection: OptionalSection<'transport'> = {
  name: 'transport',
  // Mail sent to the domain: its own lookups, outside the check's DNS budget, and its own verdict.
  start(domain, _input, options) {
    if (!options.transport) return null;
    const extra = options.transport === true ? {} : options.transport;
    const dnssec = typeof options.dnssec === 'object' ? options.dnssec : undefined;
    // The envelope: the verdict is its status; the steps are the ones the findings name.
    return running(checkTransport(domain, { ...extra, resolver: options.resolver, input: options.input, ...(dnssec ? { dnssec } : {}) }), (result): TransportSection => ({
      ...result,
      status: result.verdict,
      nextSteps: nextStepsOf(result.findings),
    }));
  },
  notStarted: () => undefined,
  timed: true,
};

const bimiSection: OptionalSection<'bimi'> = {
  name: 'bimi',
  start(domain, input, options) {
    if (!options.bimi) return null;
    const extra = options.bimi === true ? {} : options.bimi;
    // An address as input names the sender's local part, which a record's lps= may use (draft §7.2 step 5).
    const at = input.trim().lastIndexOf('@');
    const localPart = extra.localPart ?? (at > 0 && !input.includes('://') ? input.trim().slice(0, at).replace(/^mailto:/i, '') : undefined);
    // The envelope: the grade is its status (findings and nextSteps are BIMI's own).
    return running(checkBimi(domain, { ...extra, ...(localPart !== undefined ? { localPart } : {}), resolver: options.resolver, input: options.input }), (result): BimiSection => ({ ...result, status: result.grade }));
  },
  notStarted: () => undefined,
  timed: true,
};

/**
 * Every optional section, in the order their results are awaited and added to the result (DNSSEC
 * first, as its field is always present; the others are appended in this order).
 */
export const OPTIONAL_SECTIONS: readonly [OptionalSection<'dnssec'>, OptionalSection<'transport'>, OptionalSection<'bimi'>] = [dnssecSection, transportSection, bimiSection];

/** The names of the optional sections, in table order. */
export const SECTION_NAMES: readonly SectionName[] = OPTIONAL_SECTIONS.map((section) => section.name);

/** The sections asked for, started: each entry the section and its work (null when not asked). */
export type StartedSections = { section: OptionalSection<SectionName>; work: SectionWork<SectionResults[SectionName]> | null }[];

/** Starts every section the options ask for, before the spoof check's own lookups. */
export function startSections(domain: string, input: string, options: SectionOptions): StartedSections {
  return OPTIONAL_SECTIONS.map((section: OptionalSection<SectionName>) => ({ section, work: section.start(domain, input, options) }));
}

/**
 * Waits for each started section in table order and writes its field into `result`; a failure is
 * thrown (as the spoof check's own refusals are); `onTimed` runs after each timed section. When
 * nothing was started it writes the not-started fields and returns at once (no promise: a warm
 * check without sections does not wait a turn for nothing).
 */
export function finishSections(started: StartedSections, facts: SectionFacts, options: SectionOptions, result: Partial<Record<SectionName, unknown>>, onTimed: () => void): Promise<void> | undefined {
  const fields = result;
  if (started.every(({ work }) => work === null)) {
    for (const { section } of started) {
      const value = section.notStarted(options);
      if (value !== undefined) fields[section.name] = value;
    }
    return undefined;
  }
  return (async () => {
    for (const { section, work } of started) {
      if (work === null) {
        const value = section.notStarted(options);
        if (value !== undefined) fields[section.name] = value;
        continue;
      }
      const outcome = await work(facts);
      if (outcome instanceof Error) throw outcome;
      fields[section.name] = outcome;
      if (section.timed) onTimed();
    }
  })();
}
