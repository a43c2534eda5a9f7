// Speed of the WebAssembly package against the npm peers on the same
// inputs, in Node.js (printed; never a timed test):
// * verifyDescriptor (ES256 detached JWS over RFC 8785 JCS) against npm
//   `jose` compactVerify over npm `canonicalize` (the goal: >= 3x);
// * Web Bot Auth verifyRequest (Ed25519) against npm `web-bot-auth` verify
//   (WebCrypto's native Ed25519; the goal: >= 1.0x).
// Usage: node wasm/bench/bench.mjs [seconds per side, default 2]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as a from '../index.js';

const jose = await import('jose');
const canonicalize = (await import('canonicalize')).default;
const wba = await import('web-bot-auth');
const wbaCrypto = await import('web-bot-auth/crypto');

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const secs = Number(process.argv[2] || 2);

/** Calls per second of `f` (async) in one round of `ms`. */
async function round(f, ms) {
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 10; i++) await f();
    n += 10;
  }
  return (n * 1000) / ms;
}

/** Both sides in interleaved rounds (so a busy machine slows both alike);
 * the medians and the median of the per-round ratios. */
async function compare(name, ours, theirs, goal) {
  await ours();
  await theirs();
  const o = [];
  const t = [];
  const x = [];
  for (let r = 0; r < 9; r++) {
    o.push(await round(ours, (secs * 1000) / 18));
    t.push(await round(theirs, (secs * 1000) / 18));
    x.push(o.at(-1) / t.at(-1));
  }
  const med = (v) => [...v].sort((p, q) => p - q)[4];
  const ratio = med(x);
  console.log(`${name}: agentsig-wasm ${med(o).toFixed(0)}/s, peer ${med(t).toFixed(0)}/s, ${ratio.toFixed(2)}x (goal >= ${goal}x: ${ratio >= goal ? 'met' : 'NOT met'})`);
}

// -- descriptor: ES256 detached JWS over the canonical form
const pem = fs.readFileSync(path.join(repo, 'keys/example-p256.pem'), 'utf8');
const docBytes = fs.readFileSync(path.join(repo, 'examples/agent.json'));
const key = a.SigningKey.fromPem(pem);
const jws = a.signDescriptor(docBytes, key);
const v = new a.Verifier({ keys: [key] });
const pub = await jose.importJWK(key.publicJwk(), 'ES256');
const [h, , s] = jws.split('.');
const enc = new TextEncoder();
await compare(
  'verifyDescriptor (ES256, JCS)',
  () => v.verifyDescriptor(docBytes, jws),
  async () => {
    const payload = jose.base64url.encode(enc.encode(canonicalize(JSON.parse(docBytes))));
    await jose.compactVerify(`${h}.${payload}.${s}`, pub);
  },
  3,
);

// -- Web Bot Auth: web-bot-auth signs (legacy form), both verify
const AGENT = 'https://bot.example';
const { privateKey, publicKey } = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
const pubJwk = await crypto.subtle.exportKey('jwk', publicKey);
const signer = await wbaCrypto.signerFromJWK(await crypto.subtle.exportKey('jwk', privateKey));
const url = 'https://site.example/page';
const now = Math.floor(Date.now() / 1000);
const hs = await wba.signatureHeaders(new Request(url, { headers: { 'Signature-Agent': `"${AGENT}"` } }), signer, {
  created: new Date(now * 1000), expires: new Date((now + 300) * 1000),
});
const headers = [['Signature-Agent', `"${AGENT}"`], ['Signature-Input', hs['Signature-Input']], ['Signature', hs['Signature']]];
const wv = new a.Verifier({ agentKeys: { [AGENT]: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: pubJwk.x }] } } });
const peerVerifier = await wbaCrypto.verifierFromJWK({ kty: 'OKP', crv: 'Ed25519', x: pubJwk.x });
const req = new Request(url, { headers });
await compare(
  'Web Bot Auth verifyRequest (Ed25519)',
  () => wv.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] }),
  () => wba.verify(req, peerVerifier),
  1.0,
);
