// Web Bot Auth with key directories fetched over HTTPS (fetchDirectories):
// the agent's directory is served by a loopback HTTPS server in this very
// process, whose certificate a test CA (made with the openssl command)
// signed; the fetcher trusts that CA (extraRootsPem) and lets localhost
// through its SSRF guard (allowPrivateHosts) for the test only.
//
// The Promise form runs on the libuv pool: the directory is answered by this
// process's event loop, so a verification that held the loop could never
// get its answer (it would end at the fetch deadline with a FetchError).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const https = require('node:https');
const a = require('..');
const { certificates } = require('./helpers.js');

const URL_ = 'https://api.example/orders';

async function directory() {
  const { ca, cert, key: tlsKey } = certificates();
  const key = a.SigningKey.generate('EdDSA');
  const body = JSON.stringify({ keys: [{ ...key.publicJwk(), kid: key.thumbprint }] });
  const served = [];
  const server = https.createServer({ cert, key: tlsKey }, (req, res) => {
    served.push(req.url);
    if (req.url !== '/.well-known/http-message-signatures-directory') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/http-message-signatures-directory+json', 'Cache-Control': 'max-age=60' });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { agent: `https://localhost:${server.address().port}`, key, ca, served, close: () => new Promise((r) => server.close(r)) };
}

test('verifyRequestAsync fetches the key directory while the event loop serves it', async () => {
  const d = await directory();
  try {
    const v = new a.Verifier({ fetchDirectories: true, allowPrivateHosts: ['localhost'], extraRootsPem: [d.ca] });
    const h = a.signRequest('GET', URL_, [], undefined, d.key, { signatureAgent: d.agent });
    const r = await v.verifyRequestAsync('GET', URL_, h, undefined, { webBotAuth: true, authorities: ['api.example'] });
    assert.equal(r.verdict, 'verified');
    assert.equal(r.details.web_bot_auth.agent, d.agent);
    assert.deepEqual(r.signatures[0].key.source, { kind: 'discovered', from: `${d.agent}/.well-known/http-message-signatures-directory` });
    assert.deepEqual(d.served, ['/.well-known/http-message-signatures-directory']);
    // A key the directory does not list is refused, and it is no FetchError.
    const other = a.SigningKey.generate('EdDSA');
    const h2 = a.signRequest('GET', URL_, [], undefined, other, { signatureAgent: d.agent });
    await assert.rejects(v.verifyRequestAsync('GET', URL_, h2, undefined, { webBotAuth: true, authorities: ['api.example'] }),
      (e) => e instanceof a.NotVerified && !(e instanceof a.FetchError) && e.code === 'unknown-key');
  } finally {
    await d.close();
  }
});

test('the SSRF guard stays on by default: a loopback directory is a FetchError, which is a NotVerified', async () => {
  const d = await directory();
  try {
    const v = new a.Verifier({ fetchDirectories: true, extraRootsPem: [d.ca] });
    const h = a.signRequest('GET', URL_, [], undefined, d.key, { signatureAgent: d.agent });
    await assert.rejects(v.verifyRequestAsync('GET', URL_, h, undefined, { webBotAuth: true }),
      (e) => e instanceof a.FetchError && e instanceof a.NotVerified && e.code === 'directory-refused');
    assert.deepEqual(d.served, []);
  } finally {
    await d.close();
  }
});
