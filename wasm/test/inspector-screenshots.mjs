// The inspector screenshots of docs/: the page opened in headless Chromium
// on three fixtures (a signed request, a delegation chain whose last hop
// widens its scope, an AI Catalog with a changed entry), at a desktop width,
// and the request at a phone's width.
//
// Usage: node wasm/test/inspector-screenshots.mjs [OUT_DIR (default docs/)]
//   (needs the CLI built and scripts/wasm-build.sh run, as the test does)
import fs from 'node:fs';
import path from 'node:path';
import { chrome, fixtures, link, repo, serve } from './inspector-fixtures.mjs';

const out = path.resolve(process.argv[2] || path.join(repo, 'docs'));
const fx = fixtures();
const pick = (name) => {
  const f = fx.find((x) => x.name === name);
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
};
const shots = [
  ['inspector-request.png', pick('request'), '1280,1000'],
  ['inspector-delegation.png', pick('delegation chain whose last hop widens the scope'), '1280,1320'],
  ['inspector-catalog.png', pick('AI Catalog with an entry changed'), '1280,1000'],
  ['inspector-phone.png', pick('request'), '390,1400'],
];
fs.mkdirSync(out, { recursive: true });
const server = await serve();
try {
  for (const [file, f, size] of shots) {
    const url = `http://127.0.0.1:${server.address().port}${link(f)}`;
    const b = chrome(url, [`--window-size=${size}`, '--hide-scrollbars', '--virtual-time-budget=15000', `--screenshot=${path.join(out, file)}`]);
    await b.exited;
    await b.stop();
    console.log(path.join(out, file));
  }
} finally {
  server.close();
}
