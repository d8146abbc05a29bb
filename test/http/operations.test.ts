/**
 * Operations: liveness and readiness probes (public, never in the record log), and a database
 * that cannot be reached answering 503 STORE_UNAVAILABLE, never a 500 or a leaked driver message.
 */
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { RecordLog, Stores } from '../../src/store/types.js';
import { bearerA, expectError, makeApp, seededStores } from './helpers.js';

/** Seeded stores whose record log is observable and whose database can be switched off. */
async function switchableStores(): Promise<{ stores: Stores; records: RecordLog[]; down: (reason: string | null) => void }> {
  const stores = await seededStores();
  const records: RecordLog[] = [];
  let outage: string | null = null;
  const append = stores.recordLogs.append.bind(stores.recordLogs);
  stores.recordLogs.append = async (organizationId, record) => {
    records.push(record);
    return append(organizationId, record);
  };
  stores.health = async () => (outage === null ? { ok: true } : { ok: false, reason: outage });
  const list = stores.templates.listTemplates.bind(stores.templates);
  stores.templates.listTemplates = async (...args) => {
    if (outage !== null) throw new StoreUnavailableError(`connect ECONNREFUSED 10.9.8.7:5432 (${outage})`);
    return list(...args);
  };
  return { stores, records, down: (reason) => (outage = reason) };
}

describe('GET /healthz and GET /readyz', () => {
  it('answer 200 without a key, and write no record', async () => {
    const { stores, records } = await switchableStores();
    const { app } = await makeApp({ stores });
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
    expect(health.headers['x-log-id']).toBeUndefined();
    expect(records).toEqual([]);
  });

  it('/readyz answers 503 STORE_UNAVAILABLE while the database is down, its address in the server log only; /healthz stays 200', async () => {
    const { stores, down } = await switchableStores();
    const logged: string[] = [];
    const { app } = await makeApp({ stores, logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
    down('connect ECONNREFUSED 10.20.30.40:5432');
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    const body = expectError(response, 503, 'STORE_UNAVAILABLE');
    expect(body['message']).toBe('The database cannot be reached.');
    expect(response.body).not.toContain('10.20.30.40');
    expect(logged.join('')).toContain('ECONNREFUSED 10.20.30.40:5432');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    down(null);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('a database that cannot be reached', () => {
  it('answers 503 STORE_UNAVAILABLE with the catalogue wording (no driver message), and the service resumes', async () => {
    const { stores, down } = await switchableStores();
    const logged: string[] = [];
    const { app } = await makeApp({ stores, logger: { level: 'error', stream: { write: (line: string) => void logged.push(line) } } });
    down('refused');
    const response = await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA });
    const body = expectError(response, 503, 'STORE_UNAVAILABLE');
    expect(JSON.stringify(body)).not.toContain('10.9.8.7');
    expect(body['message']).toMatch(/database cannot be reached/);
    expect(logged).toEqual([]);
    down(null);
    expect((await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA })).statusCode).toBe(200);
  });
});
