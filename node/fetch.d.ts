// Type declarations of agentsig/fetch (fetch.js).
import type { SigningKey, SignRequestOptions } from './index.js';

export interface SigningFetchOptions extends Omit<SignRequestOptions, 'created' | 'createdSeconds'> {
  /** Most redirects followed, each hop signed anew (default 20). */
  maxRedirects?: number;
  /** The fetch to wrap (default the global one). */
  fetch?: typeof globalThis.fetch;
}

export function signingFetch(key: SigningKey, options?: SigningFetchOptions): typeof globalThis.fetch;
export const MAX_REDIRECTS: number;
