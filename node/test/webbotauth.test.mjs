// Web Bot Auth interop in both directions with npm `http-message-sig` 0.3 (a
// full RFC 9421 implementation that covers a Signature-Agent Dictionary
// member, `;key`) and Cloudflare's `web-bot-auth`: they sign, this package
// verifies (with the site's authorities); this package signs, they verify.
import test from 'node:test';
import assert from 'node:assert/strict';
import * as a from '../index.mjs';

const hms = await import('http-message-sig');
const wba = await import('web-bot-auth');
const wbaCrypto = await import('web-bot-auth/crypto');

const AGENT = 'https://bot.example';
const key = a.SigningKey.generate('EdDSA');
const verifier = new a.Verifier({ agentKeys: { [AGENT]: [key] } });

/** The key in WebCrypto form: the PKCS#8 private key, the public JWK. */
async function edKey(usage, extractable = false) {
  if (usage === 'sign') {
    const der = Buffer.from(key.privatePem().replace(/-----[^-]+-----|\s/g, ''), 'base64');
    return globalThis.crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, extractable, ['sign']);
  }
  const { kty, crv, x } = key.publicJwk();
  return globalThis.crypto.subtle.importKey('jwk', { kty, crv, x }, { name: 'Ed25519' }, false, ['verify']);
}

test('a request signed by http-message-sig under the profile verifies here', async () => {
  const now = Math.floor(Date.now() / 1000);
  const url = 'https://site.example/page';
  const agentField = `sig1="${AGENT}"`;
  const f = await hms.createSignature(new Request(url, { headers: { 'Signature-Agent': agentField } }), {
    label: 'sig1',
    components: ['@authority', { name: 'signature-agent', parameters: { key: 'sig1' } }],
    parameters: { created: now, expires: now + 60, nonce: 'bm9uY2Utb25l', alg: 'ed25519', keyid: key.thumbprint, tag: 'web-bot-auth' },
    signer: hms.webcrypto.signer(await edKey('sign')),
  });
  const headers = [['Signature-Agent', agentField], ['Signature-Input', f.signatureInput], ['Signature', f.signature]];
  const r = verifier.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] });
  assert.equal(r.verdict, 'verified');
  // Replayed to another site: its covered @authority is not that site's.
  assert.throws(() => verifier.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['other.example'] }), a.NotVerified);
});

test('a request signed here verifies with http-message-sig; a changed Signature-Agent member does not', async () => {
  const url = 'https://site.example/page';
  const pairs = a.signRequest('GET', url, [], undefined, key, { signatureAgent: AGENT });
  const pub = await edKey('verify');
  const verify = (headers) => hms.verifySignature(new Request(url, { headers }), {
    label: 'sig1',
    policy: {
      algorithms: ['ed25519'],
      requiredComponents: ['@authority', { name: 'signature-agent', parameters: { key: 'sig1' } }],
      requiredParameters: ['created', 'expires', 'keyid', 'tag'],
    },
    resolveVerifier: () => hms.webcrypto.verifier(pub),
  });
  const r = await verify(pairs);
  assert.equal(r.parameters.tag, 'web-bot-auth');
  assert.equal(r.parameters.keyid, key.thumbprint);
  const evil = pairs.map(([n, v]) => [n, n === 'Signature-Agent' ? 'sig1="https://evil.example"' : v]);
  await assert.rejects(verify(evil));
});

test('web-bot-auth 0.1 cannot verify a conforming member signature (its bundled http-message-sig 0.2 signs the whole field)', async () => {
  // RFC 9421 section 2.1.2: "signature-agent";key="sig1" signs the member's
  // value; web-bot-auth 0.1.3 puts the whole Dictionary on that line, so
  // the signature base differs. Asserted so an upgrade that fixes it shows.
  const url = 'https://site.example/page';
  const pairs = a.signRequest('GET', url, [], undefined, key, { signatureAgent: AGENT });
  const { kty, crv, x } = key.publicJwk();
  const v = await wbaCrypto.verifierFromJWK({ kty, crv, x });
  await assert.rejects(wba.verify(new Request(url, { headers: pairs }), v), /invalid signature/);
});

test('a request signed by web-bot-auth in the legacy form (the whole field covered) verifies here', async () => {
  const url = 'https://site.example/page';
  const jwk = await globalThis.crypto.subtle.exportKey('jwk', await edKey('sign', true));
  const signer = await wbaCrypto.signerFromJWK(jwk);
  const now = Math.floor(Date.now() / 1000);
  const h = await wba.signatureHeaders(new Request(url, { headers: { 'Signature-Agent': `"${AGENT}"` } }), signer, {
    created: new Date(now * 1000), expires: new Date((now + 60) * 1000),
  });
  const headers = [['Signature-Agent', `"${AGENT}"`], ['Signature-Input', h['Signature-Input']], ['Signature', h['Signature']]];
  const r = verifier.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] });
  assert.equal(r.verdict, 'verified');
  assert.throws(() => verifier.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['other.example'] }), a.NotVerified);
});
