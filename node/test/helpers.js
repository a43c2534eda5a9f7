// Shared by the node:test files: the package, the repository's paths and the
// agentsig CLI (AGENTSIG_BIN, else the workspace's debug or release build).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const node = path.resolve(__dirname, '..');
const repo = path.resolve(node, '..');

function cli() {
  const c = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')];
  const found = c.find((p) => p && fs.existsSync(p));
  if (!found) throw new Error('the agentsig CLI is not built: run `cargo build` (or set AGENTSIG_BIN)');
  return found;
}

/** Run the CLI: `{status, stdout, stderr}`. */
function run(args, input) {
  const r = spawnSync(cli(), args, { input, encoding: 'utf8', cwd: repo });
  if (r.error) throw r.error;
  return r;
}

// Every folder tmpdir() makes is removed when the test process exits, so a
// test that stops early (or hands a folder to a helper) leaves nothing behind.
const made = [];
process.on('exit', () => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function tmpdir() {
  const d = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'agentsig-node-'));
  made.push(d);
  return d;
}

/** A test CA (made with the openssl command) and a leaf certificate for
 * localhost that it signed: `{ca, cert, key}` (PEM), for loopback HTTPS
 * servers the fetcher trusts through `extraRootsPem`. */
function certificates() {
  const dir = tmpdir();
  const p = (f) => path.join(dir, f);
  const ossl = (...args) => require('node:child_process').execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.pem'), '-days', '1', '-subj', '/CN=agentsig test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  ossl('req', ...ec, '-keyout', p('leaf.key'), '-out', p('leaf.csr'), '-subj', '/CN=localhost');
  fs.writeFileSync(p('leaf.ext'), 'subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n');
  ossl('x509', '-req', '-in', p('leaf.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p('leaf.pem'),
    '-days', '1', '-extfile', p('leaf.ext'));
  return { ca: fs.readFileSync(p('ca.pem'), 'utf8'), cert: fs.readFileSync(p('leaf.pem')), key: fs.readFileSync(p('leaf.key')) };
}

/** A redis-server started on a loopback port (no persistence, its files in
 * a temporary directory): `{url, stop}`, or `null` when redis-server is not
 * installed and AGENTSIG_REQUIRE_INTEROP is unset (the caller skips). The
 * caller stops it. */
async function redisServer() {
  const cp = require('node:child_process');
  const which = cp.spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const binary = which.status === 0 ? which.stdout.trim() : '';
  if (!binary) {
    if (process.env.AGENTSIG_REQUIRE_INTEROP === '1') {
      throw new Error('redis-server not found and AGENTSIG_REQUIRE_INTEROP=1 (apt-get install -y redis-server)');
    }
    return null;
  }
  const net = require('node:net');
  const port = await new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const dir = tmpdir();
  const proc = cp.spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir], { stdio: 'ignore' });
  const exited = new Promise((r) => proc.once('exit', r));
  const stop = async () => {
    proc.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Readiness: wait until the port accepts connections (not a timing assertion).
  for (let i = 0; i < 200; i++) {
    const up = await new Promise((r) => {
      const c = net.connect(port, '127.0.0.1', () => { c.destroy(); r(true); });
      c.on('error', () => r(false));
    });
    if (up) return { url: `redis://127.0.0.1:${port}/0`, stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`redis-server did not listen on 127.0.0.1:${port}`);
}

module.exports = { node, repo, cli, run, tmpdir, certificates, redisServer };
