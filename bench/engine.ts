/**
 * The engine the benchmarks measure: the package as `npm run build` compiles it into dist/ (what
 * the package ships), not the TypeScript sources run through tsx, whose on-the-fly transform adds
 * helper calls (esbuild's `__name`) to every closure. The build is redone at the start of every run
 * (the same command as `npm run build`), so the figures are always those of the working tree; it
 * goes to dist/ itself because modules find files relative to their own place (the guide pages).
 *
 * `--source` (or `loadEngine({ fromSource: true })`) measures the sources through tsx instead.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package root (one level above bench/). */
export const PACKAGE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** Where the service's build goes: dist/, as `npm run build` does. */
export const ENGINE_BUILD_DIR = join(PACKAGE_ROOT, 'dist');
/** Where the engine package's build goes: packages/engine/dist/ (the service's dist/ imports it by name). */
export const ENGINE_PACKAGE_BUILD_DIR = join(PACKAGE_ROOT, 'packages', 'engine', 'dist');

/** The modules the benchmarks use, all from one build. */
export interface EngineModules {
  /** The package's public API (src/index.ts). */
  api: typeof import('../packages/engine/src/index.js');
  /** The HTTP service entry (`spoof-checker/service`, src/service.ts). */
  service: typeof import('../src/service.js');
  /** The embedded DNS server (not part of the public API: the engine does not need it). */
  server: typeof import('../packages/engine/src/zones/server.js');
  /** The CLI entry (`main(argv, io)`). */
  cli: typeof import('../src/cli/main.js');
  /** Where the modules were loaded from. */
  from: 'build' | 'source';
  /** The directory holding index.js (the build) or index.ts (the sources). */
  dir: string;
}

/** Options of `loadEngine`. */
export interface LoadEngineOptions {
  /** Measure the TypeScript sources through tsx rather than the compiled build. */
  fromSource?: boolean;
}

/**
 * Compiles both packages with the project's own `tsc` and build settings, as `npm run build` does:
 * the engine into packages/engine/dist/, then the service into dist/ against the engine's build.
 */
export function buildEngine(): void {
  // The package's `bin` entry (its `exports` do not list it): typescript/bin/tsc beside package.json.
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  for (const project of [join(PACKAGE_ROOT, 'packages', 'engine', 'tsconfig.build.json'), join(PACKAGE_ROOT, 'tsconfig.build.json')]) {
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  }
}

/**
 * Loads the engine: from a build made by `buildEngine()` (the caller builds once; child processes
 * only load), or from the sources. `dir` overrides where the build is.
 */
export async function loadEngine(options: LoadEngineOptions & { dir?: string } = {}): Promise<EngineModules> {
  if (!options.fromSource) await measureTheBuild();
  if (options.fromSource) {
    const dir = join(PACKAGE_ROOT, 'src');
    return {
      api: await import('../packages/engine/src/index.js'),
      service: await import('../src/service.js'),
      server: await import('../packages/engine/src/zones/server.js'),
      cli: await import('../src/cli/main.js'),
      from: 'source',
      dir,
    };
  }
  const dir = options.dir ?? ENGINE_BUILD_DIR;
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dir, path)).href)) as T;
  return {
    api: await load<EngineModules['api']>('index.js'),
    service: await load<EngineModules['service']>('service.js'),
    // Not exported by the engine package: loaded from its build, beside the service's.
    server: (await import(pathToFileURL(join(ENGINE_PACKAGE_BUILD_DIR, 'zones', 'server.js')).href)) as EngineModules['server'],
    cli: await load<EngineModules['cli']>('cli/main.js'),
    from: 'build',
    dir,
  };
}

/**
 * The tsconfig the benchmarks run under (`npm run bench` passes it to tsx): the project's, without
 * its `paths`. Those map `@spoof-checker/engine` to the engine's TypeScript sources, which is what
 * the type checker and the tests want, but under tsx it also sends the service's build (dist/),
 * which imports the engine by name, to the sources: the "build" measured would then be the engine's
 * sources through tsx's transform, not the compiled package (about a tenth slower, and not what ships).
 */
export const BENCH_TSCONFIG = join(PACKAGE_ROOT, 'bench', 'tsconfig.json');

/**
 * Makes sure `@spoof-checker/engine` resolves to the engine's build in this process. When it does
 * not (the entry was started with `npx tsx bench/…` under the project's tsconfig), the process runs
 * itself again with `TSX_TSCONFIG_PATH` set to `BENCH_TSCONFIG` (tsx reads it at start; child
 * processes inherit it) and exits with that run's code.
 */
async function measureTheBuild(): Promise<void> {
  const byName = ((await import('@spoof-checker/engine')) as { checkDomain: unknown }).checkDomain;
  const built = ((await import(pathToFileURL(join(ENGINE_PACKAGE_BUILD_DIR, 'index.js')).href)) as { checkDomain: unknown }).checkDomain;
  if (byName === built) return;
  if (process.env.TSX_TSCONFIG_PATH === BENCH_TSCONFIG) throw new Error(`@spoof-checker/engine does not resolve to ${ENGINE_PACKAGE_BUILD_DIR} even under ${BENCH_TSCONFIG}`);
  const { spawnSync } = await import('node:child_process');
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, TSX_TSCONFIG_PATH: BENCH_TSCONFIG } });
  process.exit(again.status ?? 1);
}

/** The flags a child process needs to load the same engine as its parent. */
export function engineArgs(engine: EngineModules): string[] {
  return engine.from === 'source' ? ['--source'] : ['--engine-dir', engine.dir];
}

/** The engine a child process was told to load (see `engineArgs`). */
export async function engineFromArgs(args: readonly string[]): Promise<EngineModules> {
  if (args.includes('--source')) return loadEngine({ fromSource: true });
  const at = args.indexOf('--engine-dir');
  return loadEngine(at === -1 ? {} : { dir: args[at + 1] });
}
