// agentsig for WebAssembly runtimes (Cloudflare Workers and workerd, Deno,
// Vercel Edge, browsers, Node.js): the checks of the agentsig Rust library
// (detached JWS over RFC 8785 JCS for descriptors, A2A Agent Card
// signatures, RFC 9421 HTTP Message Signatures with RFC 9530 Content-Digest
// and the Web Bot Auth profile, RFC 8693 delegation audits, AI Catalogs),
// with the same policy, API and report as the Node.js package and the
// `agentsig` command line (`--json`, docs/report.md).
//
// This file checks every argument (a wrong type is a TypeError, a value out of
// bounds a BadInput, before anything is copied) and hands the module
// (src/lib.rs, through wasm-bindgen's glue) plain strings, JSON text and
// bytes. The module throws an Error whose message is MARK and a JSON
// failure; `typed` turns it into the typed error of this file. Key sets that
// must be fetched are fetched here, with the runtime's own `fetch`
// (fetch.js). The entry points (index.js, workerd.js, browser.js)
// instantiate the module, then export this file's names.
import * as native from './dist/agentsig_wasm.js';
import { fetchBounded, fetchKeySets, FetchFailed } from './fetch.js';
import { LIMITS } from './limits.js';
import { withWebCrypto } from './webcrypto.js';

const MARK = '\u0000agentsig:';
/** Deepest nesting of a JavaScript value taken as JSON. */
const MAX_DEPTH = 64;
/** Largest catalog detached JWS fetched from `URL.jws`: 64 KiB, as
 * `agentsig verify URL` (`agentsig::net::catalog`). */
const CATALOG_JWS_FETCH_BYTES = 64 * 1024;

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

/** `v` and every object and array within it frozen (an array walked by
 * index: faster than its keys as strings, on every report). */
function deepFreeze(v) {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) deepFreeze(v[i]);
    } else {
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) deepFreeze(v[keys[i]]);
    }
  }
  return v;
}

/** The typed error of a native failure's text (MARK and its JSON). */
function failure(text) {
  const f = JSON.parse(text.slice(MARK.length));
  const Cls = CLASSES[f.class] || AgentsigError;
  return new Cls(f.message, f.code, f.report === null ? null : deepFreeze(f.report));
}

/** The typed error of a native failure; anything else as it is. */
function typed(e) {
  if (e instanceof Error && typeof e.message === 'string' && e.message.startsWith(MARK)) return failure(e.message);
  if (typeof WebAssembly === 'object' && e instanceof WebAssembly.RuntimeError) {
    // A trap (a bug of the module, never an input's doing by contract).
    return new BadInput(`agentsig failed internally on this input (${e.message}); please report it with the input`, 'internal');
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

/** The Promise form of a call: the same checks and work, settled as a
 * Promise (a WebAssembly call runs on the calling thread; the forms that
 * fetch key sets are asynchronous for real). */
function callAsync(f) {
  return Promise.resolve().then(f).then(
    (v) => v,
    (e) => {
      throw typed(e);
    },
  );
}

const report = (text) => deepFreeze(JSON.parse(text));
/** The report of a pass's result: the report's text, or MARK and a
 * failure (thrown as its typed error). */
const settled = (text) => {
  if (text.startsWith(MARK)) throw failure(text);
  return report(text);
};

// A report in the module's tape form (agentsig::facade::tape: the values of
// its --json text in order, strings ended by NUL, the common member names by
// index), read into frozen objects: three times faster than JSON.parse and
// the deep freeze of the same report.
/** The member names the tape gives by index (read once from the module). */
let tapeKeys = null;
/** The tape being read, and where. */
let tape = '';
let at = 0;

/** A string of the tape: its characters up to NUL; `doubled`, with each
 * NUL within it doubled. */
function tapeString(doubled) {
  let end = tape.indexOf('\0', at);
  if (!doubled) {
    const v = tape.slice(at, end);
    at = end + 1;
    return v;
  }
  let v = '';
  while (tape.charCodeAt(end + 1) === 0) {
    v += tape.slice(at, end + 1);
    at = end + 2;
    end = tape.indexOf('\0', at);
  }
  v += tape.slice(at, end);
  at = end + 1;
  return v;
}

function tapeValue() {
  switch (tape.charCodeAt(at++)) {
    case 0x6e: // n
      return null;
    case 0x74: // t
      return true;
    case 0x66: // f
      return false;
    case 0x23: { // # number ;
      const end = tape.indexOf(';', at);
      const v = +tape.slice(at, end);
      at = end + 1;
      return v;
    }
    case 0x22: // " string
      return tapeString(false);
    case 0x78: // x string with NUL
      return tapeString(true);
    case 0x5b: { // [ values ]
      const a = [];
      while (tape.charCodeAt(at) !== 0x5d) a.push(tapeValue());
      at++;
      return Object.freeze(a);
    }
    case 0x7b: { // { key value... }
      const o = {};
      for (let c = tape.charCodeAt(at); c !== 0x7d; c = tape.charCodeAt(at)) {
        if (c === 0x6b) { // k index: a name of REPORT_KEYS, never "__proto__"
          const k = tapeKeys[tape.charCodeAt(at + 1) - 32];
          at += 2;
          o[k] = tapeValue();
          continue;
        }
        at++;
        const k = tapeString(c === 0x78);
        const v = tapeValue();
        // As JSON.parse: "__proto__" is an own member, not the prototype.
        if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        else o[k] = v;
      }
      at++;
      return Object.freeze(o);
    }
    default:
      throw new BadInput('agentsig failed internally: a report it could not read; please report it with the input', 'internal');
  }
}

/** The frozen report of a tape. */
function reportOfTape(text) {
  if (tapeKeys === null) {
    const keys = native.reportKeys().split(' ');
    // A name given by index is stored as it is: "__proto__" must come as a
    // string (JSON.parse makes it an own member).
    if (keys.includes('__proto__')) throw new BadInput('agentsig failed internally: a report it could not read; please report it with the input', 'internal');
    tapeKeys = keys;
  }
  tape = text;
  at = 0;
  try {
    return tapeValue();
  } finally {
    tape = '';
  }
}

/** `settled` for a request's pass: the report's tape, or MARK and a
 * failure. */
const settledTape = (text) => {
  if (text.startsWith(MARK)) throw failure(text);
  return reportOfTape(text);
};

/** An oracle that answers for no algorithm: a pass with it computes every
 * signature check in the module (the synchronous forms). */
let bare = null;
const bareOracle = () => bare ?? (bare = new native.NativeOracle(''));

/**
 * The arguments of a request verification (`Verifier.#request`) as the
 * module's `request` call takes them (src/lib.rs), without JSON: the
 * strings (method, URL, scheme or '', the authorities, the header names and
 * values) joined, their lengths in UTF-16 code units, how many
 * authorities, and the flags (1 webBotAuth, 2 strict, 4 a scheme, 8
 * authorities given); the fetched key sets (`keySets`) as JSON.
 */
function requestParts(a) {
  const parts = [a.method, a.url, a.scheme ?? ''];
  if (a.authorities) for (const x of a.authorities) parts.push(x);
  for (const x of a.headers) parts.push(x);
  const lens = new Uint32Array(parts.length);
  for (let i = 0; i < parts.length; i++) lens[i] = parts[i].length;
  const flags = (a.webBotAuth ? 1 : 0) | (a.strict ? 2 : 0) | (a.scheme !== undefined ? 4 : 0) | (a.authorities ? 8 : 0);
  return {
    text: parts.join(''),
    lens,
    authorities: a.authorities ? a.authorities.length : 0,
    flags,
    keySets: a.keySets === undefined ? undefined : JSON.stringify(a.keySets),
  };
}

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

/** A Uint8Array over the bytes of a Uint8Array or ArrayBuffer, without a
 * copy, refused beyond `max`. */
function asBuffer(v, what, max) {
  const b = v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (b.length > max) throw tooLarge(what, b.length, max);
  return b;
}

const encoder = new TextEncoder();
/** The length of a string's UTF-8 form. */
function utf8Length(s) {
  return encoder.encode(s).length;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A string argument (or, when `bytesOk`, UTF-8 bytes), refused beyond `max`. */
function str(v, what, max, bytesOk = false) {
  if (typeof v === 'string') {
    // A UTF-16 string is at most 3 UTF-8 bytes per code unit.
    if (v.length > max || (v.length * 3 > max && utf8Length(v) > max)) {
      throw tooLarge(what, utf8Length(v), max);
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
  return encoder.encode(jsonText(v, what, max));
}

/** An optional body: bytes, or a string sent as its UTF-8 bytes. */
function body(v, what = 'body') {
  if (v === undefined || v === null) return undefined;
  if (isBytes(v)) return asBuffer(v, what, LIMITS.maxInputBytes);
  if (typeof v === 'string') return encoder.encode(str(v, what, LIMITS.maxInputBytes));
  throw new TypeError(`${what} must be a Uint8Array, ArrayBuffer or string, not ${kind(v)}`);
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
  // A string short enough in any encoding is taken as it is (`str`'s own
  // test), without the name `str` would give it in an error.
  return v.map((x, i) => (typeof x === 'string' && x.length * 3 <= max ? x : str(x, `${what}[${i}]`, max)));
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
      throw new TypeError('use SigningKey.generate(alg) or SigningKey.fromPem(pem), not new SigningKey()');
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

  /** `generate` as a Promise (the Node.js package's form; here the key is
   * made on the calling thread). */
  static generateAsync(alg = 'ES256') {
    return callAsync(() => SigningKey.generate(alg));
  }

  /** A private key from PEM (PKCS#8, SEC1, PKCS#1); `kid` names it in
   * signatures (default: its RFC 7638 thumbprint). */
  static fromPem(pem, opts) {
    const o = options(opts, 'SigningKey.fromPem options', ['kid']);
    const text = str(pem, 'pem', 1024 * 1024, true);
    const kid = o.kid === undefined ? undefined : str(o.kid, 'kid', 1024);
    return new SigningKey(CONSTRUCT, call(() => native.NativeKey.fromPem(text, kid)));
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

function nativeKey(k) {
  const n = k instanceof SigningKey ? NATIVE.get(k) : undefined;
  if (!n) throw new TypeError(`key must be an agentsig SigningKey, not ${kind(k)}`);
  return n;
}

// ----------------------------------------------------------------- signing

/** RFC 8785 canonical form (a Uint8Array) of JSON text (bytes, strict I-JSON)
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
    return k.sign(...a);
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
    return k.sign(...a);
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
    return k.sign(...a);
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
    return k.sign(...a);
  }).then(JSON.parse);
}

// ---------------------------------------------------------------- verifier

const DERIVE = Symbol('Verifier.withReplayStore');

/** The options of `inspect` beside a verifier's. */
const INSPECT_OPTIONS = ['kind', 'jws', 'scheme', 'authorities', 'noMaxAge', 'request', 'requireAll', 'allowUnsigned'];

/** `Verifier.inspect` with a verifier built from the same options: the
 * verifier's (`keys`, `jwks`, `now`...) and the inspection's (`kind`, `jws`...). */
function inspect(input, opts) {
  const o = options(opts, 'inspect options', [...VERIFIER_OPTIONS, ...INSPECT_OPTIONS]);
  const v = {};
  const a = {};
  for (const [k, val] of Object.entries(o)) (INSPECT_OPTIONS.includes(k) ? a : v)[k] = val;
  return new Verifier(v).inspect(input, a);
}

const VERIFIER_OPTIONS = [
  'jwks', 'keys', 'algorithms', 'maxAge', 'maxAgeSeconds', 'skew', 'skewSeconds', 'replayStore',
  'strictLowS', 'now', 'nowSeconds', 'agents', 'agentKeys', 'fetchDirectories',
  'requireDirectoryProof', 'allowPrivateHosts', 'extraRootsPem', 'keyCache', 'fleetSecretFile',
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
  /** fetchDirectories: key sets fetched here with the runtime's fetch. */
  #fetching;
  /** Public keys imported into the runtime's WebCrypto (webcrypto.js). */
  #keys = new Map();
  /** Whether the native verifier has a replay store (fixed at its making). */
  #replay;

  constructor(opts, derived) {
    if (opts === DERIVE) {
      // withReplayStore: the native verifier and options it built.
      this.#native = derived.native;
      this.#replay = this.#native.hasReplayStore();
      this.#fetching = derived.fetching;
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
    if (n.requireDirectoryProof) {
      throw new BadInput('requireDirectoryProof: directory response signatures are not checked by the WebAssembly package; use the Node.js package or the CLI', 'usage');
    }
    this.#fetching = n.fetchDirectories;
    // The module does no I/O: this file fetches the key sets it names.
    this.#native = call(() => new native.NativeVerifier(JSON.stringify({ ...n, fetchDirectories: false, agentKeys: n.fetchDirectories ? n.agentKeys ?? {} : n.agentKeys })));
    this.#replay = this.#native.hasReplayStore();
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
    return this.#fetching || this.#native.webBotAuthKeys();
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
    return new Verifier(DERIVE, { native, fetching: this.#fetching, options: deepFreeze({ ...this.options, replayStore: s }) });
  }

  #run(op, args, data, data2) {
    if (op === 'request') {
      return settledTape(call(() => this.#requestPass(null, false, requestParts(args), data)));
    }
    return report(call(() => this.#native.run(op, JSON.stringify(args), data, data2)));
  }
  /** One pass of the module over a request, its parts handed over without
   * JSON (`requestParts`); `o` null: no oracle, every primitive in the
   * module. */
  #requestPass(o, probe, p, data) {
    return this.#native.request(o ?? bareOracle(), probe, p.text, p.lens, p.authorities, p.flags, p.keySets, data);
  }
  #runAsync(op, prepare) {
    let args;
    let data;
    let data2;
    try {
      [args, data, data2] = prepare();
    } catch (e) {
      return Promise.reject(typed(e));
    }
    if (op === 'request' && args.webBotAuth && this.#fetching) {
      return callAsync(async () => {
        const wanted = JSON.parse(native.keySetUrls(JSON.stringify({ headers: args.headers })));
        args.keySets = await fetchKeySets(wanted, { maxBytes: LIMITS.maxKeySetBytes });
        return this.#runChecked(op, args, data, data2);
      });
    }
    try {
      const got = this.#runChecked(op, args, data, data2);
      return got instanceof Promise ? got : Promise.resolve(got);
    } catch (e) {
      return Promise.reject(typed(e));
    }
  }
  /** The Promise forms' run: the runtime's crypto makes the signature
   * checks (webcrypto.js); the module judges. The report, or a Promise of
   * it while the runtime's crypto answers; a failure is thrown (or
   * rejected) as its typed error. */
  #runChecked(op, args, data, data2) {
    if (op === 'request') {
      const p = requestParts(args);
      return withWebCrypto((o, probe) => this.#requestPass(o, probe, p, data), this.#keys, this.#replay, settledTape, typed);
    }
    const text = JSON.stringify(args);
    const pass = (o, probe) => (o ? this.#native.runWith(o, probe, op, text, data, data2) : this.#native.run(op, text, data, data2));
    return withWebCrypto(pass, this.#keys, this.#replay, settled, typed);
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
   * verified Trust Manifest; `allowUnsigned`: a catalog no trusted key
   * vouches for in part (nothing failed) is returned with the verdict
   * `unsigned`. `jws`: the catalog's detached JWS (`ai-catalog.json.jws`,
   * over the RFC 8785 form of the whole document,
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

  /**
   * The AI Catalog at an https `url`, fetched with the runtime's `fetch`
   * (no redirect followed, at most 4 MiB, within 30 s) with its detached
   * JWS at `URL.jws` (at most 64 KiB; 404 or 410: none, as for `agentsig
   * verify URL`), and verified as `verifyCatalog` does; a Promise only,
   * since it fetches. A catalog, or a JWS, that cannot be fetched rejects
   * with FetchError (code `fetch.failed`, with `.report`: verdict
   * `unavailable`). Nested catalogs are not fetched here.
   */
  verifyCatalogUrl(url, opts) {
    return callAsync(async () => {
      const o = options(opts, 'verifyCatalogUrl options', ['requireSigned']);
      const u = str(url, 'url', 8 * 1024);
      const args = { requireSigned: bool(o.requireSigned, 'requireSigned') };
      let got;
      try {
        got = await fetchBounded(u, { max: LIMITS.maxCatalogBytes, accept: 'application/json' });
        // The catalog's detached JWS beside it (draft-narvaneni-agent-uri-03
        // section 10.3); no redirect is followed, so `u` is the final URL.
        // At most 64 KiB, the bound of the library's fetcher for it.
        args.jws = (await fetchBounded(`${u}.jws`, { max: CATALOG_JWS_FETCH_BYTES, accept: 'application/jose' })).body.trim();
      } catch (e) {
        if (got && e instanceof FetchFailed && (e.status === 404 || e.status === 410)) args.jws = undefined;
        else if (e instanceof FetchFailed) {
          // Nothing could be checked: the report `agentsig verify URL
          // --json` gives, verdict `unavailable`, as the Node.js package's.
          const message = `catalog${got ? "'s detached JWS" : ''}: ${e.message}`;
          throw new FetchError(message, 'fetch.failed', report(native.unavailableReport(u, 'fetch.failed', message)));
        }
        else throw e;
      }
      return this.#runChecked('catalog', args, encoder.encode(got.body), undefined);
    });
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
    if (this.#fetching && opts && opts.webBotAuth === true) {
      throw new BadInput(
        "fetchDirectories: this runtime's fetch is asynchronous; use verifyRequestAsync, or give agentKeys",
        'usage',
      );
    }
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
  static #inspect(input, opts, maxAgeSeconds) {
    const o = options(opts, 'inspect options', INSPECT_OPTIONS);
    const text = (k, max) => (o[k] === undefined ? undefined : str(o[k], k, max, true));
    return [{
      kind: text('kind', 64),
      jws: text('jws', LIMITS.maxJwsBytes),
      scheme: text('scheme', 16),
      authorities: strings(o.authorities, 'authorities', 1024),
      maxAgeSeconds,
      noMaxAge: bool(o.noMaxAge, 'noMaxAge'),
      request: text('request', LIMITS.maxInputBytes),
      requireAll: bool(o.requireAll, 'requireAll'),
      allowUnsigned: bool(o.allowUnsigned, 'allowUnsigned'),
    }, body(input, 'input')];
  }
  /** What was signed and how each signature was judged, as `agentsig
   * inspect --json` reports it (docs/inspect.md): the report of the command
   * that judges the input, whatever its verdict, with the analysis in
   * `details.inspection`. `input` is the text or bytes of a raw HTTP
   * message, a descriptor (`jws`: its detached JWS), an A2A card, an AI
   * Catalog, or delegation tokens one a line. */
  inspect(input, opts) {
    return this.#run('inspect', ...Verifier.#inspect(input, opts, this.options.maxAgeSeconds));
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

export {
  Verifier,
  SigningKey,
  canonicalize,
  inspect,
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
};
