"""First answers as programs (``backend.first_answer: program``) and runs the first answers decide
(``orchestrator.after_first_answers: decide``).

A program first answer is one call asking for a short Python program that prints the answer (PAL); the
program runs confined, traced as a ``run_python`` call, and what it prints is the answer's result. A
program that fails states no result and says why. Under ``decide`` there is no vote round: once every
first answer is in, execution outranks agreement and agreement outranks listing order (issue 48): a value a
program computed (not a literal it printed) first, then the answers supporting it, then the first listed; with
no computed value the written answers decide; while the evidence has not settled a reserve agent is asked,
and evidence still unsettled after that falls back to the written answers. Scripted backends play the model;
the programs really run confined.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import (
    FACTOR,
    of_type,
    records,
    resumed_after_last_answer,
    run_team,
    scripted,
    step,
    team_config,
    without_any_sandbox,
)
from test_code_checks import LOOP, SUM, SUM_AGAIN, TASK, fenced

from massgen.actors.agent.prompts import PROGRAM_REQUEST
from massgen.actors.agent.turn import printed_value
from massgen.actors.coordination.code_checks import program_code
from massgen.cli.progress import describe
from massgen.configs import ConfigError, validate_data
from massgen.logs import LogProjection

QUESTION = "How many times does the letter r appear in the word strawberry? Answer with the number."
# What a small model writes: the program, then the output it expects in a second block (not a program).
COUNTING = ("```python\nword = 'strawberry'\nprint(f\"Answer: {word.count('r')}\")\n```\n\n"
            "Output:\n```python\nAnswer: 3\n```")


def programmer(agent_id: str, reply: str) -> dict[str, Any]:
    return scripted(agent_id, [step(text=reply)], first_answer="program")


def answerer(agent_id: str, answer: str) -> dict[str, Any]:
    return scripted(agent_id, [step(new_answer=answer)])


def deciding() -> dict[str, Any]:
    return {"max_new_answers_per_agent": 1, "final_answer_strategy": "winner_reuse", "after_first_answers": "decide"}


def by_sender(trace: list[dict[str, Any]], kind: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for record in of_type(trace, kind):
        found.setdefault(record["sender"].split("#")[0], []).append(record["payload"])
    return found


def test_a_program_first_answer_runs_confined_and_what_it_prints_is_the_result(tmp_path: Path) -> None:
    team = team_config(programmer("p", COUNTING), answerer("g", "Two r's.\nAnswer: 2"),
                       answerer("s", "s-t-r-a-w-b-e-r-r-y: three.\nAnswer: 3"), orchestrator=deciding(),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    asked = by_sender(trace, "ModelRequestSent")["p"][0]
    assert asked["tools"] is None or asked["tools"] == []  # one plain call: no workflow tools, no team prompt
    assert [m["role"] for m in asked["messages"]] == ["user"]
    assert asked["messages"][0]["content"] == f"{QUESTION}\n\n{PROGRAM_REQUEST}"
    requested = by_sender(trace, "ToolCallRequested")["p"]
    assert [(r["name"], r["arguments"]["code"]) for r in requested] == [
        ("run_python", "word = 'strawberry'\nprint(f\"Answer: {word.count('r')}\")\n")]  # the first block
    ran = by_sender(trace, "ToolCallResult")["p"]
    assert [(r["content"], r["is_error"]) for r in ran] == [("[exit code 0]\nAnswer: 3", False)]
    answer = next(r["payload"] for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "p")
    assert answer["content"].endswith("The program printed:\nAnswer: 3\n\nAnswer: 3") and answer["result"] == "3"
    assert "word.count('r')" in answer["content"]  # the work is shown with the result


def test_the_first_answers_decide_without_a_vote_round_at_one_call_each(tmp_path: Path) -> None:
    team = team_config(programmer("p", COUNTING), answerer("g", "Answer: 2"), answerer("s", "Answer: 3"),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    decided = [r["payload"] for r in of_type(trace, "FirstAnswersDecided")]
    assert decided == [{**decided[0], "result": "3", "winner": "agent1.1", "support": {"3": 2}, "computed": {"3": 1},
                        "labels": ["agent1.1", "agent2.1", "agent3.1"]}]
    assert len(of_type(trace, "ModelCallStarted")) == 3 and not of_type(trace, "RecordVote", "VoteProposed")
    assert result.winner == "p" and (result.final_answer or "").endswith("Answer: 3")


def test_a_computed_result_outranks_written_answers_that_agree_on_another(tmp_path: Path) -> None:
    # Measured: two written answers agreeing on the same wrong count outvoted the program that computed it.
    team = team_config(answerer("g", "Two r's.\nAnswer: 2"), answerer("s", "I count two.\nAnswer: 2"),
                       programmer("p", COUNTING), orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    accepted = {r["payload"]["agent"]: r["payload"]["computed"] for r in of_type(trace, "AnswerAccepted")}
    assert accepted == {"g": False, "s": False, "p": True}
    decided = [r["payload"] for r in of_type(trace, "FirstAnswersDecided")]
    assert decided == [{"result": "3", "winner": "agent3.1", "support": {"3": 1}, "computed": {"3": 1},
                        "labels": ["agent1.1", "agent2.1", "agent3.1"], "two_valued": False,
                        "no_result_asked": False, "set_aside": [], "not_waited_for": []}]
    assert result.winner == "p" and (result.final_answer or "").endswith("Answer: 3")


def test_a_program_that_fails_states_no_result_and_a_tie_goes_to_the_first_listed_holder(tmp_path: Path) -> None:
    broken = "```python\nprint(undefined_name)\n```"
    team = team_config(programmer("p", broken), answerer("g", "Answer: 2"), answerer("s", "Answer: 3"),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    ran = by_sender(trace, "ToolCallResult")["p"]
    assert len(ran) == 1 and ran[0]["is_error"] and "NameError" in ran[0]["content"]
    answer = next(r["payload"] for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "p")
    assert "The program gave no answer:\n[exit code 1]" in answer["content"] and "NameError" in answer["content"]
    assert "\nAnswer:" not in answer["content"]
    decided = of_type(trace, "FirstAnswersDecided")[0]["payload"]
    assert decided["support"] == {"2": 1, "3": 1} and decided["winner"] == "agent2.1"  # g is listed before s
    assert result.winner == "g"


def test_a_program_that_prints_a_literal_is_no_evidence_and_the_written_answer_presents(tmp_path: Path) -> None:
    # Measured (issue 48): print('lrohtam') was reported as the word spelled backwards.
    question = "All cats are animals. Some animals are dogs. Does it follow that some cats are dogs?"
    team = team_config(programmer("p", "```python\nprint('Answer: Yes')\n```"),
                       programmer("q", "```python\nanswer = 'Yes'\nprint(answer)\n```"),
                       answerer("g", "No: the dogs among the animals need not be cats."), orchestrator=deciding(),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, question)
    assert result.status == "completed", result.reason
    trace = records(result)
    accepted = {r["payload"]["agent"]: (r["payload"]["program"], r["payload"]["computed"])
                for r in of_type(trace, "AnswerAccepted")}
    assert accepted == {"p": (True, False), "q": (True, False), "g": (False, False)}
    decided = of_type(trace, "FirstAnswersDecided")[0]["payload"]
    assert (decided["winner"], decided["computed"]) == ("agent3.1", {})
    assert result.winner == "g" and (result.final_answer or "").startswith("No:")


def test_with_no_computed_result_written_answers_that_agree_outrank_the_first_listed(tmp_path: Path) -> None:
    team = team_config(programmer("p", "```python\nprint(undefined_name)\n```"), answerer("g", "Answer: No"),
                       answerer("s", "Answer: Yes"), answerer("t", "Answer: Yes"), orchestrator=deciding(),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, "Is 91 a prime number? Yes or no.")
    assert result.status == "completed", result.reason
    decided = of_type(records(result), "FirstAnswersDecided")[0]["payload"]
    assert decided["support"] == {"no": 1, "yes": 2} and decided["winner"] == "agent3.1"
    assert result.winner == "s"


def test_a_yes_beside_a_number_is_not_two_valued_and_agreement_decides(tmp_path: Path) -> None:
    team = team_config(answerer("g", "Answer: yes"), answerer("s", "Answer: 3"), answerer("t", "Answer: 3"),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    decided = of_type(records(result), "FirstAnswersDecided")[0]["payload"]
    assert not decided["two_valued"] and decided["winner"] == "agent2.1" and result.winner == "s"


HAIKU = "Whispers in the wind,\nOcean's vast embrace,\nPeace and calm."


def with_reserve(*agents: dict[str, Any]) -> dict[str, Any]:
    """Under ``decide``, with the named agents asked only while the first answers disagree."""
    return {**deciding(), "reserve_agents": [a["id"] for a in agents]}


HAIKU_TEAM = (programmer("p", "```python\nprint(undefined_name)\n```"),
              programmer("q", "```python\nprint(10 + 20)\n```"), answerer("g", HAIKU),
              programmer("r", "```python\nprint(2 * 21)\n```"), programmer("s", "```python\nprint(7 - 9)\n```"))
WALK = "How many minutes does a 3 km walk take?"
WALKING = "At about 5 km an hour, roughly 40 minutes."
# Programs that each compute another number of minutes, beside a written answer that gives a number too.
WALK_TEAM = (*HAIKU_TEAM[:2], answerer("g", WALKING), *HAIKU_TEAM[3:])


def test_disagreement_asks_the_reserve_and_evidence_that_never_settles_leaves_the_written_answer(
        tmp_path: Path) -> None:
    team = team_config(*WALK_TEAM, orchestrator=with_reserve(*WALK_TEAM[3:]), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, WALK)
    assert result.status == "completed", result.reason
    trace = records(result)
    accepted = {r["payload"]["agent"]: (r["payload"]["program"], r["payload"]["computed"])
                for r in of_type(trace, "AnswerAccepted")}
    assert accepted == {"p": (True, False), "q": (True, True), "g": (False, False), "r": (True, True),
                        "s": (True, True)}
    asked = [r["payload"]["ask"] for r in of_type(trace, "FirstAnswersDisagree")]
    assert asked == ["r", "s"]  # one at a time, in order, each while the evidence had not settled
    projection = LogProjection()
    for record in trace:
        projection.apply(record)
    assert describe(of_type(trace, "RunStarted")[0], projection) == (
        "team of 5: agent1=p, agent2=q, agent3=g, agent4=r, agent5=s (agent4, agent5 only if the first answers "
        "disagree)")
    assert [describe(r, projection) for r in of_type(trace, "FirstAnswersDisagree")] == [  # the user is told why
        f"the first answers disagree: {label} (a reserve agent) is asked for its answer" for label in ("agent4",
                                                                                                        "agent5")]
    started = [r["payload"]["agent"] for r in of_type(trace, "TurnStarted")]
    assert started.index("r") > 2 and started.index("s") > started.index("r")  # not before they were asked
    decided = [r["payload"] for r in of_type(trace, "FirstAnswersDecided")]
    assert len(decided) == 1 and decided[0]["winner"] == "agent3.1"
    assert decided[0]["computed"] == {"30": 1, "42": 1, "-2": 1}
    assert result.winner == "g" and result.final_answer == WALKING
    assert len(of_type(trace, "ModelCallStarted")) == 5 and not of_type(trace, "RecordVote", "VoteProposed")


def test_a_number_a_program_computed_answers_no_request_for_a_poem(tmp_path: Path) -> None:
    # Measured (issue 48): asked for a haiku, two programs printed 30 and -2.4e-14 and the team answered "Answer: 30";
    # asked for a poem about coffee, two printed 8 (print(3 + 5)): computed and agreed, so the poem lost. A value of a
    # kind no written answer gives (a number, where the written answer holds none) answered another question.
    team = team_config(programmer("p", "```python\nprint(3 + 5)\n```"), programmer("q", "```python\nprint(3 + 5)\n```"),
                       answerer("g", HAIKU), *HAIKU_TEAM[3:], orchestrator=with_reserve(*HAIKU_TEAM[3:]),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, "Write a haiku about the sea.")
    assert result.status == "completed", result.reason
    trace = records(result)
    assert not of_type(trace, "FirstAnswersDisagree")  # nothing to settle: no reserve is asked
    decided = [r["payload"] for r in of_type(trace, "FirstAnswersDecided")]
    assert len(decided) == 1 and decided[0]["winner"] == "agent3.1" and decided[0]["computed"] == {}
    assert decided[0]["set_aside"] == ["8"]  # recorded: nothing a program computed is dropped without a word
    assert result.winner == "g" and result.final_answer == HAIKU
    assert len(of_type(trace, "ModelCallStarted")) == 3


def test_a_truth_value_answers_no_question_the_written_answer_gives_a_value_for(tmp_path: Path) -> None:
    # Measured (issue 48): "which is bigger, 3/8 or 1/3?": print(3/8 > 1/3) printed True twice and won.
    check = "```python\nprint(3/8 > 1/3)\n```"
    team = team_config(programmer("p", check), programmer("q", check),
                       answerer("g", "3/8 is bigger than 1/3."), orchestrator=deciding(), turn_timeout=30,
                       straggler_grace=60)
    result = run_team(team, tmp_path, "which is bigger, 3/8 or 1/3")
    assert result.status == "completed", result.reason
    decided = of_type(records(result), "FirstAnswersDecided")[0]["payload"]
    assert decided["computed"] == {} and decided["winner"] == "agent3.1" and decided["set_aside"] == ["true"]
    assert result.winner == "g" and result.final_answer == "3/8 is bigger than 1/3."


def test_agreement_stops_the_asking_and_an_unasked_reserve_never_starts(tmp_path: Path) -> None:
    team = team_config(programmer("p", COUNTING), answerer("g", "I count three r's."),
                       programmer("r", COUNTING), orchestrator=with_reserve(programmer("r", COUNTING)),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert not of_type(trace, "FirstAnswersDisagree")
    assert "r" not in {r["payload"]["agent"] for r in of_type(trace, "TurnStarted")}
    assert len(of_type(trace, "ModelCallStarted")) == 2 and result.winner == "p"


def test_a_failed_program_never_reaches_the_final_answer_while_a_written_answer_exists(tmp_path: Path) -> None:
    # Measured (issue 48): "NameError: name 'mississippi' is not defined" presented, beside a right written answer.
    team = team_config(programmer("p", "```python\nprint(mississippi.count('s'))\n```"),
                       answerer("g", "The letter 's' appears 4 times in mississippi."), orchestrator=deciding(),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, "how many s in mississippi")
    assert result.status == "completed", result.reason
    assert result.winner == "g" and "NameError" not in (result.final_answer or "")
    assert of_type(records(result), "FirstAnswersDecided")[0]["payload"]["winner"] == "agent2.1"


def test_a_resumed_run_keeps_which_answers_a_program_gave_and_which_reserves_were_asked(tmp_path: Path) -> None:
    """Cut after the last accepted answer (what a SIGKILL then leaves): resumed, the programs' answers are still
    program answers and the reserve agents that answered are counted, so the written answer presents again."""
    team = team_config(*WALK_TEAM, orchestrator=with_reserve(*WALK_TEAM[3:]), turn_timeout=30, straggler_grace=60)
    whole = run_team(team, tmp_path / "whole", WALK)
    resumed = resumed_after_last_answer(whole, tmp_path)
    assert (resumed.status, resumed.winner) == ("completed", "g") == (whole.status, whole.winner)
    again = {r["payload"]["agent"]: r["payload"]["program"] for r in of_type(records(resumed), "AnswerAccepted")}
    assert again == {"p": True, "q": True, "g": False, "r": True, "s": True}
    assert of_type(records(resumed), "FirstAnswersDecided")[0]["payload"]["winner"] == "agent3.1"


def test_a_written_answer_that_states_a_result_leaves_the_programs_weighed(tmp_path: Path) -> None:
    team = team_config(programmer("p", COUNTING), answerer("g", "Whispers of the sea.\nAnswer: 2"),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    decided = of_type(records(result), "FirstAnswersDecided")[0]["payload"]
    assert decided["computed"] == {"3": 1} and result.winner == "p"


def test_a_reply_with_no_program_is_refused_visibly_and_states_no_result(tmp_path: Path) -> None:
    team = team_config(programmer("p", "There are three r's in strawberry, I think"), answerer("g", "Answer: 2"),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    trace = records(result)
    ran = by_sender(trace, "ToolCallResult")["p"]
    assert [(r["content"], r["is_error"]) for r in ran] == [("not run: the reply holds no Python program", True)]
    assert result.winner == "g"


def test_a_program_that_outlives_the_deadline_is_killed_and_the_others_decide(tmp_path: Path) -> None:
    sleeper = "```python\nimport time\ntime.sleep(600)\nprint(3)\n```"
    team = team_config(programmer("p", sleeper), answerer("g", "Answer: 2"), orchestrator=deciding(),
                       turn_timeout=60, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    ran = by_sender(records(result), "ToolCallResult")["p"]
    assert ran[0]["content"].startswith("[killed at the deadline]") and ran[0]["is_error"]
    assert result.status == "completed" and result.winner == "g"


def test_in_a_code_task_a_program_agent_is_asked_the_bare_question(tmp_path: Path) -> None:
    """A function is the answer there: no program is asked for, and its code is checked by its examples."""
    coder = scripted("p", [step(text=fenced(LOOP))], first_answer="program", check_tools=["code_examples"])
    team = team_config(coder, scripted("g", [step(new_answer=fenced(LOOP))], check_tools=["code_examples"]),
                       orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, TASK)
    trace = records(result)
    asked = by_sender(trace, "ModelRequestSent")["p"][0]
    assert [(m["role"], m["content"]) for m in asked["messages"]] == [("user", TASK)]
    calls = [c["name"] for c in by_sender(trace, "ToolCallRequested").get("p", [])]
    assert calls == ["code_examples"]  # no program asked for: its answer's check is the one run, traced as work
    checked = next(r["payload"] for r in of_type(trace, "AnswerAccepted") if r["payload"]["agent"] == "p")
    shown = [e["passed"] for e in checked["code_check"]["examples"] if not e["probe"]]
    assert checked["code_check"]["parsed"] and shown == [True, True] and checked["result"].startswith("code behaviour")
    assert result.winner == "p"


def test_failing_code_answers_that_agree_cannot_outvote_one_that_passes(tmp_path: Path) -> None:
    """Two answers with one wrong behaviour against one passing answer: under decide, the passing one wins."""
    agents = [scripted(agent_id, [step(new_answer=fenced(code))], check_tools=["code_examples"])
              for agent_id, code in (("a", SUM), ("b", SUM_AGAIN), ("c", LOOP))]
    result = run_team(team_config(*agents, orchestrator=deciding(), turn_timeout=30, straggler_grace=60), tmp_path,
                      TASK)
    assert result.status == "completed", result.reason
    decided = of_type(records(result), "FirstAnswersDecided")[0]["payload"]
    assert list(decided["support"].values()) == [1] and decided["winner"] == "agent3.1"
    assert result.winner == "c" and "balance" in (result.final_answer or "")


def test_a_bare_first_answer_is_the_question_alone(tmp_path: Path) -> None:
    brief = {**scripted("b", [step(text="It is 3.\nAnswer: 3")], first_answer="bare"), "system_message": "Be brief."}
    team = team_config(brief, answerer("g", "Answer: 3"), orchestrator=deciding(), turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    trace = records(result)
    asked = by_sender(trace, "ModelRequestSent")["b"][0]
    assert [(m["role"], m["content"]) for m in asked["messages"]] == [("system", "Be brief."), ("user", QUESTION)]
    # The first listed answer's 3 wins a tie or an agreement alike, so g's may not have been waited for.
    decided = of_type(trace, "FirstAnswersDecided")[0]["payload"]
    assert decided["result"] == "3" and decided["support"]["3"] >= 1


def test_what_a_program_prints_is_read_as_a_person_writes_it() -> None:
    assert printed_value("50.0", "How many giants?") == "50"
    assert printed_value("True", "Does it follow? Answer Yes or No.") == "Yes"
    assert printed_value("False", "Is it so (yes or no)?") == "No"
    assert printed_value("True", "Is the statement true or false?") == "True"
    assert printed_value("2.5", "What is half of 5?") == "2.5"
    # A comparison printed for "which": the number it shows, as the calculator reads one.
    which = "Which is larger, 9.11 or 9.9?"
    assert printed_value("True", which, "print(9.9 > 9.11)") == "9.9"
    assert printed_value("False", which, "a, b = 9.11, 9.9\nprint(9.11 > 9.9)") == "9.9"
    assert printed_value("True", "Is 9.9 larger than 9.11? Yes or no.", "print(9.9 > 9.11)") == "Yes"
    assert printed_value("True", which, "a = 9.9\nprint(a > 9.11)") == "True"  # a name: no two numbers shown
    assert printed_value("False", which, "print(9.9 > 9.11)") == "False"  # not what it evaluates to
    assert program_code("no code here") == ""
    assert program_code("print(1)") == "print(1)"  # an unfenced reply that parses is its own program


def test_the_config_names_a_bad_first_answer_and_an_agent_cli_is_told_it_is_not_applied() -> None:
    with pytest.raises(ConfigError, match="first_answer"):
        validate_data({"agents": [{"id": "a", "backend": {"type": "scripted", "first_answer": "essay"}}]}, "t.yaml")
    with pytest.raises(ConfigError, match="after_first_answers"):
        validate_data({"agents": [{"id": "a", "backend": {"type": "scripted"}}],
                       "orchestrator": {"after_first_answers": "never"}}, "t.yaml")


def test_without_a_sandbox_a_program_agent_answers_the_bare_question_and_the_run_says_so(tmp_path: Path) -> None:
    """A real ``massgen`` run with no sandbox at all: one plain warning naming the command that adds it, a trace
    record, no program run, and the program agent asked the bare question (as one plain call of its model is)."""
    config = tmp_path / "team.yaml"
    agents = [scripted("p", [step(text="Answer: 3")], first_answer="program"), answerer("g", "Answer: 3")]
    config.write_text(yaml.safe_dump({"agents": agents, "orchestrator": deciding(),
                                      "timeout_settings": {"orchestrator_timeout_seconds": 60 * FACTOR}}))
    env = without_any_sandbox(tmp_path)
    done = subprocess.run([sys.executable, "-m", "massgen.cli.main", "--config", str(config), QUESTION],
                          capture_output=True, text=True, env=env, timeout=120 * FACTOR, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "first_answer" in line]
    assert warned == ["massgen: warning: first_answer: program not applied for p: they answer in plain words instead "
                      "of with a program, since the Python sandbox for programs is not installed here; add it with: "
                      "pip install 'massgen-actors[sandbox]'"], done.stderr
    from massgen.logs import read_trace

    trace = read_trace(next((tmp_path / "logs").glob("**/trace.jsonl")).parent)
    asked = by_sender(trace, "ModelRequestSent")["p"][0]
    assert [(m["role"], m["content"]) for m in asked["messages"]] == [("user", QUESTION)]  # the bare question
    assert of_type(trace, "RunStarted")[0]["payload"]["warnings"] == [warned[0].removeprefix("massgen: warning: ")]
    assert not of_type(trace, "ToolCallRequested")
    # The first listed answer's 3 wins a tie or an agreement alike, so g's may not have been waited for.
    decided = of_type(trace, "FirstAnswersDecided")[0]["payload"]
    assert decided["result"] == "3" and decided["support"]["3"] >= 1


def test_a_reserve_agent_that_fails_costs_only_itself_and_the_next_is_asked(tmp_path: Path) -> None:
    failing = scripted("r", [step(fault="error_event")], first_answer="program")
    team = team_config(programmer("p", COUNTING), answerer("g", "Two r's.\nAnswer: 2"), failing,
                       programmer("s", COUNTING), orchestrator=with_reserve(failing, programmer("s", COUNTING)),
                       turn_timeout=30, straggler_grace=60)
    result = run_team(team, tmp_path, QUESTION)
    assert result.status == "completed", result.reason
    trace = records(result)
    assert [r["payload"]["ask"] for r in of_type(trace, "FirstAnswersDisagree")] == ["r", "s"]
    assert [r["payload"]["name"] for r in of_type(trace, "AgentMarkedFailed")] == ["r"]
    decided = of_type(trace, "FirstAnswersDecided")[0]["payload"]
    assert (decided["result"], decided["computed"], decided["winner"]) == ("3", {"3": 2}, "agent1.1")
    assert result.winner == "p"


def test_the_config_names_a_reserve_agent_that_is_no_agent_or_has_nothing_to_wait_for() -> None:
    agents = [{"id": "a", "backend": {"type": "scripted"}}, {"id": "b", "backend": {"type": "scripted"}}]
    with pytest.raises(ConfigError, match="reserve_agents names c, which is not an agent id"):
        validate_data({"agents": agents, "orchestrator": {**deciding(), "reserve_agents": ["c"]}}, "t.yaml")
    with pytest.raises(ConfigError, match="reserve_agents needs after_first_answers: decide"):
        validate_data({"agents": agents, "orchestrator": {"reserve_agents": ["b"]}}, "t.yaml")
    with pytest.raises(ConfigError, match="at least one agent not in reserve"):
        validate_data({"agents": agents, "orchestrator": {**deciding(), "reserve_agents": ["a", "b"]}}, "t.yaml")


def test_agreement_stops_the_run_without_waiting_for_an_answer_that_could_change_nothing(tmp_path: Path) -> None:
    """Two answers that pass the task's examples alike: the third agent's (a slow model) could only agree, or tie
    and lose to the first listed, so the run ends without it, and the trace names it as not waited for."""
    agents = [scripted(agent_id, [step(new_answer=fenced(LOOP))], check_tools=["code_examples"])
              for agent_id in ("a", "b")]
    slow = scripted("c", [step(text="thinking\n"), step(delay=120), step(new_answer=fenced(SUM))],
                    check_tools=["code_examples"])
    result = run_team(team_config(*agents, slow, orchestrator=deciding(), turn_timeout=300), tmp_path, TASK)
    assert result.status == "completed", result.reason
    trace = records(result)
    decided = [r["payload"] for r in of_type(trace, "FirstAnswersDecided")]
    assert [(d["winner"], d["not_waited_for"], d["labels"]) for d in decided] == [
        ("agent1.1", ["c"], ["agent1.1", "agent2.1"])]
    assert sorted(r["payload"]["agent"] for r in of_type(trace, "AnswerAccepted")) == ["a", "b"]
    assert result.winner == "a" and "balance" in (result.final_answer or "")
    assert of_type(trace, "ModelCallStarted")  # c was asked, and its call ended with the run
    projection = LogProjection()
    for record in trace:
        projection.apply(record)
    assert [describe(r, projection) for r in of_type(trace, "FirstAnswersDecided")] == [  # the user is told why
        "the first answers settle it: agent3 not waited for (no answer of theirs could change the result)"]


def test_disagreement_waits_for_the_answer_that_could_change_the_result(tmp_path: Path) -> None:
    """One answer passes, one fails: the third, listed first, could pass with either behaviour, so it is waited
    for (a model a little slower than the others) and every answer is weighed."""
    first = scripted("c", [step(delay=0.5), step(new_answer=fenced(LOOP))], check_tools=["code_examples"])
    agents = [scripted(agent_id, [step(new_answer=fenced(code))], check_tools=["code_examples"])
              for agent_id, code in (("a", LOOP), ("b", SUM))]
    result = run_team(team_config(first, *agents, orchestrator=deciding(), turn_timeout=60), tmp_path, TASK)
    assert result.status == "completed", result.reason
    decided = [r["payload"] for r in of_type(records(result), "FirstAnswersDecided")]
    assert [(d["winner"], d["not_waited_for"], sorted(d["labels"])) for d in decided] == [
        ("agent1.1", [], ["agent1.1", "agent2.1", "agent3.1"])]
    assert result.winner == "c"
