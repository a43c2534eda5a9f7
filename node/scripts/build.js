#!/usr/bin/env node
// Builds the native addon from source with the machine's cargo (`$CARGO`,
// else `cargo` on PATH) and copies it to ./agentsig.node, where index.js
// loads it. The package's `install` script: `npm install` in this folder,
// and `npm install --allow-scripts=agentsig ./node` from another project,
// run it. Release mode; the workspace's target/ is shared with the CLI and
// the Python package, so a warm build takes seconds.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = path.resolve(__dirname, '..');
const cargo = process.env.CARGO || 'cargo';
const args = ['build', '--release', '--locked', '-p', 'agentsig-node',
  '--manifest-path', path.join(here, 'Cargo.toml'),
  '--message-format=json-render-diagnostics'];
const r = spawnSync(cargo, args, { cwd: here, stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
if (r.error) {
  console.error(`agentsig: cannot run ${cargo} (${r.error.message}): install Rust 1.95 or later (https://rustup.rs) and retry`);
  process.exit(1);
}
if (r.status !== 0) {
  console.error(`agentsig: \`${cargo} ${args.join(' ')}\` failed (exit ${r.status})`);
  process.exit(1);
}
// The cdylib cargo reports (libagentsig_node.so, .dylib, agentsig_node.dll).
let lib = null;
for (const line of r.stdout.split('\n')) {
  if (!line.startsWith('{')) continue;
  const m = JSON.parse(line);
  if (m.reason === 'compiler-artifact' && m.target && m.target.name === 'agentsig_node') {
    lib = m.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || lib;
  }
}
if (!lib) {
  console.error('agentsig: cargo built no agentsig_node library');
  process.exit(1);
}
// Copy to a new name, then rename: a process that has the old addon loaded
// keeps its mapping, and no process ever sees a half-written file.
const out = path.join(here, 'agentsig.node');
const tmp = `${out}.${process.pid}.tmp`;
fs.copyFileSync(lib, tmp);
fs.renameSync(tmp, out);
