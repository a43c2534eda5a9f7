// The bench (bench/bench.mjs) runs, with one short round, and prints each of
// its three comparisons with a ratio. No time is asserted.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('bench/bench.mjs prints its three comparisons', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bench', 'bench.mjs'), '1', '2'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 3, r.stdout);
  assert.match(lines[0], /^verifyDescriptor \(13 KB, ES256\): .* ratio \d+\.\d\dx$/);
  assert.match(lines[1], /^verifyRequest \(Web Bot Auth, Ed25519\): .* ratio \d+\.\d\dx$/);
  assert.match(lines[2], /^verifyDescriptorAsync over verifyDescriptor: /);
});
