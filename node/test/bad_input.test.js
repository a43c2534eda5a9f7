// Bad input from JavaScript: a wrong type is a TypeError, anything malformed
// or too large a typed AgentsigError, never a crash; worker threads; the
// process exits on its own after a call.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const a = require('..');

const key = a.SigningKey.generate('ES256');
const v = new a.Verifier({ keys: [key] });
const doc = { name: 'x' };
const jws = a.signDescriptor(doc, key);

test('wrong argument types are TypeErrors, not plain Errors', () => {
  assert.throws(() => v.verifyDescriptor(doc, 42), TypeError);
  assert.throws(() => v.verifyDescriptor(undefined, jws), TypeError);
  assert.throws(() => v.verifyDescriptor([undefined], jws), TypeError);
  // An object member whose value is undefined is left out, as JSON.stringify does.
  assert.equal(a.canonicalize({ b: undefined, a: 1 }).toString(), '{"a":1}');
  assert.equal(v.verifyDescriptor({ ...doc, extra: undefined }, jws).verdict, 'verified');
  assert.throws(() => v.verifyDescriptor({ f() {} }, jws), TypeError);
  assert.throws(() => v.verifyDescriptor({ d: new Date() }, jws), TypeError);
  assert.throws(() => v.verifyDescriptor(new Map(), jws), TypeError);
  assert.throws(() => v.verifyCard(Symbol('x')), TypeError);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', { host: 'a.example' }), TypeError);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [['a', 1]]), TypeError);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', ['a']), TypeError);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [], 42), TypeError);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [], undefined, { authorities: 'a.example' }), TypeError);
  assert.throws(() => v.verifyResponse('200', [], undefined), TypeError);
  assert.throws(() => v.auditDelegation(7), TypeError);
  assert.throws(() => a.signDescriptor(doc, { kid: 'not a key' }), TypeError);
  assert.throws(() => a.SigningKey.generate(256), TypeError);
  assert.throws(() => a.SigningKey.fromPem(null), TypeError);
  assert.throws(() => new a.Verifier('jwks.json'), TypeError);
  assert.throws(() => new a.Verifier({ keys: [key], strictLowS: 'yes' }), TypeError);
  assert.throws(() => new a.Verifier({ keys: [key], now: 5 }), TypeError);
});

test('values with no JSON form and nesting too deep are BadInput', () => {
  for (const bad of [NaN, Infinity, { x: -Infinity }]) {
    assert.throws(() => a.canonicalize(bad), (e) => e instanceof a.BadInput && e.code === 'input.malformed');
  }
  let deep = 1;
  for (let i = 0; i < 200; i++) deep = [deep];
  assert.throws(() => a.canonicalize(deep), a.BadInput);
  // A lone surrogate has no UTF-8 form: refused, not replaced.
  assert.throws(() => a.canonicalize({ s: '\ud800' }), a.BadInput);
});

test('huge inputs are refused before they are copied', () => {
  const huge = Buffer.alloc(a.MAX_INPUT_BYTES + 1, 0x20);
  assert.throws(() => v.verifyDescriptor(huge, jws), (e) => e instanceof a.BadInput && e.code === 'input.unreadable');
  assert.throws(() => v.verifyRequest('POST', 'https://a.example/', [], huge), (e) => e instanceof a.BadInput && e.code === 'input.unreadable');
  assert.throws(() => v.verifyDescriptor(doc, 'a'.repeat(10 * 1024 * 1024)), a.BadInput);
  const many = Array.from({ length: 100000 }, (_, i) => [`x-${i}`, 'v']);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', many), a.BadInput);
});

test('invalid UTF-8, malformed JSON, JWS, headers and keys are typed errors', () => {
  assert.throws(() => v.verifyDescriptor(Buffer.from([0x7b, 0xff, 0x7d]), jws), a.BadInput);
  assert.throws(() => v.verifyDescriptor(Buffer.from('{"a":1,"a":2}'), jws), a.BadInput);
  assert.throws(() => v.verifyDescriptor(Buffer.from('{"a":'), jws), a.BadInput);
  for (const bad of ['', 'x', 'a.b.c.d', '..', 'eyJhbGciOiJub25lIn0..', '!!!..!!!']) {
    assert.throws(() => v.verifyDescriptor(doc, bad), (e) => e instanceof a.AgentsigError, bad);
  }
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [['bad name', 'v']]), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [['x', 'a\r\nb']]), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/#frag', []), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', 'https://u@a.example/', []), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', 'not a url', []), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', '/p', [['Host', 'a.example'], ['Host', 'b.example']], undefined, { scheme: 'https' }), a.BadInput);
  assert.throws(() => v.verifyRequest('GET', 'https://a.example/', [['Signature-Input', 'sig1=(('], ['Signature', 'sig1=:AA==:']]), a.NotVerified);
  assert.throws(() => a.SigningKey.fromPem('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), a.BadKey);
  assert.throws(() => a.SigningKey.fromPem(Buffer.from([0xc3, 0x28])), a.BadInput);
  assert.throws(() => a.SigningKey.generate('none'), a.BadInput);
  assert.throws(() => new a.Verifier({ jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } }), a.BadKey);
  assert.throws(() => new a.Verifier({ jwks: 'keys/jwks.json' }), a.BadKey);
  assert.throws(() => new a.Verifier({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }), a.BadKey);
  assert.throws(() => new a.Verifier({ keys: ['not a pem'] }), a.BadKey);
  assert.throws(() => v.auditDelegation('not.a.jwt'), a.AgentsigError);
  assert.throws(() => v.auditDelegation([]), a.BadInput);
});

test('calls from worker_threads are safe', async () => {
  const src = `
    const { parentPort } = require('node:worker_threads');
    const a = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    const k = a.SigningKey.generate('EdDSA');
    const v = new a.Verifier({ keys: [k] });
    let ok = 0;
    for (let i = 0; i < 50; i++) {
      const d = { i };
      if (v.verifyDescriptor(d, a.signDescriptor(d, k)).verified) ok++;
    }
    v.verifyDescriptorAsync({ i: 1 }, a.signDescriptor({ i: 1 }, k)).then((r) => parentPort.postMessage(ok + (r.verified ? 1 : 0)));
  `;
  const counts = await Promise.all(Array.from({ length: 4 }, () => new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  })));
  assert.deepEqual(counts, [51, 51, 51, 51]);
});

test('a process exits on its own after sync and Promise calls', () => {
  const src = `
    const a = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    const k = a.SigningKey.generate('ES256');
    const v = new a.Verifier({ keys: [k], replayStore: 'memory' });
    const d = { n: 1 };
    v.verifyDescriptorAsync(d, a.signDescriptor(d, k)).then((r) => console.log(r.verdict));
  `;
  // The timeout only guards the test run: a process that stays alive fails.
  const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.signal, null, 'the process was killed: it did not exit on its own');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'verified');
});
