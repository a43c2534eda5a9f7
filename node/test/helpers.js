// Shared by the node:test files: the package, the repository's paths and the
// agentsig CLI (AGENTSIG_BIN, else the workspace's debug or release build).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const node = path.resolve(__dirname, '..');
const repo = path.resolve(node, '..');

function cli() {
  const c = [process.env.AGENTSIG_BIN, path.join(repo, 'target/debug/agentsig'), path.join(repo, 'target/release/agentsig')];
  const found = c.find((p) => p && fs.existsSync(p));
  if (!found) throw new Error('the agentsig CLI is not built: run `cargo build` (or set AGENTSIG_BIN)');
  return found;
}

/** Run the CLI: `{status, stdout, stderr}`. */
function run(args, input) {
  const r = spawnSync(cli(), args, { input, encoding: 'utf8', cwd: repo });
  if (r.error) throw r.error;
  return r;
}

function tmpdir() {
  return fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'agentsig-node-'));
}

module.exports = { node, repo, cli, run, tmpdir };
