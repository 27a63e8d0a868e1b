#!/bin/sh
# Puts one past bug back into the working tree (tests/sim/past-bugs/NAME.patch),
# builds the scheduler simulation, runs seeds FIRST..LAST in JOBS processes and
# takes the bug out again, whatever happens (`make sim-past-bug BUG=NAME`).
# Exit 0 when a seed caught the bug (names the seeds that did), 1 when none did,
# 2 when the patch does not apply. Bounded: it ends when its seeds are done.
#
#   put_back.sh BUILD_DIR NAME FIRST LAST JOBS
set -eu
build=$1 name=$2 first=$3 last=$4 jobs=$5
src=$(cd "$(dirname "$0")/../.." && pwd)
patch="$src/tests/sim/past-bugs/$name.patch"
[ -f "$patch" ] || { echo "put_back.sh: no $patch (ls tests/sim/past-bugs)" >&2; exit 2; }
git -C "$src" apply --check "$patch" || { echo "put_back.sh: $name.patch does not apply" >&2; exit 2; }
git -C "$src" apply "$patch"
trap 'git -C "$src" apply -R "$patch"' EXIT
cmake --build "$build" --target scheduler_sim_test -j "$jobs"
if sh "$src/tests/sim/run_seeds.sh" "$build" "$first" "$last" "$jobs"; then
  echo "put_back.sh: $name: no seed of $first-$last caught it"
  exit 1
fi
echo "put_back.sh: $name: caught (the seeds above)"
