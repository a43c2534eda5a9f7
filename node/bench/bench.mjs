// Node.js package bench, one run, interleaved rounds, medians:
//  1. verifyDescriptor of a 13 KB descriptor against npm `jose` compactVerify
//     over npm `canonicalize` bytes (what a JavaScript resolver does today);
//  2. verifyRequest (Web Bot Auth, Ed25519) against `web-bot-auth`'s verify
//     of the same request (its legacy whole-field form, which both accept);
//  3. the cost of a Promise variant (libuv pool) over the sync call.
// Prints one line per comparison with the ratio (peer time / agentsig time,
// above 1 means agentsig is faster). Usage: node bench/bench.mjs [rounds]
// No test asserts a time: test/bench.test.js runs it with one round and
// checks that it prints every line.
import * as a from '../index.mjs';
import * as jose from 'jose';
import canonicalize from 'canonicalize';

const wba = await import('web-bot-auth');
const wbaCrypto = await import('web-bot-auth/crypto');

const rounds = Number(process.argv[2] || 15);
const per = Number(process.argv[3] || 200);

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

/** Median microseconds per call of each function, in interleaved rounds. */
async function race(fns) {
  const times = fns.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < fns.length; i++) {
      const t0 = process.hrtime.bigint();
      for (let n = 0; n < per; n++) await fns[i]();
      times[i].push(Number(process.hrtime.bigint() - t0) / 1000 / per);
    }
  }
  return times.map(median);
}

// 1. A 13 KB descriptor.
const doc = { name: 'planner', url: 'https://planner.example/', skills: [] };
for (let i = 0; JSON.stringify(doc).length < 13 * 1024; i++) {
  doc.skills.push({ id: `skill-${i}`, name: `Skill ${i}`, description: 'Plans trips, books tables and answers questions about them.', tags: ['travel', 'food', `t${i}`] });
}
const docBytes = Buffer.from(JSON.stringify(doc));
const key = a.SigningKey.generate('ES256');
const verifier = new a.Verifier({ keys: [key] });
const jws = a.signDescriptor(docBytes, key);
const [h64, , s64] = jws.split('.');
const pub = await jose.importJWK(key.publicJwk(), 'ES256');
const joseVerify = async () => {
  const payload = Buffer.from(canonicalize(JSON.parse(docBytes.toString()))).toString('base64url');
  await jose.compactVerify(`${h64}.${payload}.${s64}`, pub, { algorithms: ['ES256'] });
};
await joseVerify();
const [ours, theirs] = await race([() => verifier.verifyDescriptor(docBytes, jws), joseVerify]);
console.log(`verifyDescriptor (13 KB, ES256): agentsig ${ours.toFixed(1)} µs, jose compactVerify + canonicalize ${theirs.toFixed(1)} µs, ratio ${(theirs / ours).toFixed(2)}x`);

// 2. Web Bot Auth: the legacy whole-field form, which web-bot-auth verifies.
const AGENT = 'https://bot.example';
const ed = a.SigningKey.generate('EdDSA');
const der = Buffer.from(ed.privatePem().replace(/-----[^-]+-----|\s/g, ''), 'base64');
const jwk = await globalThis.crypto.subtle.exportKey('jwk', await globalThis.crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, true, ['sign']));
const url = 'https://site.example/page';
const now = Math.floor(Date.now() / 1000);
const signed = await wba.signatureHeaders(new Request(url, { headers: { 'Signature-Agent': `"${AGENT}"` } }), await wbaCrypto.signerFromJWK(jwk), {
  created: new Date(now * 1000), expires: new Date((now + 3600) * 1000),
});
const headers = [['Signature-Agent', `"${AGENT}"`], ['Signature-Input', signed['Signature-Input']], ['Signature', signed.Signature]];
const wv = new a.Verifier({ agentKeys: { [AGENT]: [ed] } });
const { kty, crv, x } = ed.publicJwk();
const wbaVerifier = await wbaCrypto.verifierFromJWK({ kty, crv, x });
const theirsWba = () => wba.verify(new Request(url, { headers }), wbaVerifier);
await theirsWba();
const [oursReq, theirsReq] = await race([
  () => wv.verifyRequest('GET', url, headers, undefined, { webBotAuth: true, authorities: ['site.example'] }),
  theirsWba,
]);
console.log(`verifyRequest (Web Bot Auth, Ed25519): agentsig ${oursReq.toFixed(1)} µs, web-bot-auth verify ${theirsReq.toFixed(1)} µs, ratio ${(theirsReq / oursReq).toFixed(2)}x`);

// 3. A Promise variant over the sync call (one at a time: the pool's
// round trip; many at once overlap on the pool's threads).
const [sync, async1] = await race([
  () => verifier.verifyDescriptor(docBytes, jws),
  () => verifier.verifyDescriptorAsync(docBytes, jws),
]);
console.log(`verifyDescriptorAsync over verifyDescriptor: ${async1.toFixed(1)} µs vs ${sync.toFixed(1)} µs, +${(async1 - sync).toFixed(1)} µs per call`);
