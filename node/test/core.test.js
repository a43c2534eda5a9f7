// The core calls: signing and verifying round trips, the report shape, the
// typed errors, the frozen options and reports, the Promise variants.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const a = require('..');

const key = a.SigningKey.generate('ES256');
const other = a.SigningKey.generate('EdDSA');
const doc = { name: 'planner', url: 'https://planner.example/' };
const verifier = new a.Verifier({ jwks: { keys: [key.publicJwk()] } });

function frozenDeep(v) {
  if (v === null || typeof v !== 'object') return true;
  return Object.isFrozen(v) && Object.values(v).every(frozenDeep);
}

test('a descriptor signed and verified gives the CLI report, deep-frozen', () => {
  const jws = a.signDescriptor(doc, key);
  assert.match(jws, /^[\w-]+\.\.[\w-]+$/);
  const r = verifier.verifyDescriptor(doc, jws);
  assert.equal(r.schema, 'agentsig.report/1');
  assert.equal(r.verdict, 'verified');
  assert.equal(r.signatures[0].key.thumbprint, key.thumbprint);
  assert.ok(frozenDeep(r));
  // JSON text as bytes verifies the same document.
  assert.equal(verifier.verifyDescriptor(Buffer.from(JSON.stringify(doc)), jws).verdict, 'verified');
  assert.equal(verifier.verifyDescriptor(new TextEncoder().encode(JSON.stringify(doc)), jws).verdict, 'verified');
});

test('a tampered descriptor throws NotVerified with its code and report', () => {
  const jws = a.signDescriptor(doc, key);
  assert.throws(() => verifier.verifyDescriptor({ ...doc, name: 'p1anner' }, jws), (e) => {
    assert.ok(e instanceof a.NotVerified && e instanceof a.AgentsigError);
    assert.equal(e.name, 'NotVerified');
    assert.equal(e.code, 'signature-mismatch');
    assert.equal(e.report.verdict, 'not-verified');
    assert.ok(frozenDeep(e.report));
    return true;
  });
});

test('a key the verifier does not trust does not verify', () => {
  const jws = a.signDescriptor(doc, other);
  assert.throws(() => verifier.verifyDescriptor(doc, jws), a.NotVerified);
});

test('PolicyRefused is a NotVerified: an algorithm outside the allow-list', () => {
  const only = new a.Verifier({ keys: [key, other], algorithms: ['ES256'] });
  const jws = a.signDescriptor(doc, other);
  assert.throws(() => only.verifyDescriptor(doc, jws), (e) => e instanceof a.PolicyRefused && e instanceof a.NotVerified);
});

test('options are frozen, with the secure defaults filled in; unknown options are TypeErrors', () => {
  assert.ok(Object.isFrozen(verifier.options));
  assert.deepEqual([...verifier.options.algorithms], ['ES256', 'ES384', 'EdDSA', 'PS512', 'RS256']);
  assert.equal(verifier.options.strictLowS, false);
  assert.ok(Object.isFrozen(verifier));
  assert.throws(() => new a.Verifier({ jwks: { keys: [key.publicJwk()] }, maxage: '5m' }), TypeError);
  assert.throws(() => new a.Verifier({}), (e) => e instanceof a.BadInput && e.code === 'usage');
  // A duration is a string with its unit, or a number named ...Seconds.
  assert.equal(new a.Verifier({ keys: [key], maxAge: '5m' }).options.maxAgeSeconds, 300);
  assert.equal(new a.Verifier({ keys: [key], maxAgeSeconds: 60 }).options.maxAgeSeconds, 60);
  assert.throws(() => new a.Verifier({ keys: [key], maxAge: 300 }), TypeError);
  assert.throws(() => new a.Verifier({ keys: [key], maxAge: '5 minutes' }), a.BadInput);
});

test('signed requests verify, plain and origin-form with the site authorities', () => {
  const url = 'https://api.example/orders?id=7';
  const h = a.signRequest('POST', url, [['Content-Type', 'application/json']], '{"n":1}', key);
  const names = h.map(([n]) => n);
  assert.deepEqual(names, ['Content-Type', 'Content-Digest', 'Signature-Input', 'Signature']);
  assert.equal(verifier.verifyRequest('POST', url, h, '{"n":1}').verdict, 'verified');
  const origin = [...h, ['Host', 'api.example']];
  const r = verifier.verifyRequest('POST', '/orders?id=7', origin, '{"n":1}', { scheme: 'https', authorities: ['api.example'] });
  assert.equal(r.verdict, 'verified');
  // Another site's authority: refused (RFC 9421 section 7.2.1).
  assert.throws(
    () => verifier.verifyRequest('POST', '/orders?id=7', origin, '{"n":1}', { scheme: 'https', authorities: ['shop.example'] }),
    (e) => e instanceof a.NotVerified && /authority/.test(e.code),
  );
  // A changed body fails its Content-Digest.
  assert.throws(() => verifier.verifyRequest('POST', url, h, '{"n":2}'), a.NotVerified);
  // Node's rawHeaders form is the same headers.
  assert.equal(verifier.verifyRequest('POST', url, h.flat(), '{"n":1}').verdict, 'verified');
});

test('Web Bot Auth: signRequest uses the profile when a signatureAgent is given', () => {
  const agent = 'https://bot.example';
  const wbaKey = a.SigningKey.generate('EdDSA');
  const h = a.signRequest('GET', 'https://site.example/page', [], undefined, wbaKey, { signatureAgent: agent });
  const input = h.find(([n]) => n === 'Signature-Input')[1];
  assert.match(input, /tag="web-bot-auth"/);
  assert.match(input, new RegExp(`keyid="${wbaKey.thumbprint}"`));
  const v = new a.Verifier({ agentKeys: { [agent]: [wbaKey] } });
  assert.equal(v.webBotAuthKeys, true);
  const r = v.verifyRequest('GET', 'https://site.example/page', h, undefined, { webBotAuth: true, authorities: ['site.example'] });
  assert.equal(r.verdict, 'verified');
  assert.ok(r.signatures[0].covered.includes('@authority'));
  assert.throws(
    () => v.verifyRequest('GET', 'https://site.example/page', h, undefined, { webBotAuth: true, authorities: ['other.example'] }),
    a.NotVerified,
  );
  // Keys given for another agent do not verify this one.
  const w = new a.Verifier({ agentKeys: { 'https://other-bot.example': [wbaKey] } });
  assert.throws(() => w.verifyRequest('GET', 'https://site.example/page', h, undefined, { webBotAuth: true }), a.NotVerified);
  // Without Web Bot Auth keys, asking for the profile is a usage error.
  assert.throws(() => verifier.verifyRequest('GET', 'https://site.example/page', h, undefined, { webBotAuth: true }), a.BadInput);
});

test('an expired request signature is PolicyRefused', () => {
  const url = 'https://api.example/x';
  const h = a.signRequest('GET', url, [], undefined, key, { createdSeconds: 1_000_000, expiresIn: '5m' });
  const v = new a.Verifier({ keys: [key], nowSeconds: 1_000_000 + 3600 });
  assert.throws(() => v.verifyRequest('GET', url, h), (e) => e instanceof a.PolicyRefused && e.code === 'expired');
  const at = new a.Verifier({ keys: [key], now: new Date(1_000_010 * 1000) });
  assert.equal(at.verifyRequest('GET', url, h).verdict, 'verified');
});

test('strict: a request signature without a nonce is PolicyRefused', () => {
  const url = 'https://api.example/x';
  const v = new a.Verifier({ keys: [key], replayStore: 'memory' });
  assert.equal(v.hasReplayStore, true);
  const h = a.signRequest('GET', url, [], undefined, key, { components: ['@method', '@authority', '@path'] });
  // No nonce: strict refuses it.
  assert.throws(() => v.verifyRequest('GET', url, h, undefined, { strict: true }), a.PolicyRefused);
});

test('signed responses verify; a changed status does not', () => {
  const body = Buffer.from('{"ok":true}');
  const h = a.signResponse(200, [['Content-Type', 'application/json']], body, key);
  assert.equal(verifier.verifyResponse(200, h, body).verdict, 'verified');
  assert.throws(() => verifier.verifyResponse(201, h, body), a.NotVerified);
});

test('A2A cards: signCard then verifyCard; a changed card does not verify', () => {
  const card = { name: 'Planner', description: 'plans', url: 'https://planner.example/a2a', version: '1.0.0',
    capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] };
  const signed = a.signCard(card, key);
  assert.equal(signed.signatures.length, 1);
  assert.equal(verifier.verifyCard(signed).verdict, 'verified');
  assert.throws(() => verifier.verifyCard({ ...signed, name: 'Evil' }), a.NotVerified);
});

test('canonicalize: RFC 8785 from a value or from JSON bytes', () => {
  assert.equal(a.canonicalize({ b: 1, a: [1e21, 'é', 0.1] }).toString(), '{"a":[1e+21,"é",0.1],"b":1}');
  assert.equal(a.canonicalize(Buffer.from('{"b": 2, "a": 1}')).toString(), '{"a":1,"b":2}');
  assert.equal(a.canonicalize('text').toString(), '"text"');
});

test('the Promise variants give the same results and the same typed errors', async () => {
  const jws = await a.signDescriptorAsync(doc, key);
  assert.equal((await verifier.verifyDescriptorAsync(doc, jws)).verdict, 'verified');
  await assert.rejects(verifier.verifyDescriptorAsync({ ...doc, x: 1 }, jws), a.NotVerified);
  await assert.rejects(verifier.verifyDescriptorAsync(doc, 'not a jws'), a.BadInput);
  // A wrong type rejects the Promise (no synchronous throw).
  const p = verifier.verifyDescriptorAsync(doc, 42);
  await assert.rejects(p, TypeError);
  const h = await a.signRequestAsync('GET', 'https://api.example/', [], undefined, key);
  assert.equal((await verifier.verifyRequestAsync('GET', 'https://api.example/', h)).verdict, 'verified');
  const rh = await a.signResponseAsync(204, [], undefined, key);
  assert.equal((await verifier.verifyResponseAsync(204, rh)).verdict, 'verified');
  // Many at once on the libuv pool: every one settles.
  const all = await Promise.all(Array.from({ length: 32 }, () => verifier.verifyDescriptorAsync(doc, jws)));
  assert.equal(all.filter((r) => r.verified).length, 32);
});

test('SigningKey: fromPem, kid, privatePem round trip; not constructible directly', () => {
  const pem = key.privatePem();
  assert.match(pem, /BEGIN PRIVATE KEY/);
  const again = a.SigningKey.fromPem(pem, { kid: 'k1' });
  assert.equal(again.kid, 'k1');
  assert.equal(again.thumbprint, key.thumbprint);
  assert.equal(again.publicJwk().kid, 'k1');
  assert.equal(again.algorithm, 'ES256');
  assert.throws(() => new a.SigningKey(), TypeError);
  assert.throws(() => a.SigningKey.generate('HS256').publicJwk(), a.BadKey);
});

test('withReplayStore: a Web Bot Auth nonce is accepted once; the original verifier is unchanged', () => {
  const agent = 'https://bot.example';
  const k = a.SigningKey.generate('EdDSA');
  const base = new a.Verifier({ agentKeys: { [agent]: [k] } });
  const once = base.withReplayStore('memory');
  assert.equal(base.hasReplayStore, false);
  assert.equal(once.hasReplayStore, true);
  assert.equal(once.options.replayStore, 'memory');
  assert.ok(Object.isFrozen(once.options));
  const h = a.signRequest('GET', 'https://site.example/', [], undefined, k, { signatureAgent: agent });
  assert.equal(once.verifyRequest('GET', 'https://site.example/', h, undefined, { webBotAuth: true }).verdict, 'verified');
  assert.throws(() => once.verifyRequest('GET', 'https://site.example/', h, undefined, { webBotAuth: true }),
    (e) => e instanceof a.PolicyRefused && e.code === 'replay');
  // Without a store, the same request verifies again.
  base.verifyRequest('GET', 'https://site.example/', h, undefined, { webBotAuth: true });
  assert.equal(base.verifyRequest('GET', 'https://site.example/', h, undefined, { webBotAuth: true }).verdict, 'verified');
});
