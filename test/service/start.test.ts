/**
 * `startService` / `startWorker` (src/service/start.ts): the one place that starts the service.
 * Components start in order and stop in the reverse order, each within its bound; a component the
 * caller plugs in is started with the context and stopped before the jobs; a start that fails
 * stops what had started and throws.
 */
import { ZoneResolver } from '@spoof-checker/engine';
import { describe, expect, it } from 'vitest';
import { HEALTH_PATH } from '../../src/http/routes/health.js';
import { startService, startWorker, type ServiceConfig } from '../../src/service/start.js';

const resolver = new ZoneResolver([]);

function config(overrides: Partial<ServiceConfig> = {}, lines: string[] = []): ServiceConfig {
  return {
    storage: { kind: 'memory' },
    check: { resolverFor: () => resolver },
    allowPrivateAddresses: false,
    env: {},
    log: (line) => void lines.push(line),
    http: { host: '127.0.0.1', port: 0, apiKeys: [], rateLimit: false, trustProxy: false, publicHistory: false, environment: 'test', logger: false },
    ...overrides,
  };
}

describe('startService', () => {
  it('starts store, jobs, plugged-in components and the HTTP app in order, and stops them in reverse', async () => {
    const events: string[] = [];
    const lines: string[] = [];
    const handle = await startService(
      config(
        {
          components: [
            {
              name: 'reports receiver',
              start: async (context) => {
                events.push(`start ${context.role} ${typeof context.stores.apiKeys.hasAnyKey}`);
                return { stop: async () => void events.push('stop reports receiver') };
              },
            },
          ],
        },
        lines,
      ),
    );
    expect(handle.components.map((c) => c.name)).toEqual(['store', 'batches', 'lookalike jobs', 'monitors', 'reports receiver', 'http']);
    expect(events).toEqual(['start serve function']);
    expect(lines[0]).toMatch(/^store: memory/);
    expect(handle.port).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${handle.port}${HEALTH_PATH}`);
    expect(health.status).toBe(200);
    expect(await handle.hasApiKey()).toBe(false);
    const outcomes = await handle.stop();
    expect(outcomes).toEqual([
      { name: 'http', outcome: 'stopped' },
      { name: 'reports receiver', outcome: 'stopped' },
      { name: 'monitors', outcome: 'stopped' },
      { name: 'lookalike jobs', outcome: 'stopped' },
      { name: 'batches', outcome: 'stopped' },
      { name: 'store', outcome: 'stopped' },
    ]);
    expect(events).toEqual(['start serve function', 'stop reports receiver']);
    await expect(fetch(`http://127.0.0.1:${handle.port}${HEALTH_PATH}`)).rejects.toThrow();
  });

  it('bounds each stop: a component that hangs is left behind, the ones started before it still stop', async () => {
    const lines: string[] = [];
    const handle = await startService(
      config({ stopTimeoutMs: 50, components: [{ name: 'stuck', start: async () => ({ stop: () => new Promise<void>(() => undefined) }) }] }, lines),
    );
    const outcomes = await handle.stop();
    expect(outcomes.map((o) => `${o.name}:${o.outcome}`)).toEqual(['http:stopped', 'stuck:timed-out', 'monitors:stopped', 'lookalike jobs:stopped', 'batches:stopped', 'store:stopped']);
    expect(lines).toContain('stuck did not stop within 50 ms; stopping the rest');
  });

  it('a component whose stop fails is logged, and the rest still stop', async () => {
    const lines: string[] = [];
    const handle = await startService(config({ components: [{ name: 'flaky', start: async () => ({ stop: async () => Promise.reject(new Error('boom')) }) }] }, lines));
    const outcomes = await handle.stop();
    expect(outcomes.find((o) => o.name === 'flaky')?.outcome).toBe('failed');
    expect(outcomes.at(-1)).toEqual({ name: 'store', outcome: 'stopped' });
    expect(lines).toContain('stopping flaky failed: boom');
  });

  it('a start that fails stops what had started, last first, and throws', async () => {
    const events: string[] = [];
    const starter = (name: string, fail = false) => ({
      name,
      start: async () => {
        if (fail) throw new Error(`${name} cannot start`);
        events.push(`start ${name}`);
        return { stop: async () => void events.push(`stop ${name}`) };
      },
    });
    await expect(startService(config({ components: [starter('a'), starter('b'), starter('c', true)] }))).rejects.toThrow('c cannot start');
    expect(events).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('a port in use fails the start and leaves nothing running', async () => {
    const first = await startService(config());
    await expect(startService(config({ http: { ...config().http, port: first.port } }))).rejects.toThrow(/EADDRINUSE|address already in use/);
    await first.stop();
  });
});

describe('startWorker', () => {
  it('gives up on a Redis that does not answer, within its bound, having stopped everything', async () => {
    const started = Date.now();
    await expect(
      startWorker({
        storage: { kind: 'memory' },
        check: { resolverFor: () => resolver },
        allowPrivateAddresses: false,
        env: {},
        log: () => undefined,
        redisUrl: 'redis://:secret@127.0.0.1:1',
        concurrency: 1,
        connectTimeoutMs: 300,
      }),
    ).rejects.toThrow('cannot reach Redis at redis://:***@127.0.0.1:1 within 0.3 s');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
