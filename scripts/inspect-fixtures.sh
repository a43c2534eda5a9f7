#!/bin/sh
# Regenerate tests/fixtures/inspect: one valid and one tampered input of each
# kind `agentsig inspect` reads, the keys that verify them, and the `--json`
# report of each (the shape of docs/inspect.md). Signed at a fixed time
# (NOW) with Ed25519 keys, whose signatures are deterministic (RFC 8032
# section 5.1.6); the keys themselves are new on each run.
#
# Usage: scripts/inspect-fixtures.sh [path/to/agentsig]
set -eu
A=${1:-target/debug/agentsig}
D=tests/fixtures/inspect
NOW=1764600000
rm -rf "$D"
mkdir -p "$D/keys"
for k in site agent publisher issuer; do
  "$A" keygen --alg ed25519 --kid "$k-key" --out "$D/keys/$k" >/dev/null
done

# RFC 9421 request, signed by `agentsig http sign`.
printf 'POST /api/orders?id=7 HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nContent-Length: 23\r\n\r\n{"item":"book","qty":1}' > "$D/req.unsigned"
"$A" http sign "$D/req.unsigned" --key "$D/keys/agent.pem" --created $NOW --expires-in 5m \
  --nonce n-0001 --add-content-digest sha-256 --out "$D/http-request.http"
rm "$D/req.unsigned"
sed 's/"qty":1/"qty":9/' "$D/http-request.http" > "$D/http-request-tampered.http"

# Web Bot Auth request, signed by the Web Bot Auth signer.
printf 'GET /catalog HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: crawler/1.0\r\n\r\n' > "$D/wba.unsigned"
"$A" http sign "$D/wba.unsigned" --key "$D/keys/agent.pem" --profile web-bot-auth \
  --signature-agent https://crawler.example --created $NOW --out "$D/web-bot-auth.http"
rm "$D/wba.unsigned"
sed 's#GET /catalog#GET /admin#' "$D/web-bot-auth.http" > "$D/web-bot-auth-tampered.http"

# RFC 9421 response (a descriptor served with @status content-type content-digest).
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 51\r\n\r\n{"name":"planner","url":"https://planner.example/"}' > "$D/res.unsigned"
"$A" http sign "$D/res.unsigned" --key "$D/keys/site.pem" --created $NOW \
  --add-content-digest sha-256 --out "$D/http-response.http"
rm "$D/res.unsigned"
sed 's/planner.example/plannex.example/' "$D/http-response.http" > "$D/http-response-tampered.http"

# Descriptor with its detached JWS (RFC 8785 form).
printf '{"url":"https://planner.example/","name":"planner","description":"Plans trips"}\n' > "$D/descriptor.json"
"$A" sign "$D/descriptor.json" --key "$D/keys/publisher.pem" >/dev/null
sed 's/Plans trips/Plans heists/' "$D/descriptor.json" > "$D/descriptor-tampered.json"
cp "$D/descriptor.json.jws" "$D/descriptor-tampered.json.jws"

# A2A Agent Card with an embedded signature.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("signatures",None); json.dump(c,open(sys.argv[2],"w"),indent=2)' \
  examples/catalog/a2a-agent-card.json "$D/a2a-card.json"
"$A" sign "$D/a2a-card.json" --key "$D/keys/publisher.pem" >/dev/null
sed 's/"name": *"\([^"]*\)"/"name": "\1 (evil)"/' "$D/a2a-card.json" > "$D/a2a-card-tampered.json"

# AI Catalog with every entry's Trust Manifest signed.
cp examples/catalog/ai-catalog.json "$D/ai-catalog.json"
"$A" sign "$D/ai-catalog.json" --key "$D/keys/publisher.pem" >/dev/null
"$A" sign "$D/ai-catalog.json" --key "$D/keys/publisher.pem" --host >/dev/null
# The first entry's inline card changed after signing: its manifest's digest no longer matches.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); d=c["entries"][0]["data"]; d["description"]=d.get("description","")+" (changed)"; json.dump(c,open(sys.argv[2],"w"),indent=2)' \
  "$D/ai-catalog.json" "$D/ai-catalog-tampered.json"

# Delegation chain: alice -> agent-a -> agent-b, one token a line.
I="$D/keys/issuer.pem"
T0=$("$A" delegation mint --key "$I" --iss https://as.example --sub alice --aud https://agent-b.example \
  --scope "read write" --act https://agent-a.example --may-act https://agent-b.example --jti t0 --now $NOW)
T1=$("$A" delegation mint --key "$I" --iss https://as.example --sub alice --aud https://api.example \
  --scope "read" --act https://agent-a.example --act https://agent-b.example --ttl 3000 --jti t1 --now $((NOW + 10)))
printf '%s\n%s\n' "$T0" "$T1" > "$D/delegation.txt"
# The second hop widens the scope: the audit fails at hop 1.
T2=$("$A" delegation mint --key "$I" --iss https://as.example --sub alice --aud https://api.example \
  --scope "read write admin" --act https://agent-a.example --act https://agent-b.example --ttl 3000 --jti t2 --now $((NOW + 10)))
printf '%s\n%s\n' "$T0" "$T2" > "$D/delegation-tampered.txt"

# The reports.
rep() { # NAME INPUT KEYARGS...
  n=$1; shift
  "$A" inspect "$@" --now $((NOW + 60)) --json > "$D/$n.report.json" || true
}
for f in http-request http-request-tampered web-bot-auth web-bot-auth-tampered; do
  rep "$f" "$D/$f.http" --key "$D/keys/agent.pub.pem"
done
for f in http-response http-response-tampered; do
  rep "$f" "$D/$f.http" --key "$D/keys/site.pub.pem"
done
for f in descriptor descriptor-tampered a2a-card a2a-card-tampered ai-catalog ai-catalog-tampered; do
  rep "$f" "$D/$f.json" --key "$D/keys/publisher.pub.pem"
done
for f in delegation delegation-tampered; do
  rep "$f" "$D/$f.txt" --key "$D/keys/issuer.pub.pem"
done
rm -f "$D"/*.headers
# Private keys are not needed to inspect.
rm -f "$D"/keys/*[!b].pem
ls "$D"
