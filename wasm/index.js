// The agentsig WebAssembly package for Node.js (and Bun): the module's bytes
// read from beside this file and instantiated, then the API (agentsig.js,
// the Node.js package's names).
import { readFile } from 'node:fs/promises';
import nodeCrypto from 'node:crypto';
import { initSync } from './dist/agentsig_wasm.js';
import { LIMITS } from './limits.js';
import { useNodeCrypto } from './webcrypto.js';

initSync({ module: await readFile(new URL('./dist/agentsig_wasm_bg.wasm', import.meta.url)) });
// The Promise forms' signature checks: Node.js's own synchronous verify.
useNodeCrypto(nodeCrypto);

export * from './agentsig.js';
/** The largest body, card or bundle a call accepts (bytes). */
export const MAX_INPUT_BYTES = LIMITS.maxInputBytes;
