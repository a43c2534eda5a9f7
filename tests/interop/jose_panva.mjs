// Independent JOSE side of tests/jws_interop.rs: npm `jose` (panva).
//
// Same protocol as jose_joserfc.py: one JSON request on stdin, one JSON
// response on stdout. JCS (RFC 8785) is done here with a few lines of
// JavaScript: ECMAScript's own JSON.stringify number and string formatting
// and UTF-16 code-unit key order are exactly what RFC 8785 specifies.
//
// `jose` must be resolvable from this directory:
//   npm install --no-save --prefix tests/interop jose
// Exit code 3 with {"missing":"jose"} when it is not.

let jose;
try {
  jose = await import('jose');
} catch (e) {
  process.stdout.write(JSON.stringify({ missing: 'jose' }));
  process.exit(3);
}

function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  const keys = Object.keys(v).sort(); // UTF-16 code-unit order
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}

const b64u = (bytes) => Buffer.from(bytes).toString('base64url');
const unb64u = (s) => new Uint8Array(Buffer.from(s, 'base64url'));

async function verify(r) {
  try {
    const key = await jose.importJWK(r.jwk, r.alg);
    const [protectedB64, middle, signature] = r.jws.split('.');
    if (middle !== '') return { ok: false, error: 'not detached' };
    const res = await jose.flattenedVerify(
      { protected: protectedB64, signature, payload: r.payload_b64u },
      key,
      { algorithms: [r.alg] },
    );
    const want = unb64u(r.payload_b64u);
    const same = Buffer.compare(Buffer.from(res.payload), Buffer.from(want)) === 0;
    return same ? { ok: true, error: null } : { ok: false, error: 'payload differs' };
  } catch (e) {
    return { ok: false, error: `${e.code || e.name}: ${e.message}` };
  }
}

async function sign(r) {
  const key = await jose.importJWK(r.jwk, r.alg);
  const bytes = new TextEncoder().encode(jcs(JSON.parse(r.document)));
  const jws = await new jose.FlattenedSign(bytes)
    .setProtectedHeader({ alg: r.alg, kid: r.kid })
    .sign(key);
  return { jws: `${jws.protected}..${jws.signature}`, jcs_b64u: b64u(bytes) };
}

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const out = { verify: [], sign: [] };
for (const r of req.verify || []) out.verify.push(await verify(r));
for (const r of req.sign || []) out.sign.push(await sign(r));
process.stdout.write(JSON.stringify(out));
