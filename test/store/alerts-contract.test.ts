/**
 * The alert store's contract, run unchanged against memory, SQLite and PostgreSQL: channels are
 * their organisation's (another's id is not found, nor changed, nor deleted), listed oldest first,
 * changed field by field, read by id alone for the pump; the migration `0011_alerts` creates them.
 */
import { expect, it } from 'vitest';
import type { AlertChannel } from '../../src/store/alerts.js';
import { SqlFailureReportStore } from '../../src/store/failure-reports-sql.js';
import { describeStoreContract } from './contract-stores.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';

const channel = (id: string, organizationId = 'o1', createdAt = T0): AlertChannel => ({
  id,
  organizationId,
  name: `channel ${id}`,
  kind: 'slack',
  sealedUrl: 'v1.sealed',
  targetHost: 'hooks.slack.com',
  recipients: [],
  sealedSecret: null,
  rules: { events: ['authentication'], domains: ['example.com'] },
  enabled: true,
  lastTest: null,
  createdAt,
  updatedAt: createdAt,
});

describeStoreContract('alert store contract', ({ stores }) => {
  it('keeps channels per organisation, oldest first', async () => {
    await stores.alerts.createChannel(channel('alc_b', 'o1', T1));
    await stores.alerts.createChannel(channel('alc_a', 'o1', T0));
    await stores.alerts.createChannel(channel('alc_c', 'o2', T0));
    expect((await stores.alerts.listChannels('o1')).map((c) => c.id)).toEqual(['alc_a', 'alc_b']);
    expect(await stores.alerts.getChannel('o1', 'alc_a')).toEqual(channel('alc_a'));
    expect(await stores.alerts.getChannel('o2', 'alc_a')).toBeUndefined();
    expect((await stores.alerts.getChannelById('alc_c'))?.organizationId).toBe('o2');
    expect(await stores.alerts.getChannelById('alc_none')).toBeUndefined();
  });

  it('changes the fields given, only for its organisation; deletes likewise', async () => {
    await stores.alerts.createChannel(channel('alc_a'));
    expect(await stores.alerts.updateChannel('o2', 'alc_a', { enabled: false }, T1)).toBeUndefined();
    const attempt = { at: T1, outcome: 'delivered' as const, statusCode: 200, durationMs: 3, detail: 'HTTP 200' };
    const updated = await stores.alerts.updateChannel('o1', 'alc_a', { enabled: false, lastTest: attempt, rules: { events: ['bimi'], domains: [] } }, T1);
    expect(updated).toEqual({ ...channel('alc_a'), enabled: false, lastTest: attempt, rules: { events: ['bimi'], domains: [] }, updatedAt: T1 });
    expect(await stores.alerts.getChannel('o1', 'alc_a')).toEqual(updated);
    expect(await stores.alerts.deleteChannel('o2', 'alc_a')).toBe(false);
    expect(await stores.alerts.deleteChannel('o1', 'alc_a')).toBe(true);
    expect(await stores.alerts.deleteChannel('o1', 'alc_a')).toBe(false);
    expect(await stores.alerts.listChannels('o1')).toEqual([]);
  });
});

describeStoreContract('remembered lookalike store contract', ({ stores }) => {
  const monitorOf = async (id: string, organizationId: string) => {
    await stores.monitors.create({
      id, organizationId, domain: `${id}.example`, intervalMinutes: 60, webhookUrl: null, checks: ['lookalikes'], sealedSecret: '',
      machine: { confirmed: null, candidate: null, consecutiveFailures: 0 }, lastResult: null, nextRunAt: T0, leaseUntil: null, version: 0, createdAt: T0, updatedAt: T0,
    });
  };
  const remembered = (monitorId: string, domain: string, grade: string, organizationId = 'o1') => ({
    monitorId, organizationId, domain, unicode: domain, firstSeen: T0, lastSeen: T1,
    state: { registered: grade !== 'none', mx: false, spf: false, grade }, pending: null, ours: false, history: [],
  });

  it('saves (insert and replace), lists registered and worst first without the baseline marker, keeps "ours" across saves, forgets', async () => {
    await monitorOf('m1', 'o1');
    await stores.rememberedLookalikes.save([remembered('m1', '', 'none'), remembered('m1', 'b.example', 'medium'), remembered('m1', 'a.example', 'none'), remembered('m1', 'c.example', 'critical')]);
    expect((await stores.rememberedLookalikes.all('m1')).map((e) => e.domain).sort()).toEqual(['', 'a.example', 'b.example', 'c.example']);
    const page = await stores.rememberedLookalikes.list('o1', 'm1', { page: 1, limit: 2 });
    expect(page.total).toBe(3);
    expect(page.items.map((e) => e.domain)).toEqual(['c.example', 'b.example']);
    expect((await stores.rememberedLookalikes.list('o2', 'm1', { page: 1, limit: 10 })).total).toBe(0);
    expect(await stores.rememberedLookalikes.setOurs('o2', 'm1', 'b.example', true)).toBeUndefined();
    expect(await stores.rememberedLookalikes.setOurs('o1', 'm1', 'b.example', true)).toMatchObject({ ours: true });
    // A run that read the entry before it was marked writes it back: "ours" stays.
    await stores.rememberedLookalikes.save([{ ...remembered('m1', 'b.example', 'high'), ours: false }]);
    expect((await stores.rememberedLookalikes.all('m1')).find((e) => e.domain === 'b.example')).toMatchObject({ ours: true, state: { grade: 'high' } });
    await stores.rememberedLookalikes.forget('m1');
    expect(await stores.rememberedLookalikes.all('m1')).toEqual([]);
  });
});

describeStoreContract('failure report store contract', ({ stores, opened }) => {
  const report = (id: string, receivedAt: string, organizationId = 'o1', identity = id) => ({
    id, organizationId, domain: 'example.com', identity, receivedAt, arrivalDate: null, sourceIp: '192.0.2.1', authFailure: ['dmarc'], authenticationResults: [],
    identityAlignment: null, deliveryResult: null, reporter: { userAgent: null, from: null, authenticated: false }, feedback: [], headers: [{ name: 'Subject', value: 'x' }], localPartsHashed: true,
  });

  it('stores once per organisation and identity, reads by domain and window, newest first, per organisation', async () => {
    expect(await stores.failureReports.add(report('fr_1', T0))).toBe('stored');
    expect(await stores.failureReports.add(report('fr_2', T1))).toBe('stored');
    expect(await stores.failureReports.add({ ...report('fr_3', T1), identity: 'fr_1' })).toBe('duplicate');
    expect(await stores.failureReports.add(report('fr_4', T1, 'o2', 'fr_1'))).toBe('stored');
    expect((await stores.failureReports.forDomain('o1', 'example.com', T0, 10)).map((r) => r.id)).toEqual(['fr_2', 'fr_1']);
    expect((await stores.failureReports.forDomain('o1', 'example.com', T1, 10)).map((r) => r.id)).toEqual(['fr_2']);
    expect((await stores.failureReports.forDomain('o1', 'other.example', T0, 10))).toEqual([]);
    expect(await stores.failureReports.get('o1', 'fr_1')).toEqual(report('fr_1', T0));
    expect(await stores.failureReports.get('o2', 'fr_1')).toBeUndefined();
    expect((await stores.failureReports.list('o1', { page: 1, limit: 1 }))).toMatchObject({ total: 2, items: [{ id: 'fr_2' }] });
  });

  it('SQL: reports older than the retention are pruned, the newer kept', async () => {
    if (!opened.sql) return; // memory keeps the newest MEMORY_FAILURE_REPORT_CAPACITY instead
    await stores.failureReports.add(report('fr_old', T0));
    await stores.failureReports.add(report('fr_new', T1));
    const sqlStore = new SqlFailureReportStore(opened.sql.db, () => false);
    expect(await sqlStore.prune(T1)).toBe(1);
    expect((await stores.failureReports.list('o1', { page: 1, limit: 10 })).items.map((r) => r.id)).toEqual(['fr_new']);
  });

  it('settings default to hashing; the salt is made once, and kept across a change of settings', async () => {
    expect(await stores.failureReports.settings('o1')).toEqual({ hashLocalParts: true });
    const salt = await stores.failureReports.salt('o1', () => 'first');
    expect(salt).toBe('first');
    expect(await stores.failureReports.salt('o1', () => 'second')).toBe('first');
    await stores.failureReports.setSettings('o1', { hashLocalParts: false });
    expect(await stores.failureReports.settings('o1')).toEqual({ hashLocalParts: false });
    expect(await stores.failureReports.salt('o1', () => 'third')).toBe('first');
    expect(await stores.failureReports.salt('o2', () => 'other')).toBe('other');
  });
});
