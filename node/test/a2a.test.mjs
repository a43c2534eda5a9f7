// A2A Agent Card signatures in both directions with the A2A JS SDK (npm
// @a2a-js/sdk 1.3): the SDK signs, this package verifies; this package
// signs, the SDK verifies; a changed card fails on both sides.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as jose from 'jose';
import * as a from '../index.mjs';

const sdk = await import('@a2a-js/sdk');
const { repo } = createRequire(import.meta.url)('./helpers.js');
console.debug = () => {}; // the SDK logs its canonical payloads

const card = JSON.parse(fs.readFileSync(path.join(repo, 'examples/a2a-agent-card.json'), 'utf8'));
const pem = fs.readFileSync(path.join(repo, 'keys/example-p256.pem'), 'utf8');
const key = a.SigningKey.fromPem(pem);
const verifier = new a.Verifier({ keys: [key] });

test('a card signed by the A2A JS SDK verifies here; a changed one does not', async () => {
  const priv = await jose.importPKCS8(pem, 'ES256');
  const signed = await sdk.generateAgentCardSignature(priv, { alg: 'ES256', kid: key.kid, typ: 'JOSE' })(structuredClone(card));
  assert.equal(verifier.verifyCard(signed).verdict, 'verified');
  assert.throws(() => verifier.verifyCard({ ...signed, description: 'changed' }), a.NotVerified);
});

test('a card signed here verifies with the A2A JS SDK; a changed one does not', async () => {
  const signed = a.signCard(card, key);
  const pub = await jose.importJWK(key.publicJwk(), 'ES256');
  await sdk.verifyAgentCardSignature(async () => pub)(signed);
  await assert.rejects(sdk.verifyAgentCardSignature(async () => pub)({ ...signed, description: 'changed' }));
});
