/**
 * What the page of `serve --demo` says about the demo, read from the scenarios it answers for
 * (fixtures/scenarios.json): the domains to try (the scenarios' inputs, with their descriptions)
 * and the zones that count as "in the demo" (the scenarios' own zones; the stand-ins for real
 * providers, such as google.com, are left out).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile } from '@spoof-checker/engine';
import type { DemoDomain, DemoSettings } from '../web/demo.js';
import { loadZoneFile } from '@spoof-checker/engine';
import { DEMO_MARK_AUTHORITY, DEMO_TRANSPORT_DOMAINS } from '../service/demo-transport.js';
import { DEMO_DNSSEC_DOMAINS, DEMO_TRUST_ANCHOR_NAME } from '../service/demo-dnssec.js';
import { DEMO_REPORT_DOMAINS } from '../service/demo-reports.js';

/** The scenarios shown first on the home page, one per kind of answer, in this order. */
export const DEMO_FEATURED_SCENARIOS = ['p-reject', 'p-quarantine', 'p-none', 'no-dmarc', 'spf-plus-all', 'spf-too-many-lookups', 'reject-sp-none', 'dkim-weak-1024'] as const;

/** How the demo's source is named on the page. */
export const DEMO_SOURCE = 'the fixture zone files shipped with spoof-checker (fixtures/zones)';

interface ScenarioFields {
  name: string;
  input: string;
  /** Null (or absent) for an input the check refuses before DNS. */
  zone?: string | null;
  description: string;
}

function isScenario(value: unknown): value is ScenarioFields {
  const s = value as Partial<ScenarioFields> | null;
  return typeof s === 'object' && s !== null && typeof s.name === 'string' && typeof s.input === 'string' && typeof s.description === 'string' && (s.zone === undefined || s.zone === null || typeof s.zone === 'string');
}

/**
 * The demo settings from a scenarios file and the directory of its zone files (each zone's origin
 * is read from its file: `$ORIGIN`, not the file name). Throws an Error naming the file when it is
 * not a list of scenarios, or a ZoneLoadError for a zone file that cannot be read.
 */
export async function loadDemoSettings(scenariosFile: string, zonesDir: string): Promise<DemoSettings> {
  const parsed = await readJsonFile(scenariosFile, 'demo scenarios');
  if (!Array.isArray(parsed) || !parsed.every(isScenario)) throw new Error(`${scenariosFile}: not a list of scenarios (name, input, zone, description)`);
  const files = [...new Set(parsed.flatMap((s) => (typeof s.zone === 'string' ? [s.zone] : [])))];
  const origins = await Promise.all(files.map(async (file) => (await loadZoneFile(join(zonesDir, file))).origin));
  // The other zone files: stand-ins for real providers (google.com…) and the .example TLD itself.
  const others = (await readdir(zonesDir)).filter((file) => file.endsWith('.zone') && !files.includes(file));
  const otherOrigins = await Promise.all(others.map(async (file) => (await loadZoneFile(join(zonesDir, file))).origin));
  return { ...demoSettingsFrom(parsed, origins), standIns: standInOrigins(otherOrigins) };
}

/**
 * The zones of real names among `origins` (the stand-ins: google.com, outlook.com…): every origin
 * outside the reserved `.example` TLD (RFC 2606), which the demo's own zones use.
 */
export function standInOrigins(origins: readonly string[]): string[] {
  const names = origins.map((origin) => origin.toLowerCase().replace(/\.$/, ''));
  return [...new Set(names.filter((name) => name !== 'example' && !name.endsWith('.example')))].sort();
}

/** The demo settings from scenarios and their zones' origins: featured ones first, every other scenario with a zone after, each input once. */
export function demoSettingsFrom(scenarios: readonly ScenarioFields[], zoneOrigins: readonly string[]): DemoSettings {
  const withZone = scenarios.filter((s): s is ScenarioFields & { zone: string } => typeof s.zone === 'string');
  const featured = DEMO_FEATURED_SCENARIOS.flatMap((name) => withZone.filter((s) => s.name === name));
  const ordered = [...featured, ...withZone.filter((s) => !featured.includes(s))];
  const seen = new Set<string>();
  const domains: DemoDomain[] = [];
  for (const scenario of ordered) {
    if (seen.has(scenario.input)) continue;
    seen.add(scenario.input);
    domains.push({ input: scenario.input, note: scenario.description });
  }
  return { source: DEMO_SOURCE, domains, featured: featured.length, zoneOrigins: [...new Set(zoneOrigins.map((origin) => origin.toLowerCase().replace(/\.$/, '')))] };
}

/** The demo settings with the demo transport domains (src/service/demo-transport.ts) in the demo and listed apart. */
export function withDemoTransportDomains(settings: DemoSettings): DemoSettings {
  return {
    ...settings,
    zoneOrigins: [...settings.zoneOrigins, ...DEMO_TRANSPORT_DOMAINS.map((d) => d.domain)],
    transportDomains: DEMO_TRANSPORT_DOMAINS.map((d) => ({ input: d.domain, note: d.shows })),
  };
}

/** The demo settings with the DNSSEC demo domains (src/service/demo-dnssec.ts) listed apart, with the anchor they are validated against. */
export function withDemoDnssecDomains(settings: DemoSettings): DemoSettings {
  return {
    ...settings,
    zoneOrigins: [...new Set([...settings.zoneOrigins, ...DEMO_DNSSEC_DOMAINS.map((d) => d.domain)])],
    dnssec: { domains: DEMO_DNSSEC_DOMAINS.map((d) => ({ input: d.domain, note: d.shows })), anchor: DEMO_TRUST_ANCHOR_NAME },
  };
}

/** The demo settings with the domains whose DMARC and TLS reports the demo stores (src/service/demo-reports.ts), listed apart. */
export function withDemoReportDomains(settings: DemoSettings): DemoSettings {
  return { ...settings, reports: DEMO_REPORT_DOMAINS.map((d) => ({ input: d.domain, note: d.shows })) };
}

/** The demo settings with the BIMI demo domain and the demo Mark Verifying Authority named, listed apart. */
export function withDemoBimiDomains(settings: DemoSettings): DemoSettings {
  return { ...settings, bimi: { domains: [{ input: 'brand.example', note: 'a valid logo and a VMC from the demo authority: ready' }], authority: DEMO_MARK_AUTHORITY } };
}
