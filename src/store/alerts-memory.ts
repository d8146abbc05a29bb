/**
 * Alert channels held in memory: for tests and for `serve` without a database.
 */
import type { AlertChannel, AlertChannelPatch, AlertStore } from './alerts.js';
import type { Timestamp } from './page-types.js';
import { copy, owned, ownedBy, ownedCopy } from './pagination.js';

/** Oldest first by createdAt, then id. */
function oldestFirst(a: AlertChannel, b: AlertChannel): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The memory implementation of {@link AlertStore}. */
export class MemoryAlertStore implements AlertStore {
  readonly #channels = new Map<string, AlertChannel>();

  async createChannel(channel: AlertChannel): Promise<void> {
    if (this.#channels.has(channel.id)) throw new Error(`duplicate alert channel id "${channel.id}"`);
    this.#channels.set(channel.id, copy(channel));
  }

  async listChannels(organizationId: string): Promise<AlertChannel[]> {
    return ownedBy(this.#channels.values(), organizationId).sort(oldestFirst).map(copy);
  }

  async getChannel(organizationId: string, id: string): Promise<AlertChannel | undefined> {
    return ownedCopy(this.#channels.get(id), organizationId);
  }

  async getChannelById(id: string): Promise<AlertChannel | undefined> {
    return ownedCopy(this.#channels.get(id));
  }

  async updateChannel(organizationId: string, id: string, patch: AlertChannelPatch, now: Timestamp): Promise<AlertChannel | undefined> {
    const channel = owned(this.#channels.get(id), organizationId);
    if (!channel) return undefined;
    const next: AlertChannel = { ...channel, ...copy(patch), updatedAt: now };
    this.#channels.set(id, next);
    return copy(next);
  }

  async deleteChannel(organizationId: string, id: string): Promise<boolean> {
    const channel = owned(this.#channels.get(id), organizationId);
    if (!channel) return false;
    this.#channels.delete(id);
    return true;
  }
}
