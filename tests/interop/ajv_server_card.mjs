// Independent JSON Schema side of tests/catalog_interop.rs: npm `ajv`
// (draft 2020-12, `ajv/dist/2020`) with `ajv-formats`, validating MCP
// Server Cards against `#/$defs/ServerCard` of the `schema.json` of
// modelcontextprotocol/experimental-ext-server-card, as that repository's
// own `scripts/validate-examples.ts` does (the schema's root holds only
// `$defs`: validating against the root would accept anything).
//
// One JSON request on stdin: {"schema": PATH, "cards": [PATH, ...]}; one
// JSON response on stdout: {"results": [{"card": PATH, "valid": BOOL,
// "errors": [...]}, ...]}, in the order given.
//
// `ajv` and `ajv-formats` must be resolvable from this directory:
//   npm install --no-save --prefix tests/interop ajv@8 ajv-formats@3
// Exit code 3 with {"missing":"ajv"} when they are not.

import { readFileSync } from 'node:fs';

let Ajv2020, addFormats;
try {
  Ajv2020 = (await import('ajv/dist/2020.js')).default;
  addFormats = (await import('ajv-formats')).default;
} catch (e) {
  process.stdout.write(JSON.stringify({ missing: 'ajv' }));
  process.exit(3);
}

const request = JSON.parse(readFileSync(0, 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addSchema(JSON.parse(readFileSync(request.schema, 'utf8')), 'schema.json');
const validate = ajv.getSchema('schema.json#/$defs/ServerCard');
if (!validate) {
  process.stderr.write('schema.json has no $defs/ServerCard');
  process.exit(1);
}
const results = request.cards.map((card) => {
  const valid = validate(JSON.parse(readFileSync(card, 'utf8')));
  return { card, valid, errors: valid ? [] : validate.errors };
});
process.stdout.write(JSON.stringify({ results }));
