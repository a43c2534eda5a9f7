// The WebAssembly package in Node.js's own WebAssembly: the corpus (CLI-,
// jose-, A2A-SDK- and web-bot-auth-signed inputs, tampered ones, bad input)
// gives the CLI's `--json` reports and typed errors, and the signing calls
// round-trip. The corpus is made by make-corpus.mjs (AGENTSIG_WASM_CORPUS
// names a made one).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as a from '../index.js';
import { runCorpus } from './corpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusPath = process.env.AGENTSIG_WASM_CORPUS || path.join(here, 'corpus.generated.json');
if (!process.env.AGENTSIG_WASM_CORPUS) execFileSync(process.execPath, [path.join(here, 'make-corpus.mjs'), corpusPath], { stdio: 'inherit' });
const corpus = JSON.parse(fs.readFileSync(corpusPath, 'utf8'));

test('the corpus gives the CLI reports and typed errors', async () => {
  const results = await runCorpus(a, corpus);
  assert.ok(results.length >= 20, `${results.length} cases`);
  const failed = results.filter((r) => !r.ok);
  assert.deepEqual(failed, []);
});

test('a key made here signs what a verifier here verifies; a change does not verify', () => {
  for (const alg of ['ES256', 'EdDSA', 'ES384']) {
    const key = a.SigningKey.generate(alg);
    const v = new a.Verifier({ keys: [key] });
    const doc = { name: 'planner', url: 'https://planner.example/' };
    const jws = a.signDescriptor(doc, key);
    assert.equal(v.verifyDescriptor(doc, jws).verdict, 'verified');
    assert.throws(() => v.verifyDescriptor({ ...doc, url: 'https://evil.example/' }, jws), a.NotVerified);
  }
});

/** A GET signed under Web Bot Auth by a new Ed25519 key for its agent,
 * with a verifier holding that agent's key (`extra`: its other options). */
function signedAgentRequest(extra = {}) {
  const key = a.SigningKey.generate('EdDSA');
  const agent = 'https://bot.example';
  const url = 'https://site.example/page';
  const opts = { webBotAuth: true, authorities: ['site.example'] };
  const h = a.signRequest('GET', url, [], undefined, key, { signatureAgent: agent });
  const v = new a.Verifier({ agentKeys: { [agent]: [key] }, ...extra });
  return { key, agent, url, opts, h, v };
}

test('Web Bot Auth: signed here, verified here with the agent keys; a replay is refused with a replay store', () => {
  const { url, opts, h, v } = signedAgentRequest({ replayStore: 'memory' });
  const r = v.verifyRequest('GET', url, h, undefined, opts);
  assert.equal(r.verdict, 'verified');
  assert.throws(() => v.verifyRequest('GET', url, h, undefined, opts), a.PolicyRefused);
});

test('the Promise form gives the sync form verdict for every algorithm, the runtime crypto checking or not', async () => {
  for (const alg of ['ES256', 'ES384', 'EdDSA', 'PS512', 'RS256']) {
    const key = a.SigningKey.generate(alg);
    const v = new a.Verifier({ keys: [key] });
    const doc = { name: 'planner', alg };
    const jws = a.signDescriptor(doc, key);
    assert.deepEqual(await v.verifyDescriptorAsync(doc, jws), v.verifyDescriptor(doc, jws));
    const other = { ...doc, name: 'evil' };
    const sync = (() => { try { v.verifyDescriptor(other, jws); } catch (e) { return e; } })();
    await assert.rejects(v.verifyDescriptorAsync(other, jws), (e) => e instanceof a.NotVerified && e.code === sync.code);
  }
});

test('JCS: the RFC 8785 form, and a wrong type is a TypeError, not a trap', () => {
  assert.equal(new TextDecoder().decode(a.canonicalize({ b: 1, a: [1e21, 'x'] })), '{"a":[1e+21,"x"],"b":1}');
  assert.throws(() => a.canonicalize(new Uint8Array([0x7b])), a.BadInput);
  assert.throws(() => a.signDescriptor({}, 'not a key'), TypeError);
  assert.throws(() => new a.Verifier({ replayStore: '/tmp/x' , keys: [] }), a.AgentsigError);
});

test('the Promise forms make each signature check once with the runtime crypto; a replay store records the nonce once', async () => {
  // In Node.js the checks go to node:crypto's verify (index.js).
  const nodeCrypto = (await import('node:crypto')).default;
  const real = nodeCrypto.verify;
  let calls = 0;
  nodeCrypto.verify = function (...args) {
    calls++;
    return real.apply(this, args);
  };
  try {
    const { key, agent, url, opts, h, v } = signedAgentRequest();
    const ok = await v.verifyRequestAsync('GET', url, h, undefined, opts);
    assert.equal(ok.verdict, 'verified');
    assert.equal(calls, 1);
    // The covered components of the valid signature, as its Signature-Input lists them.
    const input = h.find(([n]) => n.toLowerCase() === 'signature-input')[1];
    const listed = input.slice(input.indexOf('(') + 1, input.indexOf(')')).split(' ').map((c) => c.replace(/^"([^"]*)"/, '$1'));
    assert.deepEqual(ok.signatures[0].covered, listed);
    assert.deepEqual(v.verifyRequest('GET', url, h, undefined, opts).signatures[0].covered, listed);
    // A changed signature: WebCrypto says no, the module reports it as the sync form does.
    const bad = h.map(([n, val]) => [n, n.toLowerCase() === 'signature' ? val.replace(/:[A-Za-z0-9+/]{4}/, ':AAAA') : val]);
    const want = (() => { try { v.verifyRequest('GET', url, bad, undefined, opts); } catch (e) { return e; } })();
    await assert.rejects(v.verifyRequestAsync('GET', url, bad, undefined, opts), (e) => e instanceof a.NotVerified && e.code === want.code);
    assert.equal(calls, 2);
    // With a replay store the nonce is recorded by the final pass only.
    const r = new a.Verifier({ agentKeys: { [agent]: [key] }, replayStore: 'memory' });
    assert.equal((await r.verifyRequestAsync('GET', url, h, undefined, opts)).verdict, 'verified');
    await assert.rejects(r.verifyRequestAsync('GET', url, h, undefined, opts), a.PolicyRefused);
    // ES256 descriptors too.
    const ek = a.SigningKey.generate('ES256');
    const doc = { name: 'planner' };
    const ev = new a.Verifier({ keys: [ek] });
    calls = 0;
    assert.equal((await ev.verifyDescriptorAsync(doc, a.signDescriptor(doc, ek))).verdict, 'verified');
    assert.equal(calls, 1);
  } finally {
    nodeCrypto.verify = real;
  }
});

test('with WebCrypto, a request\'s one check settles the Promise form in the reaction to its verify, in no more turns than an async function awaiting it', async () => {
  // In Node.js the checks go to node:crypto (index.js); here WebCrypto's
  // path, as in workerd and browsers, with a verify whose Promise is already
  // settled: the microtask turns from the verify's call to the caller's
  // await are counted (each turn is a reaction of the queue).
  const wc = await import('../webcrypto.js');
  const nodeCrypto = (await import('node:crypto')).default;
  const subtle = globalThis.crypto.subtle;
  const { url, opts, h, v } = signedAgentRequest();
  wc.useNodeCrypto(null);
  try {
    // The key imported once, with the runtime's own verify.
    assert.equal((await v.verifyRequestAsync('GET', url, h, undefined, opts)).verdict, 'verified');
    let turns = 0;
    let settled = false;
    const tick = () => {
      if (!settled && turns < 100) {
        turns++;
        queueMicrotask(tick);
      }
    };
    const counted = async (f) => {
      turns = 0;
      settled = false;
      const got = await f();
      settled = true;
      return [got, turns];
    };
    const real = subtle.verify;
    let calls = 0;
    // The signature is valid (the call above): the verify answers so at once.
    subtle.verify = () => {
      calls++;
      queueMicrotask(tick);
      return Promise.resolve(true);
    };
    try {
      const [report, ours] = await counted(() => v.verifyRequestAsync('GET', url, h, undefined, opts));
      assert.equal(report.verdict, 'verified');
      assert.equal(calls, 1);
      const [ok, floor] = await counted(async () => await subtle.verify({ name: 'Ed25519' }, null, null, null));
      assert.equal(ok, true);
      assert.ok(ours <= floor, `${ours} turns, an async function ${floor}`);
    } finally {
      subtle.verify = real;
    }
  } finally {
    wc.useNodeCrypto(nodeCrypto);
  }
});

test('a request report read from the module\'s tape equals its --json text, member order included, and is frozen throughout', async () => {
  const native = await import('../dist/agentsig_wasm.js');
  const key = a.SigningKey.generate('EdDSA');
  const agent = 'https://bot.example';
  const jwk = JSON.stringify(key.publicJwk());
  const v = new a.Verifier({ keys: [key], agentKeys: { [agent]: [key] } });
  const nv = new native.NativeVerifier(JSON.stringify({ keys: [jwk], agentKeys: { [agent]: { keys: [jwk] } } }));
  const frozen = (x) => x === null || typeof x !== 'object' || (Object.isFrozen(x) && Object.values(x).every(frozen));
  const cases = [
    ['https://site.example/page', { signatureAgent: agent }, { webBotAuth: true, authorities: ['site.example'] }],
    ['https://site.example/p?q=1', {}, {}],
  ];
  for (const [url, signOpts, opts] of cases) {
    const h = a.signRequest('GET', url, [], undefined, key, signOpts);
    const flat = h.flat();
    const want = JSON.parse(nv.run('request', JSON.stringify({ method: 'GET', url, headers: flat, ...opts }), undefined, undefined));
    for (const got of [v.verifyRequest('GET', url, h, undefined, opts), await v.verifyRequestAsync('GET', url, h, undefined, opts)]) {
      assert.equal(JSON.stringify(got), JSON.stringify(want), url);
      assert.ok(frozen(got), url);
    }
  }
  nv.free();
});

test('an AI Catalog signed by the CLI: the Promise forms and the URL form give the sync report, and a changed manifest is refused alike', async () => {
  const repo = path.resolve(here, '../..');
  const bin = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')]
    .find((p) => p && fs.existsSync(p));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-wasm-catalog-'));
  const real = globalThis.fetch;
  try {
    const cli = (...args) => execFileSync(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    cli('keygen', '--out', 'k');
    const entry = (identifier) => ({ identifier, displayName: 'X', version: '1', mediaType: 'application/zip', data: { id: identifier } });
    fs.writeFileSync(path.join(dir, 'cat.json'), JSON.stringify({ specVersion: '1.0', entries: [entry('urn:a'), entry('urn:b')] }));
    cli('sign', 'cat.json', '--key', 'k.pem', '--entry', 'urn:a');
    cli('sign', 'cat.json', '--key', 'k.pem', '--entry', 'urn:b');
    const v = new a.Verifier({ jwks: fs.readFileSync(path.join(dir, 'k.jwks.json')) });
    const text = fs.readFileSync(path.join(dir, 'cat.json'));
    const sync = v.verifyCatalog(text);
    assert.equal(sync.verdict, 'verified');
    assert.deepEqual(await v.verifyCatalogAsync(text), sync);
    // The catalog's detached JWS is a string (the corpus checks its verdicts).
    assert.throws(() => v.verifyCatalog(text, { jws: 7 }), TypeError);
    // Served with no detached JWS beside it (404 at URL.jws: none).
    const serve = (routes) => {
      globalThis.fetch = async (u) => (routes[String(u)] === undefined
        ? new Response('not here', { status: 404 })
        : new Response(routes[String(u)], { status: 200, headers: { 'content-type': 'application/json' } }));
    };
    const url = 'https://catalog.example/ai-catalog.json';
    serve({ [url]: text });
    assert.deepEqual(await v.verifyCatalogUrl(url), sync);
    // A catalog whose inline entry only its detached JWS binds (`sign
    // --host` writes FILE.jws): by URL, URL.jws is fetched beside it and
    // gives the report of the document with `jws`; a JWS that cannot be
    // fetched (another status than 404 or 410) rejects.
    fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ specVersion: '1.0', host: { displayName: 'H', identifier: 'urn:example:host' }, entries: [entry('urn:a')] }));
    cli('sign', 'host.json', '--host', '--key', 'k.pem');
    const host = fs.readFileSync(path.join(dir, 'host.json'));
    const jws = fs.readFileSync(path.join(dir, 'host.json.jws'), 'utf8');
    const bound = v.verifyCatalog(host, { jws });
    assert.equal(bound.verdict, 'verified');
    assert.equal(bound.details.entries[0].binding, 'catalog-signature');
    serve({ [url]: host, [`${url}.jws`]: jws });
    assert.deepEqual(await v.verifyCatalogUrl(url), bound);
    serve({ [url]: host });
    await assert.rejects(v.verifyCatalogUrl(url), (e) => e instanceof a.NotVerified && e.code === 'catalog.unsigned');
    globalThis.fetch = async (u) => new Response(String(u) === url ? host : 'busy', { status: String(u) === url ? 200 : 503 });
    // Nothing could be checked: the report `agentsig verify URL --json`
    // gives (verdict `unavailable`), as the Node.js package's error carries.
    const unavailable = (e) => {
      assert.ok(e instanceof a.FetchError && e instanceof a.NotVerified);
      assert.equal(e.code, 'fetch.failed');
      assert.equal(e.report.verdict, 'unavailable');
      assert.equal(e.report.verified, false);
      assert.equal(e.report.command, 'verify');
      assert.equal(e.report.subject, url);
      assert.equal(e.report.error.code, 'fetch.failed');
      assert.equal(e.report.error.message, e.message);
      assert.ok(Object.isFrozen(e.report) && Object.isFrozen(e.report.error));
      return true;
    };
    await assert.rejects(v.verifyCatalogUrl(url), unavailable);
    // The catalog itself unavailable.
    globalThis.fetch = async () => new Response('busy', { status: 503 });
    await assert.rejects(v.verifyCatalogUrl(url), unavailable);
    // A changed entry: its manifest no longer vouches for it.
    const changed = JSON.parse(text);
    changed.entries[1].data.id = 'urn:evil';
    const want = (() => { try { v.verifyCatalog(changed); } catch (e) { return e; } })();
    assert.ok(want instanceof a.NotVerified);
    await assert.rejects(v.verifyCatalogAsync(changed), (e) => e instanceof a.NotVerified && e.code === want.code && JSON.stringify(e.report) === JSON.stringify(want.report));
  } finally {
    globalThis.fetch = real;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
