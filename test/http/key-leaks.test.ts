/**
 * Issue 29, item 4: keys planted in paths, query values and bodies, in every spelling (as is, upper
 * case, percent-encoded whole or in part, encoded twice, inside a longer value), then searched for
 * in every server log line and in every stored record and table, on the memory store and on SQLite.
 *
 * The keys: the one a request presents and that is valid (KEY_A), one presented that fails
 * (WRONG_KEY), a startup key never presented (STARTUP_KEY, `apiKeys`) and a seed key given in clear
 * (SEED_KEY, `redactKeys`, as `serve` passes the seed file's keys). The search is independent of
 * the code under test: it lower-cases every text and percent-decodes it up to three times.
 */
import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/audit.js';
import { KEY_REDACTED, KeyRedactor, MAX_REMEMBERED_KEYS, MIN_KEY_FRAGMENT_CHARS, MIN_REDACTED_KEY_CHARS, presentedSecrets } from '../../src/http/key-redaction.js';
import { applySeed, parseSeed } from '../../src/store/seed.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite.js';
import type { Stores } from '../../src/store/types.js';
import { checkOver, monitorService, MutableResolver, REJECT, TestClock } from '../monitors/helpers.js';
import { KEY_A, makeApp, seededStores, TEST_SEED } from './helpers.js';
import { leakedKeys, percentDecodedForms } from '../setup/key-forms.js';
import { REPORT_SOURCES } from '../ingest/helpers.js';

const WRONG_KEY = 'sk_wrong_46821d245d3a96c48bbafc57054511af';
const STARTUP_KEY = 'sk_startup_b4d8dc0466f6b6401f969b9369fc67ab';
const SEED_KEY = 'sk_seed_6afb42a6360ae7f37ce6411efe937133';
const KEYS = [KEY_A, WRONG_KEY, STARTUP_KEY, SEED_KEY];
const MONITORS = '/api/tools/v1/spoof-checker/monitors';

/** Every character percent-encoded (upper-case hex). */
const encodeAll = (text: string): string => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** The spellings a key is planted in. */
function spellings(key: string): Record<string, string> {
  const half = Math.floor(key.length / 2);
  return {
    plain: key,
    upper: key.toUpperCase(),
    mixed: [...key].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join(''),
    'encoded (lower-case hex)': encodeAll(key).toLowerCase(),
    'encoded (upper-case hex)': encodeAll(key),
    'half encoded': key.slice(0, half) + encodeAll(key.slice(half)),
    'underscores encoded': key.replace(/_/g, '%5F'),
    'encoded twice': encodeAll(key).replace(/%/g, '%25'),
    'inside a value': `prefix-${key}-suffix`,
    'base64 (Basic credentials)': Buffer.from(`api:${key}`).toString('base64'),
    'base64url, inside a token': `tok.${Buffer.from(`{"k":"${key}"}`).toString('base64url')}.sig`,
    ...newSpellings(key),
  };
}

/** RFC 4648 §6 base32, upper case, padded. */
function base32(text: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...Buffer.from(text)].map((byte) => byte.toString(2).padStart(8, '0')).join('');
  const chars = (bits.match(/.{1,5}/g) ?? []).map((chunk) => alphabet[Number.parseInt(chunk.padEnd(5, '0'), 2)]).join('');
  return chars.padEnd(Math.ceil(chars.length / 8) * 8, '=');
}

/** Issue 38, item 9: the spellings the redactor did not follow. */
function newSpellings(key: string): Record<string, string> {
  const half = Math.floor(key.length / 2);
  const b64 = (text: string): string => Buffer.from(text).toString('base64');
  return {
    hex: Buffer.from(key).toString('hex'),
    'hex, upper case': Buffer.from(key).toString('hex').toUpperCase(),
    base32: base32(key),
    'base64 of the upper-cased key': b64(key.toUpperCase()),
    'base64 twice': b64(b64(key)),
    'line-wrapped base64': (b64(`token=${key};`).match(/.{1,8}/g) ?? []).join('\n'),
    // Each half of a key the service accepts (32 characters or more) is a piece MIN_KEY_FRAGMENT_CHARS long.
    ...(key.length >= 2 * MIN_KEY_FRAGMENT_CHARS ? { 'split in two query values': `${key.slice(0, half)}&half=${key.slice(half)}` } : {}),
    dashed: (key.match(/.{1,4}/g) ?? []).join('-'),
    'HTML references': [...key].map((char, i) => (i % 2 ? `&#${char.charCodeAt(0)};` : `&#x${char.charCodeAt(0).toString(16)};`)).join(''),
    '\\u escapes': [...key].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  };
}


/** Lower case, percent-decoded up to three times: the forms a reader of the logs could recover. */
const readable = percentDecodedForms;

/** The keys `text` still holds, in any of its readable forms (base64 decoded too). */
const leaked = (text: string): string[] => leakedKeys(text, KEYS);

/** Every request of the attack: each key in each spelling, in the path, a query value and the body, with each way of presenting a key. */
function attacks(monitorId: string): { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; headers: Record<string, string>; payload?: Record<string, unknown> }[] {
  const out: ReturnType<typeof attacks> = [];
  const presenting: Record<string, string>[] = [
    { authorization: `Bearer ${KEY_A}` },
    { 'x-api-key': WRONG_KEY },
    // Two different keys: refused as invalid, neither may be stored.
    { authorization: `Bearer ${KEY_A}`, 'x-api-key': WRONG_KEY },
  ];
  for (const headers of presenting) {
    // A key nobody presented and nobody configured cannot be told from other text: WRONG_KEY is
    // planted only in the requests that present it.
    const planted = Object.values(headers).some((value) => value.includes(WRONG_KEY)) ? KEYS : KEYS.filter((key) => key !== WRONG_KEY);
    for (const key of planted) {
      for (const spelled of Object.values(spellings(key))) {
        const inUrl = spelled.replace(/[#?/ \n\\]/g, encodeURIComponent);
        out.push(
          { method: 'GET', url: `${MONITORS}/${inUrl}`, headers },
          { method: 'GET', url: `/api/template/v1?limit=${inUrl}`, headers },
          { method: 'GET', url: `/api/template/v1/${inUrl}?page=${inUrl}&q=${inUrl}`, headers },
          { method: 'DELETE', url: `${MONITORS}/${inUrl}`, headers },
          { method: 'POST', url: `${MONITORS}/${inUrl}/run`, headers },
          { method: 'GET', url: `/no-such-route/${inUrl}?x=${inUrl}`, headers },
          { method: 'POST', url: MONITORS, headers, payload: { domain: spelled } },
          { method: 'POST', url: MONITORS, headers, payload: { domain: `${spelled}.example` } },
          { method: 'POST', url: MONITORS, headers, payload: { domain: 'hooks-ok.example', webhookUrl: `https://hooks.example/in?k=${inUrl}` } },
          { method: 'PATCH', url: `${MONITORS}/${monitorId}`, headers, payload: { webhookUrl: `https://hooks.example/${inUrl}` } },
          { method: 'POST', url: '/api/tools/v1/spoof-checker', headers, payload: { domain: spelled, selectors: [spelled] } },
          { method: 'POST', url: '/api/tools/v1/spoof-checker', headers, payload: { domain: 'example.com', note: { [spelled]: spelled } } },
        );
      }
    }
  }
  return out;
}

interface Setup {
  app: FastifyInstance;
  stores: Stores;
  logged: string[];
  records: unknown[];
  close: () => Promise<void>;
  /** Every row of every table (SQLite), or what the memory store shows. */
  tables: () => Promise<string>;
}

async function setup(kind: 'memory' | 'sqlite'): Promise<Setup> {
  let stores: Stores;
  let dir: string | undefined;
  let closeStores = async () => {};
  if (kind === 'memory') {
    stores = await seededStores();
  } else {
    dir = await mkdtemp(join(tmpdir(), 'key-leaks-'));
    const opened = await openSqliteStores(dir, { pruneAutomatically: false });
    stores = opened.stores;
    await applySeed(stores, parseSeed(structuredClone(TEST_SEED), 'test seed'));
    closeStores = () => opened.stores.close();
  }
  const records: unknown[] = [];
  const append = stores.recordLogs.append.bind(stores.recordLogs);
  stores.recordLogs.append = async (organizationId, record) => {
    records.push(record);
    return append(organizationId, record);
  };
  const logged: string[] = [];
  const monitors = monitorService({ store: stores.monitors, check: checkOver(new MutableResolver(REJECT)), clock: new TestClock(Date.now()) });
  const { app } = await makeApp({
    stores,
    monitors: monitors.service,
    apiKeys: [{ key: STARTUP_KEY, organizationId: 'org_startup' }],
    redactKeys: [SEED_KEY],
    logger: { level: 'trace', stream: { write: (line: string) => void logged.push(line) } },
  });
  return {
    app,
    stores,
    logged,
    records,
    close: async () => {
      await app.close();
      await monitors.service.close();
      await closeStores();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
    tables: async () => {
      if (dir === undefined) {
        const list = await stores.monitors.list('org_a', { page: 1, limit: 100 });
        const deliveries = await Promise.all(list.items.map((m) => stores.monitors.deliveries('org_a', m.id, { page: 1, limit: 100 })));
        return JSON.stringify({ monitors: list.items, deliveries });
      }
      const db = new DatabaseSync(join(dir, SQLITE_FILE_NAME), { readOnly: true });
      try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
        expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['record_logs', 'monitors']));
        return tables.map((t) => `${t.name}: ${JSON.stringify(db.prepare(`SELECT * FROM "${t.name}"`).all(), (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v))}`).join('\n');
      } finally {
        db.close();
      }
    },
  };
}

describe('keys planted in paths, queries and bodies reach no log and no table', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0)) await fn();
  });

  it.each(['memory', 'sqlite'] as const)('%s store', { timeout: 120_000 }, async (kind) => {
    const s = await setup(kind);
    cleanup.push(s.close);
    const created = await s.app.inject({ method: 'POST', url: MONITORS, headers: { authorization: `Bearer ${KEY_A}` }, payload: { domain: 'planted.example' } });
    expect(created.statusCode).toBe(201);
    const requests = attacks(created.json().id);
    const statuses = new Map<number, number>();
    for (const request of requests) {
      const response = await s.app.inject(request);
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      // A body carrying a key is refused, so nothing of it is stored.
      if (request.payload && JSON.stringify(request.payload).length > 0 && request.headers.authorization && !request.headers['x-api-key']) {
        const planted = leaked(JSON.stringify(request.payload));
        if (planted.includes(KEY_A) || planted.includes(STARTUP_KEY) || planted.includes(SEED_KEY)) {
          expect(response.statusCode, `${request.method} ${request.url} ${JSON.stringify(request.payload)}`).toBe(400);
          expect(response.json().message).toMatch(/carries an API key/);
        }
      }
    }
    await s.app.close();
    expect(s.records).toHaveLength(requests.length + 1);
    expect(s.logged.length).toBeGreaterThan(requests.length);
    // Every log line, every record, every table.
    const lines = [...s.logged, ...s.records.map((r) => JSON.stringify(r)), ...(await s.tables()).split('\n')];
    const leaks = lines.flatMap((line) => leaked(line).map((key) => `${key} in: ${line.slice(0, 300)}`));
    expect(leaks).toEqual([]);
    expect(lines.join('\n')).toContain(KEY_REDACTED);
    // The attack did reach the routes (not all refused at the door): 404s, 400s, 401s.
    expect([...statuses.keys()]).toEqual(expect.arrayContaining([400, 401, 404]));
  });

  it('a failed key presented alone is stored nowhere, not even where the request repeats it', async () => {
    const s = await setup('sqlite');
    cleanup.push(s.close);
    const response = await s.app.inject({ method: 'GET', url: `${MONITORS}/${WRONG_KEY}?limit=${WRONG_KEY.toUpperCase()}`, headers: { 'x-api-key': WRONG_KEY, 'user-agent': `agent ${WRONG_KEY}` } });
    expect(response.statusCode).toBe(401);
    await s.app.close();
    const all = [...s.logged, ...(await s.tables()).split('\n')];
    expect(all.flatMap(leaked)).toEqual([]);
  });
});

describe('issue 38: keys in fields that are stored or sent on', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0)) await fn();
  });
  const hex = (key: string): string => Buffer.from(key).toString('hex');

  it('a webhook URL with a key in hex, base32 or split across query values is refused, and nothing is stored', async () => {
    const s = await setup('sqlite');
    cleanup.push(s.close);
    const half = Math.floor(KEY_A.length / 2);
    for (const webhookUrl of [`https://hooks.example/in?k=${hex(KEY_A)}`, `https://hooks.example/in?k=${base32(STARTUP_KEY)}`, `https://hooks.example/in?a=${KEY_A.slice(0, half)}&b=${KEY_A.slice(half)}`]) {
      const response = await s.app.inject({ method: 'POST', url: MONITORS, headers: { authorization: `Bearer ${KEY_A}` }, payload: { domain: 'hooks-ok.example', webhookUrl } });
      expect(response.statusCode, webhookUrl).toBe(400);
      expect(response.json().message).toMatch(/carries an API key/);
    }
    await s.app.close();
    expect((await s.tables()).split('\n').flatMap(leaked)).toEqual([]);
  });

  it("a key in a report's org_name, report id or X-Report-Filename is neither stored nor shown", async () => {
    const s = await setup('sqlite');
    cleanup.push(s.close);
    const xml = readFileSync(join(REPORT_SOURCES, 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml'), 'utf8')
      .replace('<org_name>Yahoo</org_name>', `<org_name>Yahoo ${hex(KEY_A)}</org_name>`)
      .replace('<report_id>1795219362.441927</report_id>', `<report_id>${base32(SEED_KEY)}</report_id>`)
      // Before the test clock's day (2025-06-01).
      .replace('<begin>1795132800.0</begin>', '<begin>1748563200</begin>')
      .replace('<end>1795219199</end>', '<end>1748649599</end>');
    const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'text/xml' };
    const stored = await s.app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker/reports', headers: { ...headers, 'x-report-filename': `report-${(STARTUP_KEY.match(/.{1,4}/g) ?? []).join('-')}.xml` }, payload: xml });
    expect(stored.statusCode, stored.body).toBe(200);
    const refused = await s.app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker/reports', headers: { ...headers, 'x-report-filename': `${Buffer.from(KEY_A.toUpperCase()).toString('base64')}.xml` }, payload: '<feedback><nothing/></feedback>' });
    expect(refused.statusCode, refused.body).toBe(422);
    const shown = [
      (await s.app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker/reports', headers })).body,
      (await s.app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker/reports/rejections', headers })).body,
    ];
    expect(shown[0]).toContain('"reports":[{');
    expect(shown[0]).toContain(KEY_REDACTED);
    expect(shown[1]).toContain(KEY_REDACTED);
    await s.app.close();
    const lines = [...shown, ...s.logged, ...(await s.tables()).split('\n')];
    expect(lines.flatMap((line) => leaked(line).map((key) => `${key} in: ${line.slice(0, 300)}`))).toEqual([]);
  });
});

describe('a request the HTTP parser refuses', () => {
  it('logs neither its raw bytes nor the key in them, at trace level', async () => {
    const logged: string[] = [];
    const { app } = await makeApp({ redactKeys: [SEED_KEY], logger: { level: 'trace', stream: { write: (line: string) => void logged.push(line) } } });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const { connect } = await import('node:net');
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1' }, () => {
          socket.write(`GET /api/template/v1/${SEED_KEY} HTTP/1.1\r\nHost: a\r\nx-api-key: ${WRONG_KEY}\r\nx-note: ${SEED_KEY}\r\nBad Header Line\r\n\r\n`);
        });
        let data = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
    } finally {
      await app.close();
    }
    expect(logged.some((line) => line.includes('client error'))).toBe(true);
    expect(logged.flatMap(leaked)).toEqual([]);
    expect(logged.join('\n')).not.toContain('rawPacket');
  });
});

describe('KeyRedactor', () => {
  const key = 'sk_live_AbC0123456789xyz';
  const redactor = new KeyRedactor([key]);

  it.each(Object.entries(spellings(key)))('redacts the %s spelling', (name, spelled) => {
    // The spellings issue 38 added are found by reading the value (`read`: fields stored or shown).
    const out = redactor.redactText(`/api/x/${spelled}/y?z=1`, [], name in newSpellings(key));
    expect(leaked(out).length === 0 && leakedKeys(out, [key]).length === 0).toBe(true);
    expect(out).toContain(KEY_REDACTED);
    // The spellings issue 38 added are read, not followed: the whole value goes.
    if (!(name in newSpellings(key))) expect(out.startsWith('/api/x/')).toBe(true);
  });

  it.each(Object.entries(newSpellings(WRONG_KEY)))('finds the %s spelling of a key in a stored field, whole or across fields', (_name, spelled) => {
    const alone = new KeyRedactor([SEED_KEY]);
    expect(alone.readsKey(spelled, [WRONG_KEY])).toBe(true);
    expect(alone.findKey({ webhookUrl: `https://hooks.example/in?k=${spelled}` }, [WRONG_KEY])).toBe('webhookUrl');
    expect(alone.readsKey(spelled)).toBe(false);
  });

  it('a key cut into short pieces across fields is found put together; other text is left alone', () => {
    const pieces = WRONG_KEY.match(/.{1,10}/g)!;
    expect(new KeyRedactor([WRONG_KEY]).findKey({ a: pieces[0], b: { c: pieces[1], d: [pieces[2], pieces[3]] } })).toBe('(the body, across fields)');
    const ordinary = ['https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX', 'Z29vZ2xlLmNvbQ==', 'deadbeefcafebabe0123456789abcdef', 'MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U'];
    for (const text of ordinary) expect(new KeyRedactor([WRONG_KEY, SEED_KEY]).readsKey(text), text).toBe(false);
  });

  it('with many keys remembered (the tail index), finds each in every spelling; forgets the least recently used past the cap', () => {
    const many = Array.from({ length: 40 }, (_, i) => `sk_many_${String.fromCharCode(97 + (i % 26))}${i}Qz${(i * 7919).toString(36)}Lm${i}`);
    const big = new KeyRedactor(many);
    for (const chosen of [many[0]!, many[17]!, many[39]!]) {
      for (const spelled of Object.values(spellings(chosen))) {
        const out = big.redactText(`/p/${spelled}?q=1`, [], true);
        expect(leakedKeys(out, [chosen]), `${spelled} → ${out}`).toEqual([]);
      }
    }
    expect(big.redactText('/p/sk_many_not_one_of_them')).toBe('/p/sk_many_not_one_of_them');
    const capped = new KeyRedactor();
    for (let i = 0; i < MAX_REMEMBERED_KEYS + 1; i++) capped.remember(`sk_capped_${i}_Xq9Lm2`);
    expect(capped.size).toBe(MAX_REMEMBERED_KEYS);
    expect(capped.redactText('sk_capped_0_Xq9Lm2')).toBe('sk_capped_0_Xq9Lm2');
    expect(capped.redactText(`sk_capped_${MAX_REMEMBERED_KEYS}_Xq9Lm2`)).toBe(KEY_REDACTED);
  });

  it.each([
    ['Basic credentials (user:key)', (k: string) => `Basic ${Buffer.from(`api:${k}`).toString('base64')}`],
    ['the key alone', (k: string) => Buffer.from(k).toString('base64')],
    ['one octet in front', (k: string) => Buffer.from(`x${k}`).toString('base64')],
    ['two octets in front, text after', (k: string) => Buffer.from(`xy${k}","more":"text`).toString('base64')],
    ['the URL-safe alphabet (RFC 4648 §5), in a query', (k: string) => `/cb?state=${Buffer.from(`{"token":"${k}"}`).toString('base64url')}`],
  ])('redacts a key written in base64: %s', (_name, encode) => {
    const planted = encode(key);
    expect(planted).not.toContain(key);
    expect(redactor.holdsKey(planted)).toBe(true);
    const redacted = redactor.redactText(planted);
    expect(redacted).toContain(KEY_REDACTED);
    expect(redactor.holdsKey(redacted)).toBe(false);
    expect(leaked(redacted)).toEqual([]);
    // The request's own key (not remembered) is found the same way.
    const other = 'sk_test_Zy98xW76vU54tS';
    const alone = new KeyRedactor();
    expect(alone.holdsKey(encode(other), [other])).toBe(true);
    expect(alone.holdsKey(alone.redactText(encode(other), [other]), [other])).toBe(false);
  });

  it('finds base64 forms of any of many remembered keys, and leaves other base64 alone', () => {
    const many = Array.from({ length: 40 }, (_, i) => `sk_b64_${i}Qz${(i * 7919).toString(36)}Lm${i}xR`);
    const big = new KeyRedactor(many);
    for (const chosen of [many[0]!, many[23]!, many[39]!]) {
      for (const prefix of ['', 'a', 'ab']) expect(big.holdsKey(big.redactText(Buffer.from(`${prefix}${chosen}`).toString('base64')))).toBe(false);
      expect(big.holdsKey(Buffer.from(chosen).toString('base64'))).toBe(true);
    }
    const unrelated = Buffer.from('{"domain":"example.com","selectors":["s1","s2"]}').toString('base64');
    expect(big.redactText(unrelated)).toBe(unrelated);
    expect(redactor.redactText(unrelated)).toBe(unrelated);
  });

  it('leaves other text alone, and short candidates are not searched for', () => {
    // Fewer than MIN_KEY_FRAGMENT_CHARS characters of the key: not a piece of it (16 would be, issue 38).
    expect(redactor.redactText('/api/x/sk_live_AbC0123/y', [], true)).toBe('/api/x/sk_live_AbC0123/y');
    expect(redactor.redactText('/api/x/sk_live_AbC01234/y', [], true)).toBe(KEY_REDACTED);
    expect(redactor.redactText('abc abc', ['abc'])).toBe('abc abc');
    expect(MIN_REDACTED_KEY_CHARS).toBe(8);
  });

  it('redacts every string of a value, field names included, and finds where a key sits', () => {
    const value = { domain: `${key}.example`, list: ['ok', { [key.toUpperCase()]: 1 }], n: 2, at: null };
    expect(redactor.redactDeep(value)).toEqual({ domain: `${KEY_REDACTED}.example`, list: ['ok', { [KEY_REDACTED]: 1 }], n: 2, at: null });
    expect(redactor.findKey(value)).toBe('domain');
    expect(redactor.findKey({ a: [{ b: encodeAll(key) }] })).toBe('a[0].b');
    expect(redactor.findKey({ fine: 'text' })).toBeUndefined();
    // The path of a field named with a key does not repeat the key.
    expect(redactor.findKey({ x: { [key]: 1 } })).toBe('x.(a field name)');
  });

  it('keeps an Error an Error, its message redacted', () => {
    const error = Object.assign(new TypeError(`bad ${key}`), { code: 'E_X', where: key });
    const copy = redactor.redactDeep({ err: error }).err;
    expect(copy).toBeInstanceOf(TypeError);
    expect(copy.message).toBe(`bad ${KEY_REDACTED}`);
    expect(copy.stack).not.toContain(key);
    expect((copy as unknown as { where: string }).where).toBe(KEY_REDACTED);
  });

  it('reads the presented credentials, whatever the scheme, and both headers', () => {
    expect(presentedSecrets({ authorization: `Bearer ${key}` })).toContain(key);
    expect(presentedSecrets({ authorization: `Token  ${key}` })).toContain(key);
    expect(presentedSecrets({ 'x-api-key': ` ${key} ` })).toEqual([key]);
    expect(presentedSecrets({ authorization: `Bearer ${key}`, 'x-api-key': WRONG_KEY })).toEqual(expect.arrayContaining([key, WRONG_KEY]));
    expect(presentedSecrets({})).toEqual([]);
  });

  it('the server log request line: a presented key in the path and in any query value', () => {
    const url = `/api/monitors/${key}?limit=${encodeAll(key)}&page=1`;
    const line = new KeyRedactor().redactText(redactUrl(url), presentedSecrets({ 'x-api-key': key }));
    expect(leaked(line)).toEqual([]);
    expect(readable(line).some((form) => form.includes(key.toLowerCase()))).toBe(false);
    expect(line).toBe(`/api/monitors/${KEY_REDACTED}?limit=${KEY_REDACTED}&page=1`);
  });
});
