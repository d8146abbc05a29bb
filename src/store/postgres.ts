/**
 * The stores on PostgreSQL (`serve --database postgresql://…`) through `pg` and Kysely's
 * PostgresDialect: any number of `serve` replicas share one database.
 *
 * A lost database is StoreUnavailableError (HTTP 503), never a crash. Two kinds of connection can
 * be lost: an idle one (the pool's `error` event, handled) and one checked out by a query or a
 * transaction, which pg-pool leaves without any `error` listener, so that its `error` event (the
 * server ending the session, `pg_terminate_backend`, a restart) would be thrown out of the event
 * loop and end the process. Every connection therefore gets its own listener when it opens. The
 * query in flight fails with the connection's error (503), pg-pool discards the broken connection
 * on release (it checks that the client is still queryable), and the next query opens a new one,
 * so service resumes by itself once the database is back.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { StoreConfigError, StoreUnavailableError } from './errors.js';
import { migrateToLatest, type MigrationOutcome } from './migrations.js';
import type { StoreDatabase } from './sql-schema.js';
import { createSqlStores, type SqlDialectTraits, type SqlStores, type SqlStoresOptions } from './sql.js';

/** How long a request waits for a connection before the store reports itself unavailable. */
export const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
/** Server-side limit on one statement: a stuck query fails instead of holding a request forever. */
export const POSTGRES_STATEMENT_TIMEOUT_MS = 30_000;
/** Connections per process. */
export const POSTGRES_POOL_SIZE = 10;

/** Node's network error codes that mean the server cannot be reached. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);
/**
 * SQLSTATEs that mean the database cannot serve us (PostgreSQL Appendix A): class 08 connection
 * exception, 57P01–57P03 shutdown / cannot connect now, 53300 too many connections, 3D000 no such
 * database, 28000/28P01 authentication.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300|3D000|28000|28P01)$/;
/** pg's own messages for a dead or missing connection (it sets no code on them). */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|not queryable|Cannot use a pool after calling end|Connection closed/i;

/** The innermost useful error: Node reports a refused dual-stack connect as an AggregateError with an empty message. */
function rootError(error: unknown): unknown {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors[0];
  return error;
}

/** Whether a pg or network error means the database is unreachable. */
export function isPostgresUnavailable(error: unknown): boolean {
  for (const candidate of [error, rootError(error)]) {
    const code = (candidate as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (candidate instanceof Error && UNAVAILABLE_MESSAGE.test(candidate.message)) return true;
  }
  return false;
}

/** One line describing a pg or network error. */
export function describePostgresError(error: unknown): string {
  const root = rootError(error);
  const code = (root as { code?: unknown } | null)?.code;
  // One line, always: start-up failures are printed as a single line.
  const message = (root instanceof Error ? root.message : String(root)).replace(/\s*\n\s*/g, ' ');
  if (message === '' && typeof code === 'string') return code;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** `url` without its password, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** Why a `--database` / DATABASE_URL value cannot be used (one line, password masked), or undefined when it can. */
export function checkDatabaseUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Unparseable, so mask the password by pattern: `//user:secret@` → `//user:***@`.
    return `--database / DATABASE_URL must be a URL such as postgresql://user:password@host:5432/database, not "${url.replace(/(\/\/[^:@/]*:)[^@]*@/, '$1***@')}"`;
  }
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    return `--database / DATABASE_URL must be a postgresql:// URL (got "${parsed.protocol}"); for SQLite use --data DIR`;
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return `--database / DATABASE_URL names no host: ${redactDatabaseUrl(url)}`;
  return undefined;
}

/** PostgreSQL stores opened by {@link openPostgresStores}. */
export interface OpenedPostgresStores {
  stores: SqlStores;
  /** The URL without its password. */
  location: string;
  migrations: MigrationOutcome;
}

/** Options of {@link openPostgresStores}. */
export interface PostgresStoresOptions extends SqlStoresOptions {
  /** Where errors of idle connections are reported (default: ignored; the next query reconnects). */
  onPoolError?: (error: Error) => void;
  /** Connections per process (default POSTGRES_POOL_SIZE). */
  poolSize?: number;
}

/**
 * Connects to `url`, applies the pending migrations (once, under Kysely's advisory lock, however
 * many replicas start together) and returns the stores. Throws StoreConfigError when the URL is
 * bad and StoreUnavailableError when the database cannot be reached, each with a one-line message.
 */
export async function openPostgresStores(url: string, options: PostgresStoresOptions = {}): Promise<OpenedPostgresStores> {
  const problem = checkDatabaseUrl(url);
  const location = redactDatabaseUrl(url);
  if (problem !== undefined) throw new StoreConfigError(problem);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? POSTGRES_POOL_SIZE,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    statement_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    keepAlive: true,
  });
  // Without a listener, an idle connection closed by the server would crash the process.
  pool.on('error', (error) => options.onPoolError?.(error));
  // The same for a connection in use: pg-pool removes its idle listener at checkout, and the
  // server ending the session then emits `error` on the client with nobody listening.
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onPoolError?.(error));
  });
  const traits: SqlDialectTraits = {
    dialect: 'postgres',
    isUnavailable: isPostgresUnavailable,
    isUniqueViolation: (error) => (error as { code?: unknown }).code === '23505',
    describe: describePostgresError,
    async destroy() {
      // Kysely's destroy() already ended the pool; ending twice throws.
      if (!pool.ended) await pool.end().catch(() => undefined);
    },
  };
  const db = new Kysely<StoreDatabase>({ dialect: new PostgresDialect({ pool }) });
  let migrations: MigrationOutcome;
  try {
    migrations = await migrateToLatest(db, 'postgres');
  } catch (error) {
    await db.destroy().catch(() => undefined);
    const why = isPostgresUnavailable(error) ? 'cannot reach the database' : 'cannot migrate the database';
    throw new StoreUnavailableError(`${why} ${location}: ${describePostgresError(error)}`, { cause: error });
  }
  try {
    return { stores: createSqlStores(db, traits, options), location, migrations };
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
}
