/**
 * `spoof-checker monitor …` against a real listening service on 127.0.0.1 (the API over the memory
 * store, the real check over a zone the test rewrites): add (secret once), list, show and history by
 * domain or id, run, remove; the catalogue's refusals printed with their fix and exit 1; usage errors
 * exit 2; a key is taken from the environment or a file, never from the command line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { KEY_A, KEY_B, makeApp } from '../http/helpers.js';
import { checkOver, monitorService, MutableResolver, NONE, REJECT, TestClock, WATCHED } from '../monitors/helpers.js';
import { captureIo } from './helpers.js';

describe('spoof-checker monitor', () => {
  let app: FastifyInstance;
  let api: string;
  let setup: ReturnType<typeof monitorService>;
  let resolver: MutableResolver;
  let dir: string;

  beforeAll(async () => {
    resolver = new MutableResolver(REJECT);
    const made = await makeApp();
    await made.app.close();
    setup = monitorService({ store: made.stores.monitors, check: checkOver(resolver), clock: new TestClock(Date.parse('2025-06-01T00:00:00.000Z')) });
    ({ app } = await makeApp({ stores: made.stores, monitors: setup.service }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    dir = await mkdtemp(join(tmpdir(), 'monitor-cli-'));
  });
  afterAll(async () => {
    await app.close();
    await setup.service.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `spoof-checker monitor …args` with KEY_A (or `key`) in the environment. */
  async function run(args: string[], env: Record<string, string> = { SPOOF_CHECKER_API_KEY: KEY_A }) {
    const cli = captureIo();
    cli.io.env = { SPOOF_CHECKER_API_URL: api, ...env };
    const code = await main(['monitor', ...args], cli.io);
    return { code, out: cli.stdout(), err: cli.stderr() };
  }

  it('adds, lists, shows, runs, reads the history and removes, by domain', async () => {
    const added = await run(['add', WATCHED, '--interval', '60']);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(added.out).toContain(`${WATCHED}  (mon_`);
    expect(added.out).toMatch(/secret: +whsec_[0-9a-f]{64}/);
    expect(added.out).toContain('never shown again');

    const listed = await run(['list']);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(new RegExp(`^${WATCHED.replace('.', '\\.')} +pending +not checked yet +every 60 min +mon_`, 'm'));
    expect(listed.out).toContain('1–1 of 1');
    expect(listed.out).not.toContain('whsec_');

    // A run by domain lands in the history once the scheduler has taken it.
    const ran = await run(['run', WATCHED]);
    expect(ran.code).toBe(0);
    expect(ran.out).toContain(`Queued a check of ${WATCHED}`);
    await setup.scheduler.idle();
    resolver.setDmarc(NONE);
    expect((await run(['run', WATCHED])).code).toBe(0);
    await setup.scheduler.idle();
    expect((await run(['run', WATCHED])).code).toBe(0);
    await setup.scheduler.idle();

    const history = await run(['history', WATCHED]);
    expect(history.code).toBe(0);
    expect(history.out.match(/ check /g)?.length).toBe(3);
    expect(history.out).toMatch(/CHANGE +\d+ field/);
    expect(history.out).toContain('p=none');

    const shown = await run(['show', WATCHED, '--json']);
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.out);
    expect(body).toMatchObject({ object: 'monitor', domain: WATCHED, intervalMinutes: 60, state: { status: 'ok' } });
    expect(body).not.toHaveProperty('secret');
    // The id works where a domain does.
    expect((await run(['show', body.id])).out).toContain('state:     ok');

    const removed = await run(['remove', WATCHED]);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain(`Stopped watching ${WATCHED}`);
    expect((await run(['list'])).out).toContain('No monitors yet');
  });

  it("prints the service's refusal with its fix and exits 1", async () => {
    expect((await run(['add', 'tenancy.example'])).code).toBe(0);
    const again = await run(['add', 'tenancy.example']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('[MONITOR_EXISTS]');
    expect(again.err).toContain('PATCH');
    // Another organisation's key sees none of it.
    const other = await run(['show', 'tenancy.example'], { SPOOF_CHECKER_API_KEY: KEY_B });
    expect(other.code).toBe(1);
    expect(other.err).toContain('no monitor watches tenancy.example');
    const badInterval = await run(['add', 'short.example', '--interval', '2']);
    expect(badInterval.code).toBe(1);
    expect(badInterval.err).toContain('[VALIDATION_FAILED]');
    const wrongKey = await run(['list'], { SPOOF_CHECKER_API_KEY: 'sk_wrong_key_that_nobody_has_Zq81xW' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.err).not.toContain('sk_wrong_key');
    expect((await run(['remove', 'tenancy.example'])).code).toBe(0);
  });

  it('reads the key from --key-file, and says so when there is none', async () => {
    const file = join(dir, 'key');
    await writeFile(file, `${KEY_A}\n`);
    expect((await run(['list', '--key-file', file], {})).code).toBe(0);
    const none = await run(['list'], {});
    expect(none.code).toBe(2);
    expect(none.err).toContain('SPOOF_CHECKER_API_KEY');
    await writeFile(file, '\n');
    expect((await run(['list', '--key-file', file], {})).err).toContain('is empty');
  });

  it.each([
    [['frobnicate'], "unknown subcommand 'frobnicate'"],
    [['add'], 'which monitor? give a domain'],
    [['show', 'a.example', 'b.example'], 'one monitor expected, got 2'],
    [['list', 'x.example'], 'takes no argument'],
    [['show', 'a.example', '--interval', '60'], "--interval does not apply to 'monitor show'"],
    [['list', '--api', 'ftp://127.0.0.1/'], 'must be an http:// or https:// URL'],
    [['list', '--api', 'http://user:pw@127.0.0.1/'], 'must not carry a user name or password'],
    [['list', '--key', 'x'], "unknown option '--key'"],
  ])('usage error for %j', async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.err).toContain(message);
  });

  it('says when the service cannot be reached', async () => {
    const closed = await run(['list', '--api', 'http://127.0.0.1:1']);
    expect(closed.code).toBe(1);
    expect(closed.err).toContain('could not reach http://127.0.0.1:1');
    expect(closed.err).toContain('spoof-checker serve');
  });
});
