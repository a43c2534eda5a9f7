// Makes the corpus the WebAssembly package is tested on in every runtime
// (Node.js, workerd, Chromium): inputs signed by the agentsig CLI, by npm
// `jose` + `canonicalize`, by the A2A JS SDK and by Cloudflare's
// `web-bot-auth`, tampered ones, and bad input; each with what the CLI
// reports under `--json` for the same input (or the typed error it must
// raise). Written as JSON (bytes in base64) to the path given, so that a
// runtime without a file system or a child process reads it.
//
// Usage: node wasm/test/make-corpus.mjs OUT.json   (the CLI: AGENTSIG_BIN,
// else target/debug/agentsig or target/release/agentsig)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const out = process.argv[2];
if (!out) throw new Error('usage: make-corpus.mjs OUT.json');

const jose = await import('jose');
const canonicalize = (await import('canonicalize')).default;
const wba = await import('web-bot-auth');
const wbaCrypto = await import('web-bot-auth/crypto');
const sdk = await import('@a2a-js/sdk');
console.debug = () => {}; // the A2A SDK logs its canonical payloads

const cli = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')]
  .find((p) => p && fs.existsSync(p));
if (!cli) throw new Error('the agentsig CLI is not built: run `cargo build` (or set AGENTSIG_BIN)');
const run = (args, input) => {
  const r = spawnSync(cli, args, { input, encoding: 'utf8', cwd: repo });
  if (r.error) throw r.error;
  return r;
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-wasm-corpus-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name, data) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, data);
  return p;
};
/** The CLI's --json report (and exit status) for `args`. */
const cliReport = (args) => {
  const r = run([...args, '--json']);
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  // Where the CLI names the key file, the package names its option.
  return { status: r.status, report: JSON.parse(r.stdout.replaceAll(`JWK Set ${jwksPath}`, 'JWK Set jwks')) };
};
const b64 = (b) => ({ b64: Buffer.from(b).toString('base64') });

const NOW = Math.floor(Date.now() / 1000);
const pemPath = path.join(repo, 'keys/example-p256.pem');
const pem = fs.readFileSync(pemPath, 'utf8');
const jwksPath = path.join(repo, 'keys/example-p256.jwks.json');
const jwks = fs.readFileSync(jwksPath, 'utf8');
const doc = fs.readFileSync(path.join(repo, 'examples/agent.json'));
const cases = [];

/** A case whose expectation is the CLI's verdict: the report when it
 * verified, the typed error (NotVerified or PolicyRefused) with that
 * report when it did not. */
function expectCli(name, verifier, call, args, c) {
  const expect = c.status === 0 ? { report: c.report } : { error: { report: c.report } };
  cases.push({ name, verifier, call, args, expect });
}

// -- descriptors: detached JWS over the RFC 8785 canonical form
{
  const jws = run(['sign', '-', '--key', pemPath], doc).stdout.trim();
  const p = file('agent.json', doc);
  file('agent.json.jws', jws);
  expectCli('descriptor signed by the CLI', { jwks }, 'verifyDescriptor', [b64(doc), jws], cliReport(['verify', p, '--jwks', jwksPath]));
  const tampered = Buffer.from(JSON.stringify({ ...JSON.parse(doc), name: 'tampered' }));
  const t = file('tampered.json', tampered);
  file('tampered.json.jws', jws);
  expectCli('tampered descriptor (CLI signature)', { jwks }, 'verifyDescriptor', [b64(tampered), jws], cliReport(['verify', t, '--jwks', jwksPath]));

  // npm jose over npm canonicalize's RFC 8785 form, the payload detached.
  const priv = await jose.importPKCS8(pem, 'ES256');
  const kid = JSON.parse(jwks).keys[0].kid;
  const full = await new jose.CompactSign(new TextEncoder().encode(canonicalize(JSON.parse(doc))))
    .setProtectedHeader({ alg: 'ES256', kid })
    .sign(priv);
  const [h, , s] = full.split('.');
  const joseJws = `${h}..${s}`;
  const j = file('jose.json', doc);
  file('jose.json.jws', joseJws);
  expectCli('descriptor signed by npm jose + canonicalize', { jwks }, 'verifyDescriptor', [b64(doc), joseJws], cliReport(['verify', j, '--jwks', jwksPath]));
}

// -- A2A Agent Cards: the SDK signs
{
  const card = JSON.parse(fs.readFileSync(path.join(repo, 'examples/a2a-agent-card.json'), 'utf8'));
  const priv = await jose.importPKCS8(pem, 'ES256');
  const kid = JSON.parse(jwks).keys[0].kid;
  const signed = await sdk.generateAgentCardSignature(priv, { alg: 'ES256', kid, typ: 'JOSE' })(structuredClone(card));
  const bytes = Buffer.from(JSON.stringify(signed));
  const p = file('card.json', bytes);
  expectCli('A2A card signed by the A2A JS SDK', { jwks }, 'verifyCard', [b64(bytes)], cliReport(['verify', p, '--jwks', jwksPath]));
  const changed = Buffer.from(JSON.stringify({ ...signed, description: 'changed' }));
  const q = file('card-changed.json', changed);
  expectCli('A2A card changed after signing', { jwks }, 'verifyCard', [b64(changed)], cliReport(['verify', q, '--jwks', jwksPath]));
}

// -- RFC 9421 requests: the CLI signs a raw HTTP/1.1 message
const raw = (method, target, host, headers, body) =>
  Buffer.concat([Buffer.from([`${method} ${target} HTTP/1.1`, `Host: ${host}`, ...headers.map(([n, v]) => `${n}: ${v}`)].join('\r\n') + '\r\n\r\n'), Buffer.from(body)]);
const head = (text) => text.split('\r\n\r\n')[0].split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]);
{
  // A GET (no content: the CLI requires Content-Digest of a message with
  // content, the library facade does not yet; see docs/wasm.md).
  const msg = raw('GET', '/search?q=1', 'api.example', [['Accept', 'application/json']], '');
  const signed = run(['http', 'sign', '-', '--key', pemPath], msg).stdout;
  const p = file('req.http', signed);
  const h = head(signed);
  expectCli('RFC 9421 request signed by the CLI', { jwks }, 'verifyRequest', ['GET', '/search?q=1', h, undefined, { scheme: 'https', authorities: ['api.example'] }],
    cliReport(['http', 'verify', p, '--jwks', jwksPath, '--authority', 'api.example', '--now', String(NOW)]));
  const moved = Buffer.from(signed.replace('GET /search?q=1', 'GET /other?q=1'));
  const q = file('req-moved.http', moved);
  expectCli('RFC 9421 request replayed on another path', { jwks }, 'verifyRequest', ['GET', '/other?q=1', h, undefined, { scheme: 'https', authorities: ['api.example'] }],
    cliReport(['http', 'verify', q, '--jwks', jwksPath, '--authority', 'api.example', '--now', String(NOW)]));
}

// -- Web Bot Auth: Cloudflare's web-bot-auth signs (legacy sf-string form)
{
  const AGENT = 'https://bot.example';
  const { privateKey, publicKey } = await globalThis.crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const pubJwk = await globalThis.crypto.subtle.exportKey('jwk', publicKey);
  const signer = await wbaCrypto.signerFromJWK(await globalThis.crypto.subtle.exportKey('jwk', privateKey));
  const url = 'https://site.example/page';
  const hs = await wba.signatureHeaders(new Request(url, { headers: { 'Signature-Agent': `"${AGENT}"` } }), signer, {
    created: new Date(NOW * 1000), expires: new Date((NOW + 60) * 1000),
  });
  const headers = [['Signature-Agent', `"${AGENT}"`], ['Signature-Input', hs['Signature-Input']], ['Signature', hs['Signature']]];
  const keySet = JSON.stringify({ keys: [{ kty: pubJwk.kty, crv: pubJwk.crv, x: pubJwk.x }] });
  const ks = file('bot.jwks', keySet);
  const keySetUrl = `${AGENT}/.well-known/http-message-signatures-directory`;
  const verifier = { agentKeys: { [AGENT]: keySet } };
  const msg = raw('GET', '/page', 'site.example', headers, '');
  const p = file('wba.http', msg);
  const wbaArgs = (extra) => ['http', 'verify', p, '--profile', 'web-bot-auth', '--key-set', `${keySetUrl}=${ks}`, ...extra];
  expectCli('Web Bot Auth request signed by npm web-bot-auth', verifier, 'verifyRequest', ['GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] }],
    cliReport(wbaArgs(['--authority', 'site.example', '--now', String(NOW)])));
  expectCli('Web Bot Auth request for another site', verifier, 'verifyRequest', ['GET', url, headers, undefined, { webBotAuth: true, authorities: ['other.example'] }],
    cliReport(wbaArgs(['--authority', 'other.example', '--now', String(NOW)])));
  cases.push({ name: 'Web Bot Auth key set fetched (keySets)', webBotAuthKeySet: { keySetUrl, keySet }, verifier: { fetchDirectories: true }, call: 'verifyRequestAsync',
    args: ['GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] }], expect: { report: cases.at(-2).expect.report } });
}

// -- delegation: the CLI mints, the package audits
{
  const tok = run(['delegation', 'mint', '--key', pemPath, '--iss', 'https://issuer.example', '--sub', 'alice', '--aud', 'https://api.example', '--scope', 'read', '--act', 'agent-a=read', '--now', String(NOW)]).stdout.trim();
  const t = file('tok.jwt', tok);
  expectCli('delegation token minted by the CLI', { jwks }, 'auditDelegation', [tok, { audience: 'https://api.example' }],
    cliReport(['delegation', 'audit', t, '--jwks', jwksPath, '--audience', 'https://api.example', '--now', String(NOW)]));
  expectCli('delegation token for another audience', { jwks }, 'auditDelegation', [tok, { audience: 'https://other.example' }],
    cliReport(['delegation', 'audit', t, '--jwks', jwksPath, '--audience', 'https://other.example', '--now', String(NOW)]));
}

// -- AI Catalogs: an inline entry bound only by the catalog's detached JWS
// (`sign --host` writes FILE.jws, over the RFC 8785 form of the whole
// document, draft-narvaneni-agent-uri-03 section 10.3), given as `jws`
{
  const catalog = JSON.stringify({ specVersion: '1.0', host: { displayName: 'H', identifier: 'urn:example:host' },
    entries: [{ identifier: 'urn:a', displayName: 'A', version: '1', mediaType: 'application/zip', data: { id: 'urn:a' } }] });
  const p = file('cat.json', catalog);
  const s = run(['sign', p, '--host', '--key', pemPath]);
  if (s.status !== 0) throw new Error(`sign --host: ${s.stderr}`);
  const signed = fs.readFileSync(p);
  const jws = fs.readFileSync(`${p}.jws`, 'utf8');
  const t = jws.trim();
  const tampered = t.slice(0, -2) + (t.at(-2) === 'A' ? 'B' : 'A') + t.at(-1);
  const bad = file('bad.jws', tampered);
  // The same document with no .jws beside it (`verify FILE` reads FILE.jws).
  const plain = file('plain.json', signed);
  const reports = [
    ['AI Catalog bound by its detached JWS (CLI)', [b64(signed), { jws }], ['verify', p, '--jwks', jwksPath, '--jws', `${p}.jws`]],
    ['AI Catalog with a tampered detached JWS', [b64(signed), { jws: tampered }], ['verify', p, '--jwks', jwksPath, '--jws', bad]],
    ['AI Catalog without its JWS, requireSigned', [b64(signed), { requireSigned: true }], ['verify', plain, '--jwks', jwksPath, '--require-signed']],
    ['AI Catalog without its JWS', [b64(signed)], ['verify', plain, '--jwks', jwksPath]],
  ].map(([name, args, cliArgs]) => {
    const c = cliReport(cliArgs);
    expectCli(name, { jwks }, 'verifyCatalog', args, c);
    return c.report.verdict;
  });
  // The CLI's verdicts these cases stand for: only the JWS binds the entry.
  if (reports.join() !== 'verified,not-verified,unsigned,unsigned') throw new Error(`catalog JWS verdicts: ${reports}`);
  cases.push({ name: 'AI Catalog JWS larger than its bound', verifier: { jwks }, call: 'verifyCatalog', args: [b64(signed), { jws: 'a'.repeat((1 << 20) + 1) }],
    expect: { error: { class: 'BadInput', code: 'input.unreadable' } } });
}

// -- bad input: typed errors, never a trap
const bad = (name, verifier, call, args, cls, code) => cases.push({ name, verifier, call, args, expect: { error: { class: cls, code } } });
bad('descriptor that is not JSON', { jwks }, 'verifyDescriptor', [b64('{"a":'), 'x..y'], 'BadInput', 'input.malformed');
bad('descriptor with a duplicate member', { jwks }, 'verifyDescriptor', [b64('{"a":1,"a":2}'), 'x..y'], 'BadInput', 'input.malformed');
bad('JWS larger than its bound', { jwks }, 'verifyDescriptor', [b64('{}'), 'a'.repeat((1 << 20) + 1)], 'BadInput', 'input.unreadable');
bad('status out of range', { jwks }, 'verifyResponse', [42, [], ''], 'BadInput', 'input.malformed');
bad('header name with a space', { jwks }, 'verifyRequest', ['GET', 'https://a.example/', [['bad name', 'x']], ''], 'BadInput', undefined);
bad('unknown algorithm', { jwks, algorithms: ['XX999'] }, 'verifyDescriptor', [b64('{}'), 'x..y'], 'BadInput', 'usage');
bad('JWK Set given as a file name', { jwks: 'keys/example.jwks' }, 'verifyDescriptor', [b64('{}'), 'x..y'], 'BadKey', 'key.unusable');
bad('garbage PEM key', { keys: ['-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'] }, 'verifyDescriptor', [b64('{}'), 'x..y'], 'BadKey', undefined);
bad('card that is not an object', { jwks }, 'verifyCard', [b64('[1,2]')], undefined, undefined);
bad('Web Bot Auth without agent keys', { jwks }, 'verifyRequest', ['GET', 'https://a.example/', [], '', { webBotAuth: true }], 'BadInput', 'usage');

fs.writeFileSync(out, JSON.stringify({ now: NOW, cases }, null, 1));
console.log(`${cases.length} cases written to ${out}`);
