// The fleet key-set cache from Node.js (new Verifier({ keyCache,
// fleetSecretFile }) or AGENTSIG_FLEET_SECRET), against a real redis-server
// the test starts on loopback and a loopback HTTPS origin in this process
// that counts its fetches: two verifiers with the same store and secret fetch
// an agent's key directory (and a catalog identity's JWK Set) once between
// them; a verifier with another secret ignores their entries and fetches
// again, and so do two Express gates over such verifiers. The option rules
// raise BadInput or BadKey naming the cause. And
// without keys of its own a verifier resolves each Trust Manifest identity's
// keys, with the report `agentsig verify URL --json` prints.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const https = require('node:https');
const { execFile, spawnSync } = require('node:child_process');
const a = require('..');
const helpers = require('./helpers.js');

const URL_ = 'https://api.example/orders';
const DIRECTORY = '/.well-known/http-message-signatures-directory';

/** A loopback HTTPS origin answering `routes` (path -> [headers, body]),
 * counting what was asked for in `served`. */
async function origin(routes) {
  const { ca, cert, key } = helpers.certificates();
  const served = [];
  const server = https.createServer({ cert, key }, (req, res) => {
    served.push(req.url);
    const r = routes[req.url];
    if (!r) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, r[0]);
    res.end(r[1]);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `https://localhost:${server.address().port}`, ca, served, close: () => new Promise((r) => server.close(r)) };
}

function secretFile(dir, name, secret = 's'.repeat(40), mode = 0o600) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, secret);
  fs.chmodSync(p, mode);
  return p;
}

/** An agent key, its directory served by a loopback origin (`max-age=60`)
 * and a temporary directory for secret files. */
async function agentDirectory() {
  const key = a.SigningKey.generate('EdDSA');
  const body = JSON.stringify({ keys: [{ ...key.publicJwk(), kid: key.thumbprint }] });
  const o = await origin({ [DIRECTORY]: [{ 'Content-Type': 'application/http-message-signatures-directory+json', 'Cache-Control': 'max-age=60' }, body] });
  return { key, o, dir: helpers.tmpdir() };
}

test('two verifiers with one key cache fetch a directory once; another secret fetches again', async (t) => {
  const redis = await helpers.redisServer();
  if (!redis) return t.skip('redis-server not installed');
  const { key, o, dir } = await agentDirectory();
  const saved = process.env.AGENTSIG_FLEET_SECRET;
  try {
    delete process.env.AGENTSIG_FLEET_SECRET;
    const fleet = secretFile(dir, 'fleet');
    const verifier = (extra) => new a.Verifier({ fetchDirectories: true, allowPrivateHosts: ['localhost'], extraRootsPem: [o.ca], keyCache: redis.url, ...extra });
    const verify = async (v) => {
      const h = a.signRequest('GET', URL_, [], undefined, key, { signatureAgent: o.base });
      const r = await v.verifyRequestAsync('GET', URL_, h, undefined, { webBotAuth: true });
      assert.equal(r.verdict, 'verified');
    };
    await verify(verifier({ fleetSecretFile: fleet }));
    await verify(verifier({ fleetSecretFile: fleet }));
    assert.deepEqual(o.served, [DIRECTORY]);
    await verify(verifier({ fleetSecretFile: secretFile(dir, 'other', 't'.repeat(40)) }));
    assert.deepEqual(o.served, [DIRECTORY, DIRECTORY]);
    // The secret from the environment, as the command line takes it: the
    // same secret as the last verifier's, whose entry now stands, so no fetch.
    process.env.AGENTSIG_FLEET_SECRET = 't'.repeat(40);
    await verify(verifier({}));
    assert.equal(o.served.length, 2);
  } finally {
    if (saved === undefined) delete process.env.AGENTSIG_FLEET_SECRET;
    else process.env.AGENTSIG_FLEET_SECRET = saved;
    await o.close();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the key cache option rules, with BadInput or BadKey naming the cause', () => {
  const dir = helpers.tmpdir();
  const saved = process.env.AGENTSIG_FLEET_SECRET;
  try {
    delete process.env.AGENTSIG_FLEET_SECRET;
    const keys = [a.SigningKey.generate('EdDSA')];
    const keyCache = 'redis://127.0.0.1:9/0'; // never contacted when the options are refused
    assert.throws(() => new a.Verifier({ keys, keyCache }),
      (e) => e instanceof a.BadInput && e.code === 'usage' && /fleetSecretFile/.test(e.message) && /AGENTSIG_FLEET_SECRET/.test(e.message));
    assert.throws(() => new a.Verifier({ keys, fleetSecretFile: secretFile(dir, 'f') }),
      (e) => e instanceof a.BadInput && /fleetSecretFile is the secret of keyCache: give both/.test(e.message));
    assert.throws(() => new a.Verifier({ keys, keyCache, fleetSecretFile: secretFile(dir, 'short', 'x'.repeat(31)) }),
      (e) => e instanceof a.BadKey && /31 bytes/.test(e.message));
    assert.throws(() => new a.Verifier({ keys, keyCache, fleetSecretFile: secretFile(dir, 'open', 's'.repeat(40), 0o622) }),
      (e) => e instanceof a.BadKey && /open to its group or others/.test(e.message));
    // Readable by others is refused too: a reader could forge entries.
    assert.throws(() => new a.Verifier({ keys, keyCache, fleetSecretFile: secretFile(dir, 'readable', 's'.repeat(40), 0o644) }),
      (e) => e instanceof a.BadKey && /chmod 600/.test(e.message));
    assert.throws(() => new a.Verifier({ keys, keyCache, fleetSecretFile: 7 }), TypeError);
    assert.ok(new a.Verifier({ keys, keyCache, fleetSecretFile: secretFile(dir, 'good') }));
  } finally {
    if (saved === undefined) delete process.env.AGENTSIG_FLEET_SECRET;
    else process.env.AGENTSIG_FLEET_SECRET = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const entry = (identifier, version = '1') => ({
  identifier, displayName: 'X', version, mediaType: 'application/zip', url: 'https://example.com/x',
});

test('without keys a catalog identity\'s JWK Set is resolved as the CLI does, and fetched once per fleet', async (t) => {
  const redis = await helpers.redisServer();
  if (!redis) return t.skip('redis-server not installed');
  const dir = helpers.tmpdir();
  const cli = (...args) => spawnSync(helpers.cli(), args, { cwd: dir, encoding: 'utf8' });
  // The CLI fetches from the origin this process serves: run it without
  // holding the event loop.
  const cliAsync = (...args) => new Promise((resolve) => {
    execFile(helpers.cli(), args, { cwd: dir, encoding: 'utf8' }, (e, stdout, stderr) => resolve({ status: e ? e.code : 0, stdout, stderr }));
  });
  const routes = {};
  const o = await origin(routes);
  try {
    assert.equal(cli('keygen', '--out', 'k').status, 0);
    const identity = `${o.base}/jwks.json`;
    fs.writeFileSync(path.join(dir, 'cat.json'), JSON.stringify({ specVersion: '1.0', entries: [entry(identity), entry(identity, '2'), entry('urn:c')] }));
    for (const version of ['1', '2']) {
      const r = cli('sign', 'cat.json', '--key', 'k.pem', '--entry', identity, '--version', version);
      assert.equal(r.status, 0, r.stderr);
    }
    routes['/jwks.json'] = [{ 'Content-Type': 'application/jwk-set+json', 'Cache-Control': 'max-age=60' }, fs.readFileSync(path.join(dir, 'k.jwks.json'))];
    routes['/.well-known/ai-catalog.json'] = [{ 'Content-Type': 'application/ai-catalog+json' }, fs.readFileSync(path.join(dir, 'cat.json'))];
    fs.writeFileSync(path.join(dir, 'ca.pem'), o.ca);
    const url = `${o.base}/.well-known/ai-catalog.json`;
    const fleet = secretFile(dir, 'fleet');
    const fetchOpts = { allowPrivateHosts: ['localhost'], extraRootsPem: [o.ca] };
    const verifier = (secret) => new a.Verifier({ fetchDirectories: true, ...fetchOpts, keyCache: redis.url, fleetSecretFile: secret });

    // The CLI without --key resolves each identity's keys: the same report.
    // urn:c has no Trust Manifest: the catalog is `unsigned`, accepted by
    // --allow-unsigned / allowUnsigned (docs/report.md).
    const r = await cliAsync('verify', url, '--ca-file', 'ca.pem', '--allow-private-networks', '--allow-unsigned', '--json');
    assert.equal(r.status, 0, r.stderr);
    const want = JSON.parse(r.stdout);
    assert.equal(want.verdict, 'unsigned');
    const got = await verifier(fleet).verifyCatalogUrl(url, { ...fetchOpts, allowUnsigned: true });
    assert.deepEqual(JSON.parse(JSON.stringify(got)), want);
    assert.deepEqual(got.details.entries.map((e) => e.manifest.status), ['verified', 'verified', 'unsigned']);
    const file = await cliAsync('verify', 'cat.json', '--ca-file', 'ca.pem', '--allow-private-networks', '--allow-unsigned', '--json');
    const fileWant = JSON.parse(file.stdout);
    const fileGot = JSON.parse(JSON.stringify(await verifier(fleet).verifyCatalogAsync(fs.readFileSync(path.join(dir, 'cat.json')), { allowUnsigned: true })));
    assert.equal(fileGot.subject, null);
    delete fileGot.subject;
    delete fileWant.subject;
    assert.deepEqual(fileGot, fileWant);

    // Two binding verifiers (and the CLI, which has no key cache) so far:
    // the CLI fetched the JWK Set twice, the fleet once.
    assert.equal(o.served.filter((p) => p === '/jwks.json').length, 3);
    await verifier(secretFile(dir, 'other', 't'.repeat(40))).verifyCatalogUrl(url, { ...fetchOpts, allowUnsigned: true });
    assert.equal(o.served.filter((p) => p === '/jwks.json').length, 4);
  } finally {
    await o.close();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('two Express gates whose verifiers share a key cache fetch the agent directory once', async (t) => {
  const redis = await helpers.redisServer();
  if (!redis) return t.skip('redis-server not installed');
  const express = require('express');
  const { signatureMiddleware } = require('../express.js');
  const { key, o, dir } = await agentDirectory();
  const fleet = secretFile(dir, 'fleet');
  const servers = [];
  try {
    for (let i = 0; i < 2; i++) {
      const v = new a.Verifier({ fetchDirectories: true, allowPrivateHosts: ['localhost'], extraRootsPem: [o.ca], keyCache: redis.url, fleetSecretFile: fleet });
      const app = express();
      let mw;
      app.use((req, res, next) => mw(req, res, next));
      app.get('/page', (req, res) => res.json({ agent: req.agentsig && req.agentsig.agent }));
      const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
      servers.push(server);
      const authority = `127.0.0.1:${server.address().port}`;
      mw = signatureMiddleware(v, { authorities: [authority], webBotAuth: true, scheme: 'https' });
      const h = a.signRequest('GET', `https://${authority}/page`, [], undefined, key, { signatureAgent: o.base });
      const r = await fetch(`http://${authority}/page`, { headers: h.filter(([n]) => n.toLowerCase() !== 'host') });
      assert.equal(r.status, 200, await r.clone().text());
      assert.equal((await r.json()).agent, o.base);
    }
    assert.deepEqual(o.served, [DIRECTORY]);
  } finally {
    for (const s of servers) await new Promise((r) => s.close(r));
    await o.close();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
