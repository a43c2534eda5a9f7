// Type declarations of agentsig/fastify (fastify.js).
/// <reference types="node" />
import type { FastifyPluginCallback } from 'fastify';
import type { Verifier } from './index.js';
import type { AgentIdentity, SignatureMiddlewareOptions } from './express.js';

export interface AgentsigPluginOptions extends SignatureMiddlewareOptions {
  /** The verifier (trusted keys, agent key sets, policy). */
  verifier: Verifier;
}

/** The plugin: `fastify.register(agentsig, { verifier, authorities: ['example.com'] })`. */
declare const agentsig: FastifyPluginCallback<AgentsigPluginOptions>;
export default agentsig;
export { agentsig };
export const DEFAULT_MAX_BODY: number;
export const DEFAULT_MAX_DIRECTORY_WAITS: number;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by agentsig/fastify: the verified identity, or null. */
    agentsig: AgentIdentity | null;
    /** Set by agentsig/fastify under admitInvalid: why the signature failed. */
    agentsigError: { readonly code: string; readonly detail: string } | null;
    /** Set by agentsig/fastify: the body it read and checked. */
    rawBody: Buffer | null;
  }
}
