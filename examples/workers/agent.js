// An agent on Cloudflare Workers that signs its outgoing fetches under Web
// Bot Auth (draft-meunier-webbotauth-httpsig-protocol): each request gets
// Signature-Agent, Signature-Input and Signature (keyid the key's RFC 7638
// thumbprint, tag "web-bot-auth", created/expires, a nonce).
//
// Settings: AGENT_KEY (a secret: the PKCS#8 PEM private key, Ed25519),
// SIGNATURE_AGENT (the agent's https origin, whose key directory lists
// the key), TARGET (the URL fetched, for this example).
import { SigningKey, signRequestAsync } from 'agentsig-wasm';

let key;

/** `fetch`, signed: the same arguments, the request's headers plus the
 * three fields of the profile. */
export async function signedFetch(env, input, init) {
  key ??= SigningKey.fromPem(env.AGENT_KEY);
  const req = new Request(input, init);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : new Uint8Array(await req.clone().arrayBuffer());
  const pairs = await signRequestAsync(req.method, req.url, req.headers, body, key, { signatureAgent: env.SIGNATURE_AGENT });
  return fetch(new Request(req, { headers: pairs }));
}

export default {
  async fetch(_request, env) {
    return signedFetch(env, env.TARGET);
  },
};
