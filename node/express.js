// Connect-style middleware (Express, Connect, Fastify through @fastify/middie
// or @fastify/express, a bare node:http handler) that verifies the RFC 9421
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
// never holds the event loop.
'use strict';

const { Verifier, AgentsigError, BadInput } = require('./index.js');

/** Largest request body read for verification (1 MiB, as the Rust layer). */
const DEFAULT_MAX_BODY = 1024 * 1024;

const OPTIONS = ['authorities', 'anyAuthority', 'require', 'admitInvalid', 'webBotAuth', 'strict', 'nonceStore',
  'maxBody', 'scheme', 'requireTarget'];

class Refused extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

const TITLES = { 400: 'Bad Request', 401: 'Unauthorized', 413: 'Content Too Large', 500: 'Internal Server Error' };

/** An RFC 9457 problem response. */
function problem(res, status, code, detail) {
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] || 'Error', status, code, detail });
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

/** The body, read once and bounded; a body a parser already read is refused
 * (the bytes signed are gone). */
function readBody(req, max) {
  if (req._body || req.readableEnded) {
    return Promise.reject(new Refused(500, 'body-consumed',
      'the request body was read before the agentsig middleware: mount it before any body parser'));
  }
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const onData = (c) => {
      size += c.length;
      if (size > max) {
        req.off('data', onData);
        req.resume();
        reject(new Refused(413, 'body-too-large', `request body larger than ${max} bytes`));
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function unsigned(raw) {
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i].toLowerCase();
    if (n === 'signature' || n === 'signature-input') return false;
  }
  return true;
}

function identity(sig, report, agent = null) {
  return Object.freeze({
    keyid: sig.kid ?? null,
    label: sig.id ?? null,
    algorithm: sig.algorithm ?? null,
    covered: Object.freeze([...(sig.covered || [])]),
    thumbprint: (sig.key && sig.key.thumbprint) || null,
    agent,
    report,
  });
}

/**
 * The middleware: `signatureMiddleware(verifier, { authorities: ['example.com'] })`.
 * Options: `authorities` (required unless `anyAuthority: true`), `require`
 * (default true), `admitInvalid`, `webBotAuth`, `strict`, `nonceStore`
 * (default true), `maxBody` (default 1 MiB), `scheme` ('https'/'http': a
 * trusted proxy's; default the connection's), `requireTarget` (default true).
 */
function signatureMiddleware(verifier, opts = {}) {
  if (!(verifier instanceof Verifier)) throw new TypeError('verifier must be an agentsig Verifier');
  if (opts === null || typeof opts !== 'object') throw new TypeError('options must be an object');
  for (const k of Object.keys(opts)) {
    if (!OPTIONS.includes(k)) throw new TypeError(`unknown option ${JSON.stringify(k)} (the options are ${OPTIONS.join(', ')})`);
  }
  const o = { require: true, admitInvalid: false, webBotAuth: false, strict: false, nonceStore: true,
    maxBody: DEFAULT_MAX_BODY, requireTarget: true, anyAuthority: false, ...opts };
  let authorities;
  if (o.anyAuthority) {
    if (o.authorities !== undefined) throw new TypeError('give authorities or anyAuthority: true, not both');
  } else {
    if (o.authorities === undefined) {
      throw new TypeError(
        "signatureMiddleware needs the site's own authorities, authorities: ['example.com', ...]: a request an agent " +
          "signed for another site, replayed here with that site's Host, verifies unless its covered @authority is " +
          'checked against yours (RFC 9421 section 7.2.1); anyAuthority: true if the app checks the authority itself',
      );
    }
    if (!Array.isArray(o.authorities)) throw new TypeError('authorities must be an array of host[:port] strings');
    authorities = [...o.authorities];
    // Checked now, by the library's rule (RFC 3986 section 3.2), so a bad
    // one fails at startup rather than on every request.
    try {
      verifier.verifyRequest('GET', '/', [['host', 'localhost']], undefined, { scheme: 'https', authorities });
    } catch (e) {
      if (e instanceof BadInput && e.code === 'usage') throw e;
    }
  }
  if (o.scheme !== undefined && o.scheme !== 'https' && o.scheme !== 'http') {
    throw new TypeError("scheme must be 'https' or 'http' (a trusted proxy's), or left out (the connection's)");
  }
  if (!Number.isSafeInteger(o.maxBody) || o.maxBody < 0) throw new TypeError('maxBody must be a whole number of bytes');
  if (o.webBotAuth && !verifier.webBotAuthKeys) {
    throw new TypeError('webBotAuth: true needs a Verifier with the agents\' keys: agentKeys or fetchDirectories: true');
  }
  const v = o.nonceStore && !verifier.hasReplayStore ? verifier.withReplayStore('memory') : verifier;

  function accept(report, body, hasQuery) {
    if (o.webBotAuth) {
      const wba = (report.details && report.details.web_bot_auth) || {};
      const sig = report.signatures.find((s) => s.id === wba.label) || report.signatures[0];
      return identity(sig, report, wba.agent ?? null);
    }
    for (const sig of report.signatures) {
      if (sig.verdict !== 'valid') continue;
      const covered = new Set(sig.covered || []);
      if (body.length && !covered.has('content-digest')) continue;
      if (o.requireTarget && !(covered.has('@method') && (covered.has('@target-uri') ||
        (covered.has('@authority') && covered.has('@path') && (!hasQuery || covered.has('@query')))))) continue;
      return identity(sig, report);
    }
    const need = [];
    if (o.requireTarget) need.push(`@method and @authority with @path${hasQuery ? ' and @query' : ''} (or @target-uri)`);
    if (body.length) need.push('content-digest (the request has content)');
    throw new Refused(401, 'requirements', `no verified signature covers ${need.join(' and ')}`);
  }

  async function verify(req, body) {
    const raw = req.rawHeaders;
    if (unsigned(raw)) {
      if (o.require) throw new Refused(401, 'unsigned', 'the request is not signed');
      return null;
    }
    const target = req.originalUrl || req.url;
    const scheme = o.scheme || (req.socket && req.socket.encrypted ? 'https' : 'http');
    try {
      const report = await v.verifyRequestAsync(req.method, target, raw, body, {
        webBotAuth: o.webBotAuth, authorities, strict: o.strict, scheme,
      });
      return accept(report, body, target.includes('?'));
    } catch (e) {
      if (e instanceof BadInput && e.code === 'input.malformed') throw new Refused(400, 'request', e.message);
      if (e instanceof AgentsigError) throw new Refused(401, e.code, e.message);
      throw e;
    }
  }

  return function agentsig(req, res, next) {
    readBody(req, o.maxBody)
      .then(async (body) => {
        req.rawBody = body;
        req.body = body;
        req._body = true;
        let id;
        try {
          id = await verify(req, body);
        } catch (e) {
          if (!(e instanceof Refused) || e.status !== 401 || !o.admitInvalid || e.code === 'unsigned') throw e;
          req.agentsigError = Object.freeze({ code: e.code, detail: e.message });
          id = null;
        }
        req.agentsig = id;
        next();
      })
      .catch((e) => {
        if (e instanceof Refused) problem(res, e.status, e.code, e.message);
        else next(e);
      });
  };
}

module.exports = { signatureMiddleware, DEFAULT_MAX_BODY };
