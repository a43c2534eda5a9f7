// The inspector page (inspector/) in headless Chromium (Debian `chromium`):
// for each fixture of every kind, valid and tampered, the page is opened
// with the input in its URL fragment, and the verdicts it renders (read back
// from its DOM: the badges, labels and reason codes a person sees) must
// equal those of `agentsig inspect --json` on the same input. The page is
// served from loopback in the repository's layout (/inspector/, /wasm/), as
// `agentsig inspect --serve` serves it; a harness page opens it in an
// iframe once per fixture and posts what it read back to this test.
//
// Usage: node --test wasm/test/inspector.test.mjs   (the CLI: AGENTSIG_BIN,
// else target/debug/agentsig; the package: scripts/wasm-build.sh)
// Writes the screenshots of docs/ with AGENTSIG_INSPECTOR_SCREENSHOTS=DIR.
import test from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find((c) => spawnSync('which', [c]).status === 0);
const cli = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')]
  .find((p) => p && fs.existsSync(p));
const built = fs.existsSync(path.join(repo, 'wasm/dist/agentsig_wasm_bg.wasm'));

const pemPath = path.join(repo, 'keys/example-p256.pem');
const jwksPath = path.join(repo, 'keys/example-p256.jwks.json');
const jwks = fs.readFileSync(jwksPath, 'utf8');

const run = (args, input) => {
  const r = spawnSync(cli, args, { input, encoding: 'utf8', cwd: repo });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`agentsig ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
};

/** The fixtures: {name, input, jws?, keys}, valid and tampered, every kind. */
export function fixtures() {
  const out = [];
  const add = (name, input, extra = {}) => out.push({ name, input, keys: jwks, ...extra });
  const crlf = (lines, body = '') => `${lines.join('\r\n')}\r\n\r\n${body}`;
  const digest = (b) => `sha-256=:${crypto.createHash('sha256').update(b).digest('base64')}:`;

  // RFC 9421 request, with the parameters the page shows.
  const req = run(['http', 'sign', '-', '--key', pemPath, '--expires-in', '5m', '--nonce', 'n-0f3a9c', '--tag', 'inspector-test'],
    crlf(['GET /search?q=agents HTTP/1.1', 'Host: api.example', 'Accept: application/json']));
  add('request', req);
  add('request replayed on another path', req.replace('GET /search?q=agents', 'GET /admin?q=agents'));

  // RFC 9421 response with RFC 9530 Content-Digest.
  const body = '{"status":"ok","items":[1,2,3]}';
  const res = run(['http', 'sign', '-', '--key', pemPath, '--expires-in', '5m'],
    crlf(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Digest: ${digest(body)}`, `Content-Length: ${body.length}`], body));
  add('response', res);
  add('response with its body changed', res.replace('[1,2,3]', '[1,2,4]'));

  // A descriptor and its detached JWS over the RFC 8785 form.
  const doc = fs.readFileSync(path.join(repo, 'examples/agent.json'), 'utf8');
  const jws = run(['sign', '-', '--key', pemPath], doc).trim();
  add('descriptor', doc, { jws });
  const obj = JSON.parse(doc);
  obj.name = `${obj.name ?? 'agent'} (changed)`;
  add('descriptor changed after signing', JSON.stringify(obj, null, 2), { jws });

  // An A2A Agent Card with its embedded signature.
  const card = run(['sign', '-', '--key', pemPath], fs.readFileSync(path.join(repo, 'examples/a2a-agent-card.json')));
  add('A2A card', card);
  const c = JSON.parse(card);
  c.description = `${c.description ?? ''} Now also wires money.`;
  add('A2A card changed after signing', JSON.stringify(c, null, 2));

  // An AI Catalog with Trust Manifests.
  const catalog = fs.readFileSync(path.join(repo, 'examples/catalog/ai-catalog.json'), 'utf8');
  add('AI Catalog', catalog);
  add('AI Catalog with an entry changed', catalog.replace('Converts amounts between currencies', 'Moves amounts between accounts'));

  // A delegation chain (RFC 8693 section 4.1), subject token first: the
  // planner, then the booker, then the payer act for alice, the scope
  // narrowing at each hop.
  const mint = (aud, scope, acts, mayAct, ttl, jti) => run(['delegation', 'mint', '--key', pemPath, '--iss', 'https://as.example', '--sub', 'alice',
    '--aud', aud, '--scope', scope, ...acts.flatMap((a) => ['--act', a]), ...(mayAct ? ['--may-act', mayAct] : []), '--ttl', String(ttl), '--jti', jti]).trim();
  const [P, B, Y] = ['https://planner.example', 'https://booker.example', 'https://pay.example'];
  const t0 = mint('https://booker.example', 'read write book', [P], B, 3600, 't0');
  const t1 = mint('https://pay.example', 'read book', [P, B], Y, 1800, 't1');
  const t2 = mint('https://api.example', 'book', [P, B, Y], null, 600, 't2');
  add('delegation chain', [t0, t1, t2].join('\n'));
  const wide = mint('https://api.example', 'book admin', [P, B, Y], null, 600, 't2');
  add('delegation chain whose last hop widens the scope', [t0, t1, wide].join('\n'));
  const [h, p, sig] = t1.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url'));
  claims.scope = 'read write book pay';
  add('delegation chain with a token changed after signing', [t0, [h, Buffer.from(JSON.stringify(claims)).toString('base64url'), sig].join('.'), t2].join('\n'));
  return out;
}

/** The CLI's inspection of a fixture. */
function cliInspect(f, parent) {
  // A directory per fixture: the CLI reads FILE.jws beside FILE by default.
  const dir = fs.mkdtempSync(path.join(parent, 'f-'));
  const put = (name, text) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const args = ['inspect', put('input', f.input), '--jwks', put('keys.json', f.keys), '--json'];
  if (f.jws) args.push('--jws', put('input.jws', f.jws));
  const r = spawnSync(cli, args, { encoding: 'utf8', cwd: repo });
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${f.name}: agentsig ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** What a person compares: the verdicts, labels, reasons, hops, entries. */
function verdicts(report) {
  const ins = report.details.inspection;
  const entry = (e) => [String(e.identifier ?? ''), entryVerdict(e), ...(e.children || []).map(entry)];
  return {
    verdict: ins.verdict,
    error: (ins.error && ins.error.code) || '',
    signatures: (ins.signatures || []).map((s) => [s.label, s.verdict, s.reason ?? '']),
    chain: (ins.chain || []).map((c) => [c.hop, c.ok, c.reason ?? '']),
    catalog: ((ins.catalog && ins.catalog.entries) || []).map(entry),
  };
}

/** An entry's verdict word as the page shows it (render.js). */
function entryVerdict(e) {
  if (typeof e.verdict === 'string') return e.verdict;
  return e.passed === true ? 'passed' : e.passed === false ? 'failed' : 'unknown';
}

// The harness: opens each fixture's link in an iframe, reads the rendered
// verdicts from the page's DOM, posts them back.
const HARNESS = `<!doctype html><meta charset="utf-8"><title>inspector harness</title>
<script type="module">
const post = (v) => fetch('/result', { method: 'POST', body: JSON.stringify(v) });
const text = (n) => (n ? n.textContent.trim() : '');
const wait = (frame) => new Promise((resolve, reject) => {
  const t0 = Date.now();
  const tick = () => {
    const d = frame.contentDocument;
    const st = d && d.documentElement && d.documentElement.dataset.state;
    if (st === 'rendered' || (st === 'error' && d.getElementById('verdict'))) return resolve(d);
    if (Date.now() - t0 > 30000) return reject(new Error('no rendering within 30 s (state ' + st + ')'));
    setTimeout(tick, 20);
  };
  tick();
});
function read(d) {
  const entry = (li) => [text(li.querySelector(':scope > .entry-head > .ident')), text(li.querySelector(':scope > .entry-head > .badge')),
    ...[...li.querySelectorAll(':scope > ul > li.entry')].map(entry)];
  return {
    verdict: text(d.querySelector('#verdict > .badge')),
    error: text(d.querySelector('#verdict > .reason > .code')),
    signatures: [...d.querySelectorAll('section.sig')].map((s) => [text(s.querySelector('h3 .label')), text(s.querySelector('h3 .badge')), text(s.querySelector(':scope > .reason > .code'))]),
    chain: [...d.querySelectorAll('li.hop-row')].map((li) => [Number(li.dataset.hop), li.dataset.ok === 'true', text(li.querySelector(':scope > .reason > .code'))]),
    catalog: [...d.querySelectorAll('ul.tree.root > li.entry')].map(entry),
    chainSvgHops: d.querySelectorAll('svg.chain g.hop').length,
    badHopsMarked: d.querySelectorAll('svg.chain g.hop.bad').length,
    baseLines: [...d.querySelectorAll('ol.base li')].length,
    pageError: text(d.querySelector('#verdict.error .reason')),
  };
}
try {
  const links = await (await fetch('/links.json')).json();
  const results = [];
  for (const link of links) {
    const frame = document.createElement('iframe');
    frame.src = link;
    frame.style.width = '1200px';
    frame.style.height = '800px';
    document.body.append(frame);
    results.push(read(await wait(frame)));
    frame.remove();
  }
  await post({ results });
} catch (e) {
  await post({ error: String(e && e.stack || e) });
}
</script>`;

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.html': 'text/html', '.css': 'text/css' };

/** A loopback server of the page and the package, in the repository's
 * layout, plus `extra` routes. */
export function serve(extra = {}) {
  const files = {};
  for (const f of fs.readdirSync(path.join(repo, 'inspector'))) files[`/inspector/${f}`] = path.join(repo, 'inspector', f);
  for (const f of ['browser.js', 'agentsig.js', 'fetch.js', 'limits.js', 'dist/agentsig_wasm.js', 'dist/agentsig_wasm_bg.wasm']) {
    files[`/wasm/${f}`] = path.join(repo, 'wasm', f);
  }
  const server = http.createServer((req, res) => {
    const url = req.url.split('#')[0];
    if (extra[url] && typeof extra[url] === 'function') return extra[url](req, res);
    const p = url === '/inspector/' ? files['/inspector/index.html'] : files[url];
    const data = extra[url] ?? (p && fs.readFileSync(p));
    if (data === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[path.extname(url)] || 'text/html' });
    res.end(data);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

export const link = (f) => `/inspector/index.html#i=${Buffer.from(JSON.stringify({ input: f.input, jws: f.jws, keys: f.keys })).toString('base64url')}`;

/** Runs headless Chromium on `url` with `args`; resolves on its exit. */
export function chrome(url, args = [], { timeoutMs = 120_000 } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-inspector-'));
  const browser = spawn(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`, ...args, url,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  browser.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((r) => browser.once('exit', r));
  const timer = setTimeout(() => browser.kill('SIGKILL'), timeoutMs);
  const stop = async () => {
    clearTimeout(timer);
    if (browser.exitCode === null && browser.signalCode === null) browser.kill('SIGKILL');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.error(`# could not remove the Chromium profile ${profile}: ${e.message}`);
    }
  };
  return { exited, stop, stderr: () => stderr };
}

const skip = (!chromium && 'chromium is not installed') || (!cli && 'the agentsig CLI is not built') || (!built && 'wasm/dist is not built (scripts/wasm-build.sh)');

test('the inspector page renders the verdicts of agentsig inspect, for valid and tampered inputs of every kind', { skip }, async () => {
  const fx = fixtures();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-inspector-cli-'));
  const want = fx.map((f) => verdicts(cliInspect(f, dir)));
  fs.rmSync(dir, { recursive: true, force: true });
  let done;
  const posted = new Promise((r) => (done = r));
  const server = await serve({
    '/harness.html': HARNESS,
    '/links.json': JSON.stringify(fx.map(link)),
    '/result': (req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        res.end('ok');
        done(JSON.parse(b));
      });
    },
  });
  const b = chrome(`http://127.0.0.1:${server.address().port}/harness.html`);
  let timer;
  const timeout = new Promise((r) => (timer = setTimeout(() => r({ error: `no result within 120 s; chromium said:\n${b.stderr().slice(-4000)}` }), 120_000)));
  try {
    const got = await Promise.race([posted, timeout]);
    assert.equal(got.error, undefined, got.error);
    assert.equal(got.results.length, fx.length);
    fx.forEach((f, i) => {
      const { chainSvgHops, badHopsMarked, baseLines, pageError, ...seen } = got.results[i];
      assert.deepEqual(seen, want[i], `${f.name}: the page shows other verdicts than the CLI${pageError ? ` (page error: ${pageError})` : ''}`);
      // What is drawn beside the verdicts: the chain's hops (the failing
      // one marked) and the signature base.
      assert.equal(chainSvgHops, want[i].chain.length, `${f.name}: chain hops drawn`);
      assert.equal(badHopsMarked, want[i].chain.filter((c) => c[1] === false).length, `${f.name}: failing hops marked`);
      if (f.name === 'request' || f.name === 'response') assert.ok(baseLines >= 3, `${f.name}: signature base lines shown`);
    });
    const kinds = new Set(want.map((w, i) => `${fx[i].name.split(' ')[0]}:${w.verdict}`));
    assert.ok([...kinds].some((k) => k.endsWith(':verified')) && [...kinds].some((k) => !k.endsWith(':verified')), `valid and tampered: ${[...kinds]}`);
  } finally {
    clearTimeout(timer);
    await b.stop();
    server.close();
  }
});
