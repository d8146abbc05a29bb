/** Turning a submitted list into a stored batch: the same for the API and for `scan --redis`. */
import { randomUUID } from 'node:crypto';
import { normaliseDomainInput } from '@spoof-checker/engine';
import type { NewBatch } from '../../store/batches.js';
import { errorLine, type BatchName, type BatchResultRow } from './model.js';

/** A new batch id: `batch_` and 32 hex digits. */
export function newBatchId(): string {
  return `batch_${randomUUID().replaceAll('-', '')}`;
}

/**
 * The names of a new batch, `seq` in submission order, and an error row for each name the
 * normaliser refuses (it does not fail the batch).
 */
export function newBatch(id: string, organizationId: string, createdAt: string, names: readonly string[]): NewBatch {
  const rows: BatchName[] = [];
  const errorRows: BatchResultRow[] = [];
  names.forEach((name, seq) => {
    rows.push({ seq, name });
    const normalised = normaliseDomainInput(name);
    if (!normalised.ok) errorRows.push({ seq, failed: true, line: errorLine(name, 'INVALID_DOMAIN', `${normalised.message} ${normalised.fix}`) });
  });
  return { id, organizationId, createdAt, names: rows, errorRows };
}
