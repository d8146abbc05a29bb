/** Report fixtures read from fixtures/reports (generated ones at the top, sources in src/). */
import { readdirSync, readFileSync } from 'node:fs';

const root = new URL('../../../../fixtures/reports/', import.meta.url);

/** The bytes of a fixture file (`src/…` for the sources). */
export function fixture(name: string): Buffer {
  return readFileSync(new URL(name, root));
}

/** The names of the fixture sources matching `pattern`. */
export function sources(pattern: RegExp): string[] {
  return readdirSync(new URL('src/', root)).filter((name) => pattern.test(name)).sort();
}
