/**
 * Every optional section of a result is wired through every place a user meets it (issue 39 item 4;
 * docs/architecture.md, "How to add a section"): the engine's table (packages/engine/src/sections.ts)
 * and JSON Schema, the CLI's flag, the API's `checks` enum and response schema, the monitor snapshot,
 * and the result page. A section added to the engine's table and missing from any of them fails here.
 * Real checks with every section on, against the demo's loopback responders and signed zones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { OPTIONAL_SECTIONS, SECTION_NAMES, type SectionName } from '../../packages/engine/src/sections.js';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { ENGINE_RESULT_SCHEMA } from '../../src/http/result-schema.js';
import { OPTIONAL_CHECKS } from '../../src/http/routes/spoof-checker.js';
import { MONITOR_CHECK_KINDS } from '../../src/store/monitors.js';
import { snapshotOfResult } from '../../src/jobs/monitors/monitor-changes.js';
import { DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { startDemoTransport, type DemoTransport } from '../../src/service/demo-transport.js';
import { loadDemoDnssec, type DemoDnssec } from '../../src/service/demo-dnssec.js';
import { captureIo } from '../cli/helpers.js';
import { makeApp } from '../http/helpers.js';

/**
 * Where each section shows: the CLI flag that asks for it (or turns it off), whether the API's
 * `checks` asks for it (DNSSEC is on whenever the service validates), whether a monitor lists it
 * among its checks (DNSSEC is in every snapshot that validated), whether it has its own page.
 */
const SURFACES: Record<SectionName, { cliFlag: string; apiCheck: boolean; monitorKind: boolean; ownPage: boolean }> = {
  dnssec: { cliFlag: '--no-dnssec', apiCheck: false, monitorKind: false, ownPage: false },
  transport: { cliFlag: '--transport', apiCheck: true, monitorKind: true, ownPage: true },
  bimi: { cliFlag: '--bimi', apiCheck: true, monitorKind: true, ownPage: true },
};

/** A demo domain whose check exercises every section (signed, with MX and a transport lab). */
const DOMAIN = 'dnssec-secure.example';

let demo: DemoTransport;
let dnssec: DemoDnssec;
let result: SpoofCheckResult;
beforeAll(async () => {
  demo = await startDemoTransport();
  dnssec = await loadDemoDnssec();
  const resolver = new ZoneResolver([...(await loadZoneDirectory(DEMO_ZONES_DIR)), ...demo.zones]);
  result = await checkDomain(DOMAIN, {
    resolver,
    transport: demo.options,
    bimi: { tlsCa: demo.options.tlsCa, connectPorts: demo.options.connectPorts, allowPrivateAddresses: demo.options.allowPrivateAddresses, extraRoots: demo.bimiRoots },
    dnssec: dnssec.options,
  });
}, 60_000);
afterAll(async () => {
  await demo?.stop();
});

describe('the optional sections', () => {
  it('the engine runs every section from its one table, and this registry lists each of them', () => {
    expect(OPTIONAL_SECTIONS.map((s) => s.name)).toEqual(SECTION_NAMES);
    expect(Object.keys(SURFACES).sort()).toEqual([...SECTION_NAMES].sort());
  });

  it.each(SECTION_NAMES)('%s: the result carries the envelope (status, findings, nextSteps) beside its own fields', (name) => {
    const section = result[name] as unknown as Record<string, unknown>;
    expect(section, name).toBeDefined();
    expect(typeof section['status']).toBe('string');
    expect(Array.isArray(section['findings'])).toBe(true);
    expect(Array.isArray(section['nextSteps'])).toBe(true);
  });

  it.each(SECTION_NAMES)("%s: the engine's JSON Schema documents the section and its envelope", (name) => {
    const ref = (ENGINE_RESULT_SCHEMA.properties[name] as { $ref?: string }).$ref ?? '';
    const def = ENGINE_RESULT_SCHEMA.$defs[ref.replace('#/$defs/', '')] as { properties: Record<string, unknown> } | undefined;
    expect(def, `${name}: properties.${name} refers to a $defs entry`).toBeDefined();
    for (const field of ['status', 'findings', 'nextSteps']) expect(Object.keys(def!.properties), `${name}.${field}`).toContain(field);
  });

  it.each(SECTION_NAMES)("%s: the CLI's check names its flag", async (name) => {
    const { main } = await import('../../src/cli/main.js');
    const { io, stdout } = captureIo();
    await main(['check', '--help'], io);
    expect(stdout()).toContain(SURFACES[name].cliFlag);
  });

  it.each(SECTION_NAMES)("%s: the API's checks enum and its documented result", async (name) => {
    expect((OPTIONAL_CHECKS as readonly string[]).includes(name)).toBe(SURFACES[name].apiCheck);
    const { app } = await makeApp();
    try {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const post = doc.paths['/api/tools/v1/spoof-checker'].post;
      expect((post.requestBody.content['application/json'].schema.properties.checks.items.enum as string[]).includes(name)).toBe(SURFACES[name].apiCheck);
      const documented = post.responses['200'].content['application/json'].schema.properties[name];
      expect(documented, name).toBeDefined();
      for (const field of ['status', 'findings', 'nextSteps']) expect(Object.keys(documented.properties), `${name}.${field}`).toContain(field);
    } finally {
      await app.close();
    }
  });

  it.each(SECTION_NAMES)('%s: the monitor snapshot keeps it', (name) => {
    expect((MONITOR_CHECK_KINDS as readonly string[]).includes(name)).toBe(SURFACES[name].monitorKind);
    const snapshot = snapshotOfResult(result, true, true);
    expect(snapshot.kind).toBe('checked');
    expect(Object.keys(snapshot)).toContain(name);
  });

  it.each(SECTION_NAMES)('%s: the result page has its place, and its own page when it has one', async (name) => {
    const { app } = await makeApp({ check: async () => result });
    try {
      const page = await app.inject({ method: 'GET', url: `/check/${DOMAIN}` });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`id="${name}"`);
      if (SURFACES[name].ownPage) {
        const own = await app.inject({ method: 'GET', url: `/${name}/${DOMAIN}` });
        expect(own.statusCode, own.body.slice(0, 300)).toBe(200);
        expect(own.body).toContain(`id="${name}"`);
      }
    } finally {
      await app.close();
    }
  });
});
