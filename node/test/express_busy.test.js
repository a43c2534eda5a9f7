// Requests naming a key directory that never answers (a tarpit) must not
// hold up the rest: agentsig/express lets at most `maxDirectoryWaits`
// verifications wait on key directories at once and refuses the requests
// beyond at once with 503 `directory-busy` (and Retry-After), as the Python
// ASGI middleware does; a request without a Web Bot Auth signature is
// answered meanwhile. Counted, not timed: connections to the tarpit and
// answers received.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const express = require('express');
const a = require('..');
const { signatureMiddleware, DEFAULT_MAX_DIRECTORY_WAITS } = require('../express.js');

const SIGNED = 12;
const key = a.SigningKey.generate('EdDSA');

/** A loopback TCP listener that accepts connections and never answers. */
async function tarpit() {
  const accepted = [];
  const server = net.createServer((s) => { accepted.push(s); s.on('error', () => {}); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    accepted,
    close: () => { for (const s of accepted) s.destroy(); return new Promise((r) => server.close(r)); },
  };
}

/** Resolves once `cond()` holds; a safety bound, not a measurement. */
async function until(cond, what) {
  for (let i = 0; i < 6000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), `never reached: ${what}`);
}

test('past maxDirectoryWaits a Web Bot Auth request gets 503 directory-busy at once; an unsigned one is answered', async () => {
  const pool = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10) || 4;
  assert.equal(DEFAULT_MAX_DIRECTORY_WAITS, Math.max(1, Math.floor(pool / 2)), 'half the libuv pool');
  const pit = await tarpit();
  const agent = `https://127.0.0.1:${pit.port}`;
  const verifier = new a.Verifier({ fetchDirectories: true, allowPrivateHosts: ['127.0.0.1'] });
  const app = express();
  let mw;
  app.use((req, res, next) => mw(req, res, next));
  app.get('/whoami', (req, res) => res.json({ agent: req.agentsig && req.agentsig.agent }));
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const authority = `127.0.0.1:${server.address().port}`;
  mw = signatureMiddleware(verifier, { authorities: [authority], webBotAuth: true, scheme: 'https' });
  const answered = [];
  const pending = [];
  try {
    for (let i = 0; i < SIGNED; i++) {
      const h = a.signRequest('GET', `https://${authority}/whoami`, [], undefined, key, { signatureAgent: agent });
      pending.push(fetch(`http://${authority}/whoami`, { headers: h })
        .then(async (r) => { answered.push({ status: r.status, retry: r.headers.get('retry-after'), json: await r.json() }); })
        .catch(() => {}));
    }
    // The bound is full: the requests over it were refused as busy, and
    // the ones under it wait on the tarpit (through one fetch of its URL:
    // the library's key-set client fetches a URL once however many
    // verifications need it).
    await until(() => answered.length >= SIGNED - DEFAULT_MAX_DIRECTORY_WAITS && pit.accepted.length >= 1,
      'the busy answers and a tarpit connection');
    const r = await fetch(`http://${authority}/whoami`);
    assert.equal(r.status, 401);
    assert.equal((await r.json()).code, 'unsigned');
    // Answered while every admitted verification still waits: only the
    // requests over the bound, each as busy, with a problem body.
    const done = [...answered];
    assert.equal(done.length, SIGNED - DEFAULT_MAX_DIRECTORY_WAITS);
    for (const d of done) {
      assert.equal(d.status, 503);
      assert.equal(d.retry, '1');
      assert.equal(d.json.code, 'directory-busy');
      assert.equal(d.json.title, 'Service Unavailable');
    }
    assert.ok(pit.accepted.length >= 1 && pit.accepted.length <= DEFAULT_MAX_DIRECTORY_WAITS, `${pit.accepted.length}`);
  } finally {
    await pit.close();
    await Promise.all(pending);
    await new Promise((r) => server.close(r));
  }
  // The waiting ones end once the tarpit is gone (refused: no key set).
  assert.equal(answered.length, SIGNED);
  assert.equal(answered.filter((d) => d.status === 503).length, SIGNED - DEFAULT_MAX_DIRECTORY_WAITS);
});

test('maxDirectoryWaits is checked', () => {
  const v = new a.Verifier({ fetchDirectories: true });
  for (const bad of [0, -1, 1.5, '2']) {
    assert.throws(() => signatureMiddleware(v, { anyAuthority: true, maxDirectoryWaits: bad }), TypeError);
  }
});
