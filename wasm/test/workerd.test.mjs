// The WebAssembly package in workerd, the Cloudflare Workers runtime: the
// same corpus as in Node.js gives the CLI's reports and typed errors,
// through the package's `workerd` entry (workerd.js: the module compiled by
// the runtime from the imported `.wasm`).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWorkerdTest } from './workerd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const corpusPath = process.env.AGENTSIG_WASM_CORPUS || path.join(here, 'corpus.generated.json');

test('the corpus gives the CLI reports and typed errors in workerd', { skip: !fs.existsSync(corpusPath) && 'no corpus (run node.test.mjs first)' }, () => {
  const main = `import * as a from './agentsig/workerd.js';
import { runCorpus } from './corpus.js';
import corpus from './corpus.json';
export default {
  async test() {
    const results = await runCorpus(a, corpus);
    const failed = results.filter((r) => !r.ok);
    console.log('agentsig-corpus ' + JSON.stringify({ total: results.length, failed }));
    if (failed.length) throw new Error(failed.length + ' cases failed');
  },
};
`;
  const r = runWorkerdTest(main, {
    'corpus.js': fs.readFileSync(path.join(here, 'corpus.js')),
    'corpus.json': fs.readFileSync(corpusPath),
  });
  const line = (r.stdout + r.stderr).split('\n').find((l) => l.includes('agentsig-corpus '));
  assert.ok(line, `no result from workerd (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  const got = JSON.parse(line.slice(line.indexOf('agentsig-corpus ') + 16));
  assert.deepEqual(got.failed, []);
  assert.ok(got.total >= 20, `${got.total} cases`);
  assert.equal(r.status, 0, r.stderr);
});
