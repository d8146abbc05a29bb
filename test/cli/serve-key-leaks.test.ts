/**
 * Issue 29, item 4, with the real binary: `serve` on SQLite with a seed file whose key is in clear
 * is sent that key planted in a path and, percent-encoded, in a query value, by clients that
 * present no key or a wrong one; and a wrong key planted where it presents it. Its server log (stdout, JSON lines) and every table of its database must hold none of them.
 *
 * Needs `npm run build` first (`npm test` does it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite.js';
import { leakedKeys } from '../setup/key-forms.js';
import { BIN, killAll, ROOT } from '../setup/serve-process.js';

const WRONG_KEY = 'sk_wrong_285220f5dd2b99cad7592544e2b1b3f7';
/** The seed file's key, in clear (as the demo's is). */
const SEED_KEY = 'sk_seeded_fb4ccad7caed30d0f75f132bf7d076d7';
const START_TIMEOUT_MS = 15_000;
const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterEach(async () => {
  killAll(children);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const encodeAll = (text: string): string => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');

/** Issue 38's spellings of `key`: hex, base32, base64 of the upper-cased key, twice, line-wrapped, dashed, HTML references, \u escapes. */
function issue38Spellings(key: string): Record<string, string> {
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  const bits = [...Buffer.from(key)].map((byte) => byte.toString(2).padStart(8, '0')).join('');
  return {
    hex: Buffer.from(key).toString('hex'),
    base32: (bits.match(/.{1,5}/g) ?? []).map((chunk) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[Number.parseInt(chunk.padEnd(5, '0'), 2)]).join(''),
    'base64 of the upper-cased key': b64(key.toUpperCase()),
    'base64 twice': b64(b64(key)),
    'line-wrapped base64': (b64(key).match(/.{1,10}/g) ?? []).join('\n'),
    dashed: (key.match(/.{1,4}/g) ?? []).join('-'),
    'HTML references': [...key].map((char) => `&#${char.charCodeAt(0)};`).join(''),
    '\\u escapes': [...key].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  };
}

/** The keys a text still holds: as written, percent-decoded or base64-decoded. */
const leaked = (text: string): string[] => leakedKeys(text, [SEED_KEY, WRONG_KEY]);

describe('serve keeps keys out of its log and its database', () => {
  it('the seed key planted by others, a wrong key planted by its presenter', { timeout: 60_000 }, async () => {
    const data = await mkdtemp(join(tmpdir(), 'serve-key-leaks-'));
    dirs.push(data);
    const seed = join(data, 'seed.json');
    await writeFile(seed, JSON.stringify({ organizations: [{ id: 'org_leak', name: 'Leak Ltd', apiKeys: [{ id: 'key_leak', key: SEED_KEY }] }] }));
    const child = spawn(process.execPath, [BIN, 'serve', '--data', data, '--seed', seed, '--zones', DEMO_ZONES_DIR, '--port', '0'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + START_TIMEOUT_MS;
    let base: string | undefined;
    while (!(base = /listening on (http:\/\/\S+)/.exec(stderr)?.[1])) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const monitors = `${base}/api/tools/v1/spoof-checker/monitors`;
    const requests: [string, RequestInit][] = [
      [`${monitors}/${SEED_KEY}`, {}],
      [`${monitors}/${SEED_KEY.toUpperCase()}?limit=${encodeAll(SEED_KEY)}`, { headers: { 'x-api-key': WRONG_KEY } }],
      [`${base}/api/template/v1?limit=${WRONG_KEY}`, { headers: { 'x-api-key': WRONG_KEY } }],
      [`${monitors}/${encodeAll(WRONG_KEY).toLowerCase()}`, { headers: { authorization: `Bearer ${WRONG_KEY}` } }],
      [`${base}/no-such-route/${SEED_KEY}`, {}],
      [monitors, { method: 'POST', headers: { 'x-api-key': WRONG_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ domain: `${SEED_KEY}.example`, webhookUrl: `https://hooks.example/?k=${WRONG_KEY}` }) }],
      // Issue 38, item 9: the spellings the redactor did not follow.
      ...Object.values(issue38Spellings(SEED_KEY)).map((spelled): [string, RequestInit] => [`${monitors}/${encodeURIComponent(spelled)}?q=${encodeURIComponent(spelled)}`, {}]),
      ...Object.values(issue38Spellings(WRONG_KEY)).map((spelled): [string, RequestInit] => [`${base}/api/template/v1/${encodeURIComponent(spelled)}?limit=${encodeURIComponent(spelled)}`, { headers: { 'x-api-key': WRONG_KEY, 'user-agent': `agent/${spelled.replace(/\n/g, ' ')}` } }]),
      [`${monitors}?a=${SEED_KEY.slice(0, 21)}&b=${SEED_KEY.slice(21)}`, {}],
      [monitors, { method: 'POST', headers: { 'x-api-key': WRONG_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'ok.example', webhookUrl: `https://hooks.example/?k=${Buffer.from(SEED_KEY).toString('hex')}` }) }],
    ];
    for (const [url, init] of requests) {
      const response = await fetch(url, init);
      expect([400, 401, 404], url).toContain(response.status);
      await response.arrayBuffer();
    }
    child.kill('SIGTERM');
    await exited;
    expect(stdout).toMatch(/incoming request/);
    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.flatMap((line) => leaked(line).map((key) => `${key}: ${line.slice(0, 200)}`))).toEqual([]);
    const db = new DatabaseSync(join(data, SQLITE_FILE_NAME), { readOnly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
      const rows = tables.map((t) => `${t.name}: ${JSON.stringify(db.prepare(`SELECT * FROM "${t.name}"`).all(), (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v))}`);
      expect(rows.join('\n')).toContain('[REDACTED]');
      expect(rows.flatMap((row) => leaked(row).map((key) => `${key}: ${row.slice(0, 200)}`))).toEqual([]);
    } finally {
      db.close();
    }
  });
});
