/**
 * The demo seed with its published keys replaced by strong ones, for tests that run `serve --seed`
 * without `--demo`: outside the loopback demo the published keys are too weak and refused
 * (src/store/api-key-strength.ts). Written once per process to a temporary directory.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The published demo keys (fixtures/seed/demo.json). */
const DEMO_KEYS = { org_demo: 'sk_demo_0123456789abcdef', org_other: 'sk_other_fedcba9876543210' };

/** The strong key that stands for the demo organisation's key in the copy. */
export const STRONG_DEMO_KEY = 'sk_demo_strong_8f14e45fceea167a5a36dedd4bea2543';
/** The strong key that stands for the other organisation's key in the copy. */
export const STRONG_OTHER_KEY = 'sk_other_strong_c9f0f895fb98ab9159f51fd0297e236d';

let written: string | undefined;

/** The path of the copy (the same path for the whole test file, so 'seed … skipped' lines can name it). */
export function strongDemoSeedFile(): string {
  if (written !== undefined) return written;
  const text = readFileSync(fileURLToPath(new URL('../../fixtures/seed/demo.json', import.meta.url)), 'utf8');
  const copy = text.replaceAll(DEMO_KEYS.org_demo, STRONG_DEMO_KEY).replaceAll(DEMO_KEYS.org_other, STRONG_OTHER_KEY);
  if (copy === text) throw new Error('fixtures/seed/demo.json no longer holds the published demo keys this copy replaces');
  written = join(mkdtempSync(join(tmpdir(), 'spoof-checker-seed-')), 'demo-strong-keys.json');
  writeFileSync(written, copy);
  return written;
}
