// The quick start of node/README.md runs as written (with `require('agentsig')`
// resolved to this package) and prints what the README says it prints.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { node, tmpdir } = require('./helpers.js');

test('the README quick start runs and prints what the README says', () => {
  const text = fs.readFileSync(path.join(node, 'README.md'), 'utf8');
  const quick = text.slice(text.indexOf('## Quick start'));
  const code = /```js\n([\s\S]*?)```/.exec(quick)[1];
  const said = /It prints (.*)\n/.exec(quick)[1];
  const expected = [...said.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  // A project with this package installed as `agentsig` (a link, as npm makes).
  const app = tmpdir();
  fs.mkdirSync(path.join(app, 'node_modules'));
  fs.symlinkSync(node, path.join(app, 'node_modules', 'agentsig'), 'dir');
  fs.writeFileSync(path.join(app, 'quick.js'), code);
  const r = spawnSync(process.execPath, ['quick.js'], { cwd: app, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), expected);
});
