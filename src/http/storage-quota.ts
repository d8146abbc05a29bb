/**
 * The storage quota's meter (issue 38 item 7): what an organisation writes is counted from the bytes
 * actually read off the connection, whatever `Content-Length` said or did not say (a chunked upload
 * has none), charged as they arrive so that a body is refused as soon as it passes the quota, and
 * topped up afterwards by what the request stored (report records) when that is more than its bytes:
 * a small gzip that stores 200,000 records costs what those records take.
 */
import { Transform, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';

/** Bytes read between two charges of the quota (one counter hit each). */
export const QUOTA_CHARGE_STEP_BYTES = 1024 * 1024;
/** What one stored report record costs the quota (a row, its indexes and its JSON detail). */
export const STORED_RECORD_QUOTA_BYTES = 256;
/** What one stored report costs the quota besides its records (its row, origin and metadata). */
export const STORED_REPORT_QUOTA_BYTES = 1024;

/** What one request read and stored. */
export interface StorageMeter {
  /** Bytes of the body read so far. */
  read: number;
  /** Of those, bytes already charged. */
  charged: number;
  /** Bytes the request stored (set by its handler), charged beyond `read` once it is answered. */
  stored: number;
}

const meters = new WeakMap<FastifyRequest, StorageMeter>();

/** The meter of a request whose body is counted, or undefined. */
export function storageMeter(request: FastifyRequest): StorageMeter | undefined {
  return meters.get(request);
}

/** Tells the quota what a request stored (the handler's count), in bytes. */
export function chargeStored(request: FastifyRequest, bytes: number): void {
  const meter = meters.get(request);
  if (meter !== undefined) meter.stored += bytes;
}

/**
 * Counts the body of `request` as it is read: every `QUOTA_CHARGE_STEP_BYTES`, `charge` is called
 * with the bytes read since the last charge, and the body stops (with charge's error) as soon as
 * it throws.
 */
export function meterBody(request: FastifyRequest, payload: Readable, charge: (bytes: number) => Promise<void>): Readable {
  const meter: StorageMeter = { read: 0, charged: 0, stored: 0 };
  meters.set(request, meter);
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      meter.read += chunk.length;
      const due = meter.read - meter.charged;
      if (due < QUOTA_CHARGE_STEP_BYTES) {
        callback(null, chunk);
        return;
      }
      meter.charged = meter.read;
      charge(due).then(
        () => callback(null, chunk),
        (error: Error) => callback(error),
      );
    },
  });
  payload.on('error', (error) => counted.destroy(error));
  return payload.pipe(counted);
}
