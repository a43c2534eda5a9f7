// Runs code in workerd (the Cloudflare Workers runtime; npm `workerd` ships
// its binary): lays out a worker whose modules are the package's files as
// published (relative imports only, the `.wasm` as a compiled module) and
// `extra` modules, and runs its `test` handler with `workerd test`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** The package's files a worker imports (package.json `files`). */
export function packageFiles() {
  return JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).files.filter((f) => /\.(js|wasm)$/.test(f));
}

/** The workerd binary of the npm package. */
export function workerdBin() {
  const main = require.resolve('workerd/package.json', { paths: [pkg] });
  const bin = path.join(path.dirname(main), 'bin', 'workerd');
  return fs.existsSync(bin) ? bin : 'workerd';
}

const kind = (f) => (f.endsWith('.wasm') ? 'wasm' : f.endsWith('.json') ? 'json' : f.endsWith('.txt') ? 'text' : 'esModule');

/**
 * `workerd test` on a worker of `main` (module text) with `modules`
 * (`{name: text or Uint8Array}`) beside the package (under `agentsig/`).
 * Returns `{status, stdout, stderr}`.
 */
export function runWorkerdTest(main, modules = {}, { timeoutMs = 300_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentsig-workerd-'));
  try {
    const names = [];
    const put = (name, data) => {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), data);
      names.push(name);
    };
    put('main.js', main);
    for (const [n, d] of Object.entries(modules)) put(n, d);
    for (const f of packageFiles()) put(`agentsig/${f}`, fs.readFileSync(path.join(pkg, f)));
    const mods = names.map((n) => `(name = ${JSON.stringify(n)}, ${kind(n)} = embed ${JSON.stringify(n)})`).join(',\n      ');
    fs.writeFileSync(path.join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
);
const worker :Workerd.Worker = (
  modules = [
      ${mods}
  ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = ["nodejs_compat"],
);
`);
    const r = spawnSync(workerdBin(), ['test', path.join(dir, 'config.capnp')], { encoding: 'utf8', timeout: timeoutMs });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
