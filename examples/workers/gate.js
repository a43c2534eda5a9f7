// A Web Bot Auth gate for Cloudflare Workers, in front of an origin
// (draft-meunier-webbotauth-httpsig-protocol): a request whose RFC 9421
// signature verifies under the profile, with a key of the agent its
// Signature-Agent names, is forwarded with the verified agent in the
// `Agentsig-Verified-Agent` header; any other request is answered
// `401 application/problem+json` (RFC 9457) naming why.
//
// Settings (wrangler.toml `[vars]`, or the workerd config's bindings):
//   ORIGIN      where verified requests go, e.g. "https://origin.example"
//   AGENT_KEYS  optional JSON `{agentUrl: JWK Set}`: the agents' keys given,
//               nothing fetched; without it each agent's key directory is
//               fetched with the runtime's fetch (HTTPS only, bounded,
//               cached with the Cache API).
import { Verifier, AgentsigError } from 'agentsig-wasm';

const VERIFIED_AGENT = 'agentsig-verified-agent';
/** One verifier per configuration, kept for the isolate's life (its
 * replay store refuses a nonce seen before). */
const verifiers = new Map();

function verifierFor(env) {
  const k = env.AGENT_KEYS ?? '';
  if (!verifiers.has(k)) {
    verifiers.set(k, new Verifier(
      k ? { agentKeys: JSON.parse(k), replayStore: 'memory' } : { fetchDirectories: true, replayStore: 'memory' },
    ));
  }
  return verifiers.get(k);
}

/** RFC 9457 problem details for a request that did not verify. */
function problem(e) {
  const body = {
    type: `https://agentsig.dev/problems/${e.code}`,
    title: 'Web Bot Auth signature not verified',
    status: 401,
    detail: e.message,
    code: e.code,
  };
  return new Response(JSON.stringify(body), {
    status: 401,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
  });
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : new Uint8Array(await request.clone().arrayBuffer());
    let report;
    try {
      report = await verifierFor(env).verifyRequestAsync(request.method, request.url, request.headers, body, {
        webBotAuth: true,
        authorities: [url.host],
      });
    } catch (e) {
      if (e instanceof AgentsigError) return problem(e);
      throw e;
    }
    // The identity is exactly the origin whose keys verified.
    const agent = report.details.web_bot_auth.agent;
    const origin = new URL(url.pathname + url.search, env.ORIGIN);
    const forwarded = new Request(origin, request);
    forwarded.headers.delete(VERIFIED_AGENT);
    forwarded.headers.set(VERIFIED_AGENT, agent);
    return fetch(forwarded);
  },
};
