/**
 * The SQLite driver (Node's built-in node:sqlite) in a child process on the Node running the
 * tests: it opens, runs a statement, and prints nothing on stderr (Node 22 marks node:sqlite
 * experimental and would warn at every `serve` start), while other warnings still get through.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openSqliteConnection, sqliteErrorCode } from '../../src/store/sqlite-driver.js';

const run = promisify(execFile);
const DRIVER = new URL('../../dist/store/sqlite-driver.js', import.meta.url).pathname;

describe('the SQLite driver', () => {
  it('opens a database without the experimental warning, and lets other warnings through', async () => {
    if (!existsSync(DRIVER)) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    const script = `
      const { openSqliteConnection } = await import(${JSON.stringify(DRIVER)});
      const connection = openSqliteConnection(':memory:', { busyTimeoutMs: 100 });
      connection.exec('create table t (x integer)');
      const rows = connection.database.prepare('select 1 as one').all([]);
      console.log(JSON.stringify(rows), connection.isOpen());
      connection.close();
      process.emitWarning('a warning of the caller', 'ExperimentalWarning');
    `;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe('[{"one":1}] true');
    expect(stderr).not.toMatch(/SQLite is an experimental feature/);
    expect(stderr).toMatch(/a warning of the caller/);
  });

  it('tells readers from writers, and names SQLite result codes', () => {
    const connection = openSqliteConnection(':memory:', { busyTimeoutMs: 100 });
    try {
      connection.exec('create table t (x integer primary key)');
      expect(connection.database.prepare('insert into t (x) values (?)').reader).toBe(false);
      expect(connection.database.prepare('insert into t (x) values (?) returning x').reader).toBe(true);
      connection.database.prepare('insert into t (x) values (?)').run([1]);
      let caught: unknown;
      try {
        connection.database.prepare('insert into t (x) values (?)').run([1]);
      } catch (error) {
        caught = error;
      }
      expect(sqliteErrorCode(caught)).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
      expect(sqliteErrorCode(new Error('not SQLite'))).toBeUndefined();
    } finally {
      connection.close();
    }
    expect(connection.isOpen()).toBe(false);
  });
});
