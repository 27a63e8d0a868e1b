#!/bin/sh
# Runs the scheduler simulation (scheduler_sim_test) over seeds FIRST..LAST in
# JOBS processes side by side, each over its own part of the range, and prints
# each part's verdict and throughput (`make sim SEEDS=N [FIRST=1] [JOBS=...]`).
# A failing seed is named with its replay command; the exit status is 1 if any
# part failed. Bounded: it ends when its seeds are done.
#
#   run_seeds.sh BUILD_DIR FIRST LAST JOBS
set -eu
build=$1 first=$2 last=$3 jobs=$4
bin="$build/tests/sim/scheduler_sim_test"
[ -x "$bin" ] || { echo "run_seeds.sh: $bin is not built" >&2; exit 2; }
[ "$last" -ge "$first" ] && [ "$jobs" -ge 1 ] || { echo "run_seeds.sh: FIRST <= LAST, JOBS >= 1" >&2; exit 2; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
count=$((last - first + 1))
per=$(( (count + jobs - 1) / jobs ))
pids=""
from=$first
part=0
while [ "$from" -le "$last" ]; do
  to=$((from + per - 1))
  [ "$to" -le "$last" ] || to=$last
  AISCHED_SIM_SEEDS="$from-$to" "$bin" --gtest_filter=scheduler_sim.seeds >"$logs/$part" 2>&1 &
  pids="$pids $!:$part:$from-$to"
  from=$((to + 1))
  part=$((part + 1))
done
started=$(date +%s)
status=0
for p in $pids; do
  pid=${p%%:*} rest=${p#*:}
  if wait "$pid"; then verdict=passed; else verdict=FAILED; status=1; fi
  echo "seeds ${rest#*:}: $verdict"
  grep -E "^\[ scheduler_sim \]|violation|^    |replay:" "$logs/${rest%%:*}" | head -40
  failing=$(sed -n 's/^seed \([0-9]*\): [0-9]* violation.*/\1/p' "$logs/${rest%%:*}" | tr '\n' ' ')
  [ -z "$failing" ] || echo "failing seeds ($(echo $failing | wc -w)): $failing"
done
echo "$count seeds in $(( $(date +%s) - started )) s wall with $jobs processes"
exit $status
