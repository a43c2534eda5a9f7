// Runs the corpus (make-corpus.mjs) against the package `a` in whatever
// runtime imports this file (Node.js, workerd, a browser page): no
// dependency, no file system. Each case's result is compared with what the
// CLI reported under `--json` for the same input (or with the typed error
// it must raise). Returns `[{name, ok, detail}]`.

const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const decode = (v) => (v && typeof v === 'object' && !Array.isArray(v) && typeof v.b64 === 'string' ? fromB64(v.b64) : v);

/**
 * A report as both sides must agree on it. Set aside: what names the
 * caller's surface rather than the input: the subject and `details.jws` (the
 * CLI names its files), each key's `source` (a file, an option),
 * `details.result` (the CLI's exit summary); and two differences of the
 * library facade's Web Bot Auth report from the CLI's, which the Node.js
 * package has too: the command (`web-bot-auth verify`, the CLI's `http
 * verify --profile web-bot-auth`) and the covered components the facade
 * lists for a valid signature.
 */
export function normalize(r) {
  const c = JSON.parse(JSON.stringify(r));
  delete c.subject;
  if (c.details) {
    delete c.details.jws;
    delete c.details.result;
  }
  if (c.command === 'web-bot-auth verify') c.command = 'http verify';
  const wba = c.details && c.details.web_bot_auth;
  for (const s of c.signatures || []) {
    if (s.key && typeof s.key === 'object') delete s.key.source;
    if (wba) delete s.covered;
  }
  return c;
}

function same(x, y) {
  return JSON.stringify(sortKeys(x)) === JSON.stringify(sortKeys(y));
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}

/** Serve `keySet` at `keySetUrl` with the directory media type while `f` runs. */
async function withKeySet({ keySetUrl, keySet }, f) {
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    if (String(url) === keySetUrl && init && init.redirect === 'manual') {
      return new Response(keySet, { status: 200, headers: { 'content-type': 'application/http-message-signatures-directory+json' } });
    }
    return new Response('not here', { status: 404 });
  };
  try {
    return await f();
  } finally {
    globalThis.fetch = real;
  }
}

/** Each case in the call it names and, for a synchronous call, in its
 * Promise form too (whose signature checks the runtime's WebCrypto makes):
 * both must give the CLI's report. */
function forms(a, corpus) {
  const out = [];
  for (const c of corpus.cases) {
    out.push(c);
    const promise = `${c.call}Async`;
    if (!c.call.endsWith('Async') && typeof a.Verifier.prototype[promise] === 'function') {
      out.push({ ...c, name: `${c.name} (${promise})`, call: promise });
    }
  }
  return out;
}

export async function runCorpus(a, corpus) {
  const results = [];
  for (const c of forms(a, corpus)) {
    let got;
    let error;
    try {
      const v = new a.Verifier({ nowSeconds: corpus.now, ...c.verifier });
      const args = c.args.map(decode);
      const call = () => v[c.call](...args);
      got = c.webBotAuthKeySet ? await withKeySet(c.webBotAuthKeySet, call) : await call();
    } catch (e) {
      error = e;
    }
    let ok = false;
    let detail = '';
    if (c.expect.report) {
      ok = !error && same(normalize(got), normalize(c.expect.report));
      detail = error ? `threw ${error.name}: ${error.message}` : ok ? '' : `report differs: ${JSON.stringify(normalize(got))} vs CLI ${JSON.stringify(normalize(c.expect.report))}`;
    } else {
      const want = c.expect.error;
      const isTyped = error instanceof a.AgentsigError;
      if (!error) detail = `no error: ${JSON.stringify(got)}`;
      else if (!isTyped) detail = `not a typed error: ${error.name}: ${error.message}`;
      else if (want.class && error.constructor.name !== want.class) detail = `${error.constructor.name} (${error.code}), not ${want.class}`;
      else if (want.code && error.code !== want.code) detail = `code ${error.code}, not ${want.code}`;
      else if (want.report && !(error instanceof a.NotVerified)) detail = `${error.constructor.name}, not a NotVerified`;
      else if (want.report && !same(normalize(error.report), normalize(want.report))) {
        detail = `report differs: ${JSON.stringify(normalize(error.report))} vs CLI ${JSON.stringify(normalize(want.report))}`;
      } else ok = true;
    }
    results.push({ name: c.name, ok, detail });
  }
  return results;
}
