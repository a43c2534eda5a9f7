// Independent Web Bot Auth side of tests/webbotauth_interop.rs: npm
// `web-bot-auth` (Cloudflare) over `http-message-sig`.
//
// One JSON request on stdin ({ops:[...]}), one JSON response on stdout
// ({results:[...]}). Both packages must be resolvable from this directory:
//   npm install --no-save --prefix tests/interop jose@6 @a2a-js/sdk@1.3 web-bot-auth http-message-sig
// Exit code 3 with {"missing":"web-bot-auth"} when they are not.

// Two independent peers: `web-bot-auth` 0.1.3 (which bundles its own
// http-message-sig 0.2.0) and the standalone `http-message-sig` 0.3, a full
// RFC 9421 implementation that extracts `;key` Dictionary members.
let wba, crypto, hms;
try {
  wba = await import('web-bot-auth');
  crypto = await import('web-bot-auth/crypto');
  hms = await import('http-message-sig');
} catch (e) {
  process.stdout.write(JSON.stringify({ missing: 'web-bot-auth http-message-sig' }));
  process.exit(3);
}

async function edKey(jwk, usage) {
  const { kty, crv, x, d } = jwk;
  const k = usage === 'sign' ? { kty, crv, x, d } : { kty, crv, x };
  return globalThis.crypto.subtle.importKey('jwk', k, { name: 'Ed25519' }, false, [usage]);
}

// http-message-sig 0.3: sign with the member covered, as the profile says.
async function hmsSign(op) {
  const request = new Request(op.url, { headers: { 'Signature-Agent': op.signature_agent } });
  const signer = hms.webcrypto.signer(await edKey(op.jwk, 'sign'));
  const f = await hms.createSignature(request, {
    label: op.label,
    components: ['@authority', { name: 'signature-agent', parameters: { key: op.label } }],
    parameters: {
      created: op.created, expires: op.expires, nonce: op.nonce,
      alg: 'ed25519', keyid: op.keyid, tag: 'web-bot-auth',
    },
    signer,
  });
  return { signature_input: f.signatureInput, signature: f.signature };
}

// http-message-sig 0.3: verify, requiring the profile's components and
// parameters; the keyid must be the key's thumbprint (checked by the caller).
async function hmsVerify(op) {
  const request = new Request(op.url, { headers: op.headers });
  try {
    const key = await edKey(op.jwk, 'verify');
    const r = await hms.verifySignature(request, {
      label: op.label,
      policy: {
        algorithms: ['ed25519'],
        requiredComponents: ['@authority', { name: 'signature-agent', parameters: { key: op.label } }],
        requiredParameters: ['created', 'expires', 'keyid', 'tag'],
        now: op.now,
      },
      resolveVerifier: () => hms.webcrypto.verifier(key),
    });
    return { ok: r.parameters.tag === 'web-bot-auth', keyid: r.parameters.keyid };
  } catch (e) {
    return { ok: false, error: `${e.name}: ${e.message}` };
  }
}

async function sign(op) {
  const headers = { 'Signature-Agent': op.signature_agent };
  const request = new Request(op.url, { headers });
  const params = {
    created: new Date(op.created * 1000),
    expires: new Date(op.expires * 1000),
  };
  if (op.member) {
    params.key = op.member;
    // web-bot-auth 0.1.3's bundled http-message-sig 0.2.0 takes a Map, and
    // puts the whole field value (not the member's) on this line.
    params.components = ['@authority', { name: 'signature-agent', parameters: new Map([['key', op.member]]) }];
  }
  const signer = await crypto.signerFromJWK(op.jwk);
  const h = await wba.signatureHeaders(request, signer, params);
  return { signature_input: h['Signature-Input'], signature: h['Signature'] };
}

async function verify(op) {
  const request = new Request(op.url, { headers: op.headers });
  try {
    let keyid = null;
    const v = await crypto.verifierFromJWK(op.jwk);
    await wba.verify(request, async (data, sig, params) => {
      keyid = params.keyid;
      return v(data, sig, params);
    });
    return { ok: true, keyid };
  } catch (e) {
    return { ok: false, error: `${e.name}: ${e.message}` };
  }
}

async function directory(op) {
  const request = new Request(op.url);
  const response = new Response(op.body, {
    headers: { 'Content-Type': wba.MediaType?.HTTP_MESSAGE_SIGNATURES_DIRECTORY ?? 'application/http-message-signatures-directory+json' },
  });
  const signer = await crypto.signerFromJWK(op.jwk);
  const h = await wba.directoryResponseHeaders({ request, response }, [signer], {
    created: new Date(op.created * 1000),
    expires: new Date(op.expires * 1000),
  });
  return { signature_input: h['Signature-Input'], signature: h['Signature'] };
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const results = [];
for (const op of req.ops) {
  if (op.op === 'sign') results.push(await sign(op));
  else if (op.op === 'hms_sign') results.push(await hmsSign(op));
  else if (op.op === 'hms_verify') results.push(await hmsVerify(op));
  else if (op.op === 'verify') results.push(await verify(op));
  else if (op.op === 'directory') results.push(await directory(op));
  else results.push({ error: `unknown op ${op.op}` });
}
process.stdout.write(JSON.stringify({ results }));
