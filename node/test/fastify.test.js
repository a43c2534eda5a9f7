// agentsig/fastify on loopback: a Fastify app admits a signed agent (its
// identity on request.agentsig, the body read once, checked against its
// Content-Digest and parsed by Fastify's JSON parser) and refuses an
// unsigned, a tampered, a foreign-authority and a replayed request with 401
// and an RFC 9457 problem body; the CommonJS and ES module forms are one
// plugin.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const Fastify = require('fastify');
const a = require('..');
const agentsig = require('../fastify.js');

const SITE = 'site.example';
const key = a.SigningKey.generate('ES256');
const agentKey = a.SigningKey.generate('EdDSA');
const AGENT = 'https://bot.example';

/** A Fastify app on a loopback port gated by the plugin with `opts`. */
async function serve(opts) {
  const app = Fastify();
  await app.register(agentsig, opts);
  const seen = (req) => ({
    agent: req.agentsig && req.agentsig.thumbprint,
    wba: req.agentsig && req.agentsig.agent,
    error: req.agentsigError && req.agentsigError.code,
    body: req.body ?? null,
    raw: req.rawBody ? req.rawBody.toString() : null,
  });
  app.post('/orders', async (req) => seen(req));
  app.get('/page', async (req) => seen(req));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: app.server.address().port, close: () => app.close() };
}

/** Send over node:http with the site's Host, the headers as signed. */
function send(port, path, method, headers, body) {
  return new Promise((resolve, reject) => {
    const flat = [['Host', SITE], ...headers.filter(([n]) => n.toLowerCase() !== 'host')];
    if (body !== undefined) flat.push(['Content-Length', String(Buffer.byteLength(body))]);
    const req = http.request({ host: '127.0.0.1', port, path, method, headers: flat.flat() }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode, type: res.headers['content-type'], retry: res.headers['retry-after'], json: JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('the plugin needs a Verifier and the site authorities (or anyAuthority)', async () => {
  const v = new a.Verifier({ keys: [key] });
  for (const opts of [{ verifier: v }, { verifier: {}, anyAuthority: true }, { verifier: v, authoritys: [SITE] },
    { verifier: v, authorities: [SITE], anyAuthority: true }]) {
    await assert.rejects(async () => { await Fastify().register(agentsig, opts); }, TypeError);
  }
  await assert.rejects(async () => { await Fastify().register(agentsig, { verifier: v, authorities: ['bad host/'] }); }, a.BadInput);
});

test('a Fastify app admits a signed agent and refuses unsigned, tampered and foreign requests', async () => {
  const s = await serve({ verifier: new a.Verifier({ keys: [key] }), authorities: [SITE] });
  try {
    const body = '{"n":1}';
    const components = ['@method', '@authority', '@path', '@query', 'content-digest', 'content-type'];
    const signed = (url = `http://${SITE}/orders?id=7`) =>
      a.signRequest('POST', url, [['Content-Type', 'application/json']], body, key, { components });
    const ok = await send(s.port, '/orders?id=7', 'POST', signed(), body);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.agent, key.thumbprint);
    // Read once, verified, then parsed by Fastify's own JSON parser.
    assert.deepEqual(ok.json.body, { n: 1 });
    assert.equal(ok.json.raw, body);

    const unsigned = await send(s.port, '/orders?id=7', 'POST', [['Content-Type', 'application/json']], body);
    assert.equal(unsigned.status, 401);
    assert.equal(unsigned.type, 'application/problem+json');
    assert.deepEqual(Object.keys(unsigned.json), ['type', 'title', 'status', 'code', 'detail']);
    assert.equal(unsigned.json.code, 'unsigned');

    // The body differs from the Content-Digest the signature covers.
    const tampered = await send(s.port, '/orders?id=7', 'POST', signed(), '{"n":2}');
    assert.equal(tampered.status, 401);
    assert.equal(tampered.type, 'application/problem+json');

    const otherQuery = await send(s.port, '/orders?id=8', 'POST', signed(), body);
    assert.equal(otherQuery.status, 401);

    // Signed for another site, replayed here with our Host.
    const foreign = await send(s.port, '/orders?id=7', 'POST', signed('https://shop.example/orders?id=7'), body);
    assert.equal(foreign.status, 401);
  } finally {
    await s.close();
  }
});

test('Web Bot Auth through the plugin: the agent is on request.agentsig; a nonce is accepted once', async () => {
  // Behind a TLS-terminating proxy: the scheme it receives on is https.
  const s = await serve({ verifier: new a.Verifier({ agentKeys: { [AGENT]: [agentKey] } }), authorities: [SITE],
    webBotAuth: true, scheme: 'https' });
  try {
    const h = a.signRequest('GET', `https://${SITE}/page`, [], undefined, agentKey, { signatureAgent: AGENT });
    const ok = await send(s.port, '/page', 'GET', h);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal(ok.json.agent, agentKey.thumbprint);
    assert.equal(ok.json.wba, AGENT);
    const again = await send(s.port, '/page', 'GET', h);
    assert.equal(again.status, 401);
    assert.equal(again.json.code, 'replay');
  } finally {
    await s.close();
  }
});

test('require: false admits an unsigned request; admitInvalid says why; maxBody answers 413', async () => {
  const s = await serve({ verifier: new a.Verifier({ keys: [key] }), authorities: [SITE], require: false, maxBody: 16 });
  try {
    const anon = await send(s.port, '/orders', 'POST', [['Content-Type', 'application/json']], '{"a":1}');
    assert.equal(anon.status, 200);
    assert.equal(anon.json.agent, null);
    assert.deepEqual(anon.json.body, { a: 1 });
    const bad = a.signRequest('POST', `http://${SITE}/orders`, [['Content-Type', 'application/json']], '{"a":1}', key);
    assert.equal((await send(s.port, '/orders', 'POST', bad, '{"a":2}')).status, 401);
    const big = await send(s.port, '/orders', 'POST', [['Content-Type', 'application/json']], `{"a":"${'x'.repeat(20)}"}`);
    assert.equal(big.status, 413);
    assert.equal(big.json.code, 'body-too-large');
  } finally {
    await s.close();
  }
  const s2 = await serve({ verifier: new a.Verifier({ keys: [key] }), authorities: [SITE], admitInvalid: true });
  try {
    const bad = a.signRequest('POST', `http://${SITE}/orders`, [['Content-Type', 'application/json']], '{"a":1}', key);
    const r = await send(s2.port, '/orders', 'POST', bad, '{"a":2}');
    assert.equal(r.status, 200);
    assert.equal(r.json.agent, null);
    assert.ok(r.json.error);
  } finally {
    await s2.close();
  }
});

test('the ES module form is the same plugin', async () => {
  const m = await import('../fastify.mjs');
  assert.equal(m.default, agentsig);
  assert.equal(m.agentsig, agentsig);
  assert.equal(m.DEFAULT_MAX_BODY, 1024 * 1024);
});

test('past maxDirectoryWaits the plugin answers 503 directory-busy with Retry-After (counted on a tarpit)', async () => {
  const net = require('node:net');
  const accepted = [];
  const pit = net.createServer((sock) => { accepted.push(sock); sock.on('error', () => {}); });
  await new Promise((r) => pit.listen(0, '127.0.0.1', r));
  const agent = `https://127.0.0.1:${pit.address().port}`;
  const s = await serve({ verifier: new a.Verifier({ fetchDirectories: true, allowPrivateHosts: ['127.0.0.1'] }),
    authorities: [SITE], webBotAuth: true, scheme: 'https', maxDirectoryWaits: 1 });
  const answered = [];
  const signed = () => a.signRequest('GET', `https://${SITE}/page`, [], undefined, agentKey, { signatureAgent: agent });
  try {
    // One waits on the tarpit (its connection counted), then two more are
    // refused at once while it still waits.
    const waiting = send(s.port, '/page', 'GET', signed()).then((r) => answered.push(r));
    for (let i = 0; i < 6000 && accepted.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(accepted.length, 1);
    for (let i = 0; i < 2; i++) {
      const r = await send(s.port, '/page', 'GET', signed());
      assert.equal(r.status, 503);
      assert.equal(r.type, 'application/problem+json');
      assert.equal(r.json.code, 'directory-busy');
      assert.equal(r.retry, '1');
    }
    assert.equal(answered.length, 0, 'the first still waits');
    for (const sock of accepted) sock.destroy();
    await waiting;
    assert.equal(answered[0].status, 401);
  } finally {
    for (const sock of accepted) sock.destroy();
    await new Promise((r) => pit.close(r));
    await s.close();
  }
});
