// agentsig/fetch on loopback: every hop is signed for its own target (a
// redirect's next hop verifies at the server; the first hop's signature
// would not), Web Bot Auth by default with a signatureAgent, and the
// redirect modes of fetch are kept.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const a = require('..');
const { signingFetch } = require('../fetch.js');

const key = a.SigningKey.generate('EdDSA');
const AGENT = 'https://bot.example';

/** A loopback server: /go/N redirects (status from ?s=) to /go/N-1, /go/0
 * answers with the verification of the request it received. */
async function server(verifier, verifyOpts) {
  const seen = [];
  const s = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const authority = req.headers.host;
      let verdict;
      try {
        verdict = verifier.verifyRequest(req.method, req.url, req.rawHeaders, body, { scheme: 'http', authorities: [authority], ...verifyOpts }).verdict;
      } catch (e) {
        verdict = e.code;
      }
      seen.push({ method: req.method, url: req.url, verdict, bytes: body.length });
      const m = /^\/go\/(\d+)(?:\?s=(\d+))?/.exec(req.url);
      if (m && m[1] !== '0') {
        res.writeHead(Number(m[2] || 302), { Location: `/go/${m[1] - 1}${m[2] ? `?s=${m[2]}` : ''}` });
        res.end();
        return;
      }
      res.end(JSON.stringify({ verdict }));
    });
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${s.address().port}`, seen, close: () => new Promise((r) => s.close(r)) };
}

test('each redirect hop is signed anew for its target (plain RFC 9421)', async () => {
  const v = new a.Verifier({ keys: [key] });
  const s = await server(v, {});
  try {
    const f = signingFetch(key);
    const res = await f(`${s.base}/go/3?s=307`, { method: 'PUT', body: 'data', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(res.status, 200);
    assert.deepEqual(s.seen.map((x) => [x.method, x.url, x.verdict, x.bytes]), [
      ['PUT', '/go/3?s=307', 'verified', 4], ['PUT', '/go/2?s=307', 'verified', 4],
      ['PUT', '/go/1?s=307', 'verified', 4], ['PUT', '/go/0?s=307', 'verified', 4],
    ]);
    // fetch's own redirect handling resends the first hop's signature, made
    // for another path: the next hop does not verify.
    s.seen.length = 0;
    const url = `${s.base}/go/1?s=307`;
    await fetch(url, { method: 'PUT', body: 'data', headers: a.signRequest('PUT', url, [], 'data', key) });
    assert.deepEqual(s.seen.map((x) => x.verdict), ['verified', 'bad-signature']);
  } finally {
    await s.close();
  }
});

test('a 302 of a POST becomes a GET without content; Web Bot Auth by default with a signatureAgent', async () => {
  const v = new a.Verifier({ agentKeys: { [AGENT]: [key] } });
  // The profile requires https (draft-meunier-webbotauth-httpsig-protocol): the
  // server is plain http on loopback, so verify as behind a TLS proxy.
  const s = await server(v, { webBotAuth: true, scheme: 'https' });
  try {
    const base = s.base;
    // Sign for the https URL the proxy would forward: the wrapped fetch
    // rewrites it to the loopback server.
    const inner = (url, init) => fetch(url.replace(/^https:/, 'http:'), init);
    const g = signingFetch(key, { signatureAgent: AGENT, fetch: inner });
    const res = await g(`${base.replace('http:', 'https:')}/go/1`, { method: 'POST', body: '{"a":1}', headers: { 'Content-Type': 'application/json' } });
    assert.equal(res.status, 200);
    assert.deepEqual(s.seen.map((x) => [x.method, x.url, x.verdict, x.bytes]), [
      ['POST', '/go/1', 'verified', 7], ['GET', '/go/0', 'verified', 0],
    ]);
  } finally {
    await s.close();
  }
});

test("redirect: 'manual' returns the redirect; too many redirects is a TypeError, as in fetch", async () => {
  const v = new a.Verifier({ keys: [key] });
  const s = await server(v, {});
  try {
    const f = signingFetch(key, { maxRedirects: 2 });
    const manual = await f(`${s.base}/go/5`, { redirect: 'manual' });
    assert.equal(manual.status, 302);
    await assert.rejects(f(`${s.base}/go/5`), TypeError);
    assert.equal(s.seen.length, 1 + 3);
    assert.ok(s.seen.every((x) => x.verdict === 'verified'));
  } finally {
    await s.close();
  }
});

test('a hop to another origin drops Authorization and Cookie; a same-origin hop keeps them', async () => {
  const got = [];
  const target = http.createServer((req, res) => {
    got.push([req.url, req.headers.authorization ?? null, req.headers.cookie ?? null]);
    res.end('ok');
  });
  await new Promise((r) => target.listen(0, '127.0.0.1', r));
  const port = target.address().port;
  const start = http.createServer((req, res) => {
    got.push([req.url, req.headers.authorization ?? null, req.headers.cookie ?? null]);
    res.writeHead(302, { Location: req.url === '/a' ? '/b' : `http://127.0.0.1:${port}/cross` });
    res.end();
  });
  await new Promise((r) => start.listen(0, '127.0.0.1', r));
  try {
    const f = signingFetch(key);
    const res = await f(`http://127.0.0.1:${start.address().port}/a`, { headers: { Authorization: 'Bearer t', Cookie: 'c=1' } });
    assert.equal(res.status, 200);
    assert.deepEqual(got, [['/a', 'Bearer t', 'c=1'], ['/b', 'Bearer t', 'c=1'], ['/cross', null, null]]);
  } finally {
    await new Promise((r) => start.close(r));
    await new Promise((r) => target.close(r));
  }
});

/** A loopback HTTPS server with a self-signed certificate made for the
 * test, and a fetch over node:https trusting it (the global fetch takes no
 * CA per request). */
async function httpsServer(handler) {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const https = require('node:https');
  const { execFileSync } = require('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-fetch-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1'],
  { stdio: 'ignore' });
  const cert = fs.readFileSync(certFile);
  const s = https.createServer({ key: fs.readFileSync(keyFile), cert }, handler);
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const tlsFetch = (url, init) => {
    if (!url.startsWith('https:')) return globalThis.fetch(url, init);
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method: init.method, headers: Object.fromEntries(init.headers), ca: cert }, (res) => {
        res.resume();
        const headers = new Headers();
        for (const [n, v] of Object.entries(res.headers)) headers.set(n, Array.isArray(v) ? v.join(', ') : v);
        resolve(new Response(null, { status: res.statusCode, headers }));
      });
      req.on('error', reject);
      req.end(init.body);
    });
  };
  return {
    base: `https://127.0.0.1:${s.address().port}`,
    tlsFetch,
    close: () => new Promise((r) => { s.close(r); fs.rmSync(dir, { recursive: true, force: true }); }),
  };
}

test('a redirect from https to http is refused: no signed hop is sent in clear text', async () => {
  const clear = [];
  const target = http.createServer((req, res) => {
    clear.push([req.url, req.headers.signature ?? null]);
    res.end('ok');
  });
  await new Promise((r) => target.listen(0, '127.0.0.1', r));
  const port = target.address().port;
  const signedAtTls = [];
  const tls = await httpsServer((req, res) => {
    signedAtTls.push(req.headers.signature !== undefined);
    res.writeHead(302, { Location: `http://127.0.0.1:${port}/landing` });
    res.end();
  });
  try {
    const f = signingFetch(key, { signatureAgent: AGENT, fetch: tls.tlsFetch });
    await assert.rejects(f(`${tls.base}/start`), (e) => e instanceof TypeError && /clear text/.test(e.message));
    assert.deepEqual(signedAtTls, [true], 'the https hop was signed and sent');
    assert.deepEqual(clear, [], 'nothing reached the http target');
    // An http start stays http: the refusal is of the downgrade only.
    const ok = await signingFetch(key, { signatureAgent: AGENT })(`http://127.0.0.1:${port}/plain`);
    assert.equal(ok.status, 200);
    assert.equal(clear.length, 1);
  } finally {
    await tls.close();
    await new Promise((r) => target.close(r));
  }
});
