/**
 * The stores held in memory: each resource's store is in its own file (`<resource>-memory.ts`);
 * this file composes them. The classes are re-exported here for the callers that build one alone.
 */
import { MemoryApiKeyStore } from './api-keys-memory.js';
import { MemoryBatchStore } from './batches-memory.js';
import { MemoryConsoleStore } from './console-memory.js';
import { MemoryContactStore } from './contacts-memory.js';
import { MemoryDomainStore } from './domains-memory.js';
import { MemoryEmailLogStore } from './email-logs-memory.js';
import { MemoryShareLinkStore } from './share-links-memory.js';
import { MemoryLookalikeJobStore } from './lookalike-jobs-memory.js';
import { MemoryMonitorStore } from './monitors-memory.js';
import { MemoryAlertStore } from './alerts-memory.js';
import { MemoryRecordLogStore } from './record-logs-memory.js';
import { MemoryRememberedLookalikeStore } from './remembered-lookalikes-memory.js';
import { MemoryFailureReportStore } from './failure-reports-memory.js';
import { MemoryReportStore } from './reports-memory.js';
import { MemoryTemplateStore } from './templates-memory.js';
import type { Stores } from './types.js';

export { MemoryApiKeyStore } from './api-keys-memory.js';
export { MemoryContactStore } from './contacts-memory.js';
export { MemoryDomainStore } from './domains-memory.js';
export { MemoryEmailLogStore } from './email-logs-memory.js';
export { withEventsInOrder } from './email-logs.js';
export { MEMORY_RECORD_LOG_CAPACITY, MemoryRecordLogStore } from './record-logs-memory.js';
export { MemoryTemplateStore } from './templates-memory.js';

/**
 * A fresh set of empty in-memory stores. `newId` names created template versions;
 * `recordLogCapacity` bounds the record log (default {@link MEMORY_RECORD_LOG_CAPACITY}).
 */
export function createMemoryStores(options: { newId?: () => string; recordLogCapacity?: number } = {}): Stores {
  const apiKeys = new MemoryApiKeyStore();
  const domains = new MemoryDomainStore();
  const reports = new MemoryReportStore(async (domain) => ({ withDomain: domains.organizationsWithDomain(domain), organizations: apiKeys.organizationIds() }));
  return {
    apiKeys,
    emailLogs: new MemoryEmailLogStore(),
    recordLogs: new MemoryRecordLogStore(options.recordLogCapacity),
    templates: new MemoryTemplateStore(options.newId),
    domains,
    contacts: new MemoryContactStore(),
    batches: new MemoryBatchStore(),
    monitors: new MemoryMonitorStore(),
    reports,
    lookalikeJobs: new MemoryLookalikeJobStore(),
    alerts: new MemoryAlertStore(),
    rememberedLookalikes: new MemoryRememberedLookalikeStore(),
    failureReports: new MemoryFailureReportStore(),
    console: new MemoryConsoleStore(),
    shareLinks: new MemoryShareLinkStore(),
    // Memory is always reachable; closing has nothing to release but stops the background work on the reports.
    health: async () => ({ ok: true }),
    isEmpty: async () => apiKeys.organizationCount === 0,
    close: () => reports.closing.run(),
  };
}
