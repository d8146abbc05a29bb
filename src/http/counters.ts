/**
 * Fixed-window counters for the limits @fastify/rate-limit does not cover: several keys counted by
 * one request (a client's /64, /56 and /48 and a global budget), a cost other than 1 (bytes
 * written), and a count read without counting (failed authentications, checked before the key is).
 *
 * Two stores: in this process (a bounded map), and Redis (one Lua script, so that every key of a
 * request is counted in one round trip and atomically, shared by every replica). The Redis one
 * degrades to the process's own counters while Redis does not answer, and returns to Redis by
 * itself when it does: the limits keep holding per replica instead of failing every request.
 */
import type { RateLimitRedis } from './rate-limits.js';

/** One counter to add to: its key and its window. */
export interface CounterKey {
  key: string;
  windowMs: number;
}

/** A counter after the hit: its count in the current window and the milliseconds until the window ends. */
export interface CounterState {
  count: number;
  resetMs: number;
}

/** Counters that several limits share. */
export interface WindowCounter {
  /**
   * Adds `cost` to each key's count (0 reads without counting) and returns each count after it,
   * in the order of `keys`. A key's window starts at its first hit and lasts `windowMs`.
   */
  hit(keys: readonly CounterKey[], cost?: number): Promise<CounterState[]>;
}

/** Most keys the in-process counter remembers; the oldest are forgotten first (~100 bytes each). */
export const LOCAL_COUNTER_MAX_KEYS = 50_000;
/** Prefix of every counter key in Redis (apart from @fastify/rate-limit's). */
export const REDIS_COUNTER_NAMESPACE = 'spoof-checker:counter:';

/** Counters in this process: a map in insertion order, trimmed to `maxKeys`. */
export class LocalCounter implements WindowCounter {
  readonly #entries = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly maxKeys: number = LOCAL_COUNTER_MAX_KEYS,
    private readonly clock: () => number = Date.now,
  ) {}

  async hit(keys: readonly CounterKey[], cost = 1): Promise<CounterState[]> {
    return this.hitNow(keys, cost);
  }

  /** `hit`, synchronously. */
  hitNow(keys: readonly CounterKey[], cost = 1): CounterState[] {
    const now = this.clock();
    return keys.map(({ key, windowMs }) => {
      let entry = this.#entries.get(key);
      if (entry === undefined || entry.resetAt <= now) {
        if (cost === 0) return { count: 0, resetMs: windowMs };
        this.#entries.delete(key);
        entry = { count: 0, resetAt: now + windowMs };
        this.#entries.set(key, entry);
        this.#trim();
      }
      entry.count += cost;
      return { count: entry.count, resetMs: entry.resetAt - now };
    });
  }

  #trim(): void {
    while (this.#entries.size > this.maxKeys) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) return;
      this.#entries.delete(oldest);
    }
  }
}

/**
 * KEYS: the counters; ARGV[1]: the cost; ARGV[i + 1]: the window of KEYS[i] in milliseconds.
 * Returns count and milliseconds left, pairwise. A key that lost its expiry (it cannot here, but
 * a stray write could) gets one again, so that no counter lives for ever.
 */
const HIT_SCRIPT = `
local cost = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i + 1])
  local count
  if cost > 0 then
    count = redis.call('INCRBY', key, cost)
    if count == cost then redis.call('PEXPIRE', key, window) end
  else
    count = tonumber(redis.call('GET', key) or '0')
  end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    if count > 0 then redis.call('PEXPIRE', key, window) end
    ttl = window
  end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
return out
`;

/** The ioredis command the script is defined as. */
const HIT_COMMAND = 'spoofCheckerCounterHit';

type HitCommand = (numberOfKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/** Counters in Redis, shared by every replica that uses the same Redis. */
export class RedisCounter implements WindowCounter {
  readonly #command: HitCommand;

  constructor(redis: RateLimitRedis) {
    redis.defineCommand(HIT_COMMAND, { lua: HIT_SCRIPT });
    const command = (redis as unknown as Record<string, HitCommand | undefined>)[HIT_COMMAND];
    if (typeof command !== 'function') throw new Error('the Redis client did not define the counter command');
    this.#command = command.bind(redis);
  }

  async hit(keys: readonly CounterKey[], cost = 1): Promise<CounterState[]> {
    if (keys.length === 0) return [];
    const reply = await this.#command(keys.length, ...keys.map(({ key }) => `${REDIS_COUNTER_NAMESPACE}${key}`), cost, ...keys.map(({ windowMs }) => Math.max(1, Math.round(windowMs))));
    return keys.map((_key, index) => ({ count: Number(reply[index * 2]), resetMs: Number(reply[index * 2 + 1]) }));
  }
}

/** After Redis fails, how long calls count locally before Redis is tried again (so that a Redis that hangs does not cost every request its timeout). */
export const REDIS_RETRY_AFTER_MS = 1_000;

/**
 * Redis, and this process's counters while Redis fails: a failed call is counted locally instead
 * (per replica, so a limit is at most replicas × its value while Redis is away), and so is every
 * call for `REDIS_RETRY_AFTER_MS` after it; then Redis is tried again. `onFallback` hears of the
 * first failure of each outage.
 */
export class FallbackCounter implements WindowCounter {
  readonly #local: LocalCounter;
  #degraded = false;
  #retryAt = 0;

  constructor(
    private readonly primary: WindowCounter,
    private readonly onFallback: (error: unknown) => void = () => undefined,
    local: LocalCounter = new LocalCounter(),
    private readonly clock: () => number = Date.now,
  ) {
    this.#local = local;
  }

  /** True while the last call to the primary store failed. */
  get degraded(): boolean {
    return this.#degraded;
  }

  async hit(keys: readonly CounterKey[], cost = 1): Promise<CounterState[]> {
    if (this.#degraded && this.clock() < this.#retryAt) return this.#local.hitNow(keys, cost);
    try {
      const states = await this.primary.hit(keys, cost);
      this.#degraded = false;
      return states;
    } catch (error) {
      if (!this.#degraded) this.onFallback(error);
      this.#degraded = true;
      this.#retryAt = this.clock() + REDIS_RETRY_AFTER_MS;
      return this.#local.hitNow(keys, cost);
    }
  }
}

/** The counter for a service: in Redis (falling back to this process) when a client is given, else in this process. */
export function createCounter(redis: RateLimitRedis | undefined, onFallback?: (error: unknown) => void): WindowCounter {
  return redis ? new FallbackCounter(new RedisCounter(redis), onFallback) : new LocalCounter();
}
