#!/bin/bash
# RSS and data-dir size of a node at the defaults (retention on, as shipped)
# under bulk no-op runs at full rate for SECONDS (BENCHMARKS.md "Memory under
# load"): one line every STEP seconds. Loopback only; the node gets a
# temporary data dir and is stopped by its pid at the end.
# Usage: tools/bench/memory/steady_rss.sh [SECONDS] [STEP] [BUILD_DIR]
set -eu
T=${1:-600}
STEP=${2:-30}
B=${3:-build}
d=$(mktemp -d /tmp/aisched-steady.XXXX)
"$B/runtime/aisched" --data-dir "$d/data" --http-addr 127.0.0.1:18080 \
  --cluster-addr 127.0.0.1:17400 --log-level warn > "$d/log" 2>&1 &
pid=$!
load=""
trap 'kill $pid $load 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 1 100); do curl -sf localhost:18080/readyz >/dev/null && break; sleep 0.2; done
"$B/tools/aisched-load/aisched-load" throughput --server http://127.0.0.1:18080 --n 100000000 \
  --bulk 1000 --backlog 20000 --concurrency 4 --duration "$T" > "$d/load.json" 2>&1 &
load=$!
start=$(date +%s)
echo "t_s rss_mb data_mb runs_done runs_stored"
while kill -0 $load 2>/dev/null; do
  sleep "$STEP"
  rss=$(awk '/VmRSS/ {printf "%d", $2 / 1024}' /proc/$pid/status)
  data=$(du -sm "$d/data" | cut -f1)
  m=$(curl -s localhost:18080/metrics)
  done_runs=$(echo "$m" | awk '/^worker_executions_total/ {n += $2} END {printf "%d", n}')
  # Runs the state holds (any state): retention keeps this near keep_runs per task
  # plus what finishes between two sweeps.
  stored=$(echo "$m" | awk '/^scheduler_instances\{/ {n += $2} END {printf "%d", n}')
  echo "$(( $(date +%s) - start )) $rss $data ${done_runs:-?} ${stored:-?}"
done
wait $load || true
tail -c 2000 "$d/load.json"
