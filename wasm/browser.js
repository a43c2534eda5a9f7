// The agentsig WebAssembly package for browsers and Deno: the module fetched
// from beside this file (streaming compilation where it is served as
// application/wasm) and instantiated, then the API (agentsig.js).
import init from './dist/agentsig_wasm.js';
import { LIMITS } from './limits.js';

await init({ module_or_path: new URL('./dist/agentsig_wasm_bg.wasm', import.meta.url) });

export * from './agentsig.js';
/** The largest body, card or bundle a call accepts (bytes). */
export const MAX_INPUT_BYTES = LIMITS.maxInputBytes;
