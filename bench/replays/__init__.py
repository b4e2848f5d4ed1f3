"""The scripts that made or read the data under ``bench/results/``: replays of recorded first answers
under a decision rule, scans of recorded runs, and two pilots. Run each from the repository root as
``python -m bench.replays.NAME``; ``bench/results/README.md`` says which folder each reads."""
