// Type declarations of the agentsig WebAssembly package: the Node.js
// package's API (node/index.d.ts) less what needs the host (PKCS#11 keys,
// file and Redis replay stores, the fleet key cache, directory proofs).
// A body or document is a Uint8Array or ArrayBuffer here (no Buffer).

/** A JSON value as agentsig reads it. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };
/** JSON text as bytes (always JSON text), or a JavaScript value serialized exactly. */
export type JsonInput = Uint8Array | ArrayBuffer | Json;
/** Header fields: `[name, value]` pairs, a flat `[name, value, ...]` list, or a fetch `Headers`. */
export type HeadersInput = ReadonlyArray<readonly [string, string]> | readonly string[] | Headers;
/** A body: bytes, or a string sent as its UTF-8 bytes. */
export type BodyInput = Uint8Array | ArrayBuffer | string | null | undefined;
/** A duration such as `"30s"`, `"5m"`, `"1h"`, `"1d"`. */
export type Duration = `${number}${'s' | 'm' | 'h' | 'd'}`;

/** One signature of a report (docs/report.md). */
export interface SignatureReport {
  readonly kind: string;
  readonly id: string;
  readonly verdict: string;
  readonly algorithm?: string | null;
  readonly kid?: string | null;
  readonly key?: { readonly [k: string]: unknown } | null;
  readonly covered?: readonly string[];
  readonly [k: string]: unknown;
}

/** The report the CLI prints under `--json` (docs/report.schema.json), deep-frozen. */
export interface Report {
  readonly schema: string;
  readonly command: string;
  readonly subject: string | null;
  readonly verdict: string;
  readonly verified: boolean;
  readonly signatures: readonly SignatureReport[];
  readonly error?: { readonly code: string; readonly message: string } | null;
  readonly [k: string]: unknown;
}

/** Base class of every agentsig error. */
export class AgentsigError extends Error {
  readonly code: string;
  readonly report: Report | null;
  constructor(message: string, code?: string, report?: Report | null);
}
export class NotVerified extends AgentsigError {}
export class PolicyRefused extends NotVerified {}
export class FetchError extends NotVerified {}
export class BadKey extends AgentsigError {}
export class BadInput extends AgentsigError {}

export type Algorithm = 'ES256' | 'ES384' | 'EdDSA' | 'PS512' | 'RS256' | 'HS256' | (string & {});

/** A private key bound to one algorithm. */
export class SigningKey {
  private constructor();
  static generate(alg?: Algorithm): SigningKey;
  static generateAsync(alg?: Algorithm): Promise<SigningKey>;
  static fromPem(pem: string | Uint8Array, options?: { kid?: string }): SigningKey;
  readonly kid: string;
  readonly thumbprint: string;
  readonly algorithm: string;
  publicJwk(): { [k: string]: string };
  privatePem(): string | null;
}

export type KeyInput = SigningKey | string | Uint8Array | { readonly [k: string]: Json };
export type JwksInput = { readonly keys: readonly Json[] } | string | Uint8Array;

export interface VerifierOptions {
  jwks?: JwksInput;
  keys?: readonly KeyInput[];
  algorithms?: readonly Algorithm[];
  maxAge?: Duration;
  maxAgeSeconds?: number;
  skew?: Duration;
  skewSeconds?: number;
  /** `"memory"` only here. */
  replayStore?: 'memory';
  strictLowS?: boolean;
  now?: Date;
  nowSeconds?: number;
  agents?: readonly string[];
  agentKeys?: { readonly [agentUrl: string]: JwksInput | readonly KeyInput[] };
  /** Fetch the agents' key sets with the runtime's `fetch` (the Async forms). */
  fetchDirectories?: boolean;
}

export interface RequestInput {
  method: string;
  url: string;
  headers?: HeadersInput;
  body?: BodyInput;
}

export interface VerifyRequestOptions {
  webBotAuth?: boolean;
  authorities?: readonly string[];
  strict?: boolean;
  scheme?: 'https' | 'http';
}

export interface VerifyCatalogOptions {
  /** Every entry must carry a verified Trust Manifest. */
  requireSigned?: boolean;
  /** Return a catalog some entry of which no trusted key vouches for (nothing
   * failed) with the verdict `unsigned`: the CLI's `--allow-unsigned`. */
  allowUnsigned?: boolean;
  /** The catalog's detached JWS (`ai-catalog.json.jws`), checked with the keys of
   * `host.identifier`: verified, it binds every inline artifact, as
   * `agentsig verify FILE --jws`. At most 1 MiB. */
  jws?: string;
}

export interface AuditOptions {
  issuer?: string | readonly string[];
  audience?: string;
  denyWarnings?: boolean;
}

/**
 * The Promise forms (`...Async`) make their Ed25519 and ECDSA P-256/P-384
 * signature checks with the runtime's crypto (`crypto.subtle.verify`;
 * `node:crypto` in Node.js): ECDSA about three times as fast as the
 * synchronous forms, which run every primitive in WebAssembly. The rules
 * and reports are the same.
 */
export class Verifier {
  constructor(options: VerifierOptions);
  readonly options: { readonly [k: string]: unknown };
  readonly webBotAuthKeys: boolean;
  readonly hasReplayStore: boolean;
  withReplayStore(store: 'memory'): Verifier;
  verifyDescriptor(doc: JsonInput, jws: string): Report;
  verifyDescriptorAsync(doc: JsonInput, jws: string): Promise<Report>;
  verifyCard(card: JsonInput, options?: { requireAll?: boolean }): Report;
  verifyCardAsync(card: JsonInput, options?: { requireAll?: boolean }): Promise<Report>;
  verifyCatalog(catalog: JsonInput, options?: VerifyCatalogOptions): Report;
  verifyCatalogAsync(catalog: JsonInput, options?: VerifyCatalogOptions): Promise<Report>;
  /**
   * The AI Catalog at an https `url`, fetched with the runtime's `fetch` (no
   * redirect followed, at most 4 MiB, within 30 s) with its detached JWS at
   * `url + ".jws"` (at most 64 KiB; a 404 or 410 there means none), verified
   * as `verifyCatalog` does. A catalog or JWS that cannot be fetched rejects
   * with `FetchError` (code `fetch.failed`) whose `report` is the one
   * `agentsig verify URL --json` gives: verdict `unavailable`, never
   * `not-verified`. Nested catalogs are not fetched.
   */
  verifyCatalogUrl(url: string, options?: { requireSigned?: boolean }): Promise<Report>;
  verifyResponse(status: number, headers: HeadersInput, body?: BodyInput, options?: { request?: RequestInput }): Report;
  verifyResponseAsync(status: number, headers: HeadersInput, body?: BodyInput, options?: { request?: RequestInput }): Promise<Report>;
  verifyRequest(method: string, url: string, headers: HeadersInput, body?: BodyInput, options?: VerifyRequestOptions): Report;
  verifyRequestAsync(method: string, url: string, headers: HeadersInput, body?: BodyInput, options?: VerifyRequestOptions): Promise<Report>;
  auditDelegation(tokens: string | readonly string[], options?: AuditOptions): Report;
  auditDelegationAsync(tokens: string | readonly string[], options?: AuditOptions): Promise<Report>;
  /** The report of `agentsig inspect --json`, whatever its verdict; the analysis in `details.inspection`. */
  inspect(input: BodyInput, options?: InspectOptions): Report;
}

export type HeaderPairs = Array<[string, string]>;

export interface SignRequestOptions {
  webBotAuth?: boolean;
  signatureAgent?: string;
  expiresIn?: Duration;
  expiresInSeconds?: number;
  components?: readonly string[];
  label?: string;
  created?: Date;
  createdSeconds?: number;
}

export interface SignResponseOptions {
  label?: string;
  created?: Date;
  createdSeconds?: number;
  expiresIn?: Duration;
  expiresInSeconds?: number;
}

/** The options of an inspection (docs/inspect.md). */
export interface InspectOptions {
  kind?: 'http-request' | 'http-response' | 'descriptor' | 'a2a-card' | 'ai-catalog' | 'mcp-server-card' | 'delegation';
  jws?: string | Uint8Array;
  scheme?: 'https' | 'http';
  authorities?: readonly string[];
  noMaxAge?: boolean;
  request?: string | Uint8Array;
  requireAll?: boolean;
  allowUnsigned?: boolean;
}

export function canonicalize(value: JsonInput): Uint8Array;
/** `new Verifier(options).inspect(input, options)`: one object holds both kinds of options. */
export function inspect(input: BodyInput, options?: VerifierOptions & InspectOptions): Report;
export function signDescriptor(doc: JsonInput, key: SigningKey): string;
export function signDescriptorAsync(doc: JsonInput, key: SigningKey): Promise<string>;
export function signCard(card: JsonInput, key: SigningKey, options?: { force?: boolean }): { [k: string]: Json };
export function signCardAsync(card: JsonInput, key: SigningKey, options?: { force?: boolean }): Promise<{ [k: string]: Json }>;
export function signRequest(method: string, url: string, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignRequestOptions): HeaderPairs;
export function signRequestAsync(method: string, url: string, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignRequestOptions): Promise<HeaderPairs>;
export function signResponse(status: number, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignResponseOptions): HeaderPairs;
export function signResponseAsync(status: number, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignResponseOptions): Promise<HeaderPairs>;

export const MAX_INPUT_BYTES: number;
