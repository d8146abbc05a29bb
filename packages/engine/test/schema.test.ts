/**
 * The JSON Schema of the result (`schema/spoof-check-result.schema.json`, shipped in the package)
 * against what the engine returns: every golden scenario is checked in full and validated, and the
 * spec fields each golden pins are validated too, so neither the schema nor the result can drift
 * from the other without a failure here. Ajv comes with Fastify; only this test imports it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../src/check.js';
import { FaultyResolver } from '../src/dns/faults.js';
import type { ZoneResolver } from '../src/zones/zone-resolver.js';
import { isSpoofCheckError } from '../src/errors.js';
import type { DkimKey, DkimProbe } from '../src/dkim/index.js';
import type { DmarcDiscovery, ExistenceQuery, ReportDestination } from '../src/dmarc/index.js';
import type { CheckSource, DnsErrorReason, RecordType } from '../src/dns/types.js';
import type { AddressClass } from '../src/net/address-guard.js';
import type { Severity } from '../src/findings.js';
import type { MxAnalysis, MxHost } from '../src/mx/index.js';
import type { InboxOutcome, SpoofCheckDetails, SpoofCheckResult, Verdict } from '../src/result.js';
import type { SpfAnalysis, SpfResult } from '../src/spf/index.js';
import type { DaneOutcome } from '../src/dane/types.js';
import type { DaneVerdict } from '../src/transport/dane.js';
import type { DnssecResultStatus } from '../src/dnssec/check.js';
import type { DnssecStatus } from '../src/dnssec/types.js';
import type { PolicyFetchError, ProbeOutcome, StsMode, TransportResult, TransportVerdict } from '../src/transport/types.js';
import { CORPUS_CLOCK, EXPECTED_DIR, loadCorpusResolver, loadScenarios, type Projection, type Scenario } from './corpus/project.js';

/**
 * `allOf<U>()(list)` returns `list`, and compiles only when `list` holds every member of the union
 * `U` (and nothing else): the compile-time half of keeping the schema's enums and the types together.
 */
function allOf<U extends string | null>() {
  return <const L extends readonly U[]>(list: L & ([U] extends [L[number]] ? unknown : { missing: Exclude<U, L[number]> })): L => list;
}

const SCHEMA_PATH = new URL('../schema/spoof-check-result.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Record<string, unknown>;

// ajv and ajv-formats are CommonJS with a `default` export.
type AjvInstance = import('ajv/dist/2020.js').default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (options: object) => AjvInstance;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: AjvInstance) => void;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
ajv.addSchema(schema, 'result');
const validateResult = ajv.getSchema('result')!;

/** Ajv's errors as readable lines: where, and what is wrong. */
function problems(errors: typeof validateResult.errors): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

function validateAgainst(pointer: string, value: unknown): string[] {
  const validate = ajv.getSchema(`result#${pointer}`);
  if (!validate) throw new Error(`no sub-schema at #${pointer}`);
  return validate(value) ? [] : problems(validate.errors);
}

const goldenNames = readdirSync(EXPECTED_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .sort();

describe('the result schema', () => {
  let scenarios: Map<string, Scenario>;
  let resolver: ZoneResolver;

  beforeAll(async () => {
    scenarios = new Map((await loadScenarios()).map((s) => [s.name, s]));
    resolver = await loadCorpusResolver();
  });

  it('is a valid JSON Schema (draft 2020-12) and covers every goldens file', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(goldenNames.length).toBeGreaterThanOrEqual(60);
  });

  it.each(goldenNames)('validates the result of %s, and the fields its golden pins', async (name) => {
    const golden = JSON.parse(readFileSync(`${EXPECTED_DIR}${name}.json`, 'utf8')) as Projection;
    const scenario = scenarios.get(name);
    expect(scenario, `fixtures/expected/${name}.json has no scenario in fixtures/scenarios.json`).toBeDefined();
    const faults = scenario!.faults && scenario!.faults.length > 0 ? new FaultyResolver(resolver, scenario!.faults) : resolver;
    let result: SpoofCheckResult | undefined;
    try {
      result = await checkDomain(scenario!.input, { resolver: faults, selectors: scenario!.selectors, now: () => CORPUS_CLOCK });
    } catch (error) {
      if (!isSpoofCheckError(error)) throw error;
      // A refusal has no result to validate; the golden says so too.
      expect(golden).toHaveProperty('error.code', error.code);
      return;
    }
    expect(validateResult(result) ? [] : problems(validateResult.errors)).toEqual([]);
    // The golden's copy of the spec fields must fit the schema as well (it is what clients were promised).
    if ('error' in golden) throw new Error(`${name}: the golden is a refusal (${golden.error.code}) but the engine gave a verdict`);
    const pinned: [string, unknown][] = [
      ['/properties/verdict', golden.verdict],
      ['/properties/spoofable', golden.spoofable],
      ['/properties/inboxOutcome', golden.inboxOutcome],
      ['/properties/headline', golden.headline],
      ['/properties/dmarc', golden.dmarc],
      ['/properties/spf', golden.spf],
      ['/properties/dkim', golden.dkim],
      ['/properties/mx', golden.mx],
      ['/properties/subdomainNote', golden.subdomainNote],
      ['/properties/details/properties/rule', golden.rule],
    ];
    for (const [pointer, value] of pinned) expect(validateAgainst(pointer, value), pointer).toEqual([]);
  });

  // Each closed set of values in the schema against the TypeScript union it comes from: `allOf`
  // does not compile unless the list names every member of the union, and the test compares the
  // list with the schema's enum, so a value added on either side fails here.
  const D = '/properties/details/properties';
  it.each([
    ['/$defs/Verdict', allOf<Verdict>()(['spoofable', 'partially_protected', 'protected'])],
    ['/$defs/InboxOutcome', allOf<InboxOutcome>()(['delivered', 'spam', 'rejected'])],
    ['/$defs/Severity', allOf<Severity>()(['critical', 'warning', 'info', 'success'])],
    ['/$defs/RecordType', allOf<RecordType>()(['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'PTR', 'NS', 'SOA'])],
    ['/$defs/DnsErrorReason', allOf<DnsErrorReason>()(['servfail', 'refused', 'timeout', 'malformed', 'budget', 'invalid-name'])],
    ['/$defs/SpfResult', allOf<SpfResult>()(['none', 'neutral', 'pass', 'fail', 'softfail', 'temperror', 'permerror'])],
    ['/$defs/SpfStatus', allOf<SpfAnalysis['status']>()(['found', 'none', 'multiple', 'temperror'])],
    ['/$defs/TerminalAll', allOf<SpfAnalysis['terminalAll']>()(['+all', '-all', '~all', '?all', null])],
    [`${D}/dmarc/properties/status`, allOf<DmarcDiscovery['status']>()(['found', 'none', 'multiple', 'temperror'])],
    [`${D}/dmarc/properties/appliedTag`, allOf<SpoofCheckDetails['dmarc']['appliedTag']>()(['p', 'sp', 'np', null])],
    [`${D}/dmarc/properties/effectivePolicy`, allOf<SpoofCheckDetails['dmarc']['effectivePolicy']>()(['none', 'quarantine', 'reject', null])],
    [`${D}/dmarc/properties/reportDestinations/items/properties/status`, allOf<ReportDestination['status']>()(['same-organization', 'verified', 'unverified', 'error', 'not-checkable'])],
    [`${D}/registrableDomain/properties/queries/items/properties/answer`, allOf<ExistenceQuery['answer']>()(['records', 'nodata', 'nxdomain', 'error'])],
    [`${D}/dkim/properties/status`, allOf<DkimProbe['status']>()(['found', 'not-found', 'incomplete'])],
    [`${D}/dkim/properties/found/items/properties/outcome`, allOf<DkimKey['outcome']['status']>()(['valid', 'too-short', 'revoked', 'not-for-email', 'unsupported-key-type', 'bad-key', 'invalid-syntax', 'discard'])],
    [`${D}/dkim/properties/found/items/properties/keyType`, allOf<DkimKey['keyType']>()(['rsa', 'ed25519', null])],
    ['/$defs/TransportVerdict', allOf<TransportVerdict>()(['enforced', 'opportunistic', 'at-risk', 'broken', 'untested', 'no-mail'])],
    ['/$defs/CheckSource', allOf<CheckSource>()(['dns', 'fixture-zones'])],
    ['/$defs/AddressClass', allOf<AddressClass>()(['public', 'unspecified', 'loopback', 'private', 'cgnat', 'link-local', 'unique-local', 'multicast', 'documentation', 'reserved', 'invalid'])],
    ['/$defs/ProbeOutcome', allOf<ProbeOutcome>()(['ok', 'unreachable', 'no-starttls', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch', 'refused-private'])],
    [
      '/$defs/PolicyFetchError',
      allOf<PolicyFetchError>()(['dns-failure', 'no-address', 'refused-private', 'unreachable', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch', 'redirect', 'http-status', 'content-type', 'too-large', 'timeout', 'http-error']),
    ],
    ['/$defs/StsMode', allOf<StsMode>()(['enforce', 'testing', 'none'])],
    ['/$defs/DaneOutcome', allOf<DaneOutcome>()(['match', 'mismatch', 'no-usable-tlsa', 'not-applicable'])],
    ['/$defs/DaneVerdict', allOf<DaneVerdict>()(['valid', 'partial', 'broken', 'none'])],
    ['/$defs/DnssecStatus', allOf<DnssecStatus>()(['secure', 'insecure', 'bogus', 'indeterminate'])],
    ['/$defs/DnssecResult/properties/status', allOf<DnssecResultStatus>()(['secure', 'insecure', 'bogus', 'indeterminate', 'not-checked'])],
    ['/$defs/TransportResult/properties/mtaSts/properties/status', allOf<TransportResult['mtaSts']['status']>()(['enforce', 'testing', 'none', 'absent', 'invalid'])],
    ['/$defs/TransportResult/properties/tlsRpt/properties/status', allOf<TransportResult['tlsRpt']['status']>()(['valid', 'absent', 'invalid'])],
    [`${D}/mx/properties/status`, allOf<MxAnalysis['status']>()(['found', 'null-mx', 'none', 'temperror'])],
    [`${D}/mx/properties/hosts/items/properties/addresses/properties/status`, allOf<NonNullable<MxHost['addresses']>['status']>()(['resolved', 'unresolvable', 'temperror'])],
  ] as const)('%s lists exactly the values of its TypeScript type', (pointer, values) => {
    const node = pointer.split('/').slice(1).reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], schema) as { enum?: unknown[] };
    expect(node.enum, pointer).toBeDefined();
    const order = (list: readonly unknown[]) => [...list].map((v) => JSON.stringify(v)).sort();
    expect(order(node.enum!)).toEqual(order(values));
  });

  it('refuses what the result never holds: an unknown field, a verdict outside the three, a missing detail', async () => {
    const scenario = scenarios.get('p-reject')!;
    const result = await checkDomain(scenario.input, { resolver, now: () => CORPUS_CLOCK });
    expect(validateResult(result)).toBe(true);
    expect(validateResult({ ...result, extra: 1 })).toBe(false);
    expect(validateResult({ ...result, verdict: 'safe' })).toBe(false);
    const { dns: _dns, ...withoutDns } = result.details;
    expect(validateResult({ ...result, details: withoutDns })).toBe(false);
    expect(validateResult({ ...result, details: { ...result.details, spf: { ...result.details.spf, surprise: true } } })).toBe(false);
  });
});
