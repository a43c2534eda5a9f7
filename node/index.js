// agentsig for Node.js: the checks of the agentsig Rust library (detached JWS
// over RFC 8785 JCS for descriptors, A2A Agent Card signatures, RFC 9421 HTTP
// Message Signatures with RFC 9530 Content-Digest and the Web Bot Auth
// profile, RFC 8693 delegation audits), with the same policy and the same
// report as the `agentsig` command line (`--json`, docs/report.md).
//
// This file checks every argument (a wrong type is a TypeError, a value out of
// bounds a BadInput, before anything is copied) and hands the native addon
// (src/lib.rs) plain strings, JSON text and Buffers. The addon throws an Error
// whose message is MARK and a JSON failure; `rethrow` turns it into the typed
// error of this file.
'use strict';

let native;
try {
  native = require('./agentsig.node');
} catch (e) {
  throw new Error(
    `agentsig: the native addon ./agentsig.node cannot be loaded (${e.message}); ` +
      'build it with `npm install` in node/, or install the package with ' +
      '`npm install --allow-scripts=agentsig ./node` (Rust 1.95 or later on PATH)',
  );
}

const LIMITS = Object.freeze(JSON.parse(native.limits()));
const MARK = '\u0000agentsig:';
/** Deepest nesting of a JavaScript value taken as JSON. */
const MAX_DEPTH = 64;

// ------------------------------------------------------------------ errors

/** Base class of every agentsig error: `.code` is the stable code the CLI
 * reports (docs/report.md), `.report` the frozen report when there is one. */
class AgentsigError extends Error {
  constructor(message, code = 'failed', report = null) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.report = report;
  }
}
/** Something did not verify; `.report` says what. */
class NotVerified extends AgentsigError {}
/** The signature may be genuine, but the verifier's policy refused it (too
 * old, expired, replayed, an algorithm not allowed...). */
class PolicyRefused extends NotVerified {}
/** A Web Bot Auth key directory or an AI Catalog could not be fetched. */
class FetchError extends NotVerified {}
/** A key that cannot be used (malformed, wrong type, a shared secret offered
 * as a public key). */
class BadKey extends AgentsigError {}
/** Input that is malformed, too large, or a usage error. */
class BadInput extends AgentsigError {}

const CLASSES = { NotVerified, PolicyRefused, FetchError, BadKey, BadInput };

function deepFreeze(v) {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze(v[k]);
  }
  return v;
}

/** The typed error of a native failure; anything else as it is. */
function typed(e) {
  if (e instanceof Error && typeof e.message === 'string' && e.message.startsWith(MARK)) {
    const f = JSON.parse(e.message.slice(MARK.length));
    const Cls = CLASSES[f.class] || AgentsigError;
    return new Cls(f.message, f.code, f.report === null ? null : deepFreeze(f.report));
  }
  return e;
}

function call(f) {
  try {
    return f();
  } catch (e) {
    throw typed(e);
  }
}

function callAsync(f) {
  let p;
  try {
    p = f();
  } catch (e) {
    return Promise.reject(typed(e));
  }
  return p.then(
    (v) => v,
    (e) => {
      throw typed(e);
    },
  );
}

const report = (text) => deepFreeze(JSON.parse(text));

// --------------------------------------------------------------- arguments

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return v.constructor && v.constructor.name ? `a ${v.constructor.name}` : 'an object';
  return `a ${typeof v}`;
}

function tooLarge(what, n, max) {
  return new BadInput(`${what} of ${n} bytes is larger than the ${max}-byte bound`, 'input.unreadable');
}

function isBytes(v) {
  return v instanceof Uint8Array || v instanceof ArrayBuffer;
}

/** A Buffer over the bytes of a Uint8Array or ArrayBuffer, without a copy,
 * refused beyond `max`. */
function asBuffer(v, what, max) {
  const b = Buffer.isBuffer(v)
    ? v
    : v instanceof ArrayBuffer
      ? Buffer.from(v)
      : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (b.length > max) throw tooLarge(what, b.length, max);
  return b;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A string argument (or, when `bytesOk`, UTF-8 bytes), refused beyond `max`. */
function str(v, what, max, bytesOk = false) {
  if (typeof v === 'string') {
    // A UTF-16 string is at most 3 UTF-8 bytes per code unit.
    if (v.length > max || (v.length * 3 > max && Buffer.byteLength(v) > max)) {
      throw tooLarge(what, Buffer.byteLength(v), max);
    }
    return v;
  }
  if (bytesOk && isBytes(v)) {
    const b = asBuffer(v, what, max);
    try {
      return utf8.decode(b);
    } catch {
      throw new BadInput(`${what} is not UTF-8`, 'input.malformed');
    }
  }
  throw new TypeError(`${what} must be a string${bytesOk ? ' or UTF-8 bytes' : ''}, not ${kind(v)}`);
}

function bool(v, what) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${what} must be a boolean, not ${kind(v)}`);
  return v;
}

function options(o, what, allowed) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o)) {
    throw new TypeError(`${what} must be an object, not ${kind(o)}`);
  }
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) {
      throw new TypeError(`${what}: unknown option ${JSON.stringify(k)} (the options are ${allowed.join(', ')})`);
    }
  }
  return o;
}

/**
 * A JavaScript value as JSON text, exactly: plain objects, arrays, strings,
 * finite numbers, booleans and null; bounded in depth (64) and in size (the
 * length of its JSON text, `max`). NaN and infinities (no JSON form, RFC 8259
 * section 6) and nesting too deep are BadInput; any other type (undefined, a
 * function, a symbol, a bigint, a Date, a Map, a class instance) a TypeError,
 * except that an object member whose value is undefined is left out, as
 * JSON.stringify leaves it out.
 */
function jsonText(v, what, max) {
  let left = max;
  const spend = (n) => {
    left -= n;
    if (left < 0) throw new BadInput(`${what} is larger than the ${max}-byte bound`, 'input.unreadable');
  };
  const walk = (x, depth, where) => {
    if (depth > MAX_DEPTH) {
      throw new BadInput(`${what} nests deeper than ${MAX_DEPTH} levels`, 'input.malformed');
    }
    spend(2);
    switch (typeof x) {
      case 'string':
        spend(x.length);
        return;
      case 'boolean':
        return;
      case 'number':
        if (!Number.isFinite(x)) {
          throw new BadInput(`${what}: ${where} is ${x}, which has no JSON form (RFC 8259 section 6)`, 'input.malformed');
        }
        return;
      case 'object':
        if (x === null) return;
        if (Array.isArray(x)) {
          for (let i = 0; i < x.length; i++) walk(x[i], depth + 1, `${where}[${i}]`);
          return;
        }
        {
          const proto = Object.getPrototypeOf(x);
          if (proto !== Object.prototype && proto !== null) break;
        }
        if (Object.getOwnPropertySymbols(x).length) {
          throw new TypeError(`${what}: ${where} has symbol keys, which have no JSON form`);
        }
        for (const k of Object.keys(x)) {
          // A member whose value is undefined is left out, as JSON.stringify
          // leaves it out (SDKs build objects with such members).
          if (x[k] === undefined) continue;
          spend(k.length + 3);
          walk(x[k], depth + 1, `${where}.${k}`);
        }
        return;
      default:
        break;
    }
    throw new TypeError(
      `${what}: ${where} is ${kind(x)}, which is not JSON (plain objects, arrays, strings, finite numbers, booleans, null)`,
    );
  };
  walk(v, 0, 'the value');
  return JSON.stringify(v);
}

/** A JSON argument as bytes: a Buffer/Uint8Array/ArrayBuffer is JSON text
 * itself; any other value is a JavaScript value, serialized exactly. */
function jsonBytes(v, what, max) {
  if (isBytes(v)) return asBuffer(v, what, max);
  return Buffer.from(jsonText(v, what, max), 'utf8');
}

/** An optional body: bytes, or a string sent as its UTF-8 bytes. */
function body(v, what = 'body') {
  if (v === undefined || v === null) return undefined;
  if (isBytes(v)) return asBuffer(v, what, LIMITS.maxInputBytes);
  if (typeof v === 'string') return Buffer.from(str(v, what, LIMITS.maxInputBytes), 'utf8');
  throw new TypeError(`${what} must be a Buffer, Uint8Array or string, not ${kind(v)}`);
}

/**
 * Header fields as the flat list `[name, value, ...]`: from `[name, value]`
 * pairs, Node's `req.rawHeaders` (the flat list itself) or a fetch `Headers`.
 * A merged object (`req.headers`) is refused: it loses the field lines and
 * the order of repeated fields that RFC 9421 section 2.1 signs.
 */
function headers(h, what = 'headers') {
  const flat = [];
  const push = (n, v) => {
    if (typeof n !== 'string') throw new TypeError(`${what}: a header name must be a string, not ${kind(n)}`);
    if (typeof v !== 'string') throw new TypeError(`${what}: the value of ${n} must be a string, not ${kind(v)}`);
    if (flat.length / 2 >= LIMITS.maxFieldLines) {
      throw new BadInput(`${what}: more than ${LIMITS.maxFieldLines} field lines`, 'input.unreadable');
    }
    flat.push(n, v);
  };
  if (typeof Headers === 'function' && h instanceof Headers) {
    for (const [n, v] of h) push(n, v);
  } else if (Array.isArray(h)) {
    if (h.every((x) => typeof x === 'string')) {
      if (h.length % 2) throw new TypeError(`${what}: a rawHeaders list has an even number of items`);
      for (let i = 0; i < h.length; i += 2) push(h[i], h[i + 1]);
    } else {
      for (const p of h) {
        if (!Array.isArray(p) || p.length !== 2) {
          throw new TypeError(`${what}: each header must be a [name, value] pair, not ${kind(p)}`);
        }
        push(p[0], p[1]);
      }
    }
  } else {
    throw new TypeError(
      `${what} must be [name, value] pairs, Node's req.rawHeaders or a Headers object, not ${kind(h)} ` +
        '(a merged req.headers object loses the field lines RFC 9421 signs)',
    );
  }
  return flat;
}

const UNITS = { s: 1, m: 60, h: 3600, d: 86400 };

/** A duration in whole seconds: `<name>Seconds` (a number) or `<name>` (a
 * string such as "30s", "5m", "1h", "1d"); at most one of them. */
function duration(o, name, what) {
  const text = o[name];
  const secs = o[`${name}Seconds`];
  if (text !== undefined && secs !== undefined) {
    throw new TypeError(`${what}: give ${name} or ${name}Seconds, not both`);
  }
  if (secs !== undefined) {
    if (typeof secs !== 'number') throw new TypeError(`${what}: ${name}Seconds must be a number, not ${kind(secs)}`);
    if (!Number.isSafeInteger(secs) || secs < 0) {
      throw new BadInput(`${what}: ${name}Seconds must be a whole number of seconds, not ${secs}`, 'usage');
    }
    return secs;
  }
  if (text === undefined) return undefined;
  if (typeof text !== 'string') {
    throw new TypeError(
      `${what}: ${name} is a duration string such as "5m" (units s, m, h, d), not ${kind(text)}; for a number of seconds give ${name}Seconds`,
    );
  }
  const m = /^(\d{1,9})(s|m|h|d)$/.exec(text);
  if (!m) throw new BadInput(`${what}: ${name} ${JSON.stringify(text)} is not a duration such as "30s", "5m", "1h", "1d"`, 'usage');
  return Number(m[1]) * UNITS[m[2]];
}

/** A time in whole seconds since the epoch: `<name>` (a Date) or
 * `<name>Seconds` (a number); at most one of them. */
function time(o, name, what) {
  const d = o[name];
  const secs = o[`${name}Seconds`];
  if (d !== undefined && secs !== undefined) throw new TypeError(`${what}: give ${name} or ${name}Seconds, not both`);
  if (secs !== undefined) {
    if (typeof secs !== 'number') throw new TypeError(`${what}: ${name}Seconds must be a number, not ${kind(secs)}`);
    if (!Number.isSafeInteger(secs)) throw new BadInput(`${what}: ${name}Seconds must be whole seconds, not ${secs}`, 'usage');
    return secs;
  }
  if (d === undefined) return undefined;
  if (!(d instanceof Date)) {
    throw new TypeError(`${what}: ${name} must be a Date, not ${kind(d)}; for seconds since the epoch give ${name}Seconds`);
  }
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new BadInput(`${what}: ${name} is an invalid Date`, 'usage');
  return Math.floor(ms / 1000);
}

function strings(v, what, max = 8 * 1024) {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new TypeError(`${what} must be an array of strings, not ${kind(v)}`);
  return v.map((x, i) => str(x, `${what}[${i}]`, max));
}

function status(v) {
  if (typeof v !== 'number') throw new TypeError(`status must be a number, not ${kind(v)}`);
  if (!Number.isInteger(v) || v < 100 || v > 999) {
    throw new BadInput(`status ${v} is not a three-digit HTTP status code (RFC 9110 section 15)`, 'input.malformed');
  }
  return v;
}

// -------------------------------------------------------------------- keys

const NATIVE = new WeakMap();
const CONSTRUCT = Symbol('SigningKey');

/** A private key bound to one algorithm: ES256, ES384, EdDSA, PS512, RS256
 * (or the RFC 9421 names); HS256 for shared secrets. */
class SigningKey {
  constructor(token, key) {
    if (token !== CONSTRUCT) {
      throw new TypeError('use SigningKey.generate(alg), SigningKey.fromPem(pem) or SigningKey.fromPkcs11(uri), not new SigningKey()');
    }
    NATIVE.set(this, key);
    Object.freeze(this);
  }

  /** A new key for `alg` (default ES256). An RSA key (RS256, PS512) takes
   * a search for two large primes, tens to hundreds of milliseconds: a
   * server generates it with `generateAsync`. */
  static generate(alg = 'ES256') {
    const a = str(alg, 'alg', 64);
    return new SigningKey(CONSTRUCT, call(() => native.NativeKey.generate(a)));
  }

  /** `generate` on the libuv pool: the event loop does not wait for an RSA
   * key's prime search. */
  static generateAsync(alg = 'ES256') {
    return callAsync(() => native.NativeKey.generateAsync(str(alg, 'alg', 64))).then(
      (k) => new SigningKey(CONSTRUCT, k),
    );
  }

  /** A private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it in
   * signatures (default: its RFC 7638 thumbprint). */
  static fromPem(pem, opts) {
    const o = options(opts, 'SigningKey.fromPem options', ['kid', 'jwk']);
    const text = str(pem, 'pem', 1024 * 1024, true);
    const kid = o.kid === undefined ? undefined : str(o.kid, 'kid', 1024);
    let jwk;
    if (o.jwk !== undefined) {
      jwk = typeof o.jwk === 'object' && !(o.jwk instanceof Uint8Array) ? JSON.stringify(o.jwk) : str(o.jwk, 'jwk', 1024 * 1024, true);
    }
    return new SigningKey(CONSTRUCT, call(() => native.NativeKey.fromPem(text, kid, jwk)));
  }

  /** A private key from a PEM file, named as `agentsig sign --key` names
   * it: `kid`, else the kid `agentsig keygen --kid` wrote beside
   * PREFIX.pem (PREFIX.jwk.json, PREFIX.jwks.json), else its RFC 7638
   * thumbprint. */
  static fromFile(path, opts) {
    const o = options(opts, 'SigningKey.fromFile options', ['kid']);
    const p = str(path, 'path', 4096);
    const kid = o.kid === undefined ? undefined : str(o.kid, 'kid', 1024);
    return new SigningKey(CONSTRUCT, call(() => native.NativeKey.fromFile(p, kid)));
  }

  /** The private key a PKCS#11 token holds, named by an RFC 7512
   * `pkcs11:` URI: the module from its `module-path` (else
   * AGENTSIG_PKCS11_MODULE), the PIN from its `pin-source=file:...` (else
   * AGENTSIG_PKCS11_PIN); a URI carrying `pin-value` is refused. `alg` is
   * needed for RSA keys (PS512 or RS256), `kid` replaces the thumbprint.
   * Throws BadKey naming the cause. Loading talks to the token: in a
   * server, use fromPkcs11Async. */
  static fromPkcs11(uri, opts) {
    const [u, alg, kid] = pkcs11Args(uri, opts);
    return new SigningKey(CONSTRUCT, call(() => native.pkcs11Key(u, alg, kid)));
  }

  /** fromPkcs11 on the libuv pool: the event loop never waits on the token. */
  static fromPkcs11Async(uri, opts) {
    return callAsync(() => {
      const [u, alg, kid] = pkcs11Args(uri, opts);
      return native.pkcs11KeyAsync(u, alg, kid);
    }).then((n) => new SigningKey(CONSTRUCT, n));
  }

  /** The key id signatures carry: the given kid, else the thumbprint. */
  get kid() {
    return NATIVE.get(this).kid();
  }
  /** The RFC 7638 thumbprint of the public key (the Web Bot Auth keyid). */
  get thumbprint() {
    return NATIVE.get(this).thumbprint();
  }
  /** The JOSE name of the key's algorithm. */
  get algorithm() {
    return NATIVE.get(this).algorithm();
  }
  /** The public JWK (RFC 7517), with `kid` when one was given; a shared
   * secret (HS256) has none: BadKey. */
  publicJwk() {
    return JSON.parse(call(() => NATIVE.get(this).publicJwk()));
  }
  /** The private key as PKCS#8 PEM, when it has that form; else null. */
  privatePem() {
    return NATIVE.get(this).privatePem() ?? null;
  }
  toString() {
    return `SigningKey(${this.algorithm}, kid=${this.kid})`;
  }
}

/** The checked arguments of SigningKey.fromPkcs11: the URI (RFC 7512
 * bounds it to 4096 bytes here), the algorithm and the kid. */
function pkcs11Args(uri, opts) {
  const o = options(opts, 'SigningKey.fromPkcs11 options', ['alg', 'kid']);
  return [
    str(uri, 'uri', 4096),
    o.alg === undefined ? undefined : str(o.alg, 'alg', 64),
    o.kid === undefined ? undefined : str(o.kid, 'kid', 1024),
  ];
}

function nativeKey(k) {
  const n = k instanceof SigningKey ? NATIVE.get(k) : undefined;
  if (!n) throw new TypeError(`key must be an agentsig SigningKey, not ${kind(k)}`);
  return n;
}

// ----------------------------------------------------------------- signing

/** RFC 8785 canonical form (a Buffer) of JSON text (bytes, strict I-JSON)
 * or of a JavaScript value. */
function canonicalize(value) {
  const b = jsonBytes(value, 'value', LIMITS.maxDocumentBytes);
  return call(() => native.canonicalize(b));
}

function descriptorJob(doc, key) {
  return [nativeKey(key), 'descriptor', '{}', jsonBytes(doc, 'doc', LIMITS.maxDocumentBytes)];
}

/** The compact detached JWS (RFC 7515 Appendix F) over the descriptor's RFC
 * 8785 canonical form. */
function signDescriptor(doc, key) {
  const [k, ...a] = descriptorJob(doc, key);
  return call(() => k.sign(...a));
}
function signDescriptorAsync(doc, key) {
  return callAsync(() => {
    const [k, ...a] = descriptorJob(doc, key);
    return k.signAsync(...a);
  });
}

function cardJob(card, key, opts) {
  const o = options(opts, 'signCard options', ['force']);
  const args = JSON.stringify({ force: bool(o.force, 'force') });
  return [nativeKey(key), 'card', args, jsonBytes(card, 'card', LIMITS.maxDocumentBytes)];
}

/** An A2A Agent Card signed as the A2A SDKs sign: the card to publish (a
 * plain object). Security-relevant members no signature would cover are
 * refused unless `force`. */
function signCard(card, key, opts) {
  const [k, ...a] = cardJob(card, key, opts);
  return JSON.parse(call(() => k.sign(...a)));
}
function signCardAsync(card, key, opts) {
  return callAsync(() => {
    const [k, ...a] = cardJob(card, key, opts);
    return k.signAsync(...a);
  }).then(JSON.parse);
}

const SIGN_REQUEST_OPTIONS = ['webBotAuth', 'signatureAgent', 'expiresIn', 'expiresInSeconds', 'components', 'label', 'created', 'createdSeconds'];

function requestJob(method, url, hs, b, key, opts) {
  const o = options(opts, 'signRequest options', SIGN_REQUEST_OPTIONS);
  const agent = o.signatureAgent === undefined ? undefined : str(o.signatureAgent, 'signatureAgent', 8 * 1024);
  const args = {
    method: str(method, 'method', 64),
    url: str(url, 'url', 8 * 1024),
    headers: headers(hs),
    // Web Bot Auth by default when a Signature-Agent is given.
    webBotAuth: o.webBotAuth === undefined ? agent !== undefined : bool(o.webBotAuth, 'webBotAuth'),
    signatureAgent: agent,
    expiresIn: duration(o, 'expiresIn', 'signRequest'),
    components: strings(o.components, 'components', 1024),
    label: o.label === undefined ? undefined : str(o.label, 'label', 256),
    created: time(o, 'created', 'signRequest'),
  };
  return [nativeKey(key), 'request', JSON.stringify(args), body(b)];
}

/**
 * Sign a request: the Web Bot Auth profile when `signatureAgent` is given
 * (draft-meunier-web-bot-auth-architecture; `Signature-Agent`, keyid the key's
 * thumbprint, `tag="web-bot-auth"`, `created`/`expires`, a nonce), else plain
 * RFC 9421 over `@method`, `@authority`, `@path`, `@query`, `content-type`
 * and `content-digest` (or the `components` named). Returns every header as
 * `[name, value]` pairs, the added ones last.
 */
function signRequest(method, url, hs, b, key, opts) {
  const [k, ...a] = requestJob(method, url, hs, b, key, opts);
  return JSON.parse(call(() => k.sign(...a)));
}
function signRequestAsync(method, url, hs, b, key, opts) {
  return callAsync(() => {
    const [k, ...a] = requestJob(method, url, hs, b, key, opts);
    return k.signAsync(...a);
  }).then(JSON.parse);
}

function responseJob(st, hs, b, key, opts) {
  const o = options(opts, 'signResponse options', ['label', 'created', 'createdSeconds', 'expiresIn', 'expiresInSeconds']);
  const args = {
    status: status(st),
    headers: headers(hs),
    label: o.label === undefined ? undefined : str(o.label, 'label', 256),
    created: time(o, 'created', 'signResponse'),
    expiresIn: duration(o, 'expiresIn', 'signResponse'),
  };
  return [nativeKey(key), 'response', JSON.stringify(args), body(b)];
}

/** Sign a response (RFC 9421) with `Content-Digest` (RFC 9530, added when
 * absent) over `@status`, `content-type` (when present) and
 * `content-digest`; every header as `[name, value]` pairs. */
function signResponse(st, hs, b, key, opts) {
  const [k, ...a] = responseJob(st, hs, b, key, opts);
  return JSON.parse(call(() => k.sign(...a)));
}
function signResponseAsync(st, hs, b, key, opts) {
  return callAsync(() => {
    const [k, ...a] = responseJob(st, hs, b, key, opts);
    return k.signAsync(...a);
  }).then(JSON.parse);
}

// ---------------------------------------------------------------- verifier

const DERIVE = Symbol('Verifier.withReplayStore');

const VERIFIER_OPTIONS = [
  'jwks', 'keys', 'algorithms', 'maxAge', 'maxAgeSeconds', 'skew', 'skewSeconds', 'replayStore',
  'strictLowS', 'now', 'nowSeconds', 'agents', 'agentKeys', 'fetchDirectories',
  'requireDirectoryProof', 'allowPrivateHosts', 'extraRootsPem', 'keyCache', 'fleetSecretFile',
  'allowUncoveredContent',
];

/** A JWK Set as JSON text: an object, its JSON text (a string is never a
 * file name), or its bytes. */
function jwksText(j, what) {
  if (typeof j === 'string') {
    const t = str(j, what, LIMITS.maxInputBytes);
    if (!t.trimStart().startsWith('{')) {
      throw new BadKey(
        `${what}: a string is the JWK Set's JSON text itself ({"keys": [...]}, RFC 7517 section 5), not a file name; read the file with fs.readFileSync and pass its bytes`,
        'key.unusable',
      );
    }
    return t;
  }
  if (isBytes(j)) return str(j, what, LIMITS.maxInputBytes, true);
  if (j !== null && typeof j === 'object' && !Array.isArray(j)) return jsonText(j, what, LIMITS.maxInputBytes);
  throw new TypeError(`${what} must be a JWK Set (an object, its JSON text or bytes), not ${kind(j)}`);
}

/** Public keys as PEM or JWK text: SigningKey (its public JWK), PEM text or
 * bytes, or a JWK object. */
function keyTexts(list, what) {
  if (!Array.isArray(list)) throw new TypeError(`${what} must be an array of keys, not ${kind(list)}`);
  return list.map((k, i) => {
    if (k instanceof SigningKey) return JSON.stringify(k.publicJwk());
    if (typeof k === 'string' || isBytes(k)) return str(k, `${what}[${i}]`, 1024 * 1024, true);
    if (k !== null && typeof k === 'object' && !Array.isArray(k)) return jsonText(k, `${what}[${i}]`, 1024 * 1024);
    throw new TypeError(`${what}[${i}] must be a SigningKey, PEM text or a JWK object, not ${kind(k)}`);
  });
}

/** Verifies descriptors, A2A cards, RFC 9421 messages and delegation chains
 * with one configuration; reusable, safe to share between calls. */
class Verifier {
  #native;

  constructor(opts, derived) {
    if (opts === DERIVE) {
      // withReplayStore: the native verifier and options it built.
      this.#native = derived.native;
      this.options = derived.options;
      Object.freeze(this);
      return;
    }
    const o = options(opts, 'Verifier options', VERIFIER_OPTIONS);
    const agentKeys = o.agentKeys === undefined ? undefined : (() => {
      const a = o.agentKeys;
      if (a === null || typeof a !== 'object' || Array.isArray(a)) {
        throw new TypeError(`agentKeys must be an object of agent URL to keys, not ${kind(a)}`);
      }
      const out = {};
      for (const [url, ks] of Object.entries(a)) {
        out[url] = Array.isArray(ks) ? { keys: keyTexts(ks, `agentKeys[${url}]`) } : { jwks: jwksText(ks, `agentKeys[${url}]`) };
      }
      return out;
    })();
    const n = {
      jwks: o.jwks === undefined ? undefined : jwksText(o.jwks, 'jwks'),
      keys: o.keys === undefined ? undefined : keyTexts(o.keys, 'keys'),
      algorithms: strings(o.algorithms, 'algorithms', 64),
      maxAgeSeconds: duration(o, 'maxAge', 'Verifier'),
      skewSeconds: duration(o, 'skew', 'Verifier'),
      replayStore: o.replayStore === undefined ? undefined : str(o.replayStore, 'replayStore', 8 * 1024),
      strictLowS: bool(o.strictLowS, 'strictLowS'),
      allowUncoveredContent: bool(o.allowUncoveredContent, 'allowUncoveredContent'),
      nowSeconds: time(o, 'now', 'Verifier'),
      agents: strings(o.agents, 'agents'),
      agentKeys,
      fetchDirectories: bool(o.fetchDirectories, 'fetchDirectories'),
      requireDirectoryProof: bool(o.requireDirectoryProof, 'requireDirectoryProof'),
      allowPrivateHosts: strings(o.allowPrivateHosts, 'allowPrivateHosts', 1024),
      extraRootsPem: strings(o.extraRootsPem, 'extraRootsPem', 1024 * 1024),
      keyCache: o.keyCache === undefined ? undefined : str(o.keyCache, 'keyCache', 8 * 1024),
      fleetSecretFile: o.fleetSecretFile === undefined ? undefined : str(o.fleetSecretFile, 'fleetSecretFile', 4096),
    };
    this.#native = call(() => new native.NativeVerifier(JSON.stringify(n)));
    /** The options in effect, with the secure defaults filled in; frozen. */
    this.options = deepFreeze({
      ...n,
      jwks: n.jwks === undefined ? undefined : JSON.parse(n.jwks),
      algorithms: n.algorithms ?? ['ES256', 'ES384', 'EdDSA', 'PS512', 'RS256'],
      agentKeys: o.agentKeys === undefined ? undefined : Object.keys(n.agentKeys),
    });
    Object.freeze(this);
  }

  /** Whether Web Bot Auth key sets are configured (agentKeys or
   * fetchDirectories). */
  get webBotAuthKeys() {
    return this.#native.webBotAuthKeys();
  }
  /** Whether nonces are checked against a replay store (RFC 9421 section
   * 7.2.2). */
  get hasReplayStore() {
    return this.#native.hasReplayStore();
  }

  /** This verifier with the replay store `store` (`'memory'`, a file path,
   * `'redis://...'`) in place of its own, every other setting kept. */
  withReplayStore(store) {
    const s = str(store, 'store', 8 * 1024);
    const native = call(() => this.#native.withReplayStore(s));
    return new Verifier(DERIVE, { native, options: deepFreeze({ ...this.options, replayStore: s }) });
  }

  #run(op, args, data, data2) {
    return report(call(() => this.#native.run(op, JSON.stringify(args), data, data2)));
  }
  #runAsync(op, prepare) {
    return callAsync(() => {
      const [args, data, data2] = prepare();
      return this.#native.runAsync(op, JSON.stringify(args), data, data2);
    }).then(report);
  }

  static #descriptor(doc, jws) {
    return [{ jws: str(jws, 'jws', LIMITS.maxJwsBytes) }, jsonBytes(doc, 'doc', LIMITS.maxDocumentBytes)];
  }
  /** A descriptor (JSON text as bytes, or a JavaScript value) against its
   * detached JWS over the RFC 8785 canonical form. */
  verifyDescriptor(doc, jws) {
    return this.#run('descriptor', ...Verifier.#descriptor(doc, jws));
  }
  verifyDescriptorAsync(doc, jws) {
    return this.#runAsync('descriptor', () => Verifier.#descriptor(doc, jws));
  }

  static #card(card, opts) {
    const o = options(opts, 'verifyCard options', ['requireAll']);
    return [{ requireAll: bool(o.requireAll, 'requireAll') }, jsonBytes(card, 'card', LIMITS.maxDocumentBytes)];
  }
  /** An A2A Agent Card's embedded signatures; `requireAll`: every signature
   * must verify (default: one valid by a trusted key and none invalid). */
  verifyCard(card, opts) {
    return this.#run('card', ...Verifier.#card(card, opts));
  }
  verifyCardAsync(card, opts) {
    return this.#runAsync('card', () => Verifier.#card(card, opts));
  }

  static #catalog(catalog, opts) {
    const o = options(opts, 'verifyCatalog options', ['requireSigned', 'allowUnsigned', 'jws']);
    return [{
      requireSigned: bool(o.requireSigned, 'requireSigned'),
      allowUnsigned: bool(o.allowUnsigned, 'allowUnsigned'),
      jws: o.jws === undefined ? undefined : str(o.jws, 'jws', LIMITS.maxJwsBytes),
    }, jsonBytes(catalog, 'catalog', LIMITS.maxCatalogBytes)];
  }
  /**
   * An AI Catalog (JSON text as bytes, or a JavaScript value), as `agentsig
   * verify CATALOG --json` reports it: one `catalog.entry` check and one
   * `details.entries` result per entry. Its Trust Manifests are checked with
   * this verifier's `keys`/`jwks` when it has some (as `--key K`), else with
   * each identity's keys resolved (a DID document, an HTTPS JWK Set), which
   * needs `fetchDirectories: true` (BadInput otherwise); use the Promise
   * form then, since it fetches. `requireSigned`: every entry must carry a
   * verified Trust Manifest. `jws`: the catalog's detached JWS
   * (`ai-catalog.json.jws`, over the RFC 8785 form of the whole document,
   * draft-narvaneni-agent-uri-03 section 10.3), checked with the keys of
   * `host.identifier`: verified, it binds every inline artifact, as
   * `agentsig verify FILE --jws`. Throws NotVerified (code
   * `catalog.not-verified`, with `.report`), BadInput above 4 MiB, for a
   * `jws` above 1 MiB or for JSON that is not strict.
   */
  verifyCatalog(catalog, opts) {
    return this.#run('catalog', ...Verifier.#catalog(catalog, opts));
  }
  verifyCatalogAsync(catalog, opts) {
    return this.#runAsync('catalog', () => Verifier.#catalog(catalog, opts));
  }

  static #catalogUrl(url, opts) {
    const o = options(opts, 'verifyCatalogUrl options', ['requireSigned', 'allowUnsigned', 'allowPrivateHosts', 'extraRootsPem']);
    return [{
      url: str(url, 'url', 8 * 1024),
      requireSigned: bool(o.requireSigned, 'requireSigned'),
      allowUnsigned: bool(o.allowUnsigned, 'allowUnsigned'),
      allowPrivateHosts: strings(o.allowPrivateHosts, 'allowPrivateHosts', 1024),
      extraRootsPem: strings(o.extraRootsPem, 'extraRootsPem', 1024 * 1024),
    }];
  }
  /**
   * The AI Catalog at an https `url`, fetched on the libuv pool through the
   * SSRF-guarded fetcher with its nested catalogs and cards (bounded in
   * depth, fetches, bytes and time, sharing `keyCache`) and verified as
   * `verifyCatalog` does (the same choice of keys), with the catalog's
   * detached JWS fetched from `URL.jws` beside its final URL as `agentsig
   * verify URL` does (404 or 410: none; another failure fails the catalog); a
   * Promise only, since it fetches. A catalog that cannot be fetched rejects
   * with FetchError (code `fetch.failed`). `allowPrivateHosts` and
   * `extraRootsPem` loosen the fetcher for internal catalogs and tests.
   */
  verifyCatalogUrl(url, opts) {
    return this.#runAsync('catalogUrl', () => Verifier.#catalogUrl(url, opts));
  }

  static #response(st, hs, b, opts) {
    const o = options(opts, 'verifyResponse options', ['request']);
    let request;
    let reqBody;
    if (o.request !== undefined) {
      const r = options(o.request, 'request', ['method', 'url', 'headers', 'body']);
      request = { method: str(r.method, 'request.method', 64), url: str(r.url, 'request.url', 8 * 1024), headers: headers(r.headers ?? [], 'request.headers') };
      reqBody = body(r.body, 'request.body');
    }
    return [{ status: status(st), headers: headers(hs), request }, body(b), reqBody];
  }
  /** RFC 9421 + Content-Digest over a response; `request` ({method, url,
   * headers, body}) is the request it answers, for `;req` components. */
  verifyResponse(st, hs, b, opts) {
    return this.#run('response', ...Verifier.#response(st, hs, b, opts));
  }
  verifyResponseAsync(st, hs, b, opts) {
    return this.#runAsync('response', () => Verifier.#response(st, hs, b, opts));
  }

  static #request(method, url, hs, b, opts) {
    const o = options(opts, 'verifyRequest options', ['webBotAuth', 'authorities', 'strict', 'scheme']);
    if (o.authorities !== undefined && !Array.isArray(o.authorities)) {
      throw new TypeError(`authorities must be an array of host[:port] strings, not ${kind(o.authorities)}`);
    }
    const args = {
      method: str(method, 'method', 64),
      url: str(url, 'url', 8 * 1024),
      headers: headers(hs),
      webBotAuth: bool(o.webBotAuth, 'webBotAuth'),
      authorities: strings(o.authorities, 'authorities', 300),
      strict: bool(o.strict, 'strict'),
      scheme: o.scheme === undefined ? undefined : str(o.scheme, 'scheme', 16),
    };
    return [args, body(b)];
  }
  /**
   * RFC 9421 + Content-Digest over a request. `url` is absolute, or, with
   * `scheme` ("https"/"http"), the origin-form target a server received
   * (`/path?query`, RFC 9112 section 3.2.1) whose authority is the one Host
   * field. `webBotAuth`: the Web Bot Auth profile; `authorities`: the site's
   * own authorities, which a signature must cover (`@authority` or
   * `@target-uri`) and name (RFC 9421 section 7.2.1); `strict`: `@method`,
   * `@path` and a nonce are required too (RFC 9421 section 7.2.2).
   */
  verifyRequest(method, url, hs, b, opts) {
    return this.#run('request', ...Verifier.#request(method, url, hs, b, opts));
  }
  verifyRequestAsync(method, url, hs, b, opts) {
    return this.#runAsync('request', () => Verifier.#request(method, url, hs, b, opts));
  }

  static #audit(tokens, opts) {
    const o = options(opts, 'auditDelegation options', ['issuer', 'audience', 'denyWarnings']);
    const list = typeof tokens === 'string' ? [tokens] : tokens;
    if (!Array.isArray(list)) throw new TypeError(`tokens must be a string or an array of strings, not ${kind(tokens)}`);
    const issuer = o.issuer === undefined ? undefined : typeof o.issuer === 'string' ? [o.issuer] : o.issuer;
    return [{
      tokens: strings(list, 'tokens', LIMITS.maxJwtBytes),
      issuer: strings(issuer, 'issuer'),
      audience: o.audience === undefined ? undefined : str(o.audience, 'audience', 8 * 1024),
      denyWarnings: bool(o.denyWarnings, 'denyWarnings'),
    }];
  }
  /** An RFC 8693 act chain (one token or a list, subject token first), as
   * `agentsig delegation audit`. */
  auditDelegation(tokens, opts) {
    return this.#run('audit', ...Verifier.#audit(tokens, opts));
  }
  auditDelegationAsync(tokens, opts) {
    return this.#runAsync('audit', () => Verifier.#audit(tokens, opts));
  }
}

module.exports = {
  Verifier,
  SigningKey,
  canonicalize,
  signDescriptor,
  signDescriptorAsync,
  signCard,
  signCardAsync,
  signRequest,
  signRequestAsync,
  signResponse,
  signResponseAsync,
  AgentsigError,
  NotVerified,
  PolicyRefused,
  FetchError,
  BadKey,
  BadInput,
  MAX_INPUT_BYTES: LIMITS.maxInputBytes,
};
