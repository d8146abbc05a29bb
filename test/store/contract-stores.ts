/**
 * The set-up every store contract suite shares: one describe per backend (memory, SQLite,
 * PostgreSQL; test/store/backends.ts), the backend set up once, and a fresh empty store opened
 * before each test and disposed of after it.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest';
import type { Stores } from '../../src/store/types.js';
import { memoryBackend, postgresBackend, sqliteBackend, type Backend, type OpenedBackend } from './backends.js';

/** The three backends (a PostgreSQL backend of its own: one database per suite). */
export function everyBackend(): Backend[] {
  return [memoryBackend, sqliteBackend, postgresBackend()];
}

/** What a test of a contract suite reads: always the store opened for the test that runs. */
export interface ContractStores {
  /** The stores of the running test. */
  stores: Stores;
  /** The running test's backend as opened (its SQL stores, if any). */
  opened: OpenedBackend;
}

/**
 * `body` once per backend, in a describe named `<title>: <backend>`, each test with a fresh empty
 * store. `stores` and `opened` stand for the running test's (read them inside a test or hook, not
 * while the suite is being collected).
 */
export function describeStoreContract(title: string, body: (context: ContractStores, backend: Backend) => void, backends: Backend[] = everyBackend()): void {
  describe.each<Backend>(backends)(`${title}: $name`, (backend) => {
    let current: OpenedBackend | undefined;
    const opened = (): OpenedBackend => {
      if (!current) throw new Error(`no store is open: ${title} reads it outside a test`);
      return current;
    };

    beforeAll(() => backend.setup());
    afterAll(() => backend.teardown());
    beforeEach(async () => {
      current = await backend.open();
    });
    afterEach(async () => {
      await current?.dispose();
      current = undefined;
    });

    body({ stores: standIn(() => opened().stores), opened: standIn(opened) }, backend);
  });
}

/** An object whose every property is read from `target()` at the time it is read. */
function standIn<T extends object>(target: () => T): T {
  return new Proxy({} as T, {
    get: (_object, property) => Reflect.get(target(), property),
    has: (_object, property) => Reflect.has(target(), property),
  });
}
