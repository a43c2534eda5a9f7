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
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { chrome, chromium, cli, fixtures, link, repo, serve } from './inspector-fixtures.mjs';

const built = fs.existsSync(path.join(repo, 'wasm/dist/agentsig_wasm_bg.wasm'));

/** The CLI's inspection of a fixture. */
function cliInspect(f, parent) {
  // A directory per fixture: the CLI reads FILE.jws beside FILE by default.
  const dir = fs.mkdtempSync(path.join(parent, 'f-'));
  const put = (name, text) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const pem = f.keys.startsWith('-----');
  const args = ['inspect', put('input', f.input), pem ? '--key' : '--jwks', put(pem ? 'keys.pem' : 'keys.json', f.keys), '--json'];
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
    command: (d.getElementById('copy-command').click(), text(d.getElementById('command'))),
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
  // "Fetch keys" where the browser cannot read the key set (here a loopback
  // port that refuses connections; to a page a CORS refusal looks the
  // same): a clear note.
  const frame = document.createElement('iframe');
  frame.src = links[0];
  document.body.append(frame);
  const d = await wait(frame);
  d.getElementById('keyurl').value = 'https://127.0.0.1:9/.well-known/jwks.json';
  d.getElementById('fetch-keys').click();
  const t0 = Date.now();
  while (!/CORS/.test(text(d.getElementById('fetch-note'))) && Date.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 50));
  const fetchNote = text(d.getElementById('fetch-note'));
  await post({ results, fetchNote });
} catch (e) {
  await post({ error: String(e && e.stack || e) });
}
</script>`;

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
      const { chainSvgHops, badHopsMarked, baseLines, pageError, command, ...seen } = got.results[i];
      assert.deepEqual(seen, want[i], `${f.name}: the page shows other verdicts than the CLI${pageError ? ` (page error: ${pageError})` : ''}`);
      // What is drawn beside the verdicts: the chain's hops (the failing
      // one marked) and the signature base.
      assert.equal(chainSvgHops, want[i].chain.length, `${f.name}: chain hops drawn`);
      assert.equal(badHopsMarked, want[i].chain.filter((c) => c[1] === false).length, `${f.name}: failing hops marked`);
      if (f.name === 'request' || f.name === 'response') assert.ok(baseLines >= 3, `${f.name}: signature base lines shown`);
      // "Copy as command": the script it shows, run, gives the CLI's verdict.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-inspector-cmd-'));
      try {
        const r = spawnSync('bash', ['-c', `set -e\nagentsig() { "$AGENTSIG" "$@"; }\n${command}`], { cwd: dir, encoding: 'utf8', env: { ...process.env, AGENTSIG: cli } });
        assert.equal(r.status, want[i].verdict === 'verified' ? 0 : 1, `${f.name}: the copied command:\n${command}\n${r.stderr}`);
        assert.match(r.stdout, new RegExp(want[i].verdict === 'verified' ? ': verified$' : ': NOT verified', 'm'), `${f.name}: the copied command's verdict`);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
    assert.match(got.fetchNote, /could not read https:\/\/127\.0\.0\.1:9\/.*CORS/, 'the note when the browser cannot fetch a key set');
    const kinds = new Set(want.map((w, i) => `${fx[i].name.split(' ')[0]}:${w.verdict}`));
    assert.ok([...kinds].some((k) => k.endsWith(':verified')) && [...kinds].some((k) => !k.endsWith(':verified')), `valid and tampered: ${[...kinds]}`);
  } finally {
    clearTimeout(timer);
    await b.stop();
    server.close();
  }
});

test('agentsig inspect --serve serves the page and the package on loopback; --dump-dom shows the CLI verdict', { skip }, async () => {
  const srv = spawn(cli, ['inspect', '--serve', '--port', '0', '--assets', path.join(repo, 'wasm')], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      srv.stdout.on('data', (c) => {
        out += c;
        const m = /http:\/\/127\.0\.0\.1:\d+\/inspector\//.exec(out);
        if (m) resolve(m[0]);
      });
      srv.once('exit', (code) => reject(new Error(`inspect --serve exited ${code}`)));
    });
    const fx = fixtures().filter((f) => ['delegation chain', 'descriptor changed after signing'].includes(f.name));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-inspector-cli-'));
    try {
      for (const f of fx) {
        const want = verdicts(cliInspect(f, dir)).verdict;
        const page = new URL(link(f).replace('/inspector/', ''), url).href;
        const b = chrome(page, ['--virtual-time-budget=15000', '--dump-dom'], { stdout: true });
        const dom = await b.output;
        await b.stop();
        assert.match(dom, /data-state="rendered"/, `${f.name}: the served page rendered`);
        assert.match(dom, new RegExp(`id="verdict" data-verdict="${want}"`), `${f.name}: the served page shows ${want}`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    srv.kill('SIGINT');
  }
});
