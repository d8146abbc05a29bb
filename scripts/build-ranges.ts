/**
 * Builds the shipped provider snapshot, `packages/engine/data/shared-infrastructure.json`, from the providers' feeds
 * in their official formats (by default the copies in `fixtures/provider-ranges/`, whose README says
 * where and when each was read).
 *
 *   npx tsx scripts/build-ranges.ts [--from DIR] [--read-at YYYY-MM-DD] [--out FILE]
 *
 * `--read-at` dates the feeds that carry no date of their own (default: the fixtures' 2025-07-25;
 * with `--from`, each file's modification day).
 *
 * The file's date is the oldest feed date, so a result says how current the data is. Exit codes:
 * 0 written, 1 a feed was refused, 2 bad arguments.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRangesFile, readFeedDirectory } from '../packages/engine/src/ranges/build.js';
import { SHIPPED_RANGES_FILE } from '../packages/engine/src/ranges/snapshot.js';
import { writeFileAtomically } from '../src/cli/atomic-file.js';

const args = process.argv.slice(2);
let from = fileURLToPath(new URL('../fixtures/provider-ranges/', import.meta.url));
let out = SHIPPED_RANGES_FILE;
/** fixtures/provider-ranges/README.md: the copies were read from 2025-07-21 to 2025-07-25. */
let readAt: string | undefined = '2025-07-25';
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--from' && args[i + 1]) {
    from = args[++i]!;
    readAt = undefined;
  } else if (args[i] === '--read-at' && /^\d{4}-\d{2}-\d{2}$/.test(args[i + 1] ?? '')) readAt = args[++i]!;
  else if (args[i] === '--out' && args[i + 1]) out = args[++i]!;
  else {
    process.stderr.write('Usage: tsx scripts/build-ranges.ts [--from DIR] [--read-at YYYY-MM-DD] [--out FILE]\n');
    process.exit(2);
  }
}

const feeds = readFeedDirectory(from, readAt);
const result = buildRangesFile(feeds, { now: new Date() });
for (const p of result.providers) process.stdout.write(`${p.provider.padEnd(13)} ${p.outcome.padEnd(8)} ${p.detail}\n`);
if (result.file === null) process.exit(1);
mkdirSync(dirname(out), { recursive: true });
await writeFileAtomically(out, `${JSON.stringify(result.file, null, 1)}\n`);
process.stdout.write(`wrote ${out} (data date ${result.file.date})\n`);
