/**
 * `serve`'s request log: one short line per request on a terminal, pino's JSON lines elsewhere or
 * when asked; through the real serve command, in process, on a free port.
 */
import { describe, expect, it } from 'vitest';
import { logFormatFor, shortLogWriter } from '../../src/cli/log-format.js';
import { main } from '../../src/cli/main.js';
import { captureIo } from './helpers.js';

describe('the short request log', () => {
  it('prints one line per request (method, path, status, time) and other events as their message', () => {
    const out: string[] = [];
    const write = shortLogWriter((text) => out.push(text));
    const time = Date.parse('2026-11-27T15:42:07Z');
    write(JSON.stringify({ level: 30, time, reqId: 'r1', req: { method: 'GET', url: '/check/p-none.example' }, msg: 'incoming request' }) + '\n');
    write(JSON.stringify({ level: 30, time, reqId: 'r1', res: { statusCode: 200 }, responseTime: 41.4, msg: 'request completed' }) + '\n');
    write(JSON.stringify({ level: 50, time, msg: 'something failed', err: { message: 'boom' } }) + '\n');
    write('not json\n');
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d {2}GET \/check\/p-none\.example {2}200 {2}41 ms\n$/);
    expect(out[1]).toMatch(/^\d\d:\d\d:\d\d {2}error: something failed \(boom\)\n$/);
    expect(out[2]).toBe('not json\n');
  });

  it.each([
    [undefined, true, 'short'],
    [undefined, false, 'json'],
    ['json', true, 'json'],
    ['short', false, 'short'],
  ] as const)('--log-format %s with a terminal %s is %s', (asked, tty, format) => {
    expect(logFormatFor(asked, tty)).toBe(format);
  });

  it('serve refuses an unknown --log-format with a usage error', async () => {
    const { io, stderr } = captureIo();
    expect(await main(['serve', '--demo', '--log-format', 'xml'], io)).toBe(2);
    expect(stderr()).toContain('--log-format must be json or short, not "xml"');
  });

  it('serve --demo on a terminal logs one short line per request', async () => {
    let stop!: (signal: string) => void;
    const { io, stdout, stderr } = captureIo('', { stop: new Promise((resolve) => (stop = resolve)) });
    io.stdoutIsTTY = true;
    const running = main(['serve', '--demo', '--port', '0'], io);
    await expect.poll(() => stderr(), { timeout: 15_000 }).toContain('listening on');
    const url = /listening on (http:\/\/[^ ]+)/.exec(stderr())![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await expect.poll(() => stdout(), { timeout: 5_000 }).toMatch(/ GET \/healthz {2}200 {2}\d+ ms\n/);
    expect(stdout()).not.toContain('{"level"');
    stop('SIGTERM');
    expect(await running).toBe(0);
  });
});
