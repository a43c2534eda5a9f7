// The runtime's WebCrypto as the signature primitive of a verification
// (W3C Web Cryptography API, `SubtleCrypto.verify`): native Ed25519 and
// ECDSA P-256/P-384 run several times faster than the module's own
// compiled code. Every rule stays in the module (src/keys/oracle.rs): a
// probing pass of the verification records the signature checks it could
// not answer, assuming they verify; they are run here, in parallel. If all
// verify, the pass ran on true answers and its result stands; otherwise the
// verification runs again with the verdicts, which the module matches on
// every byte of key, message and signature. A check WebCrypto cannot make (an algorithm or a
// key it does not support, an error) is answered "not known" and computed
// by the module. RSA and HMAC always run in the module. In Node.js the
// checks are made with `node:crypto` (synchronous; useNodeCrypto).
import * as native from './dist/agentsig_wasm.js';

const subtle = typeof crypto === 'object' && crypto && crypto.subtle ? crypto.subtle : null;

/** Node.js's own `node:crypto` when the Node.js entry (index.js) gives it:
 * its `verify` is synchronous, where Node.js's WebCrypto hands each check
 * to a pool thread and back (most of a check's time on a busy machine). */
let nodeCrypto = null;
/** Make the checks with Node.js's `node:crypto` (the same OpenSSL as its
 * WebCrypto). */
function useNodeCrypto(c) {
  nodeCrypto = c;
}

/** The SubjectPublicKeyInfo (RFC 5280, RFC 8410, RFC 5480) DER prefix of
 * each algorithm's raw public key, for `node:crypto`. */
const SPKI = {
  1: '3059301306072a8648ce3d020106082a8648ce3d030107034200',
  2: '3076301006072a8648ce3d020106052b81040022036200',
  3: '302a300506032b6570032100',
};
const NODE_HASH = { 1: 'sha256', 2: 'sha384', 3: null };

/** Probing passes before a final pass that computes what is left. */
const MAX_PROBES = 4;
/** Imported public keys kept per verifier. */
const MAX_KEYS = 256;

const PARAMS = {
  1: { name: 'ES256', imp: { name: 'ECDSA', namedCurve: 'P-256' }, ver: { name: 'ECDSA', hash: 'SHA-256' } },
  2: { name: 'ES384', imp: { name: 'ECDSA', namedCurve: 'P-384' }, ver: { name: 'ECDSA', hash: 'SHA-384' } },
  3: { name: 'EdDSA', imp: { name: 'Ed25519' }, ver: { name: 'Ed25519' } },
};

/** The algorithms this runtime's WebCrypto verifies (probed once: a
 * runtime without Ed25519 keeps it in the module). */
const supported = (async () => {
  if (!subtle) return '';
  const probes = {
    ES256: () => subtle.generateKey(PARAMS[1].imp, false, ['sign', 'verify']),
    ES384: () => subtle.generateKey(PARAMS[2].imp, false, ['sign', 'verify']),
    EdDSA: () => subtle.importKey('raw', new Uint8Array(32).fill(1), PARAMS[3].imp, false, ['verify']),
  };
  const ok = [];
  for (const [alg, f] of Object.entries(probes)) {
    try {
      await f();
      ok.push(alg);
    } catch {
      // not in this runtime: the module computes it
    }
  }
  return ok.join(',');
})();

/** Oracles free for the next verification (their answers reset). */
const oracles = [];
/** Oracles kept for reuse. */
const MAX_ORACLES = 8;

/** `supported`, once settled. */
let supportedNow = null;

/** A key's bytes as a string, the key of its cache entry (one call: a
 * string built a character at a time cost twice as much, in every check). */
function keyId(code, b) {
  return String.fromCharCode.apply(null, [code, ...b]);
}

/** The key most recently taken from a verifier's cache (`keys`), with its
 * code and bytes: a verifier checking one agent's key call after call finds
 * it by comparing 32 to 97 bytes, without making the cache's string id of
 * them (a new array and string per check). Only a key already imported (a
 * CryptoKey or KeyObject, never a Promise of one) is kept here. */
let last = { keys: null, code: 0, raw: null, key: null };

/** `last`'s key when it is the one of `code` and `raw` in `keys`. */
function lastKey(keys, code, raw) {
  const l = last;
  if (l.keys !== keys || l.code !== code || l.raw.length !== raw.length) return undefined;
  for (let i = 0; i < raw.length; i++) if (l.raw[i] !== raw[i]) return undefined;
  return l.key;
}

/** Keep `key` (imported, of `code` and `raw`, in `keys`) as `last`; `raw`
 * is copied (it may be a view of the module's memory). */
function keepLast(keys, code, raw, key) {
  if (key && typeof key.then !== 'function') last = { keys, code, raw: raw.slice(), key };
}

/** A Uint8Array over the module's memory, made again when the memory has
 * grown (the old buffer is then detached, of length 0). */
let mem = null;
function memoryBytes() {
  if (mem === null || mem.byteLength === 0) mem = new Uint8Array(native.moduleMemory().buffer);
  return mem;
}

/** The pending checks `NativeOracle.pendingAt` wrote at `p`, read in place:
 * their key, message and signature are views of the module's memory, valid
 * until the next call into the module. WebCrypto copies the bytes it is
 * given when it is called (W3C Web Cryptography API: verify() steps 2 and
 * 3, "getting a copy of the bytes held by" each parameter; importKey()
 * alike); a check that waits for its key's import takes copies. */
function decode(p) {
  const m = memoryBytes();
  const u32 = (i) => (m[i] | (m[i + 1] << 8) | (m[i + 2] << 16) | (m[i + 3] << 24)) >>> 0;
  const end = p + 4 + u32(p);
  const out = [];
  let at = p + 4;
  const part = () => {
    const n = u32(at);
    at += 4;
    const b = m.subarray(at, at + n);
    at += n;
    return b;
  };
  while (at < end) {
    const code = m[at++];
    out.push({ code, key: part(), msg: part(), sig: part() });
  }
  return out;
}

/** The CryptoKey of a public key, imported once per verifier (`keys`):
 * the key itself once imported, a Promise of it (null when this runtime
 * cannot import it) before. */
function importKey(keys, code, raw) {
  const hit = lastKey(keys, code, raw);
  if (hit !== undefined) return hit;
  const id = keyId(code, raw);
  let k = keys.get(id);
  keepLast(keys, code, raw, k);
  if (k === undefined) {
    if (keys.size >= MAX_KEYS) keys.clear();
    k = subtle.importKey('raw', raw, PARAMS[code].imp, false, ['verify']).then(
      (key) => {
        if (keys.get(id) === k) keys.set(id, key);
        return key;
      },
      () => null,
    );
    keys.set(id, k);
  }
  return k;
}

/** A Promise of the verdict byte of one check made with WebCrypto with
 * the CryptoKey `k`. */
function subtleCheck(k, q) {
  try {
    return subtle.verify(PARAMS[q.code].ver, k, q.sig, q.msg).then(
      (ok) => (ok ? 1 : 0),
      () => 2,
    );
  } catch {
    return Promise.resolve(2);
  }
}

/** A Promise of the verdict byte of one check made with WebCrypto: an
 * imported key is used as it is (no await before the verification). */
function subtleVerdict(keys, q) {
  let k;
  try {
    k = importKey(keys, q.code, q.key);
  } catch {
    return Promise.resolve(2);
  }
  if (k === null) return Promise.resolve(2);
  if (typeof k.then === 'function') {
    // Checked once the key is imported, after other calls into the module:
    // with copies of the bytes, not views of its memory.
    const c = { code: q.code, msg: q.msg.slice(), sig: q.sig.slice() };
    return k.then((key) => (key ? subtleCheck(key, c) : 2));
  }
  return subtleCheck(k, q);
}

/** The `node:crypto` KeyObject of a public key, made once per verifier. */
function nodeKey(keys, code, raw) {
  const hit = lastKey(keys, code + 16, raw);
  if (hit !== undefined) return hit;
  const id = keyId(code + 16, raw);
  let k = keys.get(id);
  keepLast(keys, code + 16, raw, k);
  if (k === undefined) {
    if (keys.size >= MAX_KEYS) keys.clear();
    const der = new Uint8Array(SPKI[code].length / 2 + raw.length);
    for (let i = 0; i < SPKI[code].length; i += 2) der[i / 2] = parseInt(SPKI[code].slice(i, i + 2), 16);
    der.set(raw, SPKI[code].length / 2);
    try {
      k = nodeCrypto.createPublicKey({ key: der, format: 'der', type: 'spki' });
    } catch {
      k = null;
    }
    keys.set(id, k);
  }
  return k;
}

/** The verdict byte of one check made with `node:crypto`. */
function nodeVerdict(keys, q) {
  try {
    const k = nodeKey(keys, q.code, q.key);
    if (!k) return 2;
    const key = q.code === 3 ? k : { key: k, dsaEncoding: 'ieee-p1363' };
    return nodeCrypto.verify(NODE_HASH[q.code], q.msg, key, q.sig) ? 1 : 0;
  } catch {
    return 2;
  }
}

/** Verdict bytes for the pending checks written at `p`: 1 verified, 0
 * not, 2 not known; with `node:crypto` at once, with WebCrypto a Promise
 * of `then(verdicts)`: the continuation runs in the reaction to the
 * verification itself, not in a reaction of its own chained after it (each
 * reaction is a turn of the microtask queue). `then` handles its own
 * errors; what it returns or throws settles the Promise, whose rejection
 * before it (none is expected) goes to `caught`. */
function answer(p, keys, then, caught) {
  const qs = decode(p);
  if (nodeCrypto) {
    // A plain loop: Uint8Array.from with a mapping function walks the
    // checks through the iterator protocol, measurably slower per call.
    const out = new Uint8Array(qs.length);
    for (let i = 0; i < qs.length; i++) out[i] = nodeVerdict(keys, qs[i]);
    return out;
  }
  // One check (a request's one signature): no Promise.all around it, and
  // with its key imported, the verification's own Promise and one reaction.
  if (qs.length === 1) {
    const q = qs[0];
    let k;
    try {
      k = importKey(keys, q.code, q.key);
    } catch {
      k = null;
    }
    if (k && typeof k.then !== 'function') {
      let verified;
      try {
        verified = subtle.verify(PARAMS[q.code].ver, k, q.sig, q.msg);
      } catch {
        return Uint8Array.of(2);
      }
      return verified.then(
        (ok) => then(Uint8Array.of(ok ? 1 : 0)),
        () => then(Uint8Array.of(2)),
      );
    }
    return subtleVerdict(keys, q).then((v) => then(Uint8Array.of(v)), caught);
  }
  return Promise.all(qs.map((q) => subtleVerdict(keys, q))).then((v) => then(Uint8Array.from(v)), caught);
}

const allVerified = (verdicts) => verdicts.every((v) => v === 1);

/** Give an oracle back to the pool, its answers forgotten. */
function release(o) {
  let reusable = false;
  try {
    o.reset();
    reusable = oracles.length < MAX_ORACLES;
  } catch {
    // not reusable
  }
  if (reusable) oracles.push(o);
  else o.free();
}

/**
 * Run `pass(oracle, probe)` (one synchronous call of the module:
 * `NativeVerifier.runWith` or `request`, or without an oracle when
 * `oracle` is null) with WebCrypto answering the signature checks. `keys`
 * caches the verifier's imported keys; `replay`: the verifier has a replay
 * store (the final pass is then always a pass of its own, the only one that
 * records a nonce). Returns `finish` of what the final pass returned, or a
 * Promise of it when a check is WebCrypto's; what is thrown goes through
 * `fail` (both applied here, so that no Promise is chained for them: each
 * reaction costs a turn of the microtask queue, which a runtime such as
 * workerd makes dear).
 */
function withWebCrypto(pass, keys, replay, finish = (r) => r, fail = (e) => e) {
  if (supportedNow === null) {
    return supported.then((algs) => {
      supportedNow = algs;
      return withWebCrypto(pass, keys, replay, finish, fail);
    });
  }
  if (!supportedNow) {
    try {
      return finish(pass(null, false));
    } catch (e) {
      throw fail(e);
    }
  }
  // An oracle of the pool, given back once (reset) when the verification
  // is decided: its answers never reach another verification; one in use
  // is never shared (each Promise form in flight holds its own).
  const o = oracles.pop() ?? new native.NativeOracle(supportedNow);
  let held = true;
  const done = () => {
    if (held) {
      held = false;
      release(o);
    }
  };
  const caught = (e) => {
    done();
    throw fail(e);
  };
  const step = (from) => {
    try {
      for (let round = from; ; round++) {
        const probe = round < MAX_PROBES && !(replay && round > 0);
        const result = pass(o, probe);
        const deferred = o.deferredReplay();
        const pending = o.pendingCount();
        if (!probe || (pending === 0 && !deferred)) {
          done();
          return finish(result);
        }
        if (pending > 0) {
          const next = round + 1;
          const verdicts = answer(o.pendingAt(), keys, (v) => {
            try {
              // Every assumption held: the pass ran on the true answers
              // (the oracle, reset when given back, needs none of them).
              if (!deferred && allVerified(v)) {
                done();
                return finish(result);
              }
              o.answer(v);
            } catch (e) {
              done();
              throw fail(e);
            }
            return step(next);
          }, caught);
          if (!(verdicts instanceof Uint8Array)) return verdicts;
          if (!deferred && allVerified(verdicts)) {
            done();
            return finish(result);
          }
          o.answer(verdicts);
        }
      }
    } catch (e) {
      done();
      throw fail(e);
    }
  };
  return step(0);
}

export { withWebCrypto, useNodeCrypto };
