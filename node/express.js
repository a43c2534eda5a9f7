// Connect-style middleware (Express, Connect, a bare node:http handler;
// Fastify has its own plugin, agentsig/fastify) that verifies the RFC 9421
// signatures of incoming requests before the app sees them, with the rules
// of the Rust tower layers and the Python ASGI middleware:
//
// * the site names its own authorities (`authorities: [...]`): a signature
//   whose covered `@authority` (or the authority of `@target-uri`) is not one
//   of them is refused whatever `Host` says (RFC 9421 section 7.2.1);
//   `anyAuthority: true` says, in so many words, that the app checks it;
// * the body is read once, up to `maxBody` bytes (413 beyond), so a covered
//   `content-digest` is checked against it (RFC 9530 section 2), then handed
//   on as `req.body` (a Buffer) and `req.rawBody`, with `req._body = true` so
//   body-parser's parsers (express.json()...) mounted after it leave it alone;
// * the message is built from its parts: the method, the origin-form target
//   as received (`req.originalUrl`, RFC 9112 section 3.2.1), Node's
//   `req.rawHeaders` (every field line, in order) with its one `Host`, and
//   the scheme of the connection (TLS or not) or the `scheme` a trusted proxy
//   receives on;
// * plain RFC 9421: a verified signature must cover `@method` and the target
//   (`@authority` and `@path`, with `@query` when there is one, or
//   `@target-uri`) and, when the request has content, `content-digest`;
// * `webBotAuth: true`: the Web Bot Auth profile;
// * a nonce is accepted once (RFC 9421 section 7.2.2): a verifier without a
//   replay store of its own gets an in-process one; `strict: true` also
//   requires `@method`, `@path` and a `nonce`;
// * a verified request carries its identity at `req.agentsig`; an unsigned
//   one gets 401 with an RFC 9457 `application/problem+json` body, or, with
//   `require: false`, reaches the app with `req.agentsig = null`; a signed
//   one that fails is refused in both modes unless `admitInvalid: true`.
//
// Verification runs on the libuv pool (the Promise forms), so a key fetch
// never holds the event loop; at most `maxDirectoryWaits` verifications
// that may wait on a key-directory fetch run at once (default half the
// pool), and a request beyond gets 503 `directory-busy` with Retry-After
// at once, as the Python ASGI middleware answers. The rules live in
// gate.js, shared with agentsig/fastify.
'use strict';

const { gate, problem, readBounded, Refused, DEFAULT_MAX_BODY, DEFAULT_MAX_DIRECTORY_WAITS } = require('./gate.js');

/** The body, read once and bounded; a body a parser already read is refused
 * (the bytes signed are gone). */
function readBody(req, max) {
  if (req._body || req.readableEnded) {
    return Promise.reject(new Refused(500, 'body-consumed',
      'the request body was read before the agentsig middleware: mount it before any body parser'));
  }
  return readBounded(req, max);
}

/**
 * The middleware: `signatureMiddleware(verifier, { authorities: ['example.com'] })`.
 * Options: `authorities` (required unless `anyAuthority: true`), `require`
 * (default true), `admitInvalid`, `webBotAuth`, `strict`, `nonceStore`
 * (default true), `maxBody` (default 1 MiB), `scheme` ('https'/'http': a
 * trusted proxy's; default the connection's), `requireTarget` (default true),
 * `maxDirectoryWaits` (default half the libuv pool).
 */
function signatureMiddleware(verifier, opts = {}) {
  const g = gate(verifier, opts, 'signatureMiddleware');
  return function agentsig(req, res, next) {
    readBody(req, g.maxBody)
      .then(async (body) => {
        req.rawBody = body;
        req.body = body;
        req._body = true;
        const { id, error } = await g.identify({
          method: req.method,
          target: req.originalUrl || req.url,
          rawHeaders: req.rawHeaders,
          encrypted: Boolean(req.socket && req.socket.encrypted),
        }, body);
        if (error) req.agentsigError = error;
        req.agentsig = id;
        next();
      })
      .catch((e) => {
        if (!(e instanceof Refused)) {
          next(e);
          return;
        }
        const p = problem(e.status, e.code, e.message);
        res.statusCode = p.status;
        for (const [n, v] of p.headers) res.setHeader(n, v);
        res.end(p.body);
      });
  };
}

module.exports = { signatureMiddleware, DEFAULT_MAX_BODY, DEFAULT_MAX_DIRECTORY_WAITS };
