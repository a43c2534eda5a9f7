// AI Catalogs (verifyCatalog, verifyCatalogAsync, verifyCatalogUrl): a
// catalog whose Trust Manifests the agentsig CLI signed verifies, a changed
// manifest throws NotVerified with the report, an oversized catalog is
// BadInput, and the report is the CLI's `verify CATALOG --json` report in
// every mode. The URL form fetches on the libuv pool from a loopback HTTPS
// server in this very process (its certificate signed by a test CA).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const https = require('node:https');
const a = require('..');
const { spawnSync } = require('node:child_process');
const helpers = require('./helpers.js');

const { run, tmpdir, certificates } = helpers;

const entry = (identifier) => ({
  // Inline, so that `sign` binds it to its manifest (an entry by url read
  // from a file is not fetched: nothing would bind its bytes).
  identifier, displayName: 'X', version: '1', mediaType: 'application/zip', data: { id: identifier },
});

/** A catalog of three entries, two of them signed by the CLI's key. */
function signed() {
  const dir = tmpdir();
  const cli = (...args) => {
    const r = spawnSync(helpers.cli(), args, { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r;
  };
  cli('keygen', '--out', 'k');
  fs.writeFileSync(path.join(dir, 'cat.json'), JSON.stringify({ specVersion: '1.0', entries: [entry('urn:a'), entry('urn:b'), entry('urn:c')] }));
  cli('sign', 'cat.json', '--key', 'k.pem', '--entry', 'urn:a');
  cli('sign', 'cat.json', '--key', 'k.pem', '--entry', 'urn:b');
  const verifier = new a.Verifier({ jwks: fs.readFileSync(path.join(dir, 'k.jwks.json')) });
  return { dir, verifier, file: (n = 'cat.json') => path.join(dir, n), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The report of a call, whether it threw NotVerified or not. */
function outcome(f) {
  try {
    return f();
  } catch (e) {
    if (e instanceof a.NotVerified) return e.report;
    throw e;
  }
}

test('a catalog signed by the CLI verifies, as bytes or as a value, sync and async', async () => {
  const s = signed();
  try {
    const text = fs.readFileSync(s.file());
    for (const form of [text, JSON.parse(text)]) {
      // urn:c has no Trust Manifest: nothing failed, but no trusted key vouches
      // for it, so the catalog is `unsigned` (docs/report.md): thrown by
      // default, returned (never verified) with allowUnsigned.
      assert.throws(() => s.verifier.verifyCatalog(form),
        (e) => e instanceof a.NotVerified && e.code === 'catalog.unsigned' && e.report.verdict === 'unsigned');
      const accept = { allowUnsigned: true };
      for (const r of [s.verifier.verifyCatalog(form, accept), await s.verifier.verifyCatalogAsync(form, accept)]) {
        assert.equal(r.verdict, 'unsigned');
        assert.equal(r.verified, false);
        assert.deepEqual(r.details.entries.map((e) => e.manifest.status), ['verified', 'verified', 'unsigned']);
        assert.equal(r.checks.filter((c) => c.code === 'catalog.entry').length, 3);
        assert.ok(Object.isFrozen(r.details.entries[0]));
      }
    }
    assert.throws(() => s.verifier.verifyCatalog(text, { requireSigned: true }), (e) => {
      assert.ok(e instanceof a.NotVerified);
      assert.equal(e.code, 'catalog.not-verified');
      assert.match(e.report.error.message, /a verified Trust Manifest is required/);
      return true;
    });
  } finally {
    s.cleanup();
  }
});

test('a tampered manifest throws NotVerified naming the entry', async () => {
  const s = signed();
  try {
    const doc = JSON.parse(fs.readFileSync(s.file(), 'utf8'));
    doc.entries[1].trustManifest.termsOfServiceUrl = 'https://evil.example/';
    const check = (e) => {
      assert.equal(e.constructor, a.NotVerified);
      assert.equal(e.code, 'catalog.not-verified');
      assert.match(e.message, /\/entries\/1/);
      assert.deepEqual(e.report.details.entries.map((x) => x.manifest.status), ['verified', 'failed', 'unsigned']);
      const failed = e.report.checks.filter((c) => c.code === 'catalog.entry' && !c.passed);
      assert.equal(failed.length, 1);
      assert.match(failed[0].message, /urn:b/);
      return true;
    };
    assert.throws(() => s.verifier.verifyCatalog(doc), check);
    await assert.rejects(s.verifier.verifyCatalogAsync(doc), check);
  } finally {
    s.cleanup();
  }
});

test('a 10 MB catalog is BadInput, and so is JSON that is not strict', async () => {
  const s = signed();
  try {
    const big = Buffer.from(`{"specVersion": "1.0", "entries": [], "pad": "${'x'.repeat(10 * 1024 * 1024)}"}`);
    for (const f of [() => s.verifier.verifyCatalog(big), () => s.verifier.verifyCatalog(JSON.parse(big))]) {
      assert.throws(f, (e) => e instanceof a.BadInput && e.code === 'input.unreadable');
    }
    await assert.rejects(s.verifier.verifyCatalogAsync(big), (e) => e instanceof a.BadInput);
    for (const bad of ['{', '{"a": 1, "a": 2}']) {
      assert.throws(() => s.verifier.verifyCatalog(Buffer.from(bad)), (e) => e instanceof a.BadInput && e.code === 'input.malformed');
    }
    assert.throws(() => s.verifier.verifyCatalog({}, { requireSigned: 'yes' }), TypeError);
    assert.throws(() => s.verifier.verifyCatalog({}, { bogus: true }), TypeError);
  } finally {
    s.cleanup();
  }
});

test("the report is the CLI's verify --json report in every mode", () => {
  const s = signed();
  try {
    const doc = JSON.parse(fs.readFileSync(s.file(), 'utf8'));
    const tampered = structuredClone(doc);
    tampered.entries[0].trustManifest.identity = 'urn:other';
    const lint = { specVersion: '1.0', entries: [entry('urn:a'), entry('urn:a')] };
    const seen = new Set();
    for (const [name, d] of [['signed', doc], ['tampered', tampered], ['lint', lint]]) {
      fs.writeFileSync(s.file(`${name}.json`), JSON.stringify(d));
      for (const requireSigned of [false, true]) {
        const args = ['verify', s.file(`${name}.json`), '--jwks', s.file('k.jwks.json'), '--json'];
        if (requireSigned) args.push('--require-signed');
        const r = run(args);
        // The one difference: the CLI names the given key set by its file,
        // the binding by its option.
        const want = JSON.parse(r.stdout.split(`JWK Set ${s.file('k.jwks.json')}`).join('JWK Set jwks'));
        assert.equal(r.status, want.verified ? 0 : 1, r.stderr);
        const got = outcome(() => s.verifier.verifyCatalog(fs.readFileSync(s.file(`${name}.json`)), { requireSigned }));
        assert.equal(got.subject, null);
        assert.deepEqual({ ...got, subject: want.subject }, want, `${name} requireSigned=${requireSigned}`);
        seen.add(want.verdict);
      }
    }
    assert.deepEqual([...seen].sort(), ['not-verified', 'unsigned']);
  } finally {
    s.cleanup();
  }
});

test('verifyCatalogUrl fetches on the libuv pool while the event loop serves the catalog', async () => {
  const s = signed();
  const { ca, cert, key } = certificates();
  const body = fs.readFileSync(s.file());
  const server = https.createServer({ cert, key }, (req, res) => {
    if (req.url !== '/.well-known/ai-catalog.json') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/ai-catalog+json' });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://localhost:${server.address().port}/.well-known/ai-catalog.json`;
  try {
    const loose = { allowPrivateHosts: ['localhost'], extraRootsPem: [ca] };
    const r = await s.verifier.verifyCatalogUrl(url, { ...loose, allowUnsigned: true });
    assert.equal(r.verdict, 'unsigned');
    assert.equal(r.subject, url);
    // The same verdict per entry (the messages may say where it was fetched).
    const statuses = (rep) => rep.details.entries.map((e) => [e.identifier, e.artifact.status, e.manifest.status]);
    assert.deepEqual(statuses(r), statuses(s.verifier.verifyCatalog(body, { allowUnsigned: true })));
    await assert.rejects(s.verifier.verifyCatalogUrl(url, { ...loose, requireSigned: true }), (e) => e.code === 'catalog.not-verified');
    // The SSRF guard is on by default: loopback is refused before any
    // connection, a FetchError with a report.
    await assert.rejects(s.verifier.verifyCatalogUrl(url, { extraRootsPem: [ca] }), (e) => {
      assert.ok(e instanceof a.FetchError && e instanceof a.NotVerified);
      assert.equal(e.code, 'fetch.failed');
      assert.equal(e.report.error.code, 'fetch.failed');
      // Nothing could be checked: unavailable, as `agentsig verify URL --json` says.
      assert.equal(e.report.verdict, 'unavailable');
      return true;
    });
    await assert.rejects(s.verifier.verifyCatalogUrl('http://example.com/.well-known/ai-catalog.json'), a.BadInput);
    await assert.rejects(s.verifier.verifyCatalogUrl(42), TypeError);
  } finally {
    await new Promise((r) => server.close(r));
    s.cleanup();
  }
});

test('SigningKey.generateAsync makes a key on the libuv pool, RSA included', async () => {
  const [rsa, ec] = await Promise.all([a.SigningKey.generateAsync('RS256'), a.SigningKey.generateAsync()]);
  assert.equal(rsa.algorithm, 'RS256');
  assert.equal(ec.algorithm, 'ES256');
  assert.ok(rsa instanceof a.SigningKey);
  const v = new a.Verifier({ keys: [rsa] });
  const doc = { name: 'x' };
  assert.equal(v.verifyDescriptor(doc, a.signDescriptor(doc, rsa)).verdict, 'verified');
  await assert.rejects(a.SigningKey.generateAsync('nope'), (e) => e instanceof a.BadInput && e.code === 'usage');
  await assert.rejects(a.SigningKey.generateAsync(3), TypeError);
});

test('the ES module entry point gives the same catalog calls', async () => {
  const m = await import('../index.mjs');
  assert.equal(m.Verifier, a.Verifier);
  assert.equal(typeof m.Verifier.prototype.verifyCatalog, 'function');
  assert.equal(typeof m.Verifier.prototype.verifyCatalogUrl, 'function');
  assert.equal(typeof m.SigningKey.generateAsync, 'function');
});

/** A catalog whose one inline entry carries no Trust Manifest: only the
 * catalog's detached JWS binds it (`sign --host` signs the host's manifest
 * and writes cat.json.jws, over the RFC 8785 form of the whole document,
 * draft-narvaneni-agent-uri-03 section 10.3). */
function hostSigned() {
  const s = signed();
  // The host identity is the origin the URL test serves it from.
  const doc = { specVersion: '1.0', host: { displayName: 'H', identifier: 'https://localhost' }, entries: [entry('urn:a')] };
  fs.writeFileSync(s.file('host.json'), JSON.stringify(doc));
  const r = spawnSync(helpers.cli(), ['sign', 'host.json', '--host', '--key', 'k.pem'], { cwd: s.dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // The same document with no .jws beside it (`verify FILE` reads FILE.jws).
  fs.copyFileSync(s.file('host.json'), s.file('plain.json'));
  return { ...s, jws: fs.readFileSync(s.file('host.json.jws'), 'utf8') };
}

/** `jws` with one character of its signature changed. */
const tamperedJws = (jws) => {
  const t = jws.trim();
  return t.slice(0, -2) + (t.at(-2) === 'A' ? 'B' : 'A') + t.at(-1);
};

/** The CLI's --json report, the key set named as the package names it. */
const cliReport = (s, stdout) => JSON.parse(stdout.split(`JWK Set ${s.file('k.jwks.json')}`).join('JWK Set jwks'));

test("a catalog bound only by its detached JWS gets the CLI's verdict, sync and async", async () => {
  const s = hostSigned();
  try {
    fs.writeFileSync(s.file('bad.jws'), tamperedJws(s.jws));
    const seen = [];
    for (const [file, flags, opts] of [
      ['host.json', ['--jws', s.file('host.json.jws')], { jws: s.jws }],
      ['host.json', ['--jws', s.file('bad.jws')], { jws: tamperedJws(s.jws) }],
      ['plain.json', ['--require-signed'], { requireSigned: true }],
      ['plain.json', [], {}],
    ]) {
      const r = run(['verify', s.file(file), '--jwks', s.file('k.jwks.json'), '--json', ...flags]);
      const want = cliReport(s, r.stdout);
      assert.equal(r.status, want.verified ? 0 : 1, r.stderr);
      const text = fs.readFileSync(s.file(file));
      for (const form of [text, JSON.parse(text)]) {
        const got = outcome(() => s.verifier.verifyCatalog(form, opts));
        assert.equal(got.subject, null);
        assert.deepEqual({ ...got, subject: want.subject }, want, `${file} ${flags}`);
        let later;
        try {
          later = await s.verifier.verifyCatalogAsync(form, opts);
        } catch (e) {
          assert.ok(e instanceof a.NotVerified, String(e));
          later = e.report;
        }
        assert.deepEqual(later, got);
      }
      seen.push([want.verdict, want.details.entries[0].binding]);
    }
    assert.deepEqual(seen, [
      ['verified', 'catalog-signature'],
      ['not-verified', 'unbound'],
      ['unsigned', 'unbound'],
      ['unsigned', 'unbound'],
    ]);
    // A JWS that is not a string, or is above the 1 MiB bound of every JWS,
    // is refused before any check.
    const text = fs.readFileSync(s.file('host.json'));
    assert.throws(() => s.verifier.verifyCatalog(text, { jws: 7 }), TypeError);
    assert.throws(() => s.verifier.verifyCatalog(text, { jws: 'a'.repeat(1024 * 1024 + 1) }), (e) => e instanceof a.BadInput && e.code === 'input.unreadable');
    await assert.rejects(s.verifier.verifyCatalogAsync(text, { jws: Buffer.from(s.jws) }), TypeError);
  } finally {
    s.cleanup();
  }
});

test('verifyCatalogUrl fetches URL.jws beside the catalog, as `agentsig verify URL` does', async () => {
  const s = hostSigned();
  const { ca, cert, key } = certificates();
  fs.writeFileSync(s.file('ca.pem'), ca);
  const routes = {
    '/.well-known/ai-catalog.json': ['application/ai-catalog+json', fs.readFileSync(s.file('host.json'))],
    '/.well-known/ai-catalog.json.jws': ['application/jose', Buffer.from(s.jws)],
  };
  const server = https.createServer({ cert, key }, (req, res) => {
    const r = routes[req.url];
    res.writeHead(r ? 200 : 404, r ? { 'Content-Type': r[0] } : {});
    res.end(r ? r[1] : undefined);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://localhost:${server.address().port}/.well-known/ai-catalog.json`;
  // The CLI runs while this process's event loop serves it.
  const cliUrl = () => new Promise((resolve) => {
    require('node:child_process').execFile(helpers.cli(),
      ['verify', url, '--jwks', s.file('k.jwks.json'), '--ca-file', s.file('ca.pem'), '--allow-private-networks', '--json'],
      { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ status: err ? err.code : 0, stdout, stderr }));
  });
  const loose = { allowPrivateHosts: ['localhost'], extraRootsPem: [ca] };
  try {
    let r = await cliUrl();
    let want = cliReport(s, r.stdout);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const got = await s.verifier.verifyCatalogUrl(url, loose);
    assert.deepEqual({ ...got }, want);
    assert.equal(got.details.entries[0].binding, 'catalog-signature');
    // No JWS served (404): the entry is unbound, as from the CLI.
    delete routes['/.well-known/ai-catalog.json.jws'];
    r = await cliUrl();
    want = cliReport(s, r.stdout);
    assert.equal(want.verdict, 'unsigned');
    await assert.rejects(s.verifier.verifyCatalogUrl(url, loose), (e) => {
      assert.deepEqual({ ...e.report }, want);
      return e instanceof a.NotVerified;
    });
    // The URL form takes no jws: it fetches its own.
    await assert.rejects(s.verifier.verifyCatalogUrl(url, { ...loose, jws: s.jws }), TypeError);
  } finally {
    await new Promise((r) => server.close(r));
    s.cleanup();
  }
});
