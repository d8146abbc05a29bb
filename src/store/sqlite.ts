/**
 * The embedded default: the stores in one SQLite file (`DIR/spoof-checker.sqlite`) through
 * Kysely's SqliteDialect over Node's built-in node:sqlite (see sqlite-driver.ts).
 *
 * Durability: WAL journal with `synchronous=NORMAL`. A commit is in the WAL file (the operating
 * system's cache) before the call that made it returns, so every write answered 2xx survives
 * `kill -9` of the process. It does not survive a power loss or kernel crash for certain: the last
 * commits since the WAL was synced may be lost (the database stays consistent). FULL would sync at
 * every commit and survive that too, but here it made writes 6x slower (about 110 against 620–890
 * template versions/s), and every API request writes a record log; PostgreSQL (synchronous commit,
 * group commit) is the choice when a power loss must lose nothing.
 *
 * The driver is synchronous: each statement runs on the event loop. Every query is indexed and
 * bounded (pages, one template, one domain), and retention deletes in batches of PRUNE_BATCH_SIZE
 * with a yield between them, so no store call holds the event loop for long.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { StoreUnavailableError } from './errors.js';
import { openSqliteConnection, sqliteErrorCode, type SqliteConnection } from './sqlite-driver.js';
import { migrateToLatest, type MigrationOutcome } from './migrations.js';
import type { StoreDatabase } from './sql-schema.js';
import { createSqlStores, type SqlDialectTraits, type SqlStores, type SqlStoresOptions } from './sql.js';

/** The database file's name inside the data directory. */
export const SQLITE_FILE_NAME = 'spoof-checker.sqlite';
/** How long a statement waits for another process's write lock before failing (SQLITE_BUSY). */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/** SQLite's answer codes that mean the file cannot be used right now, not that the query was wrong. */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|NOTADB|CORRUPT|READONLY|PERM|AUTH|PROTOCOL)/;

function sqliteTraits(database: SqliteConnection): SqlDialectTraits {
  return {
    dialect: 'sqlite',
    sqlite: database.database,
    isUnavailable(error) {
      const code = sqliteErrorCode(error);
      if (code !== undefined && UNAVAILABLE_CODES.test(code)) return true;
      // After close(): node:sqlite says "database is not open".
      return error instanceof Error && /database is not open/i.test(error.message);
    },
    isUniqueViolation(error) {
      const code = sqliteErrorCode(error);
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
    describe(error) {
      const code = sqliteErrorCode(error);
      const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
      return typeof code === 'string' && !message.startsWith(code) ? `${code}: ${message}` : message;
    },
    async destroy() {
      if (database.isOpen()) database.close();
    },
  };
}

/**
 * `mkdir -p` that always ends. Node's `mkdir(…, { recursive: true })` loops forever when the
 * file system answers ENOENT for a parent that exists (`--data /proc/x` hung `serve` silently),
 * so this creates one level at a time, at most once per path component, and lets the error out.
 */
export async function createDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if ((await stat(directory)).isDirectory()) return;
      throw error;
    }
    const parent = dirname(directory);
    if (code !== 'ENOENT' || parent === directory) throw error;
    // The parent is missing (or the file system says so): make it, then try this level once more.
    await createDirectory(parent);
    await mkdir(directory);
  }
}

/** SQLite stores opened by {@link openSqliteStores}. */
export interface OpenedSqliteStores {
  stores: SqlStores;
  /** The absolute path of the database file. */
  file: string;
  migrations: MigrationOutcome;
}

/**
 * Opens (creating if missing) the data directory `dir` and its database file, applies the pending
 * migrations and returns the stores. Throws StoreUnavailableError, naming the path, when the
 * directory or file cannot be created or opened.
 */
export async function openSqliteStores(dir: string, options: SqlStoresOptions = {}): Promise<OpenedSqliteStores> {
  const directory = resolve(dir);
  const file = join(directory, SQLITE_FILE_NAME);
  let database: SqliteConnection;
  try {
    await createDirectory(directory);
    database = openSqliteConnection(file, { busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS });
    database.exec('PRAGMA journal_mode = WAL');
    // NORMAL in WAL mode: durable against a killed process, not against power loss (module comment).
    database.exec('PRAGMA synchronous = NORMAL');
    database.exec('PRAGMA foreign_keys = ON');
  } catch (error) {
    throw new StoreUnavailableError(`cannot open the SQLite database ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const db = new Kysely<StoreDatabase>({ dialect: new SqliteDialect({ database: database.database }) });
  const traits = sqliteTraits(database);
  let migrations: MigrationOutcome;
  try {
    migrations = await migrateToLatest(db, 'sqlite');
  } catch (error) {
    await db.destroy().catch(() => undefined);
    if (database.isOpen()) database.close();
    throw new StoreUnavailableError(`cannot migrate the SQLite database ${file}: ${traits.describe(error)}`, { cause: error });
  }
  try {
    return { stores: createSqlStores(db, traits, options), file, migrations };
  } catch (error) {
    await db.destroy().catch(() => undefined);
    if (database.isOpen()) database.close();
    throw error;
  }
}
