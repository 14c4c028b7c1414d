#!/usr/bin/env bash
# Runs the pods of the Kubernetes Indexed Job of docs/scale-out/crucible-shards-job.yaml as local
# processes: docs/scale-out/crucible-shard.sh with the environment the Job gives each pod
# (JOB_COMPLETION_INDEX 0..n-1 and the Job's SHARDS, RUN, CRUCIBLE_ARGS), side by side. One pod
# is killed (SIGKILL) mid-run and started again, as Kubernetes restarts a failed container, and
# must continue its shard. Then the merge command of docs/scale-out/crucible-merge-job.yaml, and
# the merged run is checked against the unsplit run (tests/slurm/compare_runs.sh).
#
#   tests/slurm/run_indexed_job_shards.sh <crucible binary> [time limit in seconds, default 180]
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 <crucible binary> [time limit in seconds]" >&2
  exit 2
fi
CRUCIBLE=$(realpath "$1")
LIMIT=${2:-180}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SCRIPT=$REPO/docs/scale-out/crucible-shard.sh
JOB=$REPO/docs/scale-out/crucible-shards-job.yaml
MERGE_JOB=$REPO/docs/scale-out/crucible-merge-job.yaml
# shellcheck source=compare_runs.sh
source "$HERE/compare_runs.sh"
command -v jq >/dev/null 2>&1 || { echo "jq is not installed (scripts/install-deps.sh)" >&2; exit 1; }

fail() {
  echo "run_indexed_job_shards: FAILED: $*" >&2
  exit 1
}

# The Job's numbers, read from its manifest: completions, and the SHARDS its pods get.
completions=$(sed -n 's/^  completions: *\([0-9]*\)$/\1/p' "$JOB")
shards_env=$(awk '/- name: SHARDS/{getline; gsub(/[^0-9]/, ""); print}' "$JOB")
[ -n "$completions" ] && [ "$completions" = "$shards_env" ] ||
  fail "$JOB: completions ($completions) and the pods' SHARDS ($shards_env) differ"
grep -q 'command: \["bash", "/scripts/crucible-shard.sh"\]' "$JOB" ||
  fail "$JOB does not run /scripts/crucible-shard.sh"
merge_cmd=$(sed -n 's/.*command: \["bash", "-c", "\(crucible merge [^"]*\)"\]/\1/p' "$MERGE_JOB")
[ -n "$merge_cmd" ] || fail "$MERGE_JOB: no crucible merge command found"

TMP=$(mktemp -d /tmp/crucible-indexed-job.XXXXXX)
PIDS=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ $status -ne 0 ]; then
    for f in "$TMP"/pod-*.log; do
      [ -f "$f" ] && { echo "---- $f" >&2; tail -n 20 "$f" >&2; }
    done
    echo "run_indexed_job_shards: the files are kept in $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The pods' environment, as the Job gives it (the volume /runs is a folder here; the program is
# this build's). The cases: a small opinfo run on the cpu backend.
export SHARDS=$shards_env
export RUN=$TMP/runs/nightly
export CRUCIBLE=$CRUCIBLE
export CRUCIBLE_ARGS="--suite opinfo --backend cpu --ops relu,add.Tensor,mul.Tensor,sum.dim_IntList,mm,_softmax.default --seed 11"
export CPUS=1
mkdir -p "$TMP/runs"

# Every pod at once, each in a process group of its own (timeout leads it), as containers are.
# Pod 1 (shard 2) is killed once it has recorded a case, then restarted.
start_pod() {
  JOB_COMPLETION_INDEX=$1 setsid timeout "$LIMIT" bash "$SCRIPT" >"$TMP/pod-$1.log" 2>&1 &
}
for ((k = 0; k < SHARDS; k++)); do
  start_pod "$k"
  PIDS+=($!)
done
# Kills pod 1 once shard 2 has recorded a case (watched every 5 ms: a shard of this size can
# finish within 50 ms of its first case); killed=1 when it was stopped before its summary.
kill_pod_1() {
  local victim=${PIDS[1]}
  killed=0
  for _ in $(seq 6000); do
    [ -s "$RUN/shard-2/results.jsonl" ] && break
    kill -0 "$victim" 2>/dev/null || break
    sleep 0.005
  done
  if kill -0 "$victim" 2>/dev/null; then
    kill -KILL -- "-$victim" 2>/dev/null || true # the pod: its shell, crucible and its workers
    killed=1
  fi
  wait "$victim" 2>/dev/null || true
  # Killed between writing its summary and exiting: that kill was not mid-run.
  [ $killed -eq 1 ] && [ -f "$RUN/shard-2/summary.json" ] && killed=0
  return 0
}
kill_pod_1
# A kill that came after the shard finished is tried again on a fresh shard 2 (under load the
# shard can finish between the check and the kill), so that the resume below is exercised.
for _ in 1 2 3; do
  [ $killed -eq 1 ] && break
  rm -rf "$RUN/shard-2"
  start_pod 1
  PIDS[1]=$!
  kill_pod_1
done
for ((k = 0; k < SHARDS; k++)); do
  [ "$k" -eq 1 ] && continue
  wait "${PIDS[$k]}" || fail "pod $k failed (status $?)"
done
PIDS=()
if [ $killed -eq 1 ]; then
  # Merging now is refused, naming shard 2's folder: it did not finish.
  out=$("$CRUCIBLE" merge "$RUN"/shard-* --out "$TMP/runs/too-early" 2>&1) && fail "merged an unfinished shard"
  echo "$out" | grep -q "shard-2.*did not finish" ||
    fail "the refusal does not say that shard 2 did not finish: $out"
  [ ! -e "$TMP/runs/too-early/summary.json" ] || fail "the refused merge wrote a summary"
  # The restarted container continues the shard.
  JOB_COMPLETION_INDEX=1 timeout "$LIMIT" bash "$SCRIPT" >"$TMP/pod-1-restarted.log" 2>&1 ||
    fail "the restarted pod of shard 2 failed"
  grep -q '"resumed"' "$RUN/shard-2/manifest.json" || fail "shard 2 was not resumed"
fi

# The merge Job's command, then the unsplit run (one worker: its results.jsonl is in suite order).
merge_status=0
(cd "$TMP" && PATH=$(dirname "$CRUCIBLE"):$PATH bash -c "${merge_cmd//\/runs\/nightly/$RUN}") ||
  merge_status=$?
unsplit_status=0
# shellcheck disable=SC2086
"$CRUCIBLE" run $CRUCIBLE_ARGS --workers 1 --out "$TMP/runs/unsplit" --quiet || unsplit_status=$?
[ $merge_status -eq $unsplit_status ] ||
  fail "the merge exited with $merge_status, the unsplit run with $unsplit_status"
cases=$(compare_runs "$TMP/runs/unsplit" "$RUN/merged") || fail "the merged run differs from the unsplit run"
echo "run_indexed_job_shards: OK: $cases cases in $SHARDS pods (shard 2 killed: $killed) merged equal the unsplit run"
