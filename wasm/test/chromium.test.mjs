// The WebAssembly package in a browser: headless Chromium (Debian
// `chromium`) loads a test page from a loopback server; the page imports
// the package's `browser` entry (browser.js: the module fetched from beside
// it), runs the same corpus as in Node.js and posts the results back.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { chrome } from './inspector-fixtures.mjs';
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
  // The launcher the inspector tests use: its own profile, and the whole
  // process group killed and the profile removed at the end.
  const browser = chrome(`http://127.0.0.1:${server.address().port}/`, [], { timeoutMs: 250_000 });
  const stderr = browser.stderr;
  let timer;
  const timeout = new Promise((r) => (timer = setTimeout(() => r({ error: `no result within 240 s; chromium said:\n${stderr().slice(-4000)}` }), 240_000)));
  try {
    const got = await Promise.race([result, timeout]);
    assert.equal(got.error, undefined, got.error);
    assert.deepEqual(got.failed, []);
    assert.ok(got.total >= 20, `${got.total} cases`);
  } finally {
    clearTimeout(timer);
    await browser.stop();
    server.close();
  }
});
