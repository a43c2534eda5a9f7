// The inspector page: reads the form (or the URL fragment), asks the agentsig
// WebAssembly package for the inspection (`inspect`: the library's analysis,
// the same as `agentsig inspect --json`), and renders it (render.js). Nothing
// leaves the page but an explicit "Fetch keys" request. The fragment carries
// the input (`#i=` base64url of a JSON object {input, jws, keys, kind}):
// browsers never send a fragment to a server.
import { el, renderReport, renderError } from './render.js';

const $ = (id) => document.getElementById(id);
const form = $('form');
const fields = { input: $('input'), jws: $('jws'), keys: $('keys'), kind: $('kind') };
const result = $('result');
const root = document.documentElement;

let agentsig = null;
let loadError = null;

// ------------------------------------------------------------ the fragment

const enc = new TextEncoder();
const dec = new TextDecoder();

function b64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

function unb64url(s) {
  const t = atob(s.replaceAll('-', '+').replaceAll('_', '/'));
  const b = new Uint8Array(t.length);
  for (let i = 0; i < t.length; i++) b[i] = t.charCodeAt(i);
  return b;
}

/** The fields as loaded from a link: a textarea's value normalizes CR LF to
 * LF (HTML, "API value"), which would change an HTTP body's bytes, so a
 * field not edited since is read from here. */
let loaded = {};
const lf = (t) => t.replace(/\r\n?/g, '\n');

function state() {
  const s = {};
  for (const [k, f] of Object.entries(fields)) {
    const raw = loaded[k];
    const v = typeof raw === 'string' && lf(raw) === f.value ? raw : f.value;
    if (v) s[k] = v;
  }
  return s;
}

/** The state in a fragment (`#i=...`), or null. */
function fromFragment(hash) {
  const m = /^#i=([A-Za-z0-9_-]*)$/.exec(hash);
  if (!m) return null;
  try {
    const s = JSON.parse(dec.decode(unb64url(m[1])));
    return s && typeof s === 'object' && !Array.isArray(s) ? s : null;
  } catch {
    return null;
  }
}

function fragment(s) {
  return `#i=${b64url(enc.encode(JSON.stringify(s)))}`;
}

function load(s) {
  loaded = {};
  for (const [k, f] of Object.entries(fields)) {
    f.value = typeof s[k] === 'string' ? s[k] : '';
    if (typeof s[k] === 'string') loaded[k] = s[k];
  }
}

// ------------------------------------------------------------------- keys

const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?-----END [A-Z0-9 ]+-----/g;

/** The verifier's key options from the keys field: a JWK Set, one JWK, or
 * PEM blocks (the library parses and checks each). */
function keyOptions(text) {
  const t = text.trim();
  if (!t) return {};
  if (t.startsWith('{')) {
    let v;
    try {
      v = JSON.parse(t);
    } catch (e) {
      throw Object.assign(new Error(`the keys are not JSON: ${e.message}`), { code: 'key.malformed' });
    }
    return Array.isArray(v.keys) ? { jwks: t } : { keys: [t] };
  }
  const pems = t.match(PEM);
  if (!pems) throw Object.assign(new Error('the keys are neither a JWK Set, a JWK nor PEM'), { code: 'key.malformed' });
  return { keys: pems };
}

// ------------------------------------------------------------- inspection

let seq = 0;

async function run() {
  const n = ++seq;
  root.dataset.state = 'running';
  const s = state();
  const now = Math.floor(Date.now() / 1000);
  let view;
  if (!s.input) {
    result.replaceChildren(el('p', 'note', 'Paste an input above, or open a shared link.'));
    root.dataset.state = 'idle';
    return;
  }
  if (!agentsig) {
    result.replaceChildren(renderError(loadError || new Error('the WebAssembly package is still loading')));
    root.dataset.state = 'error';
    return;
  }
  try {
    const opts = { ...keyOptions(s.keys || ''), nowSeconds: now };
    if (s.jws) opts.jws = s.jws.trim();
    if (s.kind) opts.kind = s.kind;
    const report = await agentsig.inspect(s.input, opts);
    view = renderReport(report, now);
  } catch (e) {
    // A verdict other than "verified" may come as a typed error carrying the
    // report; a usage or input error has none.
    view = e && e.report && e.report.details && e.report.details.inspection ? renderReport(e.report, now) : renderError(e);
  }
  if (n !== seq) return;
  result.replaceChildren(view);
  root.dataset.state = 'rendered';
}

// ---------------------------------------------------------------- actions

function note(text) {
  $('copied').textContent = text;
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    note(`${what} copied.`);
  } catch {
    note(`${what}: select it and copy it (the browser refused clipboard access).`);
  }
}

/** A string single-quoted for a POSIX shell (taken literally). */
const quote = (w) => `'${w.replaceAll("'", "'\\''")}'`;
/** A shell word, single-quoted when it needs quoting. */
const sh = (w) => (/^[A-Za-z0-9_./:=@-]+$/.test(w) ? w : quote(w));

const FILE_NAMES = {
  'http-request': 'request.http',
  'http-response': 'response.http',
  descriptor: 'descriptor.json',
  'a2a-card': 'agent-card.json',
  'ai-catalog': 'ai-catalog.json',
  'mcp-server-card': 'server-card.json',
  delegation: 'chain.txt',
};

function guessName(input) {
  const t = input.trimStart();
  if (/^[A-Z]+ \S+ HTTP\/\d/.test(t)) return 'request.http';
  if (/^HTTP\/\d/.test(t)) return 'response.http';
  if (t.startsWith('{')) return 'input.json';
  return 'input.txt';
}

/** The command line doing the same inspection: each field written to a
 * file byte for byte (printf, single-quoted: no expansion, no added
 * newline), then `agentsig inspect`. */
export function command(s) {
  const lines = [];
  const file = (name, text) => lines.push(`printf '%s' ${quote(text)} > ${name}`);
  const name = (s.kind && FILE_NAMES[s.kind]) || guessName(s.input || '');
  const args = ['agentsig', 'inspect', name];
  file(name, s.input || '');
  if (s.jws) {
    file(`${name}.jws`, s.jws.trim());
    args.push('--jws', `${name}.jws`);
  }
  const k = (s.keys || '').trim();
  if (k) {
    const isJson = k.startsWith('{');
    const kf = isJson ? 'keys.json' : 'keys.pem';
    file(kf, k);
    let jwks = false;
    try {
      jwks = isJson && Array.isArray(JSON.parse(k).keys);
    } catch {
      jwks = false;
    }
    args.push(jwks ? '--jwks' : '--key', kf);
  }
  if (s.kind) args.push('--kind', s.kind);
  lines.push(args.map(sh).join(' '));
  return lines.join('\n');
}

/** The key set URL an input names, to prefill "Fetch keys" (a suggestion
 * only; the verdict is the library's): a JSON document's jwks_uri / jwksUri
 * member, or the first URL in a request's Signature-Agent field with the
 * Web Bot Auth key directory's well-known path when it names an origin
 * (draft-ietf-webbotauth-httpsig-protocol-00; the library decides which key
 * set actually verifies). */
export function keyUrlOf(input) {
  const t = input.trimStart();
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t);
      const u = v.jwks_uri || v.jwksUri;
      return typeof u === 'string' ? u : '';
    } catch {
      return '';
    }
  }
  for (const line of t.split(/\r?\n/).slice(1)) {
    if (!line) break;
    const m = /^signature-agent\s*:\s*(.*)$/i.exec(line);
    const url = m && /"(https:\/\/[^"]+)"/.exec(m[1]);
    if (!url) continue;
    try {
      const u = new URL(url[1]);
      return u.pathname === '/' ? `${u.origin}/.well-known/http-message-signatures-directory` : u.href;
    } catch {
      return '';
    }
  }
  return '';
}

async function fetchKeys() {
  const out = $('fetch-note');
  out.hidden = false;
  out.className = 'note';
  const url = $('keyurl').value.trim() || keyUrlOf(fields.input.value);
  if (!url) {
    out.textContent = 'Give the URL of a JWK Set (or of a Web Bot Auth key directory).';
    return;
  }
  $('keyurl').value = url;
  let u;
  try {
    u = new URL(url);
  } catch {
    out.textContent = `Not a URL: ${url}`;
    return;
  }
  if (u.protocol !== 'https:') {
    out.textContent = 'Keys are fetched over HTTPS only (draft-narvaneni-agent-uri-03 section 5.2).';
    out.className = 'note warn';
    return;
  }
  out.textContent = `Fetching ${u.href}…`;
  try {
    const r = await fetch(u.href, { credentials: 'omit', redirect: 'error', cache: 'no-store', referrerPolicy: 'no-referrer' });
    if (!r.ok) throw Object.assign(new Error(`HTTP ${r.status}`), { http: true });
    const text = await r.text();
    if (text.length > 1_000_000) throw Object.assign(new Error('larger than 1 MB'), { http: true });
    const v = JSON.parse(text);
    if (!v || !Array.isArray(v.keys)) throw Object.assign(new Error('not a JWK Set (no "keys" array)'), { http: true });
    fields.keys.value = JSON.stringify(v, null, 2);
    out.textContent = `${v.keys.length} key${v.keys.length === 1 ? '' : 's'} fetched from ${u.href}.`;
    run();
  } catch (e) {
    out.className = 'note warn';
    out.textContent = e.http
      ? `${u.href}: ${e.message}.`
      : `The browser could not read ${u.href}: the server does not allow cross-origin reads (CORS), or it is unreachable. ` +
        `Fetch it yourself (curl -s ${u.href}) and paste it in Keys, or run the command line, which is not bound by CORS.`;
  }
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  run();
});
form.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  }
});
$('copy-link').addEventListener('click', () => {
  const s = state();
  const url = new URL(location.href);
  url.hash = fragment(s);
  history.replaceState(null, '', url.hash);
  copy(url.href, 'The link');
});
$('copy-command').addEventListener('click', () => {
  const text = command(state());
  $('command').textContent = text;
  $('command-box').hidden = false;
  copy(text, 'The command');
});
$('clear').addEventListener('click', () => {
  load({});
  $('command-box').hidden = true;
  history.replaceState(null, '', location.pathname + location.search);
  run();
  fields.input.focus();
});
$('fetch-keys').addEventListener('click', fetchKeys);
fields.input.addEventListener('change', () => {
  if (!$('keyurl').value) $('keyurl').value = keyUrlOf(fields.input.value);
});
window.addEventListener('hashchange', () => {
  const s = fromFragment(location.hash);
  if (s) {
    load(s);
    run();
  }
});

// ------------------------------------------------------------------ start

const initial = fromFragment(location.hash);
if (initial) load(initial);
try {
  agentsig = await import('../wasm/browser.js');
  $('status').textContent = 'Ready.';
} catch (e) {
  loadError = Object.assign(
    new Error(`the WebAssembly package could not be loaded (${e && e.message ? e.message : e}); build it with scripts/wasm-build.sh, or serve the page with agentsig inspect --serve`),
    { code: 'unavailable' },
  );
  $('status').textContent = loadError.message;
}
if (fields.input.value) {
  if (!$('keyurl').value) $('keyurl').value = keyUrlOf(fields.input.value);
  await run();
} else {
  root.dataset.state = agentsig ? 'idle' : 'error';
}
