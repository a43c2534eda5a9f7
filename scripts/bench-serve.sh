#!/usr/bin/env bash
# Signed responses per second: `agentsig serve` against nginx serving the
# same 10 KB descriptor with the pre-signed response fields `agentsig sign`
# writes (benches/nginx/nginx.conf), back to back in one run, then
# requested signatures (Accept-Signature with a ;req component) against
# the 2-thread crypto floor (examples/serve_floor.rs): once as wrk sends
# them, every request alike (the layer shares a requested signature whose
# base is byte for byte the same within one second), and once with a
# requested nonce, which is signed for every request. Prints the ratios.
# Not run by CI (needs wrk and nginx: apt-get install -y wrk nginx-light).
#
#   scripts/bench-serve.sh                 # 8 s per measurement, 32 connections
#   DUR=4 CONN=16 ROUNDS=3 scripts/bench-serve.sh
#   NGINX_CONF=benches/nginx/nginx-log-off.conf scripts/bench-serve.sh
#                                          # nginx without an access log at all
#   NGINX_CONF=benches/nginx/nginx-log-off.conf SERVE_LOG=warn scripts/bench-serve.sh
#                                          # and serve without its request log
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-8}
CONN=${CONN:-32}
ROUNDS=${ROUNDS:-1}
PORT_A=${PORT_A:-18946}
PORT_N=${PORT_N:-18947}
# The nginx configuration compared with (docs/benchmarks.md names each).
NGINX_CONF=${NGINX_CONF:-benches/nginx/nginx.conf}
for tool in wrk nginx python3; do
    command -v "$tool" >/dev/null || { echo "bench-serve: $tool not found (apt-get install -y wrk nginx-light)" >&2; exit 2; }
done
cargo build --release --quiet --bin agentsig --example serve_floor --example axum_serve_bench
BIN=target/release/agentsig
FLOOR=target/release/examples/serve_floor
AXUM=target/release/examples/axum_serve_bench
PORT_X=${PORT_X:-18948}

WORK=$(mktemp -d /tmp/agentsig-bench-serve.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/site" "$WORK/tmp"
# nginx workers run as an unprivileged user when started as root.
chmod 755 "$WORK" "$WORK/site"
python3 - "$WORK/site/agent.json" <<'PY'
import json, sys
doc = {'name': 'bench', 'version': '1.0.0', 'description': 'benchmark descriptor',
       'skills': [{'id': 's%d' % i, 'name': 'skill number %d' % i,
                   'description': 'does thing %d with care and precision' % i} for i in range(88)]}
open(sys.argv[1], 'w').write(json.dumps(doc, indent=1))
PY
"$BIN" sign "$WORK/site/agent.json" --key keys/example-p256.pem \
    --headers-format nginx --headers-out "$WORK/agent.nginx" 2>/dev/null
chmod 644 "$WORK/site/"*
sed -e "s#@WORK@#$WORK#g" -e "s#@ROOT@#$WORK/site#g" -e "s#@PORT@#$PORT_N#g" \
    "$NGINX_CONF" >"$WORK/nginx.conf"

nginx -c "$WORK/nginx.conf" -p "$WORK" &
PIDS+=($!)
# serve's per-request log (info) is formatted and written to /dev/null, as
# nginx's access log is with nginx.conf; SERVE_LOG=warn turns it off, as
# nginx-log-off.conf does nginx's.
AGENTSIG_LOG=${SERVE_LOG:-info} "$BIN" serve "$WORK/site" --key keys/example-p256.pem --listen "127.0.0.1:$PORT_A" \
    --reload-interval 0 2>/dev/null &
PIDS+=($!)
"$AXUM" "$WORK/site/agent.json" keys/example-p256.pem "127.0.0.1:$PORT_X" &
PIDS+=($!)
for _ in $(seq 50); do
    if curl -sf -o /dev/null "http://127.0.0.1:$PORT_A/agent.json" &&
        curl -sf -o /dev/null "http://127.0.0.1:$PORT_N/agent.json" &&
        curl -sf -o /dev/null "http://127.0.0.1:$PORT_X/agent.json"; then break; fi
    sleep 0.1
done
for port in "$PORT_A" "$PORT_N" "$PORT_X"; do
    curl -sf -D - -o /dev/null "http://127.0.0.1:$port/agent.json" | grep -qi '^signature:' ||
        { echo "bench-serve: no Signature from port $port" >&2; exit 1; }
done

ACCEPT='sig2=("@status" "content-type" "content-digest" "@method";req)'
ACCEPT_NONCE='sig2=("@status" "content-type" "content-digest" "@method";req);nonce="wrk"'
NGINX_MASTER=$(cat "$WORK/nginx.pid")
SERVE_PID=${PIDS[1]}
AXUM_PID=${PIDS[2]}
# CPU ticks (user + system) of the server processes: agentsig serve, or
# nginx's master and workers. On a shared machine the requests per second
# depend on the share of the cores each process gets; the CPU time per
# response does not.
ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s += $1} END {print s}'; }
HZ=$(getconf CLK_TCK)
# wrk's request count and requests/s, and the server's CPU µs per response.
measure() {
    local pids=$1; shift
    local t0 t1 out reqs
    t0=$(ticks $pids)
    out=$(wrk -t1 -c"$CONN" -d"${DUR}s" "$@")
    t1=$(ticks $pids)
    reqs=$(awk '/requests in/ {print $1}' <<<"$out")
    awk -v r="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")" -v n="$reqs" -v d="$((t1 - t0))" -v hz="$HZ" \
        'BEGIN {printf "%.0f %.1f", r, d * 1e6 / hz / n}'
}
echo "10 KB descriptor ($(wc -c <"$WORK/site/agent.json") bytes), wrk -t1 -c$CONN -d${DUR}s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') with $NGINX_CONF, serve log ${SERVE_LOG:-info}"
echo "rps: responses/s; cpu: the server's CPU µs per response (user + system)"
printf '%-5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s | %9s %9s %9s %6s %6s | %9s %9s %6s %6s\n' round \
    nginx serve ratio nginx-cpu serve-cpu ratio axum axum-cpu ratio req-sig req-cpu floor-cpu rps% cpu% \
    nonce-sig nonce-cpu rps% cpu%
for r in $(seq "$ROUNDS"); do
    # nginx first in odd rounds, agentsig first in even ones (the load of
    # a shared machine drifts within a round).
    nginx_pids="$NGINX_MASTER $(pgrep -P "$NGINX_MASTER" | tr '\n' ' ')"
    if [ $((r % 2)) -eq 1 ]; then
        read -r n ncpu <<<"$(measure "$nginx_pids" "http://127.0.0.1:$PORT_N/agent.json")"
        read -r a acpu <<<"$(measure "$SERVE_PID" "http://127.0.0.1:$PORT_A/agent.json")"
    else
        read -r a acpu <<<"$(measure "$SERVE_PID" "http://127.0.0.1:$PORT_A/agent.json")"
        read -r n ncpu <<<"$(measure "$nginx_pids" "http://127.0.0.1:$PORT_N/agent.json")"
    fi
    read -r x xcpu <<<"$(measure "$AXUM_PID" "http://127.0.0.1:$PORT_X/agent.json")"
    read -r q qcpu <<<"$(measure "$SERVE_PID" -H "Accept-Signature: $ACCEPT" "http://127.0.0.1:$PORT_A/agent.json")"
    read -r qn qncpu <<<"$(measure "$SERVE_PID" -H "Accept-Signature: $ACCEPT_NONCE" "http://127.0.0.1:$PORT_A/agent.json")"
    # The floor: its signatures per second on 2 threads, and its CPU µs per signature.
    fout=$( { TIMEFORMAT='%U %S'; time "$FLOOR" "$(wc -c <"$WORK/site/agent.json")" "$DUR" 2; } 2>&1 )
    f=$(awk '/^floor:/ {print $2}' <<<"$fout")
    fn=$(awk '/^floor:/ {gsub(/[^0-9]/, "", $9); print $9}' <<<"$fout")
    fcpu=$(awk -v n="$fn" 'NF == 2 && $1 ~ /^[0-9.]+$/ {printf "%.1f", ($1 + $2) * 1e6 / n}' <<<"$fout")
    printf '%-5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s | %9s %9s %9s %6s %6s | %9s %9s %6s %6s\n' "$r" "$n" "$a" \
        "$(awk -v a="$a" -v n="$n" 'BEGIN {printf "%.2fx", a / n}')" "$ncpu" "$acpu" \
        "$(awk -v a="$acpu" -v n="$ncpu" 'BEGIN {printf "%.2fx", n / a}')" \
        "$x" "$xcpu" "$(awk -v a="$x" -v n="$n" 'BEGIN {printf "%.2fx", a / n}')" \
        "$q" "$qcpu" "$fcpu" \
        "$(awk -v q="$q" -v f="$f" 'BEGIN {printf "%.0f%%", 100 * q / f}')" \
        "$(awk -v q="$qcpu" -v f="$fcpu" 'BEGIN {printf "%.0f%%", 100 * f / q}')" \
        "$qn" "$qncpu" \
        "$(awk -v q="$qn" -v f="$f" 'BEGIN {printf "%.0f%%", 100 * q / f}')" \
        "$(awk -v q="$qncpu" -v f="$fcpu" 'BEGIN {printf "%.0f%%", 100 * f / q}')"
done
echo "ratio: serve/nginx responses/s, and nginx/serve CPU per response (1.00x: as cheap as nginx); axum: the SignLayer in an axum app (examples/axum_serve_bench.rs), responses/s over nginx's"
echo "rps%: requested signatures/s over the floor's signatures/s on 2 threads; cpu%: floor CPU per signature over serve CPU per response"
echo "req-sig: every request alike (a signature shared within one second by identical bases); nonce-sig: a nonce requested, so signed for every request"
