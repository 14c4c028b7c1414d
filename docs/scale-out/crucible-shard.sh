#!/bin/bash
# One shard of a crucible run split over n machines (docs/scale-out.md):
#   - as a Slurm job array (sbatch --array=1-n): shard $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT;
#   - as a Kubernetes Indexed Job (completionMode: Indexed): shard $JOB_COMPLETION_INDEX + 1 of
#     $SHARDS (set SHARDS to the Job's completions).
# Shard i runs `crucible run --shard i/n` into $RUN/shard-i; a shard started again (a requeued
# task, a replaced pod) continues where it stopped (--resume). Once every shard has ended,
# `crucible merge $RUN/shard-* --out $RUN/merged` makes the run folder of the whole run.
#
# Every shard must run the same options (merge checks them): CRUCIBLE_ARGS holds them.
# Environment: CRUCIBLE (the program, default crucible), RUN (the folder that holds the shards,
# shared by every machine), CRUCIBLE_ARGS (default --suite opinfo --backend cpu), CPUS (worker
# processes and threads per call; under Slurm, the task's --cpus-per-task).
#
# Exit status: 0 when the shard did its work, whatever its cases' verdicts (crucible run's status
# 1, "some case failed", is the merge's to report for the whole run); crucible's own status
# otherwise (2: a usage or input error).
#SBATCH --job-name=crucible-shards
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --output=crucible-shard-%A_%a.out
set -euo pipefail

CRUCIBLE=${CRUCIBLE:-crucible}
RUN=${RUN:-runs/nightly}
CRUCIBLE_ARGS=${CRUCIBLE_ARGS:---suite opinfo --backend cpu}

if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  i=$SLURM_ARRAY_TASK_ID
  n=${SLURM_ARRAY_TASK_COUNT:?not set: submit with sbatch --array=1-n}
  CPUS=${CPUS:-${SLURM_CPUS_PER_TASK:-}}
elif [ -n "${JOB_COMPLETION_INDEX:-}" ]; then
  i=$((JOB_COMPLETION_INDEX + 1))
  n=${SHARDS:?not set: give the Indexed Job's pods SHARDS, the Job's completions}
else
  echo "crucible-shard.sh: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor" \
    "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set" >&2
  exit 2
fi

out=$RUN/shard-$i
parallel=()
if [ -n "${CPUS:-}" ]; then parallel=(--workers "$CPUS" --threads "$CPUS"); fi
status=0
if [ -f "$out/manifest.json" ]; then
  "$CRUCIBLE" run --resume "$out" "${parallel[@]:0:2}" --quiet || status=$?
else
  # shellcheck disable=SC2086  # CRUCIBLE_ARGS holds several flags
  "$CRUCIBLE" run $CRUCIBLE_ARGS --shard "$i/$n" "${parallel[@]}" --out "$out" --quiet ||
    status=$?
fi
if [ "$status" -eq 1 ]; then
  echo "crucible-shard.sh: shard $i/$n done; some of its cases did not pass (see $out/SUMMARY.md)"
  exit 0
fi
exit "$status"
