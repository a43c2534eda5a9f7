// Compiled (not run) by types.test.js with `tsc --noEmit --strict`: the
// declarations in index.d.ts describe the API the tests exercise, and
// reject what the JavaScript half rejects.
import {
  Verifier, SigningKey, canonicalize, signDescriptor, signRequest, signResponseAsync,
  NotVerified, PolicyRefused, AgentsigError, type Report,
} from '../index.js';

const key: SigningKey = SigningKey.generate('EdDSA');
const v = new Verifier({ keys: [key], maxAge: '5m', now: new Date() });
const jws: string = signDescriptor({ name: 'x' }, key);
const r: Report = v.verifyDescriptor({ name: 'x' }, jws);
const verdict: string = r.verdict;
const pairs: Array<[string, string]> = signRequest('GET', 'https://a.example/', [], undefined, key, { signatureAgent: 'https://bot.example' });
v.verifyRequest('GET', '/', [...pairs, ['Host', 'a.example']], undefined, { scheme: 'https', authorities: ['a.example'] });
const bytes: Buffer = canonicalize({ a: 1 });
async function later(): Promise<boolean> {
  const h = await signResponseAsync(200, [], 'ok', key);
  return (await v.verifyResponseAsync(200, h, 'ok')).verified;
}
try {
  v.verifyDescriptor(bytes, jws);
} catch (e) {
  if (e instanceof PolicyRefused || e instanceof NotVerified) console.log(e.code, e.report?.verdict);
  else if (e instanceof AgentsigError) console.log(e.code);
}
// @ts-expect-error: a JWS is a string
v.verifyDescriptor({}, 42);
// @ts-expect-error: a duration is a string with its unit ("5m") or maxAgeSeconds
new Verifier({ keys: [key], maxAge: 300 });
// @ts-expect-error: a report is read-only
r.verdict = 'verified';
async function catalogs(): Promise<boolean> {
  const k2: SigningKey = await SigningKey.generateAsync('RS256');
  const c: Report = v.verifyCatalog({ specVersion: '1.0', entries: [] }, { requireSigned: true });
  const u: Report = await v.verifyCatalogUrl('https://a.example/.well-known/ai-catalog.json', { allowPrivateHosts: ['a.example'] });
  return c.verified && u.verified && k2.algorithm === 'RS256' && (await v.verifyCatalogAsync(Buffer.from('{}'))).verified;
}
// @ts-expect-error: requireSigned is a boolean
v.verifyCatalog({}, { requireSigned: 'yes' });
v.verifyCatalog({}, { jws: 'eyJhbGciOiJFUzI1NiJ9..c2ln', allowUnsigned: true });
// @ts-expect-error: the catalog's JWS is a string
v.verifyCatalog({}, { jws: Buffer.from('x') });
// @ts-expect-error: the URL form fetches URL.jws itself
v.verifyCatalogUrl('https://a.example/.well-known/ai-catalog.json', { jws: 'x' });
export { verdict, later, catalogs };

import { signatureMiddleware, type AgentIdentity } from '../express.js';
const gate = signatureMiddleware(v, { authorities: ['example.com'], webBotAuth: false });
// @ts-expect-error: the site's authorities are a list
signatureMiddleware(v, { authorities: 'example.com' });
const who: AgentIdentity | null | undefined = null;
export { gate, who };

import { signingFetch } from '../fetch.js';
const signedFetch: typeof fetch = signingFetch(key, { signatureAgent: 'https://bot.example', maxRedirects: 5 });
// @ts-expect-error: the key is a SigningKey
signingFetch('pem');
export { signedFetch };
// A key in a PKCS#11 token: an RFC 7512 URI, the options alg and kid.
const tokenKey: SigningKey = SigningKey.fromPkcs11('pkcs11:token=t;object=k?module-path=/m.so', { alg: 'ES256', kid: 'k1' });
const tokenKeyLater: Promise<SigningKey> = SigningKey.fromPkcs11Async('pkcs11:token=t;object=k', { kid: tokenKey.kid });
// @ts-expect-error: the PIN is never an option (pin-source=file: or AGENTSIG_PKCS11_PIN)
SigningKey.fromPkcs11('pkcs11:token=t', { pin: '1234' });
void tokenKeyLater;
// The Fastify plugin: its options, and what it sets on the request.
import Fastify from 'fastify';
import agentsigPlugin, { DEFAULT_MAX_DIRECTORY_WAITS } from '../fastify.js';
const fastify = Fastify();
fastify.register(agentsigPlugin, { verifier: v, authorities: ['a.example'], webBotAuth: true, maxDirectoryWaits: DEFAULT_MAX_DIRECTORY_WAITS });
fastify.get('/', async (req) => ({ agent: req.agentsig?.agent ?? null, bytes: req.rawBody?.length ?? 0, why: req.agentsigError?.code }));
// @ts-expect-error: the plugin needs a verifier
fastify.register(agentsigPlugin, { authorities: ['a.example'] });
