#!/usr/bin/env bash
# Regenerates the console output of README.md's worked example from the real binary, so the
# example cannot drift from what crucible prints.
#   scripts/readme_example.sh [--check] [path/to/crucible]
# Without --check it rewrites the blocks between the readme-example markers of README.md; with
# --check it exits 1 (and shows the difference) when README.md differs from what the run prints.
set -euo pipefail

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(realpath "${1:-$root/build/crucible}")"
readme="$root/README.md"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

cmd="run --suite smoke --backend faulty --ops relu.default,neg,exp --timeout 1 --workers 1 --out runs/example"
set +e
"$bin" $cmd >console.txt 2>progress.txt
status=$?
set -e
if [[ $status -ne 1 ]]; then
  echo "readme_example: the example exited with $status (expected 1):" >&2
  cat console.txt progress.txt >&2
  exit 2
fi
grep_cmd="grep -m1 '\"status\":\"crashed\"' runs/example/results.jsonl | grep -o '\"reproducer\":\"[^\"]*\"'"
reproducer="$(eval "$grep_cmd")"

{
  echo '```console'
  echo "\$ build/crucible $cmd"
  # The console table starts with an empty line; the README shows it without.
  sed '1{/^$/d}' console.txt
  echo '```'
} >block1.txt
{
  echo '```console'
  echo "\$ $grep_cmd"
  echo "$reproducer"
  echo '```'
} >block2.txt

# README.md with each marked block replaced.
awk -v b1="$work/block1.txt" -v b2="$work/block2.txt" '
  function emit(file,   line) { while ((getline line < file) > 0) print line; close(file) }
  /<!-- readme-example:console:begin -->/ { print; emit(b1); skip = 1; next }
  /<!-- readme-example:reproducer:begin -->/ { print; emit(b2); skip = 1; next }
  /<!-- readme-example:(console|reproducer):end -->/ { skip = 0 }
  !skip { print }
' "$readme" >README.new

if [[ $check -eq 1 ]]; then
  if ! diff -u "$readme" README.new; then
    echo "readme_example: README.md's worked example differs from what crucible prints;" \
      "run scripts/readme_example.sh to regenerate it" >&2
    exit 1
  fi
  exit 0
fi
cp README.new "$readme"
