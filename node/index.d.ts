// Type declarations of the agentsig Node.js package (index.js, index.mjs),
// written by hand: the addon's own generated declarations (`npm run build`
// writes them to native.d.ts) describe the internal native half only.
/// <reference types="node" />

/** A JSON value as agentsig reads it. */
export type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };

/** JSON text as bytes (always JSON text), or a JavaScript value serialized exactly. */
export type JsonInput = Uint8Array | ArrayBuffer | Json;

/** Header fields: `[name, value]` pairs, Node's `req.rawHeaders` (the flat
 * list), or a fetch `Headers`. Never a merged `req.headers` object. */
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
  /** The stable code the CLI reports (docs/report.md). */
  readonly code: string;
  /** The report, when there is one. */
  readonly report: Report | null;
  constructor(message: string, code?: string, report?: Report | null);
}
/** Something did not verify; `.report` says what. */
export class NotVerified extends AgentsigError {}
/** Refused by the verifier's policy (too old, expired, replayed, an algorithm not allowed...). */
export class PolicyRefused extends NotVerified {}
/** A Web Bot Auth key directory or an AI Catalog could not be fetched. */
export class FetchError extends NotVerified {}
/** A key that cannot be used. */
export class BadKey extends AgentsigError {}
/** Input that is malformed, too large, or a usage error. */
export class BadInput extends AgentsigError {}

/** JOSE algorithm names (RFC 9421 names are accepted too). */
export type Algorithm = 'ES256' | 'ES384' | 'EdDSA' | 'PS512' | 'RS256' | 'HS256' | (string & {});

/** A private key bound to one algorithm. */
export class SigningKey {
  private constructor();
  static generate(alg?: Algorithm): SigningKey;
  /** `generate` on the libuv pool (an RSA key's prime search never holds the event loop). */
  static generateAsync(alg?: Algorithm): Promise<SigningKey>;
  /**
   * A private key from PEM (PKCS#8, SEC1, PKCS#1). Its kid: `kid`, else the
   * one `jwk` (its published JWK, or a JWK Set holding it) gives it, else
   * its RFC 7638 thumbprint.
   */
  static fromPem(pem: string | Uint8Array, options?: { kid?: string; jwk?: string | Uint8Array | object }): SigningKey;
  /**
   * A private key from a PEM file, named as `agentsig sign --key` names it:
   * `kid`, else the kid `agentsig keygen --kid` wrote beside `PREFIX.pem`
   * (`PREFIX.jwk.json`, `PREFIX.jwks.json`), else its RFC 7638 thumbprint.
   */
  static fromFile(path: string, options?: { kid?: string }): SigningKey;
  /**
   * The private key a PKCS#11 token holds, named by an RFC 7512 `pkcs11:`
   * URI. The module comes from the URI's `module-path` (else
   * `AGENTSIG_PKCS11_MODULE`), the PIN from its `pin-source=file:...` (else
   * `AGENTSIG_PKCS11_PIN`); a URI carrying `pin-value` is refused. `alg` is
   * needed for RSA keys (`PS512` or `RS256`); `kid` replaces the
   * thumbprint. Throws `BadKey` naming the cause (pin-value, wrong PIN, no
   * such token or key, a file that is not a PKCS#11 module).
   */
  static fromPkcs11(uri: string, options?: { alg?: Algorithm; kid?: string }): SigningKey;
  /** `fromPkcs11` on the libuv pool: the event loop never waits on the token. */
  static fromPkcs11Async(uri: string, options?: { alg?: Algorithm; kid?: string }): Promise<SigningKey>;
  /** The given kid, else the RFC 7638 thumbprint. */
  readonly kid: string;
  /** The RFC 7638 thumbprint of the public key. */
  readonly thumbprint: string;
  /** The JOSE name of the key's algorithm. */
  readonly algorithm: string;
  /** The public JWK (RFC 7517); BadKey for a shared secret. */
  publicJwk(): { [k: string]: string };
  /** PKCS#8 PEM, when the key has that form; else null. */
  privatePem(): string | null;
}

/** A public key: a SigningKey, PEM text (or its bytes), or a JWK object. */
export type KeyInput = SigningKey | string | Uint8Array | { readonly [k: string]: Json };
/** A JWK Set: an object, its JSON text, or its bytes. */
export type JwksInput = { readonly keys: readonly Json[] } | string | Uint8Array;

/** The options of a Verifier (secure defaults; trusted keys required). */
export interface VerifierOptions {
  jwks?: JwksInput;
  keys?: readonly KeyInput[];
  /** Default: the asymmetric algorithms (ES256, ES384, EdDSA, PS512, RS256). */
  algorithms?: readonly Algorithm[];
  maxAge?: Duration;
  maxAgeSeconds?: number;
  skew?: Duration;
  skewSeconds?: number;
  /** `"memory"`, a file path, or `redis://...`/`rediss://...`. */
  replayStore?: string;
  strictLowS?: boolean;
  /** Accept a request or response with content whose signature does not cover
   * content-digest (refused by default: anyone on the way could have changed the
   * content; RFC 9421 section 7.2.8). The CLI's `--allow-uncovered-content`. */
  allowUncoveredContent?: boolean;
  now?: Date;
  nowSeconds?: number;
  /** Web Bot Auth: the agents (Signature-Agent values) accepted. */
  agents?: readonly string[];
  /** Web Bot Auth: each agent's keys (a JWK Set or a list of keys). */
  agentKeys?: { readonly [agentUrl: string]: JwksInput | readonly KeyInput[] };
  fetchDirectories?: boolean;
  requireDirectoryProof?: boolean;
  allowPrivateHosts?: readonly string[];
  extraRootsPem?: readonly string[];
  /** The fleet key-set cache (`redis://...`, `redis+cluster://...`,
   * `redis+sentinel://...`) shared by every verifier of a fleet: an agent's
   * key set is fetched once per freshness lifetime by the whole fleet
   * (directories, catalogs by URL). Needs the fleet secret. */
  keyCache?: string;
  /** The file holding the fleet secret (at least 32 bytes, writable by its
   * owner only); without it, the `AGENTSIG_FLEET_SECRET` environment
   * variable. The secret itself is never an option value. */
  fleetSecretFile?: string;
}

/** The request a response answers (for `;req` components). */
export interface RequestInput {
  method: string;
  url: string;
  headers?: HeadersInput;
  body?: BodyInput;
}

export interface VerifyRequestOptions {
  webBotAuth?: boolean;
  /** The site's own authorities (`host[:port]`), RFC 9421 section 7.2.1. */
  authorities?: readonly string[];
  strict?: boolean;
  scheme?: 'https' | 'http';
}

export interface VerifyCatalogOptions {
  /** Every entry must carry a verified Trust Manifest. */
  requireSigned?: boolean;
  /** Return a catalog some entry of which no trusted key vouches for (nothing
   * failed) with the verdict `unsigned` instead of throwing NotVerified (code
   * `catalog.unsigned`): the CLI's `--allow-unsigned`. */
  allowUnsigned?: boolean;
  /** The catalog's detached JWS (`ai-catalog.json.jws`, over the RFC 8785 form of the whole
   * document), checked with the keys of `host.identifier`: verified, it binds every inline
   * artifact, as `agentsig verify FILE --jws`. At most 1 MiB. */
  jws?: string;
}

/** The URL form fetches the catalog's JWS from `URL.jws` itself, as `agentsig verify URL` does. */
export interface VerifyCatalogUrlOptions extends Omit<VerifyCatalogOptions, 'jws'> {
  /** Hosts that may resolve to private addresses (internal catalogs, tests). */
  allowPrivateHosts?: readonly string[];
  /** Extra TLS roots (PEM). */
  extraRootsPem?: readonly string[];
}

export interface AuditOptions {
  issuer?: string | readonly string[];
  audience?: string;
  denyWarnings?: boolean;
}

/** Verifies descriptors, A2A cards, RFC 9421 messages, delegation chains and AI Catalogs. */
export class Verifier {
  constructor(options: VerifierOptions);
  /** The options in effect, with the defaults filled in; frozen. */
  readonly options: { readonly [k: string]: unknown };
  readonly webBotAuthKeys: boolean;
  readonly hasReplayStore: boolean;
  /** This verifier with a replay store (`'memory'`, a path, `'redis://...'`), every other setting kept. */
  withReplayStore(store: string): Verifier;
  verifyDescriptor(doc: JsonInput, jws: string): Report;
  verifyDescriptorAsync(doc: JsonInput, jws: string): Promise<Report>;
  verifyCard(card: JsonInput, options?: { requireAll?: boolean }): Report;
  verifyCardAsync(card: JsonInput, options?: { requireAll?: boolean }): Promise<Report>;
  /** An AI Catalog, as `agentsig verify CATALOG --json` (per-entry `details.entries`): with the
   * verifier's keys when it has some, else each manifest identity's keys resolved (needs fetchDirectories). */
  verifyCatalog(catalog: JsonInput, options?: VerifyCatalogOptions): Report;
  verifyCatalogAsync(catalog: JsonInput, options?: VerifyCatalogOptions): Promise<Report>;
  /** The AI Catalog at an https URL, fetched (SSRF-guarded) on the libuv pool and verified, with
   * its detached JWS from `URL.jws` beside the final URL (404 or 410: none). */
  verifyCatalogUrl(url: string, options?: VerifyCatalogUrlOptions): Promise<Report>;
  verifyResponse(status: number, headers: HeadersInput, body?: BodyInput, options?: { request?: RequestInput }): Report;
  verifyResponseAsync(status: number, headers: HeadersInput, body?: BodyInput, options?: { request?: RequestInput }): Promise<Report>;
  verifyRequest(method: string, url: string, headers: HeadersInput, body?: BodyInput, options?: VerifyRequestOptions): Report;
  verifyRequestAsync(method: string, url: string, headers: HeadersInput, body?: BodyInput, options?: VerifyRequestOptions): Promise<Report>;
  auditDelegation(tokens: string | readonly string[], options?: AuditOptions): Report;
  auditDelegationAsync(tokens: string | readonly string[], options?: AuditOptions): Promise<Report>;
}

/** `[name, value]` pairs. */
export type HeaderPairs = Array<[string, string]>;

export interface SignRequestOptions {
  /** Default: true when signatureAgent is given. */
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

export function canonicalize(value: JsonInput): Buffer;
export function signDescriptor(doc: JsonInput, key: SigningKey): string;
export function signDescriptorAsync(doc: JsonInput, key: SigningKey): Promise<string>;
export function signCard(card: JsonInput, key: SigningKey, options?: { force?: boolean }): { [k: string]: Json };
export function signCardAsync(card: JsonInput, key: SigningKey, options?: { force?: boolean }): Promise<{ [k: string]: Json }>;
export function signRequest(method: string, url: string, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignRequestOptions): HeaderPairs;
export function signRequestAsync(method: string, url: string, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignRequestOptions): Promise<HeaderPairs>;
export function signResponse(status: number, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignResponseOptions): HeaderPairs;
export function signResponseAsync(status: number, headers: HeadersInput, body: BodyInput, key: SigningKey, options?: SignResponseOptions): Promise<HeaderPairs>;

/** The largest body, card or bundle a call accepts (bytes). */
export const MAX_INPUT_BYTES: number;
