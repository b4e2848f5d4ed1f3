"""Characters sent per model call for the shipped three-agent example on a one-line question.

Counts what the agents actually sent (``prompt_chars`` of each ``ModelCallStarted`` in
the trace: every message plus the tool schemas). Upstream MassGen sends about 15,000
characters per call for the same protocol (the figure quoted in the core issue; not
measured here). Run: python -m bench.prompt_size
"""

from __future__ import annotations

import logging
import statistics
import tempfile
from pathlib import Path

from massgen.actors.agent import prompts
from massgen.actors.run.team import Team
from massgen.configs import load_config
from massgen.logs import read_trace
from massgen.messages import AnswerEntry, AnswerView

UPSTREAM_CHARS_PER_CALL = 15_000


def main() -> None:
    logging.getLogger("pykka").setLevel(logging.CRITICAL)
    config, _ = load_config("@examples/basic/scripted_three_agents")
    with tempfile.TemporaryDirectory() as tmp:
        result = Team(config, "Which is larger, 9.11 or 9.9?", log_dir=Path(tmp) / "run").run()
        sizes = [r["payload"]["prompt_chars"] for r in read_trace(result.log_dir) if r["type"] == "ModelCallStarted"]
    print(f"model calls: {len(sizes)}")
    print(f"chars per call: min {min(sizes)}, median {statistics.median(sizes):.0f}, max {max(sizes)}")
    share = statistics.median(sizes) / UPSTREAM_CHARS_PER_CALL
    print(f"upstream figure: ~{UPSTREAM_CHARS_PER_CALL}; ours is {share:.1%}")
    empty = AnswerView()
    two = AnswerView(version=2, answers=(AnswerEntry(agent="agent1", label="agent1.1", content="x"),
                                         AnswerEntry(agent="agent2", label="agent2.1", content="y")))
    fixed = sum(len(m.content) for m in prompts.turn_messages("", empty, "agent1", False, None))
    tools = sum(len(str(t.parameters)) + len(t.description) for t in prompts.workflow_tools(two, False))
    print(f"fixed overhead: instructions {fixed} chars, workflow tool schemas {tools} chars")


if __name__ == "__main__":
    main()
