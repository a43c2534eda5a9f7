// The WebAssembly package in a browser: headless Chromium (Debian
// `chromium`) loads a test page from a loopback server; the page imports
// the package's `browser` entry (browser.js: the module fetched from beside
// it), runs the same corpus as in Node.js and posts the results back.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { packageFiles } from './workerd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, '..');
const corpusPath = process.env.AGENTSIG_WASM_CORPUS || path.join(here, 'corpus.generated.json');
const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find((c) => spawnSync('which', [c]).status === 0);

const PAGE = `<!doctype html><meta charset="utf-8"><title>agentsig corpus</title>
<script type="module">
const post = (v) => fetch('/result', { method: 'POST', body: JSON.stringify(v) });
try {
  const a = await import('/agentsig/browser.js');
  const { runCorpus } = await import('/corpus.js');
  const corpus = await (await fetch('/corpus.json')).json();
  const results = await runCorpus(a, corpus);
  await post({ total: results.length, failed: results.filter((r) => !r.ok) });
} catch (e) {
  await post({ error: String(e && e.stack || e) });
}
</script>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.html': 'text/html' };

test('the corpus gives the CLI reports and typed errors in headless Chromium', { skip: (!chromium && 'chromium is not installed') || (!fs.existsSync(corpusPath) && 'no corpus') }, async () => {
  const routes = { '/': PAGE, '/corpus.js': fs.readFileSync(path.join(here, 'corpus.js')), '/corpus.json': fs.readFileSync(corpusPath) };
  for (const f of packageFiles()) routes[`/agentsig/${f}`] = fs.readFileSync(path.join(pkg, f));
  let done;
  const result = new Promise((r) => (done = r));
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/result') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.end('ok');
        done(JSON.parse(body));
      });
      return;
    }
    const data = routes[req.url];
    if (data === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': req.url === '/' ? 'text/html' : TYPES[path.extname(req.url)] || 'application/octet-stream' });
    res.end(data);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-chromium-'));
  const browser = spawn(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`,
    `http://127.0.0.1:${server.address().port}/`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  browser.stderr.on('data', (c) => (stderr += c));
  let timer;
  const timeout = new Promise((r) => (timer = setTimeout(() => r({ error: `no result within 240 s; chromium said:\n${stderr.slice(-4000)}` }), 240_000)));
  try {
    const got = await Promise.race([result, timeout]);
    assert.equal(got.error, undefined, got.error);
    assert.deepEqual(got.failed, []);
    assert.ok(got.total >= 20, `${got.total} cases`);
  } finally {
    clearTimeout(timer);
    // Chromium's helper processes may still write to the profile for a
    // moment after the main process dies: wait for the exit, then remove
    // the directory with retries. A leftover temp directory is not a test
    // failure; it is reported.
    const exited = browser.exitCode !== null || browser.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => browser.once('exit', r));
    browser.kill('SIGKILL');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    server.close();
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.error(`# could not remove the Chromium profile ${profile}: ${e.message}`);
    }
  }
});
