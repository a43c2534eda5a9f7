// The inspector page's fixtures and its loopback server, shared by the
// Chromium test (inspector.test.mjs) and the screenshots of docs/
// (inspector-screenshots.mjs): inputs of every kind, valid and tampered,
// signed by the agentsig CLI at the time of the run.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { packageFiles } from './workerd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../..');
export const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find((c) => spawnSync('which', [c]).status === 0);
export const cli = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')]
  .find((p) => p && fs.existsSync(p));

export const pemPath = path.join(repo, 'keys/example-p256.pem');
export const jwksPath = path.join(repo, 'keys/example-p256.jwks.json');
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

  // A Web Bot Auth request (draft-ietf-webbotauth-httpsig-protocol-00).
  const wba = run(['http', 'sign', '-', '--key', pemPath, '--profile', 'web-bot-auth', '--signature-agent', 'https://crawler.example'],
    crlf(['GET /catalog HTTP/1.1', 'Host: shop.example', 'User-Agent: crawler/1.0']));
  add('Web Bot Auth request', wba);
  add('Web Bot Auth request replayed on another path', wba.replace('GET /catalog', 'GET /checkout'));

  // RFC 9421 response with RFC 9530 Content-Digest.
  const body = '{"status":"ok","items":[1,2,3]}';
  const res = run(['http', 'sign', '-', '--key', pemPath, '--expires-in', '5m'],
    crlf(['HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Digest: ${digest(body)}`, `Content-Length: ${body.length}`], body));
  add('response', res);
  add('response with its body changed', res.replace('[1,2,3]', '[1,2,4]'));
  // CR LF inside the body: the page must inspect the link's bytes, not the
  // textarea's LF-normalized value.
  const text = 'line one\r\nline two\r\n';
  add('response whose body holds CR LF', run(['http', 'sign', '-', '--key', pemPath],
    crlf(['HTTP/1.1 200 OK', 'Content-Type: text/plain', `Content-Digest: ${digest(text)}`, `Content-Length: ${text.length}`], text)));

  // A descriptor and its detached JWS over the RFC 8785 form.
  const doc = fs.readFileSync(path.join(repo, 'examples/agent.json'), 'utf8');
  const jws = run(['sign', '-', '--key', pemPath], doc).trim();
  add('descriptor', doc, { jws });
  const obj = JSON.parse(doc);
  obj.name = `${obj.name ?? 'agent'} (changed)`;
  add('descriptor changed after signing', JSON.stringify(obj, null, 2), { jws });
  // The key pasted as PEM instead of a JWK Set.
  add('descriptor, its key as PEM', doc, { jws, keys: fs.readFileSync(path.join(repo, 'keys/example-p256.pub.pem'), 'utf8') });

  // An A2A Agent Card with its embedded signature.
  const card = run(['sign', '-', '--key', pemPath], fs.readFileSync(path.join(repo, 'examples/a2a-agent-card.json')));
  add('A2A card', card);
  const c = JSON.parse(card);
  c.description = `${c.description ?? ''} Now also wires money.`;
  add('A2A card changed after signing', JSON.stringify(c, null, 2));

  // An MCP Server Card with its detached JWS.
  const mcp = fs.readFileSync(path.join(repo, 'examples/catalog/mcp-server-card.json'), 'utf8');
  const mcpJws = fs.readFileSync(path.join(repo, 'examples/catalog/mcp-server-card.json.jws'), 'utf8').trim();
  add('MCP Server Card', mcp, { jws: mcpJws });
  const m = JSON.parse(mcp);
  m.remotes[0].url = 'https://attacker.example/mcp';
  add('MCP Server Card pointed elsewhere', JSON.stringify(m, null, 2), { jws: mcpJws });

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

const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.html': 'text/html', '.css': 'text/css' };

/** A loopback server of the page and the package, in the repository's
 * layout, plus `extra` routes. */
export function serve(extra = {}) {
  const files = {};
  for (const f of fs.readdirSync(path.join(repo, 'inspector'))) files[`/inspector/${f}`] = path.join(repo, 'inspector', f);
  for (const f of packageFiles()) {
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

/** Runs headless Chromium on `url` with `args`: `exited` resolves on its
 * exit, `output` to its standard output when `stdout` is set. */
export function chrome(url, args = [], { timeoutMs = 120_000, stdout = false } = {}) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-inspector-'));
  const browser = spawn(chromium, [
    '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`, ...args, url,
  ], {
    stdio: ['ignore', stdout ? 'pipe' : 'ignore', 'pipe'],
    detached: true,
    // Its temporary files too (the process singleton's socket, in a
    // directory of its own that a killed browser leaves behind) go into
    // the profile, which is removed below.
    env: { ...process.env, TMPDIR: profile },
  });
  // Chromium's helpers (GPU, utility, crash handler) are processes of its
  // own group: all of them are killed, or one of them still writes into
  // the profile while it is removed (seen on a first run: ENOTEMPTY).
  const kill = () => {
    try {
      process.kill(-browser.pid, 'SIGKILL');
    } catch {
      browser.kill('SIGKILL');
    }
  };
  let stderr = '';
  let out = '';
  browser.stderr.on('data', (c) => (stderr += c));
  if (stdout) browser.stdout.on('data', (c) => (out += c));
  const exited = new Promise((r) => browser.once('exit', r));
  const timer = setTimeout(kill, timeoutMs);
  const stop = async () => {
    clearTimeout(timer);
    // The group, even when the browser itself has exited: its helpers may
    // outlive it.
    kill();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.error(`# could not remove the Chromium profile ${profile}: ${e.message}`);
    }
  };
  return { exited, stop, stderr: () => stderr, output: exited.then(() => out) };
}

