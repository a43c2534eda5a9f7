#!/usr/bin/env bash
# Build the fuzz corpora from the test vectors (corpus/ is git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/{json_jcs,jws_verify,httpsig_verify,delegation_audit,key_load,sfv_parse}
cp ../tests/vectors/jcs/input/* ../examples/agent.json corpus/json_jcs/
cp ../tests/vectors/rfc9421/messages/*.http corpus/httpsig_verify/
cp ../keys/rfc9421/* ../keys/example-p256.jwks.json corpus/key_load/
# sfv_parse: every header field value of the RFC 9421 test messages.
i=0
grep -ahE '^[A-Za-z0-9-]+: ' ../tests/vectors/rfc9421/messages/*.http | sed 's/^[^:]*: *//; s/\r$//' |
    while IFS= read -r v; do printf '%s' "$v" >"corpus/sfv_parse/v$i"; i=$((i + 1)); done
python3 - <<'PY'
import json
i = 0
def jws(o):
    global i
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("compact_detached", "compact") and isinstance(v, str):
                open(f"corpus/jws_verify/c{i}", "w").write(v); i += 1
            elif k.startswith(("general", "flattened", "json_")):
                open(f"corpus/jws_verify/j{i}", "w").write(json.dumps(v)); i += 1
            else:
                jws(v)
    elif isinstance(o, list):
        for v in o:
            jws(v)
jws(json.load(open("../tests/vectors/jws/detached_jcs_vectors.json")))
toks = []
def jwts(o):
    if isinstance(o, dict):
        for v in o.values(): jwts(v)
    elif isinstance(o, list):
        for v in o: jwts(v)
    elif isinstance(o, str) and o.count(".") == 2 and o.startswith("ey"):
        toks.append(o)
jwts(json.load(open("../tests/vectors/rfc8693_examples.json")))
for n, t in enumerate(toks):
    open(f"corpus/delegation_audit/t{n}", "w").write(t)
open("corpus/delegation_audit/bundle", "w").write("\n".join(toks[:3]))
PY
