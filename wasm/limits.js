// The module's bounds (`agentsig::facade::calls::limits`), read at first use:
// the entry points instantiate the module before any call, but after this
// file and agentsig.js are evaluated.
import * as native from './dist/agentsig_wasm.js';

let limits;
export const LIMITS = new Proxy(
  {},
  {
    get(_, k) {
      limits ??= Object.freeze(JSON.parse(native.limits()));
      return limits[k];
    },
  },
);
