/**
 * `npm run conformance`: runs both OpenSPF suite files and prints one line per file,
 * `rfc7208: P/T passed`, where T counts every test in the file (skipped ones included). Failures
 * and skips are listed on stderr. Exits 1 when a test that is not skipped fails.
 */
import { runSuite } from './suite.js';

let failed = false;
for (const suite of ['rfc7208', 'rfc4408'] as const) {
  const report = await runSuite(suite);
  console.log(`${suite}: ${report.passed}/${report.total} passed`);
  for (const skip of report.skipped) console.error(`  skipped ${skip.name}: ${skip.reason}`);
  for (const failure of report.failed) console.error(`  FAILED ${failure.scenario} / ${failure.name}: ${failure.failure}`);
  if (report.failed.length > 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
