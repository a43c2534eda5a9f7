// A signer for outgoing requests: a wrapper of `fetch` that signs every hop
// it sends. Under the Web Bot Auth profile when a `signatureAgent` is given
// (the default, as signRequest), else plain RFC 9421 over `@method`,
// `@authority`, `@path`, `@query`, `content-type` and `content-digest`.
//
// Redirects are followed here, not by fetch: a signature covers the
// authority and path it was made for (RFC 9421 section 7.2.1), so each hop
// is signed anew for its own target and the first hop's signature fields are
// never sent to the next one. A 303, and a 301/302 of a POST, become a GET
// without content (the Fetch standard's "HTTP-redirect fetch"); a hop to
// another origin drops Authorization, Cookie and Proxy-Authorization, as
// fetch does for Authorization. A hop from https to http is refused: the
// signed request (and whatever else it carries) would cross the network in
// clear text, where anyone on the path can read it, replay it within its
// validity, or answer in the server's name (RFC 9421 section 7.1.2 and
// 7.2.2; a browser likewise blocks mixed content).
'use strict';

const { SigningKey, signRequestAsync, BadInput, MAX_INPUT_BYTES } = require('./index.js');

/** Most redirects followed (the Fetch standard's limit). */
const MAX_REDIRECTS = 20;

/** The fields a signature adds; stripped from a request before it is signed
 * again for another target. */
const SIGNATURE_FIELDS = ['signature', 'signature-input', 'signature-agent', 'content-digest'];
const CROSS_ORIGIN_DROPPED = ['authorization', 'cookie', 'proxy-authorization'];
const OPTIONS = ['signatureAgent', 'webBotAuth', 'components', 'expiresIn', 'expiresInSeconds', 'label', 'maxRedirects', 'fetch'];

/**
 * `signingFetch(key, { signatureAgent: 'https://bot.example' })`: a function
 * with fetch's signature that signs each request it sends, following up to
 * `maxRedirects` (20) redirects itself, each hop signed for its target. A
 * request given `redirect: 'manual'` or `'error'` keeps that meaning. A
 * redirect from https to http is a TypeError: no signed hop is sent in
 * clear text after https. `fetch`: the fetch to wrap (default the global one).
 */
function signingFetch(key, opts = {}) {
  if (!(key instanceof SigningKey)) throw new TypeError('key must be an agentsig SigningKey');
  if (opts === null || typeof opts !== 'object') throw new TypeError('options must be an object');
  for (const k of Object.keys(opts)) {
    if (!OPTIONS.includes(k)) throw new TypeError(`unknown option ${JSON.stringify(k)} (the options are ${OPTIONS.join(', ')})`);
  }
  const { maxRedirects = MAX_REDIRECTS, fetch: inner = globalThis.fetch, ...signOpts } = opts;
  if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0) throw new TypeError('maxRedirects must be a whole number');
  if (typeof inner !== 'function') throw new TypeError('fetch must be a function');

  return async function agentsigFetch(input, init) {
    const first = new Request(input, init);
    const mode = first.redirect;
    let body = first.body === null ? undefined : Buffer.from(await first.arrayBuffer());
    if (body && body.length > MAX_INPUT_BYTES) {
      throw new BadInput(`the request body of ${body.length} bytes is larger than the ${MAX_INPUT_BYTES}-byte bound`, 'input.unreadable');
    }
    let method = first.method;
    let url = first.url;
    let headers = [...first.headers];
    for (let hop = 0; ; hop++) {
      const signed = await signRequestAsync(method, url, headers, body, key, signOpts);
      const res = await inner(url, { method, headers: signed, body, redirect: 'manual', signal: first.signal });
      const location = res.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(res.status) || location === null || mode === 'manual') return res;
      if (mode === 'error') throw new TypeError(`fetch: ${url} redirected to ${location} and the request's redirect mode is "error"`);
      if (hop >= maxRedirects) throw new TypeError(`fetch: more than ${maxRedirects} redirects from ${first.url}`);
      const next = new URL(location, url);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') {
        throw new TypeError(`fetch: ${url} redirected to ${next.protocol} (only http and https are followed)`);
      }
      if (new URL(url).protocol === 'https:' && next.protocol === 'http:') {
        await res.body?.cancel();
        throw new TypeError(`fetch: ${url} redirected to ${next.origin} over plain http: a signed request is not sent in clear text after https (downgrade refused)`);
      }
      // The body of a redirect is not wanted: release the connection.
      await res.body?.cancel();
      if (res.status === 303 ? method !== 'HEAD' : [301, 302].includes(res.status) && method === 'POST') {
        method = 'GET';
        body = undefined;
        headers = headers.filter(([n]) => !/^content-/i.test(n));
      }
      const drop = new URL(url).origin === next.origin ? SIGNATURE_FIELDS : [...SIGNATURE_FIELDS, ...CROSS_ORIGIN_DROPPED];
      headers = headers.filter(([n]) => !drop.includes(n.toLowerCase()));
      url = next.href;
    }
  };
}

module.exports = { signingFetch, MAX_REDIRECTS };
