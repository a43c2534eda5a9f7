// Interop in both directions: the agentsig CLI and npm `jose` (panva) sign,
// this package verifies; this package signs, they verify.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as a from '../index.mjs';

const require = createRequire(import.meta.url);
const { repo, run, tmpdir } = require('./helpers.js');
const jose = await import('jose');

const pem = fs.readFileSync(path.join(repo, 'keys/example-p256.pem'));
const jwksPath = path.join(repo, 'keys/example-p256.jwks.json');
const jwks = fs.readFileSync(jwksPath);
const docBytes = fs.readFileSync(path.join(repo, 'examples/agent.json'));
const key = a.SigningKey.fromPem(pem);
const verifier = new a.Verifier({ jwks });

test('a descriptor signed by the CLI verifies here', () => {
  const r = run(['sign', '-', '--key', 'keys/example-p256.pem'], docBytes);
  assert.equal(r.status, 0, r.stderr);
  const report = verifier.verifyDescriptor(docBytes, r.stdout.trim());
  assert.equal(report.verdict, 'verified');
  // The same report as the CLI's --json verification of that JWS.
  const dir = tmpdir();
  fs.writeFileSync(path.join(dir, 'agent.json'), docBytes);
  fs.writeFileSync(path.join(dir, 'agent.json.jws'), r.stdout.trim());
  const cliReport = JSON.parse(run(['verify', path.join(dir, 'agent.json'), '--jwks', jwksPath, '--json']).stdout);
  // The key's source names where each was given (a file, a JWK Set value).
  const strip = (sigs) => sigs.map(({ key: { source, ...k }, ...s }) => ({ ...s, key: k }));
  assert.deepEqual(strip(report.signatures), strip(cliReport.signatures));
});

test('a descriptor signed here verifies with the CLI, and a tampered one does not', () => {
  const dir = tmpdir();
  const file = path.join(dir, 'agent.json');
  fs.writeFileSync(file, docBytes);
  fs.writeFileSync(`${file}.jws`, a.signDescriptor(docBytes, key));
  const ok = run(['verify', file, '--jwks', jwksPath]);
  assert.equal(ok.status, 0, ok.stderr);
  fs.writeFileSync(file, Buffer.concat([docBytes.subarray(0, docBytes.length - 2), Buffer.from(', "x": 1}')]));
  assert.equal(run(['verify', file, '--jwks', jwksPath]).status, 1);
});

/** A raw HTTP/1.1 request from its parts. */
function raw(method, target, host, headers, body) {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, ...headers.map(([n, v]) => `${n}: ${v}`)];
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), Buffer.from(body)]);
}

/** The header pairs of a raw HTTP message. */
function parseHead(text) {
  const head = text.split('\r\n\r\n')[0].split('\r\n').slice(1);
  return head.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
}

test('an RFC 9421 request signed by the CLI verifies here', () => {
  const body = '{"q":1}';
  const msg = raw('POST', '/search?q=1', 'api.example', [['Content-Type', 'application/json'], ['Content-Length', String(body.length)]], body);
  // The content is covered through Content-Digest: every surface refuses
  // uncovered content by default (RFC 9421 section 7.2.8).
  const r = run(['http', 'sign', '-', '--key', 'keys/example-p256.pem', '--add-content-digest', 'sha-256'], msg);
  assert.equal(r.status, 0, r.stderr);
  const h = parseHead(r.stdout);
  assert.ok(h.some(([n]) => n.toLowerCase() === 'signature-input'));
  const rep = verifier.verifyRequest('POST', '/search?q=1', h, body, { scheme: 'https', authorities: ['api.example'] });
  assert.equal(rep.verdict, 'verified');
  // The CLI covers @method, @authority and @path by default: another path fails.
  assert.throws(() => verifier.verifyRequest('POST', '/other?q=1', h, body, { scheme: 'https' }), a.NotVerified);
});

test('an RFC 9421 request signed here verifies with the CLI', () => {
  const body = '{"q":1}';
  const h = a.signRequest('POST', 'https://api.example/search?q=1', [['Content-Type', 'application/json']], body, key);
  const dir = tmpdir();
  const file = path.join(dir, 'req.http');
  fs.writeFileSync(file, raw('POST', '/search?q=1', 'api.example', [...h, ['Content-Length', String(body.length)]], body));
  const ok = run(['http', 'verify', file, '--jwks', jwksPath, '--authority', 'api.example', '--json']);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.equal(JSON.parse(ok.stdout).verdict, 'verified');
  // Verified for another site, the signature's @authority is not that site's.
  assert.equal(run(['http', 'verify', file, '--jwks', jwksPath, '--authority', 'shop.example']).status, 1);
  fs.writeFileSync(file, raw('POST', '/search?q=1', 'api.example', [...h, ['Content-Length', String(body.length)]], '{"q":2}'));
  assert.equal(run(['http', 'verify', file, '--jwks', jwksPath, '--authority', 'api.example']).status, 1);
});

test('a detached JWS signed by jose over canonicalize() verifies here', async () => {
  const doc = { name: 'planner', n: [1, 2.5, 1e21], 'é': true };
  const jwk = JSON.parse(fs.readFileSync(path.join(repo, 'keys/example-p256.jwk.json'), 'utf8'));
  const priv = await jose.importPKCS8(pem.toString(), 'ES256');
  const signed = await new jose.FlattenedSign(a.canonicalize(doc)).setProtectedHeader({ alg: 'ES256', kid: jwk.kid }).sign(priv);
  const jws = `${signed.protected}..${signed.signature}`;
  assert.equal(verifier.verifyDescriptor(doc, jws).verdict, 'verified');
  assert.equal((await verifier.verifyDescriptorAsync(doc, jws)).verdict, 'verified');
  assert.throws(() => verifier.verifyDescriptor({ ...doc, n: [1] }, jws), a.NotVerified);
});

test('a detached JWS signed here verifies with jose', async () => {
  const doc = { name: 'planner', list: ['b', 'a'], z: { y: 1, x: 2 } };
  for (const alg of ['ES256', 'EdDSA']) {
    const k = a.SigningKey.generate(alg);
    const [protectedB64, middle, signature] = a.signDescriptor(doc, k).split('.');
    assert.equal(middle, '');
    const pub = await jose.importJWK(k.publicJwk(), alg);
    const payload = a.canonicalize(doc).toString('base64url');
    const res = await jose.flattenedVerify({ protected: protectedB64, payload, signature }, pub, { algorithms: [alg] });
    assert.deepEqual(JSON.parse(Buffer.from(res.payload).toString()), doc);
    const bad = Buffer.from(JSON.stringify({ ...doc, name: 'x' })).toString('base64url');
    await assert.rejects(jose.flattenedVerify({ protected: protectedB64, payload: bad, signature }, pub));
  }
});

/** A delegation token minted by the CLI (warnings about the published test key go to stderr). */
function mint() {
  const r = run(['delegation', 'mint', '--key', 'keys/example-p256.pem', '--iss', 'https://as.example', '--sub', 'alice',
    '--aud', 'https://api.example', '--scope', 'read', '--act', 'agent-a=read write']);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('a delegation token minted by the CLI audits here; issuer and audience are enforced', async () => {
  const token = mint();
  const r = verifier.auditDelegation(token, { issuer: 'https://as.example', audience: 'https://api.example' });
  assert.equal(r.verdict, 'verified');
  assert.equal((await verifier.auditDelegationAsync([token])).verdict, 'verified');
  assert.throws(() => verifier.auditDelegation(token, { issuer: 'https://other.example' }), a.NotVerified);
  assert.throws(() => verifier.auditDelegation(token, { audience: 'https://other.example' }), a.NotVerified);
});

test('a delegation token signed by jose with the same claims audits here; a widened act scope does not', async () => {
  const priv = await jose.importPKCS8(pem.toString(), 'ES256');
  const claims = JSON.parse(Buffer.from(mint().split('.')[1], 'base64url'));
  const sign = (c) => new jose.SignJWT(c).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.thumbprint }).sign(priv);
  assert.equal(verifier.auditDelegation(await sign(claims)).verdict, 'verified');
  // The token's scope may only narrow its actor's (RFC 8693 section 4.1 act chains).
  const widened = await sign({ ...claims, scope: 'read admin' });
  assert.throws(() => verifier.auditDelegation(widened), a.NotVerified);
});
