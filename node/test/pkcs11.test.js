// SigningKey.fromPkcs11: keys that never leave a PKCS#11 token (RFC 7512
// URIs), on a real SoftHSM2 token this file makes itself: its own
// SOFTHSM2_CONF and token directory in a temporary directory removed at the
// end, a token initialized by `softhsm2-util` and key pairs generated in it
// by OpenSC's `pkcs11-tool`, an implementation independent of agentsig.
// Skips when the tools are absent (fails under AGENTSIG_REQUIRE_INTEROP=1).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const a = require('..');
const { node, tmpdir } = require('./helpers');

const LABEL = 'agentsig-node';
const PIN = '1234';
const MODULE = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/lib64/pkcs11/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
].find((m) => fs.existsSync(m));
const onPath = (t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0;
const missing = !MODULE || !onPath('softhsm2-util') || !onPath('pkcs11-tool');
if (missing && process.env.AGENTSIG_REQUIRE_INTEROP === '1') {
  throw new Error('softhsm2 or pkcs11-tool not found and AGENTSIG_REQUIRE_INTEROP=1 (apt-get install -y softhsm2 opensc)');
}
const skip = missing ? 'softhsm2 or pkcs11-tool not found (apt-get install -y softhsm2 opensc)' : false;

let dir;
let conf;
let pinFile;

/** The environment of the tools and child processes: this token's conf,
 * no PIN variable unless given. */
function env(extra = {}) {
  const e = { ...process.env, SOFTHSM2_CONF: conf, ...extra };
  if (!('AGENTSIG_PKCS11_PIN' in extra)) delete e.AGENTSIG_PKCS11_PIN;
  return e;
}

function tool(cmd, args) {
  const r = spawnSync(cmd, args, { env: env(), encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stdout}${r.stderr}`);
}

function uri({ object = 'p256', pin = true, token = LABEL, module = MODULE } = {}) {
  const q = `module-path=${module}${pin ? `&pin-source=file:${pinFile}` : ''}`;
  return `pkcs11:token=${token};object=${object};type=private?${q}`;
}

test.before(() => {
  if (skip) return;
  dir = tmpdir();
  conf = path.join(dir, 'softhsm2.conf');
  pinFile = path.join(dir, 'pin');
  fs.mkdirSync(path.join(dir, 'tokens'));
  fs.writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  fs.writeFileSync(pinFile, `${PIN}\n`, { mode: 0o600 });
  tool('softhsm2-util', ['--init-token', '--free', '--label', LABEL, '--pin', PIN, '--so-pin', '5678']);
  for (const [label, id, kt] of [['p256', '01', 'EC:prime256v1'], ['ed25519', '03', 'EC:edwards25519']]) {
    tool('pkcs11-tool', ['--module', MODULE, '--token-label', LABEL, '--login', '--pin', PIN,
      '--keypairgen', '--key-type', kt, '--id', id, '--label', label]);
  }
  // SoftHSM2 reads its configuration when this process first loads the
  // module (C_Initialize), which the first fromPkcs11 does.
  process.env.SOFTHSM2_CONF = conf;
});

test.after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const doc = { name: 'planner', url: 'https://planner.example/' };

test('a descriptor signed through the token verifies (ES256, EdDSA)', { skip }, () => {
  for (const [object, alg] of [['p256', 'ES256'], ['ed25519', 'EdDSA']]) {
    const key = a.SigningKey.fromPkcs11(uri({ object }));
    assert.equal(key.algorithm, alg);
    assert.equal(key.kid, key.thumbprint);
    // The private key never leaves the token: it has no PEM form.
    assert.equal(key.privatePem(), null);
    const v = new a.Verifier({ keys: [key.publicJwk()] });
    const jws = a.signDescriptor(doc, key);
    assert.equal(v.verifyDescriptor(doc, jws).verdict, 'verified');
    assert.throws(() => v.verifyDescriptor({ ...doc, name: 'p1anner' }, jws), a.NotVerified);
  }
});

test('a Web Bot Auth request signed through the token verifies; the async forms too', { skip }, async () => {
  const pending = a.SigningKey.fromPkcs11Async(uri(), { kid: 'token-key' });
  assert.ok(pending instanceof Promise);
  const key = await pending;
  assert.ok(key instanceof a.SigningKey);
  assert.equal(key.kid, 'token-key');
  const AGENT = 'https://agent.example';
  const url = 'https://site.example/orders?id=7';
  const body = Buffer.from('{"order":7}');
  const v = new a.Verifier({ agentKeys: { [AGENT]: [key.publicJwk()] } });
  const opts = { webBotAuth: true, authorities: ['site.example'] };
  const h1 = a.signRequest('POST', url, [['Content-Type', 'application/json']], body, key, { signatureAgent: AGENT });
  assert.equal(v.verifyRequest('POST', url, h1, body, opts).verdict, 'verified');
  const h2 = await a.signRequestAsync('POST', url, [['Content-Type', 'application/json']], body, key, { signatureAgent: AGENT });
  const r = await v.verifyRequestAsync('POST', url, h2, body, opts);
  assert.equal(r.verdict, 'verified');
  // Another key of the same agent does not verify it.
  const other = new a.Verifier({ agentKeys: { [AGENT]: [a.SigningKey.generate('ES256')] } });
  assert.throws(() => other.verifyRequest('POST', url, h1, body, opts), a.NotVerified);
  // A failed load rejects with the typed error.
  await assert.rejects(a.SigningKey.fromPkcs11Async(uri({ object: 'no-such-key' })), a.BadKey);
});

const CHILD = `
const a = require(process.argv[1]);
try {
  const k = a.SigningKey.fromPkcs11(process.argv[2]);
  console.log(JSON.stringify({ ok: k.algorithm }));
} catch (e) {
  console.log(JSON.stringify({ class: e.name, code: e.code, message: e.message }));
}`;

/** fromPkcs11 in a new process: a login holds for the whole process
 * (PKCS#11 v2.40 section 5.6, C_Login), so a wrong PIN is only seen by a
 * process that has not logged in yet. */
function loadInChild(u, extra = {}) {
  const r = spawnSync(process.execPath, ['-e', CHILD, node, u], { env: env(extra), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('the PIN from AGENTSIG_PKCS11_PIN', { skip }, () => {
  assert.deepEqual(loadInChild(uri({ pin: false }), { AGENTSIG_PKCS11_PIN: PIN }), { ok: 'ES256' });
});

test('a URI carrying pin-value is refused with the reason', { skip }, () => {
  const u = `pkcs11:token=${LABEL};object=p256?module-path=${MODULE}&pin-value=${PIN}`;
  assert.throws(() => a.SigningKey.fromPkcs11(u), (e) => {
    assert.ok(e instanceof a.BadKey);
    assert.match(e.message, /pin-value: refused, a PIN on the command line is visible/);
    return true;
  });
});

test('a key that cannot be loaded is BadKey naming the cause', { skip }, () => {
  const wrong = path.join(dir, 'wrong-pin');
  fs.writeFileSync(wrong, '0000\n', { mode: 0o600 });
  const fake = path.join(dir, 'not-a-module.so');
  fs.writeFileSync(fake, 'not a shared library\n');
  const cases = [
    [uri().replace(pinFile, wrong), 'the token refused the PIN'],
    [uri({ pin: false }), 'the token requires a PIN and none was given'],
    [uri({ token: 'no-such-token' }), 'no token matches'],
    [uri({ object: 'no-such-key' }), 'no private key on the token matches'],
    [uri({ module: fake }), 'is not a usable PKCS#11 module'],
    [uri({ module: path.join(dir, 'absent.so') }), 'is not a usable PKCS#11 module: no such file'],
  ];
  for (const [u, cause] of cases) {
    const r = loadInChild(u);
    assert.equal(r.class, 'BadKey', JSON.stringify(r));
    assert.equal(r.code, 'key.unusable');
    assert.ok(r.message.includes(cause), `${cause} not in ${r.message}`);
  }
});

test('wrong argument types are TypeErrors', { skip }, () => {
  assert.throws(() => a.SigningKey.fromPkcs11(42), TypeError);
  assert.throws(() => a.SigningKey.fromPkcs11(uri(), { pin: PIN }), TypeError);
  assert.throws(() => a.SigningKey.fromPkcs11('pkcs11:token=%zz'), a.BadKey);
});
