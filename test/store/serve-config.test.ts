/** `serve`'s storage flags: --data, --database, --retention-days and their variables. */
import { describe, expect, it } from 'vitest';
import { serveConfig } from '../../src/cli/serve.js';
import type { StorageChoice } from '../../src/store/open.js';
import { checkDatabaseUrl } from '../../src/store/postgres.js';

describe('serveConfig: where the stores live', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, StorageChoice]>([
    ['default: SQLite in ./data', [], {}, { kind: 'sqlite', dir: './data' }],
    ['--demo alone: memory', ['--demo'], {}, { kind: 'memory' }],
    ['--demo with --data: SQLite', ['--demo', '--data', '/srv/d'], {}, { kind: 'sqlite', dir: '/srv/d' }],
    ['--data DIR', ['--data', '/srv/d'], {}, { kind: 'sqlite', dir: '/srv/d' }],
    ['--data :memory:', ['--data', ':memory:'], {}, { kind: 'memory' }],
    ['SPOOF_CHECKER_DATA', [], { SPOOF_CHECKER_DATA: '/var/lib/sc' }, { kind: 'sqlite', dir: '/var/lib/sc' }],
    ['SPOOF_CHECKER_DATA=:memory:', [], { SPOOF_CHECKER_DATA: ':memory:' }, { kind: 'memory' }],
    ['--data beats SPOOF_CHECKER_DATA', ['--data', '/a'], { SPOOF_CHECKER_DATA: '/b' }, { kind: 'sqlite', dir: '/a' }],
    ['--database URL', ['--database', 'postgresql://u@db/app'], {}, { kind: 'postgres', url: 'postgresql://u@db/app' }],
    ['postgres:// is accepted too', ['--database', 'postgres://u@db/app'], {}, { kind: 'postgres', url: 'postgres://u@db/app' }],
    ['DATABASE_URL', [], { DATABASE_URL: 'postgresql://u@db/app' }, { kind: 'postgres', url: 'postgresql://u@db/app' }],
    ['DATABASE_URL beats SPOOF_CHECKER_DATA', [], { DATABASE_URL: 'postgresql://u@db/app', SPOOF_CHECKER_DATA: '/b' }, { kind: 'postgres', url: 'postgresql://u@db/app' }],
    ['--data beats DATABASE_URL', ['--data', '/a'], { DATABASE_URL: 'postgresql://u@db/app' }, { kind: 'sqlite', dir: '/a' }],
    ['--database beats SPOOF_CHECKER_DATA', ['--database', 'postgresql://u@db/app'], { SPOOF_CHECKER_DATA: '/b' }, { kind: 'postgres', url: 'postgresql://u@db/app' }],
  ])('%s', (_case, args, env, storage) => {
    expect(serveConfig(args, env)).toMatchObject({ storage });
  });

  it.each<[string, string[], NodeJS.ProcessEnv, number]>([
    ['default 30 days', [], {}, 30],
    ['--retention-days', ['--retention-days', '7'], {}, 7],
    ['SPOOF_CHECKER_RETENTION_DAYS', [], { SPOOF_CHECKER_RETENTION_DAYS: '90' }, 90],
    ['the flag beats the variable', ['--retention-days', '1'], { SPOOF_CHECKER_RETENTION_DAYS: '90' }, 1],
  ])('retention: %s', (_case, args, env, days) => {
    expect(serveConfig(args, env)).toMatchObject({ retentionDays: days });
  });

  it.each<[string, string[], NodeJS.ProcessEnv, RegExp]>([
    ['--data and --database', ['--data', '/a', '--database', 'postgresql://h/db'], {}, /give --data or --database, not both/],
    ['an empty --data', ['--data', ''], {}, /--data needs a directory \(or :memory:\)/],
    ['retention of 0 days', ['--retention-days', '0'], {}, /--retention-days must be a whole number from 1 to 36500/],
    ['retention that is not a number', [], { SPOOF_CHECKER_RETENTION_DAYS: 'month' }, /--retention-days must be a whole number/],
  ])('refuses %s', (_case, args, env, message) => {
    expect(() => serveConfig(args, env)).toThrow(message);
  });

});

describe('checkDatabaseUrl: what is wrong with a --database / DATABASE_URL value', () => {
  it.each<[string, string | undefined]>([
    ['postgresql://u:pw@db.internal:5432/app', undefined],
    ['postgres://db/app', undefined],
    ['postgresql:///app?host=/var/run/postgresql', undefined],
    ['db.internal', '--database / DATABASE_URL must be a URL such as postgresql://user:password@host:5432/database, not "db.internal"'],
    ['mysql://u:hunter2@db/x', '--database / DATABASE_URL must be a postgresql:// URL (got "mysql:"); for SQLite use --data DIR'],
    ['postgresql:///db', '--database / DATABASE_URL names no host: postgresql:///db'],
    // The password is masked, whether the URL parses or not.
    ['postgresql://u:hunter2@db:notaport/x', '--database / DATABASE_URL must be a URL such as postgresql://user:password@host:5432/database, not "postgresql://u:***@db:notaport/x"'],
    ['postgresql://u:hunter2@/db', '--database / DATABASE_URL must be a URL such as postgresql://user:password@host:5432/database, not "postgresql://u:***@/db"'],
  ])('%s → %s', (url, problem) => {
    expect(checkDatabaseUrl(url)).toBe(problem);
  });
});
