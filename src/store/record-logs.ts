/** The audit trail: one record per API request, and its store. */
import type { Timestamp } from './page-types.js';

/** One audit record of an API request (spec: "Record log"). Field names as the spec spells them. */
export interface RecordLog {
  uuid: string;
  event: string;
  level: 'info' | 'warn' | 'error';
  trace_id: string;
  metadata: Record<string, unknown> | null;
  status_code: number;
  created_at: Timestamp;
  requestDetails: Record<string, unknown> | null;
  request_body: Record<string, unknown> | null;
  email: Record<string, unknown> | null;
  actor_type: string;
  actor_id: string;
  resource_type: string;
  resource_id: string;
  service: string;
  action: string;
  ip_address: string;
  user_agent: string;
  environment: string;
}

/** The audit trail. A record without an organisation (unauthenticated request) is readable by nobody. */
export interface RecordLogStore {
  append(organizationId: string | null, record: RecordLog): Promise<void>;
  get(organizationId: string, uuid: string): Promise<RecordLog | undefined>;
}
