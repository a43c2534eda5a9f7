// A key loaded from a file signs with the kid `agentsig keygen --kid` wrote
// beside it, as the command line does; a signature naming its key by
// thumbprint is refused with the published kid named.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const a = require('..');

const doc = { name: 'planner', url: 'https://planner.example/' };

function publish(kid) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-kid-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const key = a.SigningKey.generate('ES256');
  fs.writeFileSync(path.join(dir, 'pub.pem'), key.privatePem());
  const jwks = { keys: [{ ...key.publicJwk(), kid }] };
  fs.writeFileSync(path.join(dir, 'pub.jwks.json'), JSON.stringify(jwks));
  return { dir, key, jwks };
}

test('fromFile reads the kid written beside the PEM; fromPem takes the JWK', () => {
  const { dir, key, jwks } = publish('publisher-1');
  const loaded = a.SigningKey.fromFile(path.join(dir, 'pub.pem'));
  assert.equal(loaded.kid, 'publisher-1');
  assert.equal(loaded.thumbprint, key.thumbprint);
  assert.equal(a.SigningKey.fromFile(path.join(dir, 'pub.pem'), { kid: 'k2' }).kid, 'k2');
  const v = new a.Verifier({ jwks });
  assert.equal(v.verifyDescriptor(doc, a.signDescriptor(doc, loaded)).verdict, 'verified');
  assert.equal(a.SigningKey.fromPem(key.privatePem(), { jwk: jwks }).kid, 'publisher-1');
  assert.throws(() => a.SigningKey.fromFile(path.join(dir, 'missing.pem')), (e) => e.code === 'input.unreadable');
});

test('a thumbprint kid is refused with the published kid named', () => {
  const { key, jwks } = publish('publisher-1');
  const bare = a.SigningKey.fromPem(key.privatePem());
  assert.equal(bare.kid, key.thumbprint);
  assert.throws(
    () => new a.Verifier({ jwks }).verifyDescriptor(doc, a.signDescriptor(doc, bare)),
    (e) => /published with kid "publisher-1"/.test(e.report.error.message),
  );
});
