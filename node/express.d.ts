// Type declarations of agentsig/express (express.js).
/// <reference types="node" />
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Verifier, Report } from './index.js';

/** The verified identity a request carries at `req.agentsig`. */
export interface AgentIdentity {
  readonly keyid: string | null;
  readonly label: string | null;
  readonly algorithm: string | null;
  readonly covered: readonly string[];
  readonly thumbprint: string | null;
  /** The Web Bot Auth agent (its Signature-Agent), else null. */
  readonly agent: string | null;
  readonly report: Report;
}

export interface SignatureMiddlewareOptions {
  /** The site's own authorities (host[:port]); required unless anyAuthority. */
  authorities?: readonly string[];
  anyAuthority?: boolean;
  require?: boolean;
  admitInvalid?: boolean;
  webBotAuth?: boolean;
  strict?: boolean;
  nonceStore?: boolean;
  maxBody?: number;
  scheme?: 'https' | 'http';
  requireTarget?: boolean;
  /** Most verifications waiting on key-directory fetches at once (default
   * half the libuv pool); beyond, 503 `directory-busy` with Retry-After. */
  maxDirectoryWaits?: number;
}

export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

export function signatureMiddleware(verifier: Verifier, options: SignatureMiddlewareOptions): Middleware;
export const DEFAULT_MAX_BODY: number;
export const DEFAULT_MAX_DIRECTORY_WAITS: number;

declare module 'node:http' {
  interface IncomingMessage {
    /** Set by agentsig/express: the verified identity, or null. */
    agentsig?: AgentIdentity | null;
    /** Set by agentsig/express: the body it read and checked. */
    rawBody?: Buffer;
  }
}
