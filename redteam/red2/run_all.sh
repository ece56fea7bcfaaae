#!/usr/bin/env bash
# Reruns every attack and honest kernel in redteam/red2/ through `xe-forge check --device cpu` (redteam/red2/check.sh).
# Prints one line per file: FILE|EXIT|first verdict line. With no arguments it runs every
# redteam/red2/*/atk_*.py and redteam/red2/*/honest_*.py and rewrites redteam/red2/results.txt, then RESULTS.md's tables can be
# regenerated with `python redteam/red2/make_results.py redteam/red2/results.txt`. With arguments it runs just those files.
cd "$(dirname "$0")/../.." || exit 2
if [ $# -gt 0 ]; then
  for f in "$@"; do redteam/red2/check.sh "$f"; done
  exit 0
fi
for f in redteam/red2/*/atk_*.py redteam/red2/*/honest_*.py; do redteam/red2/check.sh "$f"; done | tee redteam/red2/results.txt
