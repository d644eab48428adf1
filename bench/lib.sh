# Shared helpers for the benchmark scripts (sourced). Timings are wall-clock seconds; each figure
# is the median of several runs, and scripts print ratios, which survive a noisy machine better.
set -euo pipefail

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HWIMG=${HWIMG:-$BENCH_ROOT/build/hwimg}
[ -x "$HWIMG" ] || { echo "bench: build hwimg first (scripts/setup), or set HWIMG" >&2; exit 1; }
RUNS=${RUNS:-3}

# seconds COMMAND...: wall time of one run.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

# median_of SETUP COMMAND: runs SETUP (untimed) then COMMAND, RUNS times; prints the median time.
median_of() {
  local setup=$1 command=$2 i times=()
  for ((i = 0; i < RUNS; i++)); do
    eval "$setup"
    times+=("$(seconds bash -c "$command")")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

ratio() { echo "scale=3; $1 / $2" | bc -l; }
