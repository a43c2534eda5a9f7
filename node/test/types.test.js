// index.d.ts is checked by the TypeScript compiler (`tsc --noEmit --strict`)
// against test/types-check.ts, which uses the API and marks what it must
// refuse with @ts-expect-error (an unused one is an error too).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const node = path.resolve(__dirname, '..');

test('tsc --noEmit accepts index.d.ts and types-check.ts', () => {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [node] });
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--target', 'es2022', '--types', 'node', path.join(__dirname, 'types-check.ts')], { cwd: node, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the ES module entry point exports the same objects as the CommonJS one', async () => {
  const esm = await import('../index.mjs');
  const cjs = require('..');
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), Object.keys(cjs).sort());
  for (const k of Object.keys(cjs)) assert.equal(esm[k], cjs[k], k);
  assert.equal(esm.default, cjs);
});
