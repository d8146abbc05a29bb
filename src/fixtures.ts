import { fileURLToPath } from 'node:url';

/**
 * The fixture zones this package ships (`fixtures/zones/`: the scenario domains under `.example`
 * and a few stand-ins for providers' records), as an absolute path that works from an installed
 * package as from a clone: `loadZoneDirectory(FIXTURE_ZONES_DIR)`. Resolved against this module,
 * which sits one level below the package root in `src/` and in `dist/` alike.
 */
export const FIXTURE_ZONES_DIR = fileURLToPath(new URL('../fixtures/zones/', import.meta.url));
