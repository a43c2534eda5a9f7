// Peer for tests/a2a_interop.rs: the A2A JS SDK (npm @a2a-js/sdk 1.3),
// installed under tests/interop/node_modules.
//
// Usage (same as a2a_sdk.py):
//   node a2a_sdk.mjs canon  CARD.json              -> the SDK's canonical payload
//   node a2a_sdk.mjs sign   CARD.json PRIVATE.jwk  -> the card signed by the SDK
//   node a2a_sdk.mjs verify CARD.json PUBLIC.jwk   -> exit 0 valid, 1 invalid
// Exit 3: the SDK is not installed.
import { readFileSync } from 'node:fs';

let sdk, jose;
try {
  sdk = await import('@a2a-js/sdk');
  jose = await import('jose');
} catch (e) {
  process.stderr.write(`@a2a-js/sdk not importable: ${e.message}\n`);
  process.exit(3);
}

const [mode, cardPath, jwkPath] = process.argv.slice(2);
const card = JSON.parse(readFileSync(cardPath, 'utf8'));
console.debug = () => {};

if (mode === 'canon') {
  process.stdout.write(sdk.canonicalizeAgentCard(card));
  process.exit(0);
}
const jwk = JSON.parse(readFileSync(jwkPath, 'utf8'));
const alg = { 'P-256': 'ES256', Ed25519: 'EdDSA' }[jwk.crv] ?? 'RS256';
if (mode === 'sign') {
  const key = await jose.importJWK(jwk, alg);
  const signer = sdk.generateAgentCardSignature(key, { alg, kid: jwk.kid, typ: 'JOSE' });
  process.stdout.write(JSON.stringify(await signer(card)));
  process.exit(0);
}
if (mode === 'verify') {
  const { d, p, q, dp, dq, qi, ...pub } = jwk;
  const key = await jose.importJWK(pub, alg);
  try {
    await sdk.verifyAgentCardSignature(async () => key)(card);
    process.exit(0);
  } catch (e) {
    process.stderr.write(`invalid: ${e.message}\n`);
    process.exit(1);
  }
}
process.stderr.write(`unknown mode ${mode}\n`);
process.exit(2);
