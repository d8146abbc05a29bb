/**
 * "Last used" of the API keys made in the console: the API's key store, seen through a wrapper that
 * notes each key it finds. The API looks a key up in the store at most once per
 * API_KEY_CACHE_TTL_MS (src/http/auth.ts), so the time is right to within that and costs one small
 * write per key per interval. A failed write is dropped: it never fails the request.
 */
import type { ConsoleStore } from '../store/console.js';
import type { ApiKeyStore } from '../store/types.js';

/** `keys`, with every key it finds noted as used now in `store`. */
export function noteKeyUse(keys: ApiKeyStore, store: ConsoleStore, now: () => Date = () => new Date()): ApiKeyStore {
  return {
    addOrganization: (organization) => keys.addOrganization(organization),
    getOrganization: (id) => keys.getOrganization(id),
    addKey: (key) => keys.addKey(key),
    hasAnyKey: () => keys.hasAnyKey(),
    removeKey: (organizationId, id) => keys.removeKey(organizationId, id),
    async findByDigest(sha256) {
      const found = await keys.findByDigest(sha256);
      if (found) void store.touchApiKey(found.organizationId, found.id, now().toISOString()).catch(() => undefined);
      return found;
    },
  };
}
