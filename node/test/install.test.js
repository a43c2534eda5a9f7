// The documented install command, from a fresh project:
//   npm install <path to node/>
// npm 11 links the folder and runs its install script (the cargo build)
// with a notice naming it, unless the project sets `strict-allow-scripts`,
// which refuses any dependency's script its `allowScripts` does not list
// (`npm install-scripts approve`, npm-install-scripts(1)). The build is
// cargo's, warm in the workspace's target/.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { node, tmpdir } = require('./helpers.js');

test('npm install ./node works from a fresh project, CommonJS and ESM', () => {
  const app = tmpdir();
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const npm = spawnSync('npm', ['install', '--no-strict-allow-scripts', '--no-audit', '--no-fund', node], {
    cwd: app, encoding: 'utf8', timeout: 600000,
  });
  assert.equal(npm.status, 0, npm.stdout + npm.stderr);
  // npm's notice names the install script it ran.
  assert.match(npm.stdout + npm.stderr, /agentsig@0\.1\.0 \(install: node scripts\/build\.js\)/);
  const run = spawnSync(process.execPath, ['-e', `
    const a = require('agentsig');
    const k = a.SigningKey.generate();
    const v = new a.Verifier({ keys: [k] });
    console.log(v.verifyDescriptor({ a: 1 }, a.signDescriptor({ a: 1 }, k)).verdict);
  `], { cwd: app, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'verified');
  const esm = spawnSync(process.execPath, ['--input-type=module', '-e', "import { Verifier } from 'agentsig'; console.log(typeof Verifier);"], { cwd: app, encoding: 'utf8' });
  assert.equal(esm.stdout.trim(), 'function', esm.stderr);
});

test('with strict-allow-scripts and no allowScripts entry npm refuses it, naming the build script', () => {
  const app = tmpdir();
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const npm = spawnSync('npm', ['install', '--strict-allow-scripts', '--no-audit', '--no-fund', node], { cwd: app, encoding: 'utf8', timeout: 600000 });
  assert.notEqual(npm.status, 0, npm.stdout + npm.stderr);
  assert.match(npm.stdout + npm.stderr, /agentsig/);
});
