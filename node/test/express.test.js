// agentsig/express on loopback: an Express app admits a signed agent (its
// identity on req.agentsig, the body handed on), and refuses an unsigned, a
// tampered, a replayed and a foreign-authority request with 401 and an RFC
// 9457 problem body.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const express = require('express');
const a = require('..');
const { signatureMiddleware } = require('../express.js');

const key = a.SigningKey.generate('ES256');
const agentKey = a.SigningKey.generate('EdDSA');
const AGENT = 'https://bot.example';

/** An Express app on a loopback port; `gate(authority)` makes the
 * middleware once the port, and so the site's authority, is known. */
async function serve(gate, scheme) {
  const app = express();
  let mw;
  app.use((req, res, next) => mw(req, res, next));
  app.use(express.json()); // mounted after: it leaves the body agentsig read alone
  app.all('/{*rest}', (req, res) => res.json({ agent: req.agentsig && req.agentsig.thumbprint, wba: req.agentsig && req.agentsig.agent, body: req.body.toString() }));
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const authority = `127.0.0.1:${server.address().port}`;
  mw = gate(authority);
  return { base: `http://${authority}`, signedBase: `${scheme || 'http'}://${authority}`, close: () => new Promise((r) => server.close(r)) };
}

/** Send with fetch, the signed headers as given. */
async function send(base, path, method, headers, body) {
  const r = await fetch(base + path, { method, headers: headers.filter(([n]) => n.toLowerCase() !== 'host'), body });
  const text = await r.text();
  return { status: r.status, type: r.headers.get('content-type'), json: JSON.parse(text) };
}

test('the middleware needs the site authorities (or anyAuthority) and a Verifier', () => {
  const v = new a.Verifier({ keys: [key] });
  assert.throws(() => signatureMiddleware(v, {}), /authorities/);
  assert.throws(() => signatureMiddleware({}, { anyAuthority: true }), TypeError);
  assert.throws(() => signatureMiddleware(v, { authorities: ['a.example'], anyAuthority: true }), TypeError);
  assert.throws(() => signatureMiddleware(v, { authorities: ['bad host/'] }), a.BadInput);
  assert.throws(() => signatureMiddleware(v, { authoritys: ['a.example'] }), TypeError);
});

test('an Express app admits a signed agent and refuses unsigned, tampered and foreign requests', async () => {
  const v = new a.Verifier({ keys: [key] });
  const s = await serve((authority) => signatureMiddleware(v, { authorities: [authority] }));
  try {
    const url = `${s.base}/orders?id=7`;
    const body = '{"n":1}';
    const components = ['@method', '@authority', '@path', '@query', 'content-digest', 'content-type'];
    const signed = () => a.signRequest('POST', url, [['Content-Type', 'application/json']], body, key, { components });
    const h = signed();
    const ok = await send(s.base, '/orders?id=7', 'POST', h, body);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.agent, key.thumbprint);
    assert.equal(ok.json.body, body);

    const unsigned = await send(s.base, '/orders?id=7', 'POST', [['Content-Type', 'application/json']], body);
    assert.equal(unsigned.status, 401);
    assert.equal(unsigned.type, 'application/problem+json');
    assert.deepEqual(Object.keys(unsigned.json), ['type', 'title', 'status', 'code', 'detail']);
    assert.equal(unsigned.json.code, 'unsigned');

    const tampered = await send(s.base, '/orders?id=7', 'POST', signed(), '{"n":2}');
    assert.equal(tampered.status, 401);

    const otherPath = await send(s.base, '/orders?id=8', 'POST', signed(), body);
    assert.equal(otherPath.status, 401);

    // Signed for another site, replayed here: its @authority is not ours.
    const foreign = a.signRequest('POST', 'https://shop.example/orders?id=7', [['Content-Type', 'application/json']], body, key, { components });
    const f = await send(s.base, '/orders?id=7', 'POST', foreign, body);
    assert.equal(f.status, 401);
  } finally {
    await s.close();
  }
});

test('Web Bot Auth through the middleware: the agent is on req.agentsig; a nonce is accepted once', async () => {
  const v = new a.Verifier({ agentKeys: { [AGENT]: [agentKey] } });
  // Behind a TLS-terminating proxy: the scheme it receives on is https.
  const s = await serve((authority) => signatureMiddleware(v, { authorities: [authority], webBotAuth: true, scheme: 'https' }), 'https');
  try {
    const h = a.signRequest('GET', `${s.signedBase}/page`, [], undefined, agentKey, { signatureAgent: AGENT });
    const ok = await send(s.base, '/page', 'GET', h);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.agent, agentKey.thumbprint);
    assert.ok(ok.json.wba);
    const again = await send(s.base, '/page', 'GET', h);
    assert.equal(again.status, 401);
    assert.equal(again.json.code, 'replay');
  } finally {
    await s.close();
  }
});

test('require: false admits an unsigned request without identity; a failed signature stays refused; maxBody answers 413', async () => {
  const v = new a.Verifier({ keys: [key] });
  const s = await serve((authority) => signatureMiddleware(v, { authorities: [authority], require: false, maxBody: 16 }));
  try {
    const anon = await send(s.base, '/x', 'POST', [], 'hello');
    assert.equal(anon.status, 200);
    assert.equal(anon.json.agent, null);
    assert.equal(anon.json.body, 'hello');
    const bad = a.signRequest('POST', `${s.base}/x`, [], 'hello', key);
    assert.equal((await send(s.base, '/x', 'POST', bad, 'hellO')).status, 401);
    const big = await send(s.base, '/x', 'POST', [], 'x'.repeat(17));
    assert.equal(big.status, 413);
    assert.equal(big.json.code, 'body-too-large');
  } finally {
    await s.close();
  }
});

test('a body parser mounted before the middleware is a configuration error, not an admitted request', async () => {
  const v = new a.Verifier({ keys: [key] });
  const app = express();
  app.use(express.text({ type: '*/*' }));
  let mw;
  app.use((req, res, next) => mw(req, res, next));
  app.all('/{*rest}', (req, res) => res.json({ admitted: true }));
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const authority = `127.0.0.1:${server.address().port}`;
  mw = signatureMiddleware(v, { authorities: [authority] });
  try {
    const h = a.signRequest('POST', `http://${authority}/x`, [['Content-Type', 'text/plain']], 'hi', key);
    const r = await send(`http://${authority}`, '/x', 'POST', h, 'hi');
    assert.equal(r.status, 500);
    assert.equal(r.json.code, 'body-consumed');
  } finally {
    await new Promise((r) => server.close(r));
  }
});
