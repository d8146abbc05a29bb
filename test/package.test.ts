/**
 * The two packages as others install and use them: the engine (`@spoof-checker/engine`,
 * packages/engine) and the CLI + service (`spoof-checker`, this folder). The built entries
 * (`dist/`), what `npm pack` would publish, the licence and the Node versions; and the engine's
 * tarball installed into a blank project (its packages counted, no warning, no install script,
 * `checkDomain` on a zone file). Needs `npm run build` first (`npm test` does it); a missing build
 * fails with a message.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import * as api from '../packages/engine/src/index.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const zones = new URL('./cli/zones/', import.meta.url).pathname;
interface Manifest {
  name: string;
  license: string;
  version: string;
  engines: { node: string };
  exports: Record<string, unknown>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
const engineRoot = join(root, 'packages/engine');
const engineManifest = JSON.parse(readFileSync(join(engineRoot, 'package.json'), 'utf8')) as Manifest;
/** The Node versions CI tests (.ci/run): the floor of both packages. */
const NODE_FLOOR = '>=22.19';
/** Packages a blank project holds after installing the engine: itself and its few dependencies (8 today; a little room for their own releases). */
const MAX_ENGINE_INSTALL_PACKAGES = 10;
/** npm scripts that run when a package is installed (an engine must have none). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/**
 * The largest unpacked size the published package may have. It catches what should never ship (a
 * test tree, source maps, generated data: each adds megabytes), not the code's own growth: the
 * service packed 3.0 MB at the end of 2026 (1.45 MB of JavaScript, 0.56 MB of declarations, the
 * demo's zones and the docs), so the bound leaves about a third more room.
 */
const MAX_UNPACKED_BYTES = 4 * 1024 * 1024;
/** Packages of the HTTP service and the stores: the engine entry must load none of them. */
const SERVICE_STACK = /\/node_modules\/(fastify|@fastify\/[^/]+|better-sqlite3|pg|kysely|ioredis|bullmq)\//;

/**
 * Imports `specifier` from the package root in a fresh Node process and returns every module it
 * loaded: ESM modules as the loader resolved them (a `module.register` resolve hook that appends each
 * URL to a file, synchronously, so none is lost), and CommonJS modules from `require.cache` (a CJS
 * package's own `require` calls do not pass the ESM hooks).
 */
async function modulesLoadedBy(specifier: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pkg-imports-'));
  const log = join(dir, 'resolved.txt');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(log, '');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
     let log;
     export function initialize(data) { log = data.log; }
     export async function resolve(specifier, context, next) {
       const result = await next(specifier, context);
       appendFileSync(log, result.url + '\\n');
       return result;
     }`,
  );
  const script = `
    import { register, createRequire } from 'node:module';
    import { readFileSync } from 'node:fs';
    register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } });
    await import(${JSON.stringify(specifier)});
    const cjs = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify([...readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter(Boolean), ...cjs]));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
  return JSON.parse(stdout) as string[];
}

describe('the package as others use it', () => {
  beforeAll(() => {
    if (!existsSync(join(root, 'dist/index.js')) || !existsSync(join(engineRoot, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  });

  it('exports the documented surface from packages/engine/src/index.ts', () => {
    for (const name of ['checkDomain', 'SpoofCheckError', 'isSpoofCheckError', 'normaliseDomainInput', 'decide', 'ZoneResolver', 'NetworkResolver', 'CachingResolver', 'ConcurrencyLimitedResolver', 'createCheckResolver', 'FaultyResolver', 'parseZone', 'loadZoneDirectory', 'analyzeSpf', 'checkHost', 'discoverDmarc', 'probeDkim', 'lookupMx']) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it("resolves `import { checkDomain } from 'spoof-checker'` to the built package", async () => {
    const script = `
      import { checkDomain, ZoneResolver, loadZoneDirectory } from 'spoof-checker';
      const resolver = new ZoneResolver(await loadZoneDirectory(${JSON.stringify(zones)}));
      const result = await checkDomain('open.example', { resolver });
      console.log(JSON.stringify([result.verdict, result.spoofable]));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual(['spoofable', true]);
  });

  it('finds the shipped provider snapshot from the built engine (resolved beside dist/, not from the working directory)', async () => {
    const script = `
      const { checkDomain, ZoneResolver, loadZoneDirectory } = await import(${JSON.stringify(pathToFileURL(join(engineRoot, 'dist/index.js')).href)});
      const resolver = new ZoneResolver(await loadZoneDirectory(${JSON.stringify(join(root, 'fixtures/zones'))}));
      const result = await checkDomain('spf-cloud-ec2.example', { resolver });
      console.log(JSON.stringify([result.details.rule, result.details.spf.sharedInfrastructure.data.origin]));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: tmpdir() });
    expect(JSON.parse(stdout)).toEqual(['spf-shared-infrastructure', 'shipped snapshot']);
  });

  it.each([['@spoof-checker/engine'], ['spoof-checker']])('loads no module of the HTTP stack or the stores when %s is imported', async (specifier) => {
    const loaded = await modulesLoadedBy(specifier);
    expect(loaded.some((url) => url.endsWith('/packages/engine/dist/index.js')), 'the engine itself was seen').toBe(true);
    expect(loaded.filter((url) => SERVICE_STACK.test(url))).toEqual([]);
  });

  it('the engine package declares only its own few dependencies, and no install script', () => {
    expect(Object.keys(engineManifest.dependencies ?? {}).sort()).toEqual(['dns-packet', 'lru-cache', 'p-limit', 'tldts', 'unhomoglyph']);
    expect(Object.keys(engineManifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
    expect(manifest.dependencies?.['@spoof-checker/engine']).toBe(engineManifest.version);
  });

  it('resolves spoof-checker/service, which does load Fastify (so the check above can see it)', async () => {
    const loaded = await modulesLoadedBy('spoof-checker/service');
    expect(loaded.some((url) => url.endsWith('/dist/service.js'))).toBe(true);
    expect(loaded.some((url) => /\/node_modules\/fastify\//.test(url))).toBe(true);
    // BullMQ and ioredis are optional peers, loaded only when Redis is asked for (src/jobs/redis-modules.ts).
    expect(loaded.filter((url) => /\/node_modules\/(bullmq|ioredis)\//.test(url))).toEqual([]);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `const s = await import('spoof-checker/service'); console.log(typeof s.buildApp);`], { cwd: root });
    expect(stdout.trim()).toBe('function');
  });

  it('declares BullMQ and ioredis as optional peer dependencies (and installs them for its own tests), never as dependencies', () => {
    for (const name of ['bullmq', 'ioredis']) {
      expect(manifest.dependencies?.[name], name).toBeUndefined();
      expect(manifest.peerDependencies?.[name], name).toMatch(/^\^\d/);
      expect(manifest.peerDependenciesMeta?.[name]?.optional, name).toBe(true);
      expect(manifest.devDependencies?.[name], name).toBe(manifest.peerDependencies?.[name]);
    }
  });

  it('exports the result schema and package.json', async () => {
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const schema = require('@spoof-checker/engine/schema/spoof-check-result.schema.json');
      console.log(JSON.stringify([schema.title, require('spoof-checker/package.json').version, require('@spoof-checker/engine/package.json').version]));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual(['Spoof check result', manifest.version, engineManifest.version]);
  });

  it('runs the bin: spoof-checker check --json', async () => {
    const { stdout } = await run(process.execPath, ['bin/spoof-checker.js', 'check', 'open.example', '--zones', zones, '--json'], { cwd: root });
    expect(JSON.parse(stdout)).toMatchObject({ domain: 'open.example', verdict: 'spoofable', inboxOutcome: 'delivered' });
  });

  it('exits 2 with usage on a bad command', async () => {
    await expect(run(process.execPath, ['bin/spoof-checker.js', 'frobnicate'], { cwd: root })).rejects.toMatchObject({ code: 2 });
  });

  /** `npm pack --dry-run` of the package in `dir`: its files and unpacked size. */
  async function packDryRun(dir: string): Promise<{ paths: string[]; unpackedSize: number }> {
    // --ignore-scripts: the real `npm pack` cleans and rebuilds dist/ first (prepack); here the build
    // of this run is packed as it is, so that other test files reading dist/ are not disturbed.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 });
    const [pack] = JSON.parse(stdout) as [{ files: { path: string }[]; unpackedSize: number }];
    return { paths: pack.files.map((file) => file.path), unpackedSize: pack.unpackedSize };
  }
  const notShipped = (paths: string[]): string[] =>
    paths.filter((path) => /^(test|src|bench|scripts|conformance)\//.test(path) || path.startsWith('fixtures/expected/') || path.endsWith('.map') || (path.endsWith('.ts') && !path.endsWith('.d.ts')));

  it(`spoof-checker packs the CLI, the service and the demo's data; no tests, goldens or source maps; within ${MAX_UNPACKED_BYTES / 1024 / 1024} MB`, async () => {
    const { paths, unpackedSize } = await packDryRun(root);
    // The demo's data ships: zones, seed, and the scenarios, whose DNS faults `serve --demo` injects.
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'bin/spoof-checker.js', 'dist/index.js', 'dist/index.d.ts', 'dist/service.js', 'dist/service.d.ts', 'dist/cli/main.js', 'fixtures/zones/p-reject.example.zone', 'fixtures/seed/demo.json', 'fixtures/scenarios.json']));
    expect(paths.filter((path) => path.startsWith('packages/'))).toEqual([]);
    expect(notShipped(paths)).toEqual([]);
    expect(unpackedSize).toBeLessThanOrEqual(MAX_UNPACKED_BYTES);
  }, 60_000);

  it('@spoof-checker/engine packs its built code and the result schema, nothing of the service', async () => {
    const { paths, unpackedSize } = await packDryRun(engineRoot);
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/check.js', 'schema/spoof-check-result.schema.json', 'data/shared-infrastructure.json']));
    expect(paths.filter((path) => /^dist\/(http|store|jobs|web|cli|service)\b/.test(path))).toEqual([]);
    expect(notShipped(paths)).toEqual([]);
    expect(unpackedSize).toBeLessThanOrEqual(MAX_UNPACKED_BYTES);
  }, 60_000);

  it('@spoof-checker/engine installs into a blank project: a few packages, no warning, checkDomain on a zone file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engine-install-'));
    const { stdout: packed } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: engineRoot, maxBuffer: 32 * 1024 * 1024 });
    const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'blank', version: '1.0.0', private: true, type: 'module' }));
    // From npm's cache when it holds the dependencies (npm ci filled it), from the registry otherwise.
    const installed = await run('npm', ['install', join(dir, filename), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 });
    expect(installed.stderr.split('\n').filter((line) => /\bwarn\b/i.test(line))).toEqual([]);
    const { stdout: tree } = await run('npm', ['ls', '--all', '--parseable'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 });
    const packages = tree.split('\n').filter((line) => line.includes('node_modules'));
    expect(packages.length).toBeLessThanOrEqual(MAX_ENGINE_INSTALL_PACKAGES);
    expect(packages.filter((path) => SERVICE_STACK.test(`${path}/`))).toEqual([]);
    // The lookalike search too: its confusables data (unhomoglyph) is found from the installed engine.
    const script = `
      import { checkDomain, findLookalikes, skeleton, ZoneResolver, loadZoneDirectory } from '@spoof-checker/engine';
      const resolver = new ZoneResolver(await loadZoneDirectory(${JSON.stringify(zones)}));
      const result = await checkDomain('open.example', { resolver });
      const lookalikes = await findLookalikes('open.example', { resolver });
      console.log(JSON.stringify([result.verdict, result.spoofable, lookalikes.generated > 100, lookalikes.counts.none === lookalikes.generated, skeleton('p\u0430ypa1') === skeleton('paypal')]));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual(['spoofable', true, true, true, true]);
  }, 120_000);

  it('both packages pass `npm publish --dry-run` with no warning (but that no one is logged in)', async () => {
    for (const dir of [engineRoot, root]) {
      // --ignore-scripts, as above: the build of this run is what is checked.
      const published = await run('npm', ['publish', '--dry-run', '--ignore-scripts'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 });
      const warnings = published.stderr.split('\n').filter((line) => /\bwarn\b/i.test(line) && !/requires you to be logged in/.test(line));
      expect(warnings, dir).toEqual([]);
    }
    expect((engineManifest as Manifest & { publishConfig?: { access?: string } }).publishConfig?.access).toBe('public');
  }, 120_000);

  it('both tarballs install into a blank project in one command with no warning; Redis is asked for by name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'service-install-'));
    const tarballs: string[] = [];
    for (const from of [engineRoot, root]) {
      const { stdout: packed } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: from, maxBuffer: 32 * 1024 * 1024 });
      tarballs.push(join(dir, (JSON.parse(packed) as [{ filename: string }])[0].filename));
    }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'blank', version: '1.0.0', private: true, type: 'module' }));
    const installed = await run('npm', ['install', ...tarballs, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 32 * 1024 * 1024 });
    expect(installed.stderr.split('\n').filter((line) => /\bwarn\b/i.test(line))).toEqual([]);
    expect(existsSync(join(dir, 'node_modules', 'bullmq'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules', 'ioredis'))).toBe(false);
    const bin = join(dir, 'node_modules', 'spoof-checker', 'bin', 'spoof-checker.js');
    const { stdout: checked } = await run(process.execPath, [bin, 'check', 'open.example', '--zones', zones, '--json'], { cwd: dir });
    expect(JSON.parse(checked)).toMatchObject({ verdict: 'spoofable' });
    const { stdout: service } = await run(process.execPath, ['--input-type=module', '-e', `const s = await import('spoof-checker/service'); console.log(typeof s.buildApp);`], { cwd: dir });
    expect(service.trim()).toBe('function');
    const missing = /bullmq and ioredis are not installed: Redis \(--redis, spoof-checker worker\) needs the optional packages bullmq and ioredis\. Install them beside spoof-checker: npm install bullmq@\^\d[^ ]* ioredis@\^\d\S*/;
    for (const args of [
      ['serve', '--redis', 'redis://127.0.0.1:1', '--port', '0', '--data', ':memory:'],
      ['worker', '--redis', 'redis://127.0.0.1:1', '--data', join(dir, 'data')],
      ['scan', '-', '--redis', 'redis://127.0.0.1:1', '--data', join(dir, 'data')],
    ]) {
      const failed = await run(process.execPath, [bin, ...args], { cwd: dir }).then(() => undefined, (error: { code: number; stderr: string }) => error);
      expect(failed, args[0]).toMatchObject({ code: 1 });
      expect(failed?.stderr, args[0]).toMatch(missing);
    }
  }, 180_000);

  it('types the whole result, details included, for a TypeScript consumer of the built package', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pkg-types-'));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(root, join(dir, 'node_modules', 'spoof-checker'));
    symlinkSync(join(root, 'node_modules', '@types'), join(dir, 'node_modules', '@types'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['consumer.ts'] }),
    );
    writeFileSync(
      join(dir, 'consumer.ts'),
      `import type { SpoofCheckDetails, SpoofCheckResult } from 'spoof-checker';
       import type { buildApp } from 'spoof-checker/service';
       declare const result: SpoofCheckResult;
       export const lookups: number = result.details.spf.tree[0]!.children[0]!.lookups;
       export const opener: string | null | undefined = result.details.spf.passSet?.open?.term;
       export const dkim: 'found' | 'not-found' | 'incomplete' = result.details.dkim.status;
       export const reason: string | undefined = result.details.dkim.failed[0]?.reason;
       // @ts-expect-error details is a closed type, not an open record
       export const unknown = result.details.whatever;
       export const details: SpoofCheckDetails = result.details;
       export type Build = typeof buildApp;\n`,
    );
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    const outcome = await run(tsc, ['-p', dir], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(outcome).toBe('');
  }, 120_000);

  it('ships an MIT LICENSE that matches package.json', () => {
    expect(manifest.license).toBe('MIT');
    expect(engineManifest.license).toBe('MIT');
    expect(readFileSync(join(engineRoot, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license.split('\n')[0]).toBe('MIT License');
    expect(license).toContain('Copyright (c) 2026 the spoof-checker authors');
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });

  it('declares the Node versions it is tested on, and the build emits no source maps', () => {
    expect(manifest.engines.node).toBe(NODE_FLOOR);
    expect(engineManifest.engines.node).toBe(NODE_FLOOR);
    for (const config of [join(root, 'tsconfig.build.json'), join(engineRoot, 'tsconfig.build.json')]) {
      const build = JSON.parse(readFileSync(config, 'utf8')) as { compilerOptions: Record<string, unknown> };
      expect(build.compilerOptions.sourceMap, config).toBe(false);
      expect(build.compilerOptions.declarationMap, config).toBe(false);
    }
  });
});
