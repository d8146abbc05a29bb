/**
 * Key revocations announced within this process. The HTTP floor keeps a short-lived cache of API
 * keys (`src/http/auth.ts`); the console revokes keys on the web floor. Neither may import the other
 * (test/architecture.test.ts), so both meet here, on the store floor below them: a revoke announces
 * the key's id, and every listening cache forgets it at once.
 */

type RevocationListener = (keyId: string) => void;

/** The listeners of this process, held weakly (an app closed and collected drops out). */
const LISTENERS = new Set<WeakRef<{ forget: RevocationListener }>>();

/** Registers a holder of cached keys; it is told of every revocation until it is collected. */
export function listenForKeyRevocations(holder: { forget: RevocationListener }): void {
  LISTENERS.add(new WeakRef(holder));
}

/** A key was revoked in this process: every listening cache forgets it, so its next request is refused. */
export function announceKeyRevoked(keyId: string): void {
  for (const ref of LISTENERS) {
    const holder = ref.deref();
    if (holder) holder.forget(keyId);
    else LISTENERS.delete(ref);
  }
}
