// The agentsig WebAssembly package for Cloudflare Workers and workerd (and
// Vercel Edge): the runtime compiles an imported `.wasm` file to a
// WebAssembly.Module at deploy time (code generation from bytes is not
// allowed there); instantiated here, then the API (agentsig.js).
import module from './dist/agentsig_wasm_bg.wasm';
import { initSync } from './dist/agentsig_wasm.js';
import { LIMITS } from './limits.js';

initSync({ module });

export * from './agentsig.js';
/** The largest body, card or bundle a call accepts (bytes). */
export const MAX_INPUT_BYTES = LIMITS.maxInputBytes;
