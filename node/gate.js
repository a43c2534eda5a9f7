// The rules agentsig/express and agentsig/fastify share: the options, the
// body read once and bounded, the message rebuilt from its parts, what a
// verified signature must cover, the cap on verifications waiting on key
// directories, and the RFC 9457 problem body of a refusal. Internal: the
// package exports the two adapters, not this file.
'use strict';

const { Verifier, AgentsigError, BadInput } = require('./index.js');

/** Largest request body read for verification (1 MiB, as the Rust layer). */
const DEFAULT_MAX_BODY = 1024 * 1024;

/** The libuv thread pool's size (UV_THREADPOOL_SIZE, else 4; libuv caps it
 * at 1024). */
function poolSize() {
  const n = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  return Number.isSafeInteger(n) && n > 0 ? Math.min(n, 1024) : 4;
}

/** Most verifications that may wait on key-directory fetches at once: half
 * the libuv pool (2 by default), so that verifications naming directories
 * that never answer cannot take every pool thread from file system calls
 * and from other verifications. Beyond it a request is refused at once
 * with 503 `directory-busy`, as the Python ASGI middleware does. */
const DEFAULT_MAX_DIRECTORY_WAITS = Math.max(1, Math.floor(poolSize() / 2));

const OPTIONS = ['authorities', 'anyAuthority', 'require', 'admitInvalid', 'webBotAuth', 'strict', 'nonceStore',
  'maxBody', 'scheme', 'requireTarget', 'maxDirectoryWaits'];

class Refused extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

const TITLES = { 400: 'Bad Request', 401: 'Unauthorized', 413: 'Content Too Large', 500: 'Internal Server Error',
  503: 'Service Unavailable' };

/** An RFC 9457 problem response: `{ status, headers, body }`; a 503 says
 * when to come back (Retry-After, RFC 9110 section 10.2.3). */
function problem(status, code, detail) {
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] || 'Error', status, code, detail });
  const headers = [['Content-Type', 'application/problem+json'], ['Content-Length', String(Buffer.byteLength(body))],
    ['Cache-Control', 'no-store']];
  if (status === 503) headers.push(['Retry-After', '1']);
  return { status, headers, body };
}

/** A readable stream's bytes, read once, at most `max` of them (413
 * beyond). */
function readBounded(stream, max) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const onData = (c) => {
      size += c.length;
      if (size > max) {
        stream.off('data', onData);
        stream.resume();
        reject(new Refused(413, 'body-too-large', `request body larger than ${max} bytes`));
        return;
      }
      chunks.push(c);
    };
    stream.on('data', onData);
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

function unsigned(raw) {
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i].toLowerCase();
    if (n === 'signature' || n === 'signature-input') return false;
  }
  return true;
}

/** Whether a Signature-Input may hold a `tag="web-bot-auth"` label: only
 * such a label makes the verifier fetch a key directory (the profile
 * examines no other, draft-ietf-webbotauth-httpsig-protocol section 5.4). */
function namesWebBotAuth(raw) {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'signature-input' && raw[i + 1].includes('web-bot-auth')) return true;
  }
  return false;
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
 * The gate of `verifier` with the adapter's options (`who` names the
 * adapter in messages): `{ maxBody, identify(msg, body) }`, where `msg` is
 * `{ method, target, rawHeaders, encrypted }` and `identify` resolves to
 * `{ id, error }` (the identity, or null for an unsigned request admitted
 * or a failed one under admitInvalid, with its error) or rejects with a
 * `Refused`.
 */
function gate(verifier, opts, who) {
  if (!(verifier instanceof Verifier)) throw new TypeError('verifier must be an agentsig Verifier');
  if (opts === null || typeof opts !== 'object') throw new TypeError('options must be an object');
  for (const k of Object.keys(opts)) {
    if (!OPTIONS.includes(k)) throw new TypeError(`unknown option ${JSON.stringify(k)} (the options are ${OPTIONS.join(', ')})`);
  }
  const o = { require: true, admitInvalid: false, webBotAuth: false, strict: false, nonceStore: true,
    maxBody: DEFAULT_MAX_BODY, requireTarget: true, anyAuthority: false,
    maxDirectoryWaits: DEFAULT_MAX_DIRECTORY_WAITS, ...opts };
  let authorities;
  if (o.anyAuthority) {
    if (o.authorities !== undefined) throw new TypeError('give authorities or anyAuthority: true, not both');
  } else {
    if (o.authorities === undefined) {
      throw new TypeError(
        `${who} needs the site's own authorities, authorities: ['example.com', ...]: a request an agent ` +
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
  if (!Number.isSafeInteger(o.maxDirectoryWaits) || o.maxDirectoryWaits < 1) {
    throw new TypeError('maxDirectoryWaits must be a whole number, at least 1');
  }
  if (o.webBotAuth && !verifier.webBotAuthKeys) {
    throw new TypeError('webBotAuth: true needs a Verifier with the agents\' keys: agentKeys or fetchDirectories: true');
  }
  const v = o.nonceStore && !verifier.hasReplayStore ? verifier.withReplayStore('memory') : verifier;
  // Only a verifier that fetches key directories can wait on one.
  const fetches = Boolean(verifier.options && verifier.options.fetchDirectories);
  let waiting = 0;

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

  async function run(msg, body, scheme) {
    try {
      const report = await v.verifyRequestAsync(msg.method, msg.target, msg.rawHeaders, body, {
        webBotAuth: o.webBotAuth, authorities, strict: o.strict, scheme,
      });
      return accept(report, body, msg.target.includes('?'));
    } catch (e) {
      if (e instanceof BadInput && e.code === 'input.malformed') throw new Refused(400, 'request', e.message);
      if (e instanceof AgentsigError) throw new Refused(401, e.code, e.message);
      throw e;
    }
  }

  async function verify(msg, body) {
    if (unsigned(msg.rawHeaders)) {
      if (o.require) throw new Refused(401, 'unsigned', 'the request is not signed');
      return null;
    }
    const scheme = o.scheme || (msg.encrypted ? 'https' : 'http');
    if (!(o.webBotAuth && fetches && namesWebBotAuth(msg.rawHeaders))) return run(msg, body, scheme);
    if (waiting >= o.maxDirectoryWaits) {
      throw new Refused(503, 'directory-busy',
        `${o.maxDirectoryWaits} verifications are already waiting on key directories; retry shortly`);
    }
    waiting += 1;
    try {
      return await run(msg, body, scheme);
    } finally {
      waiting -= 1;
    }
  }

  async function identify(msg, body) {
    try {
      return { id: await verify(msg, body), error: null };
    } catch (e) {
      if (!(e instanceof Refused) || e.status !== 401 || !o.admitInvalid || e.code === 'unsigned') throw e;
      return { id: null, error: Object.freeze({ code: e.code, detail: e.message }) };
    }
  }

  return { maxBody: o.maxBody, identify };
}

module.exports = { gate, problem, readBounded, Refused, DEFAULT_MAX_BODY, DEFAULT_MAX_DIRECTORY_WAITS };
