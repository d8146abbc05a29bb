/**
 * Keys never reach a log: neither the record log (headers, query, body) nor the server log (request
 * lines, errors), whichever way the key was sent, valid or not.
 */
import { describe, expect, it } from 'vitest';
import { LOG_REDACT_PATHS, loggerOptions } from '../../src/http/log-redaction.js';
import { redactUrl } from '../../src/http/audit.js';
import { KEY_A, makeApp } from './helpers.js';

const WRONG_KEY = 'sk_wrong_but_secret_0001';

describe('keys never reach the record log or the server log', () => {
  it('with every way of sending a key, at debug level, on successes, 401s, 404s and 400s', async () => {
    const logged: string[] = [];
    const { app, stores } = await makeApp({ logger: { level: 'trace', stream: { write: (line: string) => void logged.push(line) } } });
    const records: unknown[] = [];
    const append = stores.recordLogs.append.bind(stores.recordLogs);
    stores.recordLogs.append = async (organizationId, record) => {
      records.push(record);
      return append(organizationId, record);
    };
    const requests = [
      { method: 'GET' as const, url: '/api/template/v1', headers: { authorization: `Bearer ${KEY_A}` } },
      { method: 'GET' as const, url: '/api/template/v1', headers: { 'x-api-key': KEY_A } },
      { method: 'GET' as const, url: '/api/template/v1', headers: { authorization: `Bearer ${WRONG_KEY}` } },
      { method: 'GET' as const, url: '/api/template/v1', headers: { 'x-api-key': WRONG_KEY, 'proxy-authorization': `Basic ${WRONG_KEY}`, cookie: `session=${WRONG_KEY}` } },
      { method: 'GET' as const, url: `/api/template/v1?api_key=${WRONG_KEY}&token=${KEY_A}`, headers: { 'x-api-key': KEY_A } },
      { method: 'GET' as const, url: `/no-such-route?apiKey=${KEY_A}`, headers: { authorization: `Bearer ${KEY_A}` } },
      { method: 'POST' as const, url: '/api/tools/v1/spoof-checker', headers: { 'x-api-key': KEY_A }, payload: { domain: 'example.com', api_key: WRONG_KEY } },
      { method: 'GET' as const, url: `/api/logs/v1/%E0%A4%A?secret=${WRONG_KEY}`, headers: { 'x-api-key': KEY_A } },
      // Credentials in odd places: ?key=, vendor headers, an auth scheme under another name, the key in a stray header.
      { method: 'GET' as const, url: `/api/template/v1?key=${WRONG_KEY}`, headers: { 'x-auth-key': WRONG_KEY, 'x-api-token': WRONG_KEY } },
      { method: 'GET' as const, url: `/api/template/v1?q=Bearer%20${WRONG_KEY}`, headers: { 'x-api-key': KEY_A, 'x-forwarded-authorization': `Bearer ${WRONG_KEY}`, 'x-debug': `copy of ${KEY_A}` } },
      { method: 'GET' as const, url: `/api/template/v1?access_key=${WRONG_KEY}&sig=${WRONG_KEY}`, headers: { 'x-custom': `Basic ${WRONG_KEY}`, 'x-session-token': WRONG_KEY } },
    ];
    for (const request of requests) await app.inject(request);
    await app.close();
    expect(records).toHaveLength(requests.length);
    const everything = `${logged.join('\n')}\n${JSON.stringify(records)}`;
    expect(logged.length).toBeGreaterThan(0);
    expect(everything).not.toContain(KEY_A);
    expect(everything).not.toContain(WRONG_KEY);
    expect(everything).toContain('[REDACTED]');
  });

  it('an error logged with the request headers has them censored (pino redact paths)', async () => {
    const logged: string[] = [];
    const { app } = await makeApp({ logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
    app.log.error({ req: { headers: { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_A } }, record: { headers: { 'x-api-key': KEY_A } } }, 'with headers');
    await app.close();
    const line = logged.find((text) => text.includes('with headers')) ?? '';
    expect(line).not.toContain(KEY_A);
    expect(line).toContain('[REDACTED]');
  });

  it('loggerOptions keeps a caller’s own redact paths and leaves a disabled logger off', () => {
    expect(loggerOptions(false)).toBe(false);
    const options = loggerOptions({ level: 'info', redact: ['password'] }) as { redact: { paths: string[] } };
    expect(options.redact.paths).toEqual(expect.arrayContaining([...LOG_REDACT_PATHS, 'password']));
  });

  it.each([
    ['/x', '/x'],
    ['/x?domain=a.test', '/x?domain=a.test'],
    [`/x?api_key=${KEY_A}&page=2`, '/x?api_key=%5BREDACTED%5D&page=2'],
    [`/x?access_token=${KEY_A}`, '/x?access_token=%5BREDACTED%5D'],
    [`/x?key=${KEY_A}`, '/x?key=%5BREDACTED%5D'],
    [`/x?X-Auth-Key=${KEY_A}&domain=a.test`, '/x?X-Auth-Key=%5BREDACTED%5D&domain=a.test'],
    [`/x?q=Bearer+${KEY_A}`, '/x?q=%5BREDACTED%5D'],
    ['/x?author=ann&monkey=1', '/x?author=ann&monkey=1'],
  ])('redactUrl(%s)', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
