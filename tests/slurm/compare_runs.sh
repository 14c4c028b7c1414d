# compare_runs <unsplit run folder> <merged run folder>: fails (status 1, the difference on
# stderr) unless the merged run's reports equal the unsplit run's apart from wall times: the
# summary.json, the verdicts of results.jsonl case by case in the suite's order (the unsplit run
# ran with one worker, so its file lists the cases in that order), operator_summary.csv,
# junit.xml and SUMMARY.md (its command line aside). Sourced by the scale-out tests; needs jq.
compare_runs() {
  local a=$1 b=$2
  diff <(jq -S 'del(.seconds)' "$a/summary.json") <(jq -S 'del(.seconds)' "$b/summary.json") >&2 ||
    { echo "compare_runs: summary.json differs" >&2; return 1; }
  diff <(jq -c -S 'del(.seconds)' "$a/results.jsonl") \
    <(jq -c -S 'del(.seconds)' "$b/results.jsonl") >&2 ||
    { echo "compare_runs: results.jsonl differs (verdicts case by case, in order)" >&2; return 1; }
  diff "$a/operator_summary.csv" "$b/operator_summary.csv" >&2 ||
    { echo "compare_runs: operator_summary.csv differs" >&2; return 1; }
  diff <(sed -E 's/ time="[^"]*"//' "$a/junit.xml") <(sed -E 's/ time="[^"]*"//' "$b/junit.xml") >&2 ||
    { echo "compare_runs: junit.xml differs" >&2; return 1; }
  diff <(sed -e '3d' -e '/^| wall time |/d' "$a/SUMMARY.md") \
    <(sed -e '3d' -e '/^| wall time |/d' "$b/SUMMARY.md") >&2 ||
    { echo "compare_runs: SUMMARY.md differs" >&2; return 1; }
  local cases
  cases=$(jq '.cases_total' "$b/summary.json")
  [ "$cases" -gt 0 ] || { echo "compare_runs: the run has no case" >&2; return 1; }
  [ "$(grep -c '"record":"case"' "$b/results.jsonl")" -eq "$cases" ] ||
    { echo "compare_runs: $b/results.jsonl does not hold its $cases cases" >&2; return 1; }
  echo "$cases"
}
