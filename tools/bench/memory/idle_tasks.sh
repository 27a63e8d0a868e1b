#!/bin/bash
# RSS of a node started at the defaults before and after creating N idle
# daily-cron tasks (BENCHMARKS.md "Memory of idle tasks"). Loopback only; the
# node gets a temporary data dir and is stopped by its pid at the end.
# Usage: tools/bench/memory/idle_tasks.sh [N] [BUILD_DIR]
set -eu
N=${1:-200000}
B=${2:-build}
here=$(dirname "$0")
d=$(mktemp -d /tmp/aisched-idle.XXXX)
"$B/runtime/aisched" --data-dir "$d/data" --http-addr 127.0.0.1:18080 \
  --cluster-addr 127.0.0.1:17400 --log-level warn > "$d/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 1 100); do curl -sf localhost:18080/readyz >/dev/null && break; sleep 0.2; done
sleep 2
before=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
python3 "$here/make_tasks.py" 18080 "$N"
sleep 15
after=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
echo "tasks=$N rss_before_kb=$before rss_after_kb=$after per_task_bytes=$(( (after - before) * 1024 / N ))"
