// examples/workers under workerd: the agent (agent.js) signs its outgoing
// fetch; the gate (gate.js) verifies it and forwards it to the origin with
// the verified agent, with the agent's keys given and with its key
// directory fetched; an unsigned or altered request gets a 401
// application/problem+json. The runtime's fetch is stubbed in the worker:
// the test has no network.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWorkerdTest } from './workerd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const examples = path.resolve(here, '../../examples/workers');
/** An example as a module of the test worker: the package by its path. */
const example = (f) => fs.readFileSync(path.join(examples, f), 'utf8').replaceAll("from 'agentsig-wasm'", "from './agentsig/workerd.js'");

const MAIN = `import { SigningKey } from './agentsig/workerd.js';
import gate from './gate.js';
import { signedFetch } from './agent.js';

const AGENT = 'https://bot.example';
const DIRECTORY = AGENT + '/.well-known/http-message-signatures-directory';
const check = (c, m) => { if (!c) throw new Error(m); };

export default {
  async test() {
    const key = SigningKey.generate('EdDSA');
    const jwks = JSON.stringify({ keys: [key.publicJwk()] });
    const sent = [];
    globalThis.fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.url === DIRECTORY) {
        return new Response(jwks, { headers: { 'content-type': 'application/http-message-signatures-directory+json' } });
      }
      sent.push(req);
      return new Response('from the origin', { status: 200 });
    };
    const agentEnv = { AGENT_KEY: key.privatePem(), SIGNATURE_AGENT: AGENT };
    const results = {};
    for (const [name, gateEnv] of [['given keys', { ORIGIN: 'https://origin.example', AGENT_KEYS: JSON.stringify({ [AGENT]: jwks }) }],
                                   ['fetched directory', { ORIGIN: 'https://origin.example' }]]) {
      sent.length = 0;
      await signedFetch(agentEnv, 'https://site.example/page?x=1');
      const signed = sent.pop();
      check(signed.headers.get('signature-agent') && signed.headers.get('signature'), 'the agent did not sign');
      const ok = await gate.fetch(signed.clone(), gateEnv);
      const forwarded = sent.pop();
      const again = await gate.fetch(signed.clone(), gateEnv);
      const unsigned = await gate.fetch(new Request('https://site.example/page?x=1'), gateEnv);
      results[name] = {
        status: ok.status,
        url: forwarded && forwarded.url,
        agent: forwarded && forwarded.headers.get('agentsig-verified-agent'),
        replay: again.status,
        unsigned: [unsigned.status, unsigned.headers.get('content-type'), (await unsigned.json()).code],
      };
    }
    console.log('agentsig-examples ' + JSON.stringify(results));
  },
};
`;

test('the Workers gate and signing agent, under workerd', () => {
  const r = runWorkerdTest(MAIN, { 'gate.js': example('gate.js'), 'agent.js': example('agent.js') });
  const line = (r.stdout + r.stderr).split('\n').find((l) => l.includes('agentsig-examples '));
  assert.ok(line, `no result from workerd (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  const got = JSON.parse(line.slice(line.indexOf('agentsig-examples ') + 18));
  for (const name of ['given keys', 'fetched directory']) {
    const g = got[name];
    assert.equal(g.status, 200, name);
    assert.equal(g.url, 'https://origin.example/page?x=1', name);
    assert.equal(g.agent, 'https://bot.example', name);
    assert.equal(g.replay, 401, `${name}: a replayed nonce`);
    assert.deepEqual(g.unsigned.slice(0, 2), [401, 'application/problem+json'], name);
  }
  assert.equal(r.status, 0, r.stderr);
});
