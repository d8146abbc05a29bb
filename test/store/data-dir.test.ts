/**
 * The data directory `serve --data DIR` creates: every level made, an existing one accepted, and
 * every impossible one an error that ends (Node's recursive mkdir loops forever on /proc).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { createDirectory, openSqliteStores } from '../../src/store/sqlite.js';

describe('createDirectory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spoof-checker-data-dir-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('creates every missing level, and accepts a directory that exists', async () => {
    const nested = join(dir, 'a', 'b', 'c');
    await createDirectory(nested);
    expect((await stat(nested)).isDirectory()).toBe(true);
    await expect(createDirectory(nested)).resolves.toBeUndefined();
  });

  it('refuses a file in the way (EEXIST) and a file as a parent (ENOTDIR)', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    await expect(createDirectory(file)).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(createDirectory(join(file, 'x', 'y'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('ends with ENOENT where the file system refuses directories (/proc), instead of looping', { timeout: 5_000 }, async () => {
    await expect(createDirectory('/proc/spoof-checker-no-such-dir/data')).rejects.toMatchObject({ code: 'ENOENT' });
    const opened = openSqliteStores('/proc/spoof-checker-no-such-dir');
    await expect(opened).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(opened).rejects.toThrow(/^cannot open the SQLite database \/proc\/spoof-checker-no-such-dir\/spoof-checker\.sqlite: ENOENT/);
  });
});
