// One default policy for a request in every surface (RFC 9421 section
// 7.2.8, RFC 9530 section 2): content its signature does not cover through
// content-digest is refused by default, as by `agentsig http verify` and the
// Rust library, unless `allowUncoveredContent: true` (the CLI's
// --allow-uncovered-content). The corpus tests/vectors/request_policy.json is
// the one the Rust (tests/request_policy.rs) and Python
// (python/tests/test_request_policy.py) suites read.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const a = require('..');

const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'tests', 'vectors', 'request_policy.json'), 'utf8'));

function verdict(v, c) {
  try {
    const r = v.verifyRequest(c.method, c.url, c.headers, Buffer.from(c.body));
    assert.equal(r.verdict, 'verified');
    return 'verified';
  } catch (e) {
    if (!(e instanceof a.AgentsigError)) throw e;
    return e.code;
  }
}

for (const waived of [false, true]) {
  test(`verifyRequest gives the CLI's verdicts (allowUncoveredContent: ${waived})`, () => {
    const v = new a.Verifier({ jwks: corpus.jwks, nowSeconds: corpus.now, ...(waived ? { allowUncoveredContent: true } : {}) });
    assert.ok(corpus.cases.length >= 5);
    for (const c of corpus.cases) {
      assert.equal(verdict(v, c), waived ? c.waived : c.default, c.name);
    }
  });
}

test('a changed body under a signature over @method @authority @path is refused by default', () => {
  const v = new a.Verifier({ jwks: corpus.jwks, nowSeconds: corpus.now });
  const c = corpus.cases.find((x) => x.name === 'content changed, not covered');
  assert.throws(() => v.verifyRequest(c.method, c.url, c.headers, Buffer.from(c.body)),
    (e) => e instanceof a.PolicyRefused && e.code === 'required-component-not-covered');
});
