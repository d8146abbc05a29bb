/**
 * Fetching the providers' feeds over HTTPS for `ranges update`: each with a timeout and a size cap,
 * redirects followed only to HTTPS, every failure an error entry for the build (which then keeps
 * the previous data for that provider), never an exception.
 */
import { get } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { PROVIDERS } from '@spoof-checker/engine';
import type { FeedSpec, FeedText } from '@spoof-checker/engine';

/** How long one feed may take, headers to last byte. */
export const FEED_TIMEOUT_MS = 30_000;
/** The largest feed accepted (Azure's service tags are about 4 MB). */
export const MAX_FEED_BYTES = 32 * 1024 * 1024;
/** Redirects followed for one feed (Microsoft's download page moves). */
export const MAX_FEED_REDIRECTS = 3;

/** How to fetch. `ca` and `urlFor` exist for tests (a local server with a test CA); the CLI sets neither. */
export interface FetchFeedsOptions {
  timeoutMs?: number | undefined;
  maxBytes?: number | undefined;
  /** Certificate authorities to trust instead of Node's bundle (tests only). */
  ca?: string | Buffer | undefined;
  /** The address to fetch for a feed instead of its official URL (tests only). */
  urlFor?: ((feed: FeedSpec) => string) | undefined;
}

/** Every feed of `PROVIDERS`, fetched at once, keyed by file name as `buildRangesFile` wants them. */
export async function fetchFeeds(options: FetchFeedsOptions = {}): Promise<Map<string, FeedText>> {
  const feeds = PROVIDERS.flatMap((p) => p.feeds);
  const texts = await Promise.all(
    feeds.map(async (feed): Promise<FeedText> => {
      const url = options.urlFor ? options.urlFor(feed) : feed.url;
      const fetched = await fetchText(url, options);
      return typeof fetched === 'string' ? { text: fetched, url: feed.url } : { error: fetched.error, url: feed.url };
    }),
  );
  return new Map(feeds.map((feed, i) => [feed.file, texts[i]!]));
}

/** The body of `url` as UTF-8 text, or why not. */
export function fetchText(url: string, options: FetchFeedsOptions, redirects = 0): Promise<string | { error: string }> {
  const timeoutMs = options.timeoutMs ?? FEED_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_FEED_BYTES;
  return new Promise((resolve) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      resolve({ error: `${url} is not a URL` });
      return;
    }
    if (parsed.protocol !== 'https:') {
      resolve({ error: `${url} is not HTTPS` });
      return;
    }
    let settled = false;
    const finish = (value: string | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const request = get(parsed, { ...(options.ca !== undefined ? { ca: options.ca } : {}), headers: { 'user-agent': 'spoof-checker ranges update', accept: '*/*' } }, (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (redirects >= MAX_FEED_REDIRECTS) return finish({ error: `more than ${MAX_FEED_REDIRECTS} redirects from ${url}` });
        const next = new URL(response.headers.location, parsed).toString();
        clearTimeout(timer);
        settled = true;
        void fetchText(next, options, redirects + 1).then(resolve);
        return;
      }
      if (status !== 200) {
        response.resume();
        return finish({ error: `HTTP ${status} from ${url}` });
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        // Settled first: destroying emits 'aborted' at once.
        finish({ error: `${url} is ${declared} bytes, over the ${maxBytes}-byte cap` });
        response.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          finish({ error: `${url} is over the ${maxBytes}-byte cap` });
          response.destroy();
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
      response.on('error', (error) => finish({ error: `${url}: ${error.message}` }));
      response.on('aborted', () => finish({ error: `${url}: the connection closed early` }));
    });
    request.on('error', (error) => finish({ error: `${url}: ${error.message}` }));
    const timer = setTimeout(() => {
      finish({ error: `${url} took longer than ${timeoutMs} ms` });
      request.destroy();
    }, timeoutMs);
  });
}
