/**
 * Re-records the corpus goldens (`fixtures/expected/<scenario>.json`) from what the engine answers now.
 *
 *   npm run record-goldens                      check: print a diff for every golden that changed, exit 1 if any did
 *   npm run record-goldens -- --write           write the changed and the new goldens
 *   npm run record-goldens -- --only a,b        only these scenarios (with or without --write)
 *
 * Read every diff before writing: a golden records what the engine SHOULD answer, and a few are
 * written by hand ahead of an engine fix. Writing over one of those turns a known bug into the
 * expected behaviour.
 *
 * Exit codes: 0 nothing differs (or everything was written), 1 something differs and --write was not
 * given, 2 bad arguments or a scenario that cannot run.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { EXPECTED_DIR, formatGolden, goldenPath, loadCorpusResolver, loadScenarios, readGolden, runScenario } from '../packages/engine/test/corpus/project.js';

/** Lines of unchanged text shown around each change, as `diff -u` does. */
export const DIFF_CONTEXT_LINES = 3;

const USAGE = 'Usage: tsx scripts/record-goldens.ts [--write] [--only name,name]';

interface Options {
  write: boolean;
  only: Set<string> | null;
}

function parseArgs(argv: readonly string[]): Options | string {
  const options: Options = { write: false, only: null };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--write') options.write = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++index] : arg.slice('--only='.length);
      if (!value) return `--only needs a comma-separated list of scenario names.\n${USAGE}`;
      options.only = new Set(value.split(',').map((name) => name.trim()).filter((name) => name !== ''));
    } else if (arg === '--help' || arg === '-h') return USAGE;
    else return `Unknown argument "${arg}".\n${USAGE}`;
  }
  return options;
}

/**
 * A unified diff of two texts (`--- a` / `+++ b` headers, `@@` hunks with `DIFF_CONTEXT_LINES` of
 * context), from a longest-common-subsequence table: golden files are small, so O(n·m) is fine.
 */
export function unifiedDiff(before: string, after: string, fromLabel: string, toLabel: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  type Op = { kind: ' ' | '-' | '+'; text: string; aLine: number; bLine: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: ' ', text: a[i++]!, aLine: i, bLine: ++j });
    // On a tie, the removal first, as diff -u prints it.
    else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ kind: '-', text: a[i++]!, aLine: i, bLine: j });
    else ops.push({ kind: '+', text: b[j++]!, aLine: i, bLine: j });
  }
  const out = [`--- ${fromLabel}`, `+++ ${toLabel}`];
  let index = 0;
  while (index < ops.length) {
    if (ops[index]!.kind === ' ') {
      index++;
      continue;
    }
    // A hunk: from DIFF_CONTEXT_LINES before this change to DIFF_CONTEXT_LINES after the last change
    // that is no more than 2 × DIFF_CONTEXT_LINES unchanged lines away.
    const start = Math.max(0, index - DIFF_CONTEXT_LINES);
    let end = index;
    let quiet = 0;
    for (let k = index; k < ops.length; k++) {
      if (ops[k]!.kind === ' ') {
        if (++quiet > 2 * DIFF_CONTEXT_LINES) break;
      } else {
        quiet = 0;
        end = k;
      }
    }
    const stop = Math.min(ops.length, end + 1 + DIFF_CONTEXT_LINES);
    const hunk = ops.slice(start, stop);
    const aStart = hunk.find((op) => op.kind !== '+')?.aLine ?? 0;
    const bStart = hunk.find((op) => op.kind !== '-')?.bLine ?? 0;
    const aCount = hunk.filter((op) => op.kind !== '+').length;
    const bCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.text}`);
    index = stop;
  }
  return out.join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const options = parseArgs(argv);
  if (typeof options === 'string') {
    console.error(options);
    return options === USAGE ? 0 : 2;
  }
  const scenarios = await loadScenarios();
  const known = new Set(scenarios.map((scenario) => scenario.name));
  const unknown = [...(options.only ?? [])].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    console.error(`No scenario named ${unknown.map((name) => `"${name}"`).join(', ')} in fixtures/scenarios.json.`);
    return 2;
  }
  const resolver = await loadCorpusResolver();
  const added: string[] = [];
  const changed: string[] = [];
  let unchanged = 0;
  await mkdir(EXPECTED_DIR, { recursive: true });
  for (const scenario of scenarios) {
    if (options.only && !options.only.has(scenario.name)) continue;
    const text = formatGolden(await runScenario(scenario, resolver));
    const golden = await readGolden(scenario.name);
    const before = golden === undefined ? undefined : formatGolden(golden);
    if (before === text) {
      unchanged++;
      continue;
    }
    if (before === undefined) {
      added.push(scenario.name);
      console.log(`new: ${scenario.name}`);
    } else {
      changed.push(scenario.name);
      console.log(unifiedDiff(before, text, `fixtures/expected/${scenario.name}.json (golden)`, `${scenario.name} (engine now)`));
    }
    if (options.write) await writeFile(goldenPath(scenario.name), text);
  }
  // Goldens without a scenario are reported, never deleted: removing one is a decision, not a re-record.
  const orphans = (await readdir(EXPECTED_DIR)).filter((file) => file.endsWith('.json') && !known.has(file.slice(0, -'.json'.length)));
  for (const file of orphans) console.log(`orphan: fixtures/expected/${file} has no scenario`);

  const differs = added.length + changed.length;
  console.log(
    `${unchanged} unchanged, ${changed.length} changed, ${added.length} new` +
      (differs === 0 ? '' : options.write ? ' (written)' : ' (not written: run with --write to record them)'),
  );
  return differs > 0 && !options.write ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 2;
  },
);
