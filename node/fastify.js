// A Fastify plugin that verifies the RFC 9421 signatures of incoming
// requests before the route sees them, with the rules of agentsig/express
// (gate.js, shared), the Rust tower layers and the Python ASGI middleware:
//
// * the site names its own authorities (`authorities: [...]`, or
//   `anyAuthority: true` when the app checks the authority itself): a
//   signature whose covered `@authority` is not one of them is refused
//   whatever `Host` says (RFC 9421 section 7.2.1);
// * the body is read once, in a `preParsing` hook, up to `maxBody` bytes
//   (413 beyond), so a covered `content-digest` is checked against it (RFC
//   9530 section 2); the same bytes are then handed to Fastify's content
//   type parsers, and kept as `request.rawBody`;
// * the message is built from what was received: the method, the
//   origin-form target (`request.raw.url`, RFC 9112 section 3.2.1), Node's
//   `rawHeaders` (every field line, in order) and the connection's scheme
//   or the `scheme` a trusted proxy receives on;
// * a verified request carries its identity at `request.agentsig`; an
//   unsigned one gets 401 with an RFC 9457 `application/problem+json` body,
//   or, with `require: false`, reaches the route with `request.agentsig =
//   null`; a signed one that fails is refused unless `admitInvalid: true`
//   (then `request.agentsigError` says why);
// * at most `maxDirectoryWaits` verifications wait on key-directory
//   fetches at once (default half the libuv pool); beyond, 503
//   `directory-busy` with Retry-After at once.
//
// Register it on the instance (or the encapsulated context) whose routes it
// gates: `fastify.register(agentsig, { verifier, authorities: ['example.com'] })`.
// It is a plain plugin function marked as fastify-plugin marks one (its
// hooks and decorators apply to the context it is registered in, and that
// context's children): the package has no dependency on fastify.
'use strict';

const { Readable } = require('node:stream');
const { gate, problem, readBounded, Refused, DEFAULT_MAX_BODY, DEFAULT_MAX_DIRECTORY_WAITS } = require('./gate.js');

/** Options Fastify's `register` itself takes; not the gate's. */
const REGISTER_OPTIONS = ['prefix', 'logLevel', 'logSerializers'];

/**
 * The plugin: `fastify.register(agentsig, { verifier, authorities })`.
 * Options: `verifier` (an agentsig Verifier, required) and those of
 * agentsig/express's signatureMiddleware: `authorities` (required unless
 * `anyAuthority: true`), `require`, `admitInvalid`, `webBotAuth`, `strict`,
 * `nonceStore`, `maxBody`, `scheme`, `requireTarget`, `maxDirectoryWaits`.
 */
function agentsig(fastify, opts, done) {
  let g;
  try {
    if (opts === null || typeof opts !== 'object') throw new TypeError('options must be an object');
    const { verifier, ...rest } = opts;
    for (const k of REGISTER_OPTIONS) delete rest[k];
    g = gate(verifier, rest, 'the agentsig Fastify plugin');
  } catch (e) {
    // A callback plugin reports its failure through done: register (and
    // ready, listen) rejects with it.
    done(e);
    return;
  }
  fastify.decorateRequest('agentsig', null);
  fastify.decorateRequest('agentsigError', null);
  fastify.decorateRequest('rawBody', null);
  fastify.addHook('preParsing', async (request, reply, payload) => {
    const raw = request.raw;
    try {
      const body = await readBounded(payload, g.maxBody);
      request.rawBody = body;
      const { id, error } = await g.identify({
        method: raw.method,
        target: raw.url,
        rawHeaders: raw.rawHeaders,
        encrypted: Boolean(raw.socket && raw.socket.encrypted),
      }, body);
      request.agentsig = id;
      request.agentsigError = error;
      // The bytes verified, for the content type parsers (Fastify checks
      // receivedEncodedLength against Content-Length).
      const again = Readable.from(body.length ? [body] : []);
      again.receivedEncodedLength = body.length;
      return again;
    } catch (e) {
      if (!(e instanceof Refused)) throw e;
      const p = problem(e.status, e.code, e.message);
      reply.code(p.status);
      for (const [n, v] of p.headers) reply.header(n, v);
      // As bytes: Fastify would add a charset to the media type of a string.
      reply.send(Buffer.from(p.body));
      // The reply is a thenable: Fastify goes on once it is sent, and
      // then stops, since it was sent.
      return reply;
    }
  });
  done();
}

// What fastify-plugin sets: the hooks and decorators are not encapsulated
// in a child context of their own, so they reach the routes of the
// context the plugin is registered in.
agentsig[Symbol.for('skip-override')] = true;
agentsig[Symbol.for('fastify.display-name')] = 'agentsig';
agentsig[Symbol.for('plugin-meta')] = { name: 'agentsig', fastify: '>=4' };

module.exports = agentsig;
module.exports.default = agentsig;
module.exports.agentsig = agentsig;
module.exports.DEFAULT_MAX_BODY = DEFAULT_MAX_BODY;
module.exports.DEFAULT_MAX_DIRECTORY_WAITS = DEFAULT_MAX_DIRECTORY_WAITS;
