#!/bin/sh
# The sixth candidate's five probe questions (bench/results/no-result-asked-preregistered.md, rule (b)), one run each, as a
# user runs them: the command line, automation mode; with CONFIG (the sixth's: bench/configs/local_team_two_programs.yaml),
# else the default team (no ./.massgen/config.yaml or user config). Writes one folder per question.
# Run from the repository root: sh bench/replays/no_result_asked_probes.sh OUT_DIR [CONFIG]
out=${1:?usage: no_result_asked_probes.sh OUT_DIR [CONFIG]}
config=${2:+--config $PWD/$2}
i=0
for q in "Write a haiku about the sea." "Explain in two sentences why the sky is blue." \
         "What is the capital of France?" "How many r's are in the word strawberry?" "Which is larger, 9.11 or 9.9?"; do
  i=$((i + 1)); mkdir -p "$out/q$i"
  printf '%s\n' "$q" > "$out/q$i/question.txt"
  start=$(date +%s)
  (cd "$out/q$i" && massgen $config --automation "$q" > answer.txt 2> progress.txt; \
   echo "exit $? in $(( $(date +%s) - start )) s" > status.txt)
done
