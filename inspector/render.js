// Renders an inspection (the `details.inspection` of an `agentsig inspect`
// report, computed by the library through WebAssembly) as DOM. Every text
// from the input goes through textContent or an attribute set with
// setAttribute: the input is attacker-controlled, and no HTML is ever built
// from it (no innerHTML anywhere in this page). No rule lives here: the
// verdicts, reasons, base lines and their sources are the library's.

const SVG = 'http://www.w3.org/2000/svg';

/** A JSON value as text: a string as it is, anything else as JSON. */
const text = (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** An element `tag` with class `cls` and children (strings become text). */
export function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
  return e;
}

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The verdict badge; `data-verdict` carries the word for tests. */
export function badge(verdict) {
  const v = typeof verdict === 'string' && verdict ? verdict : 'unknown';
  const b = el('span', `badge v-${v.replace(/[^a-z-]/g, '')}`, v);
  b.dataset.verdict = v;
  return b;
}

const UNITS = [
  [86400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** "in 4 min" / "4 min ago" for Unix time `t` against `now` (seconds). */
export function relative(t, now) {
  const d = Math.round(t - now);
  if (d === 0) return 'now';
  const a = Math.abs(d);
  const [n, u] = UNITS.find(([n]) => a >= n) || UNITS[UNITS.length - 1];
  const q = Math.floor(a / n);
  const s = `${q} ${u}`;
  return d > 0 ? `in ${s}` : `${s} ago`;
}

/** A Unix time as an ISO date (UTC) or the number when out of range. */
export function date(t) {
  const d = new Date(t * 1000);
  return Number.isFinite(d.getTime()) ? d.toISOString().replace('.000Z', 'Z') : String(t);
}

function timeCell(t, now) {
  if (typeof t !== 'number') return el('span', null, String(t));
  const time = el('time', null, date(t));
  time.setAttribute('datetime', new Date(t * 1000).toISOString());
  return el('span', 'time', time, ' ', el('span', `rel ${t < now ? 'past' : 'future'}`, `(${relative(t, now)})`), ' ', el('span', 'raw', String(t)));
}

const PARAM_ORDER = ['alg', 'keyid', 'kid', 'created', 'expires', 'iat', 'exp', 'nonce', 'tag', 'typ', 'cty', 'crit'];
const TIMES = new Set(['created', 'expires', 'iat', 'exp', 'nbf']);

function params(p, now) {
  const dl = el('dl', 'params');
  const keys = Object.keys(p).sort((a, b) => {
    const ia = PARAM_ORDER.indexOf(a);
    const ib = PARAM_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
  for (const k of keys) {
    const v = p[k];
    if (v === null || v === undefined) continue;
    const dd = TIMES.has(k) && typeof v === 'number' ? timeCell(v, now) : el('code', null, typeof v === 'string' ? v : JSON.stringify(v));
    dl.append(el('div', null, el('dt', null, k), el('dd', null, dd)));
  }
  return dl;
}

function base(lines) {
  const ol = el('ol', 'base');
  ol.setAttribute('aria-label', 'Signature base, line by line');
  for (const l of lines) {
    const li = el('li', null, el('code', 'line', l.line ?? ''), el('span', 'src', l.source ?? ''));
    if (l.component) li.dataset.component = l.component;
    ol.append(li);
  }
  return ol;
}

function copyable(label, text, cls = 'mono') {
  const pre = el('pre', cls, text);
  pre.tabIndex = 0;
  return el('div', 'block', el('h4', null, label), pre);
}

function reasonLine(reason, message) {
  if (!reason && !message) return null;
  return el('p', 'reason', reason ? el('code', 'code', reason) : null, reason && message ? ' ' : null, message || null);
}

/** One signature: verdict and reason, parameters, base or canonical form. */
function signature(s, now) {
  const sec = el('section', 'card sig');
  sec.dataset.label = s.label ?? '';
  sec.dataset.verdict = s.verdict ?? '';
  sec.dataset.reason = s.reason ?? '';
  const form = s.form === 'jws' ? 'JWS (RFC 7515)' : s.form === 'rfc9421' ? 'RFC 9421' : s.form || '';
  sec.append(el('h3', null, el('span', 'label', s.label ?? ''), ' ', el('span', 'form', form), ' ', badge(s.verdict)));
  const r = reasonLine(s.reason, s.message);
  if (r) sec.append(r);
  if (s.params && Object.keys(s.params).length) sec.append(el('h4', null, s.form === 'jws' ? 'Protected header' : 'Parameters'), params(s.params, now));
  if (Array.isArray(s.base) && s.base.length) sec.append(el('h4', null, 'Signature base'), base(s.base));
  else if (s.base_error) sec.append(el('h4', null, 'Signature base'), el('p', 'note warn', `Not rebuilt: ${s.base_error}`));
  if (Array.isArray(s.covered) && s.covered.length && !(Array.isArray(s.base) && s.base.length)) {
    sec.append(el('p', 'note', 'covered: ', el('code', null, s.covered.join(' '))));
  }
  if (s.canonical) {
    sec.append(copyable('RFC 8785 canonical form (what the JWS signs)', s.canonical));
    if (s.canonical_sha256) sec.append(el('p', 'digest', 'SHA-256: ', el('code', null, s.canonical_sha256)));
  }
  if (s.signing_input) {
    // Long and rarely read: folded, a click (or Enter) away.
    const d = el('details', 'block');
    const pre = el('pre', 'mono', s.signing_input);
    pre.tabIndex = 0;
    d.append(el('summary', null, 'JWS signing input (RFC 7515 section 5.1)'), pre);
    sec.append(d);
  }
  return sec;
}

// ---------------------------------------------------------------- the chain

const W = 640;
const HOP_H = 132;
const GAP = 34;

function clip(s, n) {
  const t = String(s ?? '');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

/** The delegation chain as SVG, hop by hop (top: the first token). */
export function chainSvg(chain, now) {
  const hops = chain.length;
  const h = hops * HOP_H + (hops - 1) * GAP + 8;
  const root = svg('svg', { viewBox: `0 0 ${W} ${h}`, class: 'chain', role: 'img' });
  const failing = chain.find((c) => c.ok === false);
  root.append(svg('title', {}, `Delegation chain of ${hops} hop${hops === 1 ? '' : 's'}${failing ? `; hop ${failing.hop} fails: ${failing.reason || ''}` : ''}`));
  const defs = svg('defs');
  const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' });
  marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }));
  defs.append(marker);
  root.append(defs);
  const times = chain.flatMap((c) => [c.iat, c.exp]).filter((t) => typeof t === 'number');
  const t0 = Math.min(...times, now);
  const t1 = Math.max(...times, now);
  const span = Math.max(1, t1 - t0);
  const barX = 24;
  const barW = W - 48;
  const x = (t) => barX + ((t - t0) / span) * barW;
  let prev = null;
  chain.forEach((c, i) => {
    const y = 4 + i * (HOP_H + GAP);
    const g = svg('g', { class: `hop ${c.ok === false ? 'bad' : c.ok === true ? 'ok' : 'unknown'}`, 'data-hop': c.hop ?? i, 'data-ok': String(c.ok) });
    g.append(svg('title', {}, `hop ${c.hop ?? i}: ${c.actor ?? c.subject ?? ''}${c.reason ? ` — ${c.reason}: ${c.message || ''}` : ''}`));
    g.append(svg('rect', { x: 4, y, width: W - 8, height: HOP_H, rx: 10, class: 'box' }));
    g.append(svg('text', { x: 18, y: y + 22, class: 'hoplabel' }, `hop ${c.hop ?? i}${c.ok === false ? '  ✗ fails' : c.ok === true ? '  ✓' : ''}`));
    const who = c.actor ? `${clip(text(c.actor), 34)} acts for ${clip(text(c.subject), 30)}` : clip(text(c.subject), 60);
    g.append(svg('text', { x: 150, y: y + 22, class: 'actor' }, who));
    g.append(svg('text', { x: 18, y: y + 42, class: 'issuer' }, `issued by ${clip(text(c.issuer), 80)}`));
    // Scopes: a scope absent from the previous hop widens the grant.
    const scopes = scopeList(c.scope);
    let sx = 18;
    const sy = y + 52;
    for (const s of scopes) {
      const label = clip(s, 28);
      const wide = prev !== null && !prev.includes(s);
      const w = 14 + label.length * 7;
      if (sx + w > W - 16) break;
      g.append(svg('rect', { x: sx, y: sy, width: w, height: 20, rx: 10, class: wide ? 'scope widened' : 'scope' }));
      g.append(svg('text', { x: sx + 7, y: sy + 14, class: 'scopetext' }, label));
      sx += w + 6;
    }
    if (!scopes.length) g.append(svg('text', { x: 18, y: sy + 14, class: 'muted' }, 'no scope claim'));
    if (prev !== null && scopes.length) {
      const dropped = prev.filter((s) => !scopes.includes(s)).length;
      g.append(svg('text', { x: W - 18, y: y + 22, class: 'muted end' }, `${prev.length} → ${scopes.length} scope${scopes.length === 1 ? '' : 's'}${dropped ? ` (${dropped} dropped)` : ''}`));
    }
    // Lifetime on the chain's time axis, with "now".
    const ly = y + 84;
    g.append(svg('line', { x1: barX, y1: ly + 5, x2: barX + barW, y2: ly + 5, class: 'axis' }));
    if (typeof c.iat === 'number' && typeof c.exp === 'number') {
      g.append(svg('rect', { x: x(c.iat), y: ly, width: Math.max(2, x(c.exp) - x(c.iat)), height: 10, rx: 3, class: c.exp < now ? 'life expired' : 'life' }));
    }
    g.append(svg('line', { x1: x(now), y1: ly - 4, x2: x(now), y2: ly + 14, class: 'now' }));
    const life = `${typeof c.iat === 'number' ? `issued ${relative(c.iat, now)}` : 'no iat'} · ${typeof c.exp === 'number' ? `${c.exp < now ? 'expired' : 'expires'} ${relative(c.exp, now)}` : 'no exp'}`;
    g.append(svg('text', { x: 18, y: ly + 30, class: 'life-text' }, life));
    if (c.ok === false) {
      g.append(svg('text', { x: W - 18, y: ly + 30, class: 'fail end' }, clip(c.reason || 'fails', 48)));
    }
    if (i > 0) {
      const ay = y - GAP;
      g.append(svg('line', { x1: W / 2, y1: ay + 4, x2: W / 2, y2: y - 3, class: 'link', 'marker-end': 'url(#arrow)' }));
      g.append(svg('text', { x: W / 2 + 10, y: y - GAP / 2 + 4, class: 'muted' }, 'delegates to'));
    }
    root.append(g);
    prev = scopes;
  });
  return root;
}

/** A hop's scope values: a list, or a space-separated string (RFC 8693 section 4.2). */
function scopeList(s) {
  if (Array.isArray(s)) return s.map(String);
  return typeof s === 'string' ? s.split(' ').filter(Boolean) : [];
}

function chainList(chain, now) {
  const ol = el('ol', 'hops');
  for (const c of chain) {
    const li = el('li', `hop-row ${c.ok === false ? 'bad' : ''}`);
    li.dataset.hop = String(c.hop ?? '');
    li.dataset.ok = String(c.ok);
    li.append(
      el('strong', null, `hop ${c.hop}`), ' ', badge(c.ok === false ? 'failed' : c.ok === true ? 'passed' : 'unknown'), ' ',
      el('span', null, c.actor ? `${text(c.actor)} acts for ${text(c.subject)}` : text(c.subject)),
    );
    const d = el('dl', 'params');
    const row = (k, v) => d.append(el('div', null, el('dt', null, k), el('dd', null, v)));
    if (c.issuer) row('issuer', el('code', null, text(c.issuer)));
    if (c.scope !== null && c.scope !== undefined) row('scope', el('code', null, scopeList(c.scope).join(' ') || '(none)'));
    if (typeof c.iat === 'number') row('iat', timeCell(c.iat, now));
    if (typeof c.exp === 'number') row('exp', timeCell(c.exp, now));
    li.append(d);
    const r = reasonLine(c.reason, c.message);
    if (r) li.append(r);
    ol.append(li);
  }
  return ol;
}

// -------------------------------------------------------------- the catalog

/** An entry's verdict word: the library's, else whether its checks passed. */
function entryVerdict(e) {
  if (typeof e.verdict === 'string') return e.verdict;
  return e.passed === true ? 'passed' : e.passed === false ? 'failed' : 'unknown';
}

function entry(e) {
  const li = el('li', 'entry');
  li.setAttribute('role', 'treeitem');
  const v = entryVerdict(e);
  li.dataset.identifier = text(e.identifier);
  li.dataset.verdict = v;
  const head = el('div', 'entry-head', badge(v), ' ', el('code', 'ident', text(e.identifier) || '(no identifier)'));
  if (e.media_type) head.append(' ', el('span', 'media', text(e.media_type)));
  li.append(head);
  const facts = el('div', 'facts');
  const notes = el('ul', 'status-notes');
  facts.append(el('span', `fact binding-${text(e.binding).replace(/[^a-z-]/g, '')}`, `binding: ${text(e.binding) || 'none'}`));
  for (const [k, v] of [['artifact', e.artifact], ['manifest', e.manifest]]) {
    const st = status(v);
    facts.append(el('span', `fact st-${st.word.replace(/[^a-z-]/g, '')}`, `${k}: ${st.word}`));
    if (st.message) notes.append(el('li', null, el('strong', null, `${k}: `), st.message));
  }
  if (e.pointer) facts.append(el('code', 'fact pointer', e.pointer));
  li.append(facts);
  if (notes.childElementCount) li.append(notes);
  const r = reasonLine(e.reason, e.message);
  if (r) li.append(r);
  if (Array.isArray(e.children) && e.children.length) {
    const ul = el('ul', 'tree');
    ul.setAttribute('role', 'group');
    for (const c of e.children) ul.append(entry(c));
    li.append(ul);
  }
  return li;
}

/** A status: a word, or an object {status, message} (the report's). */
function status(v) {
  if (v === null || v === undefined) return { word: 'absent', message: '' };
  if (typeof v === 'string') return { word: v, message: '' };
  return { word: text(v.status) || 'unknown', message: text(v.message) };
}

function catalogTree(catalog) {
  const top = el('dl', 'params catalog-top');
  for (const [k, v] of [['host Trust Manifest', catalog.host], ['host identity', catalog.host_identity], ['catalog signature', catalog.catalog_signature]]) {
    if (!(k in catalog) && v === undefined) continue;
    const st = status(v);
    const dd = el('dd', null, badge(st.word));
    if (st.message) dd.append(' ', el('span', 'note', st.message));
    top.append(el('div', null, el('dt', null, k), dd));
  }
  const ul = el('ul', 'tree root');
  ul.setAttribute('role', 'tree');
  ul.setAttribute('aria-label', 'Catalog entries');
  for (const e of catalog.entries || []) ul.append(entry(e));
  return el('div', null, top, ul);
}

// --------------------------------------------------------------- the result

const KIND_NAMES = {
  'http-request': 'HTTP request',
  'http-response': 'HTTP response',
  descriptor: 'descriptor with its detached JWS',
  'a2a-card': 'A2A Agent Card',
  'ai-catalog': 'AI Catalog',
  'mcp-server-card': 'MCP Server Card',
  delegation: 'delegation token chain',
};

/**
 * The result view of a report (`agentsig inspect --json`): the overall
 * verdict, each signature, the chain, the catalog, the report itself.
 */
export function renderReport(report, now) {
  const ins = (report.details && report.details.inspection) || report.inspection || {};
  const out = el('div', 'inspection');
  const head = el('div', 'summary');
  head.id = 'verdict';
  head.dataset.verdict = ins.verdict ?? report.verdict ?? '';
  head.dataset.kind = ins.kind ?? '';
  head.append(el('h2', null, KIND_NAMES[ins.kind] || ins.kind || 'input'), ' ', badge(ins.verdict ?? report.verdict));
  if (report.subject) head.append(el('p', 'subject', 'subject: ', el('code', null, report.subject)));
  if (ins.command) head.append(el('p', 'subject', 'the verdict of ', el('code', null, `agentsig ${ins.command}`), ' on this input'));
  const err = ins.error || report.error;
  if (err && (err.code || err.message)) head.append(reasonLine(err.code, err.message));
  out.append(head);

  if (Array.isArray(ins.chain) && ins.chain.length) {
    const s = el('section', 'card chain-view');
    s.append(el('h2', null, `Delegation chain (${ins.chain.length} hop${ins.chain.length === 1 ? '' : 's'})`));
    s.append(el('div', 'svgwrap', chainSvg(ins.chain, now)));
    s.append(chainList(ins.chain, now));
    out.append(s);
  }
  if (ins.catalog && Array.isArray(ins.catalog.entries)) {
    const s = el('section', 'card catalog-view');
    s.append(el('h2', null, `Catalog (${ins.catalog.entries.length} entr${ins.catalog.entries.length === 1 ? 'y' : 'ies'})`));
    s.append(catalogTree(ins.catalog));
    out.append(s);
  }
  const sigs = Array.isArray(ins.signatures) ? ins.signatures : [];
  if (sigs.length) {
    const s = el('section', 'sigs');
    s.append(el('h2', null, `Signatures (${sigs.length})`));
    for (const x of sigs) s.append(signature(x, now));
    out.append(s);
  } else if (ins.kind !== 'delegation' && ins.kind !== 'ai-catalog') {
    out.append(el('p', 'note', 'No signature in this input.'));
  }
  const raw = el('details', 'raw');
  raw.append(el('summary', null, 'The report (agentsig inspect --json)'), el('pre', 'mono', JSON.stringify(report, null, 2)));
  out.append(raw);
  return out;
}

/** An error view: the typed error's code and message (a usage or input
 * error of the library: exit 2 on the command line). */
export function renderError(e) {
  const out = el('div', 'inspection');
  const head = el('div', 'summary error');
  head.id = 'verdict';
  head.dataset.verdict = 'error';
  head.dataset.code = e && e.code ? e.code : '';
  head.append(el('h2', null, 'Cannot inspect this input'), ' ', badge('error'));
  head.append(reasonLine(e && e.code, e && e.message ? e.message : String(e)));
  out.append(head);
  if (e && e.report) {
    const raw = el('details', 'raw');
    raw.append(el('summary', null, 'The report'), el('pre', 'mono', JSON.stringify(e.report, null, 2)));
    out.append(raw);
  }
  return out;
}
