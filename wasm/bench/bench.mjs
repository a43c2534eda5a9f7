// Speed of the WebAssembly package against the npm peers on the same
// inputs (cases.js), in Node.js and in workerd (the npm package's binary),
// printed; never a timed test.
// Usage: node wasm/bench/bench.mjs [seconds per bench, default 2]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as a from '../index.js';
import { runBench } from './cases.js';
import { runWorkerdTest } from '../test/workerd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const secs = Number(process.argv[2] || 2);
const inputs = {
  pem: fs.readFileSync(path.join(repo, 'keys/example-p256.pem'), 'utf8'),
  doc: fs.readFileSync(path.join(repo, 'examples/agent.json'), 'utf8'),
};

console.log(`-- Node.js ${process.version}`);
const peers = {
  jose: await import('jose'),
  canonicalize: (await import('canonicalize')).default,
  wba: await import('web-bot-auth'),
  wbaCrypto: await import('web-bot-auth/crypto'),
};
await runBench(a, peers, inputs, secs, console.log);

// -- workerd: the same file, with the peers' ES modules beside it (workerd
// resolves no bare names: the peers' imports of each other are rewritten
// to relative paths; canonicalize, a CommonJS module, is wrapped).
const nm = path.join(here, '../node_modules');
const modules = {
  'cases.js': fs.readFileSync(path.join(here, 'cases.js')),
  'inputs.json': JSON.stringify(inputs),
};
/** The ES module entry of the package in `dir` (package.json `exports`). */
const entry = (dir) => {
  const p = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  let e = p.exports && (p.exports['.'] ?? p.exports);
  e = e && typeof e === 'object' ? e.import ?? e.default : e;
  e = e && typeof e === 'object' ? e.default : e;
  return path.join(dir, e || p.module || p.main);
};
const peerName = (file) => `peers/${path.relative(nm, file).split(path.sep).join('/')}`;
const added = new Set();
/** A package's ES modules as worker modules, its bare imports resolved as
 * Node.js resolves them (its own node_modules first). */
const addPackage = (dir) => {
  if (added.has(dir)) return;
  added.add(dir);
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'cjs') walk(p);
      } else if (/\.m?js$/.test(e.name)) files.push(p);
    }
  };
  walk(path.dirname(entry(dir)));
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8').replace(/from (["'])([^."'][^"']*)\1/g, (m, q, name) => {
      const own = path.join(dir, 'node_modules', name);
      const dep = fs.existsSync(own) ? own : path.join(nm, name);
      addPackage(dep);
      const rel = path.posix.relative(path.posix.dirname(peerName(f)), peerName(entry(dep)));
      return `from ${q}${rel.startsWith('.') ? rel : `./${rel}`}${q}`;
    });
    modules[peerName(f)] = text;
  }
};
addPackage(path.join(nm, 'jose'));
addPackage(path.join(nm, 'web-bot-auth'));
modules['peers/canonicalize.js'] = `const module = { exports: {} };\n${fs.readFileSync(path.join(nm, 'canonicalize/lib/canonicalize.js'), 'utf8')}\nexport default module.exports;\n`;
const main = `import * as a from './agentsig/workerd.js';
import { runBench } from './cases.js';
import inputs from './inputs.json';
import * as jose from './peers/jose/dist/webapi/index.js';
import canonicalize from './peers/canonicalize.js';
import * as wba from './peers/web-bot-auth/dist/index.mjs';
import * as wbaCrypto from './peers/web-bot-auth/dist/crypto.mjs';
export default {
  async test() {
    await runBench(a, { jose, canonicalize, wba, wbaCrypto }, inputs, ${secs}, (l) => console.log('agentsig-bench ' + l), true);
  },
};
`;
const r = runWorkerdTest(main, modules);
const lines = (r.stdout + r.stderr).split('\n').filter((l) => l.includes('agentsig-bench '));
console.log('-- workerd');
if (!lines.length) {
  console.log(`workerd bench gave no result (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  process.exitCode = 1;
}
for (const l of lines) console.log(l.slice(l.indexOf('agentsig-bench ') + 15));
