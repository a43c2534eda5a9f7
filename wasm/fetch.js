// Fetching for the WebAssembly package: Web Bot Auth key sets (and AI
// Catalogs by URL) through the runtime's own `fetch`, under the rules of the
// library's fetcher: HTTPS only, no redirects followed, the body bounded in
// bytes and the whole fetch in time, and a key set kept only when its media
// type is one its discovery admits (checked by the module,
// `webbotauth::media_type_accepted`). Fresh key sets are kept with the Cache
// API where the runtime has one (`caches.default` in Workers,
// `caches.open` in browsers and Deno), for their `Cache-Control: max-age`.

/** Longest a fetch may take, as the library's fetcher (30 s). */
export const FETCH_TIMEOUT_MS = 30_000;
/** Longest a key set is kept in the Cache API without a max-age: 5 minutes. */
const DEFAULT_CACHE_SECONDS = 300;
const ACCEPT =
  'application/http-message-signatures-directory+json, application/jwk-set+json;q=0.9, application/json;q=0.5';

/** Why a fetch failed: the module reports the agent's keys as unavailable.
 * `status`: the HTTP status of an answer that was not 200, if any. */
export class FetchFailed extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function cacheStore() {
  try {
    if (typeof caches === 'undefined') return null;
    if (caches.default) return caches.default;
    return await caches.open('agentsig-key-sets');
  } catch {
    return null;
  }
}

/** The body of a response, read up to `max` bytes; FetchFailed beyond. */
async function boundedText(res, url, max) {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw new FetchFailed(`${url}: ${declared} bytes, more than ${max}`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > max) {
      await reader.cancel();
      throw new FetchFailed(`${url}: more than ${max} bytes`);
    }
    parts.push(value);
  }
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(all);
}

/**
 * GET `url` (https only, no redirect followed), the body bounded by `max`
 * bytes and the whole exchange by `timeoutMs`. Resolves to `{body,
 * contentType, maxAge}`; rejects with FetchFailed.
 */
export async function fetchBounded(url, { max, accept = ACCEPT, timeoutMs = FETCH_TIMEOUT_MS, fetchImpl = globalThis.fetch } = {}) {
  if (typeof url !== 'string' || !/^https:\/\//i.test(url)) throw new FetchFailed(`${url}: not an https URL`);
  if (typeof fetchImpl !== 'function') throw new FetchFailed('this runtime has no fetch');
  const ctl = typeof AbortController === 'function' ? new AbortController() : null;
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => {
      ctl?.abort();
      reject(new FetchFailed(`${url}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      deadline,
      (async () => {
        let res;
        try {
          res = await fetchImpl(url, { method: 'GET', redirect: 'manual', headers: { accept }, signal: ctl?.signal });
        } catch (e) {
          throw new FetchFailed(`${url}: ${e && e.message ? e.message : e}`);
        }
        if (res.status !== 200) {
          await res.body?.cancel();
          throw new FetchFailed(`${url}: status ${res.status || res.type}`, res.status);
        }
        const body = await boundedText(res, url, max);
        const cc = res.headers.get('cache-control') || '';
        const m = /(?:^|,)\s*max-age\s*=\s*(\d{1,9})/i.exec(cc);
        const noStore = /(?:^|,)\s*(no-store|no-cache|private)\b/i.test(cc);
        return { body, contentType: res.headers.get('content-type') || '', maxAge: noStore ? 0 : m ? Number(m[1]) : DEFAULT_CACHE_SECONDS };
      })(),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The key sets named by `wanted` (the module's `keySetUrls`: `[{keySetUrl,
 * directory}]`), as the module's `keySets` argument `{url: {body,
 * contentType}}`. A set that cannot be fetched is left out (the module then
 * reports its agent's keys as unavailable). Each fresh set is kept in the
 * Cache API for its max-age.
 */
export async function fetchKeySets(wanted, { maxBytes, fetchImpl } = {}) {
  const cache = await cacheStore();
  const out = {};
  await Promise.all(
    wanted.map(async ({ keySetUrl }) => {
      try {
        if (cache) {
          const hit = await cache.match(keySetUrl).catch(() => undefined);
          if (hit) {
            out[keySetUrl] = { body: await boundedText(hit, keySetUrl, maxBytes), contentType: hit.headers.get('content-type') || '' };
            return;
          }
        }
        const got = await fetchBounded(keySetUrl, { max: maxBytes, fetchImpl });
        out[keySetUrl] = { body: got.body, contentType: got.contentType };
        if (cache && got.maxAge > 0) {
          const keep = new Response(got.body, {
            headers: { 'content-type': got.contentType, 'cache-control': `max-age=${got.maxAge}` },
          });
          await cache.put(keySetUrl, keep).catch(() => {});
        }
      } catch (e) {
        if (!(e instanceof FetchFailed)) throw e;
      }
    }),
  );
  return out;
}
