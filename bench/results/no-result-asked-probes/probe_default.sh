#!/bin/sh
# The same five probe questions put to the default local team (no config), one run each, for comparison.
# Run from the repository root, with no ./.massgen/config.yaml or user config: sh .../probe_default.sh OUT_DIR
out=${1:?usage: probe_default.sh OUT_DIR}
i=0
for q in "Write a haiku about the sea." "Explain in two sentences why the sky is blue." \
         "What is the capital of France?" "How many r's are in the word strawberry?" "Which is larger, 9.11 or 9.9?"; do
  i=$((i + 1)); mkdir -p "$out/q$i"
  printf '%s\n' "$q" > "$out/q$i/question.txt"
  start=$(date +%s)
  (cd "$out/q$i" && massgen --automation "$q" > answer.txt 2> progress.txt; \
   echo "exit $? in $(( $(date +%s) - start )) s" > status.txt)
done
