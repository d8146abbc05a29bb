/**
 * Measures what response compression (src/http/compression.ts) saves and costs, on the demo's pages:
 * the bytes of the home page and its stylesheet and script (identity, gzip, Brotli, as served), of a
 * result page and of the OpenAPI document; and the CPU time per request of compressing each at the
 * per-request settings and at the settings a constant body gets once. CPU time (user + system, from
 * process.cpuUsage) rather than wall time, so that other work on the machine weighs less.
 *
 *   npx tsx scripts/measure-compression.ts [--iterations N]
 *
 * The figures are in docs/http-api.md ("Compression").
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { checkDomain } from '../packages/engine/src/check.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../packages/engine/src/zones/load.js';
import { loadDemoSettings } from '../src/cli/demo.js';
import { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } from '../src/cli/serve.js';
import { CONSTANT_BROTLI_QUALITY, CONSTANT_GZIP_LEVEL, DYNAMIC_BROTLI_QUALITY, DYNAMIC_GZIP_LEVEL } from '../src/http/compression.js';
import { buildApp } from '../src/service/compose.js';
import { createMemoryStores } from '../src/store/memory.js';
import { ASSETS } from '../src/web/assets.js';
import { batchApp, BATCHES, bearerA, VERDICT_NAMES } from '../test/jobs/helpers.js';

const DEFAULT_ITERATIONS = 200;

function iterations(argv: readonly string[]): number {
  const index = argv.indexOf('--iterations');
  if (index === -1) return DEFAULT_ITERATIONS;
  const value = Number(argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error('--iterations takes a whole number of at least 1');
  return value;
}

/** CPU microseconds per call of `work`, over `n` calls (after a few unmeasured ones). */
function cpuMicros(n: number, work: () => void): number {
  for (let i = 0; i < Math.min(10, n); i++) work();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const brotli = (body: Buffer, quality: number) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (micros: number) => `${(micros / 1000).toFixed(2)} ms`;

async function main(): Promise<void> {
  const n = iterations(process.argv.slice(2));
  const resolver = new ZoneResolver(await loadZoneDirectory(DEMO_ZONES_DIR));
  const demo = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
  const app = await buildApp({ stores: createMemoryStores(), check: (domain) => checkDomain(domain, { resolver }), rateLimits: false, pages: { demo } });
  try {
    const get = async (url: string, encoding?: string) => (await app.inject({ url, headers: encoding ? { 'accept-encoding': encoding } : {} })).rawPayload;
    const paths: [string, string][] = [
      ['home page (/)', '/'],
      ['stylesheet', ASSETS.stylesheet.path],
      ['script', ASSETS.script.path],
      ['result page (/check/p-none.example)', '/check/p-none.example'],
      ['OpenAPI document (/openapi.json)', '/openapi.json'],
    ];
    console.log('Bytes as served (identity / gzip / br):');
    let homeTotal = [0, 0, 0];
    for (const [name, path] of paths) {
      const sizes = [(await get(path)).length, (await get(path, 'gzip')).length, (await get(path, 'br')).length];
      if (path === '/' || path.startsWith('/assets/site.')) homeTotal = homeTotal.map((total, i) => total + sizes[i]!);
      console.log(`  ${name}: ${sizes.map(kib).join(' / ')}`);
    }
    console.log(`  home page with its stylesheet and script: ${homeTotal.map(kib).join(' / ')} (saves ${kib(homeTotal[0]! - homeTotal[2]!)} with br)`);

    console.log(`\nCPU per compression (${n} runs each):`);
    for (const [name, path] of paths) {
      const body = await get(path);
      const rows = [
        [`br q${DYNAMIC_BROTLI_QUALITY}`, () => brotli(body, DYNAMIC_BROTLI_QUALITY), brotli(body, DYNAMIC_BROTLI_QUALITY).length],
        [`br q5`, () => brotli(body, 5), brotli(body, 5).length],
        [`gzip ${DYNAMIC_GZIP_LEVEL}`, () => gzipSync(body, { level: DYNAMIC_GZIP_LEVEL }), gzipSync(body, { level: DYNAMIC_GZIP_LEVEL }).length],
        [`br q${CONSTANT_BROTLI_QUALITY}`, () => brotli(body, CONSTANT_BROTLI_QUALITY), brotli(body, CONSTANT_BROTLI_QUALITY).length],
        [`gzip ${CONSTANT_GZIP_LEVEL}`, () => gzipSync(body, { level: CONSTANT_GZIP_LEVEL }), gzipSync(body, { level: CONSTANT_GZIP_LEVEL }).length],
      ] as const;
      const cells = rows.map(([label, work, size]) => `${label} ${ms(cpuMicros(label.endsWith(`q${CONSTANT_BROTLI_QUALITY}`) ? Math.max(1, Math.floor(n / 10)) : n, work))} → ${kib(size)}`);
      console.log(`  ${name} (${kib(body.length)}): ${cells.join(', ')}`);
    }

    // A whole request through inject, with and without compression: a constant body (the home page)
    // costs nothing more once kept; a result page pays its compression each time.
    console.log(`\nCPU per request through inject (${n} requests each):`);
    for (const [name, path] of [paths[0]!, paths[3]!]) {
      for (const encoding of [undefined, 'gzip', 'br']) {
        for (let i = 0; i < Math.ceil(n / 4); i++) await get(path, encoding);
        const start = process.cpuUsage();
        for (let i = 0; i < n; i++) await get(path, encoding);
        const used = process.cpuUsage(start);
        console.log(`  ${name}, ${encoding ?? 'identity'}: ${ms((used.user + used.system) / n)}`);
      }
    }
  } finally {
    await app.close();
  }

  // A batch's results, streamed: compressed per page of lines with a flush after each.
  const batch = await batchApp();
  try {
    const names = Array.from({ length: 1000 }, (_, i) => VERDICT_NAMES[i % VERDICT_NAMES.length]!);
    const submitted = await batch.app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: names } });
    await batch.runner!.idle();
    const url = `${BATCHES}/${(submitted.json() as { id: string }).id}/results`;
    const sizes = [];
    for (const encoding of [undefined, 'gzip', 'br']) {
      sizes.push((await batch.app.inject({ url, headers: { ...bearerA, ...(encoding ? { 'accept-encoding': encoding } : {}) } })).rawPayload.length);
    }
    console.log(`\nA batch's results, ${names.length} names, streamed (identity / gzip / br): ${sizes.map(kib).join(' / ')}`);
  } finally {
    await batch.app.close();
  }
}

await main();
