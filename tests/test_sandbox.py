"""run_command in real bubblewrap: no network, writes only in the workspace, dead at its deadline."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from pathlib import Path

import psutil
import pytest
from support import FACTOR, of_type, records, run_team, scripted, step, team_config, unavailable

from massgen.files.sandbox import (
    COMMAND_SCRATCH_BYTES,
    CommandResult,
    bwrap_argv,
    docker_argv,
    run_command,
    scratch_sizes,
)

if shutil.which("bwrap") is None:
    unavailable("bubblewrap (bwrap) is not installed (Debian package bubblewrap)", module=True)


def sandboxed(command: str, workspace: Path, read_only: tuple[Path, ...] = (), timeout_s: float = 20.0,
              hidden: tuple[Path, ...] = ()) -> CommandResult:
    return asyncio.run(run_command(command, mode="sandbox", workspace=workspace, read_only=read_only,
                                   timeout_s=timeout_s, hidden=hidden))


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("ws", "ctx", "outside")}
    for path in found.values():
        path.mkdir()
    (found["ctx"] / "data.txt").write_text("context\n")
    (found["outside"] / "secret.txt").write_text("secret\n")
    return found




PROBE = "import socket,sys\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=2)\n print('CONNECTED')\n" \
        "except OSError as e:\n print('NO NETWORK', e)\n"


def test_the_command_runs_in_the_workspace_and_can_write_there(dirs: dict[str, Path]) -> None:
    result = sandboxed("pwd; echo made > out.txt; cat out.txt", dirs["ws"])
    assert result.exit_code == 0 and not result.timed_out
    assert result.output.splitlines() == [str(dirs["ws"]), "made"]
    assert (dirs["ws"] / "out.txt").read_text() == "made\n"


def test_the_command_cannot_reach_the_network_not_even_the_hosts_loopback(dirs: dict[str, Path],
                                                                          listener: int) -> None:
    probe = PROBE.format(port=listener)
    on_host = subprocess_output(["python3", "-c", probe])
    assert on_host.startswith("CONNECTED")  # the server is reachable outside the sandbox
    (dirs["ws"] / "probe.py").write_text(probe)
    result = sandboxed("python3 probe.py", dirs["ws"])
    assert result.output.startswith("NO NETWORK"), result.output


def subprocess_output(argv: list[str]) -> str:
    import subprocess

    return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout


def test_the_command_cannot_write_outside_its_workspace(dirs: dict[str, Path]) -> None:
    script = (f"echo x > {dirs['ctx']}/data.txt; echo x > {dirs['ctx']}/new.txt; echo x > /usr/pwned; "
              f"cat {dirs['outside']}/secret.txt; echo x > {dirs['outside']}/secret.txt; cat {dirs['ctx']}/data.txt")
    result = sandboxed(script, dirs["ws"], read_only=(dirs["ctx"],))
    assert result.output.count("Read-only file system") == 3, result.output
    assert "secret" not in result.output.replace("secret.txt", "")  # the rest of the host is not there
    assert result.output.rstrip().endswith("context")  # context paths are readable
    assert (dirs["ctx"] / "data.txt").read_text() == "context\n"
    assert not (dirs["ctx"] / "new.txt").exists() and not Path("/usr/pwned").exists()
    assert (dirs["outside"] / "secret.txt").read_text() == "secret\n"


def test_run_state_inside_a_context_path_is_hidden(dirs: dict[str, Path]) -> None:
    state = dirs["ctx"] / ".massgen"
    state.mkdir()
    (state / "trace.jsonl").write_text("private\n")
    result = sandboxed(f"ls -a {state}; cat {dirs['ctx']}/data.txt", dirs["ws"], read_only=(dirs["ctx"],),
                       hidden=(state,))
    assert "trace.jsonl" not in result.output and "context" in result.output


def test_the_command_and_its_children_are_killed_at_the_deadline(dirs: dict[str, Path]) -> None:
    before = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    # A duration no other process on the machine has (another checkout's suite may be at this test too).
    nap = f"300.{os.getpid()}{time.monotonic_ns() % 10_000}"
    result = sandboxed(f"sleep {nap} & sleep {nap}; echo never", dirs["ws"], timeout_s=1.0)
    assert result.timed_out and result.exit_code is None and "never" not in result.output
    assert "killed at the deadline" in result.text()
    left = [p for p in psutil.Process(os.getpid()).children(recursive=True)
            if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE]
    assert left == []
    assert not [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", nap]]


def test_output_is_capped(dirs: dict[str, Path]) -> None:
    result = sandboxed("yes massgen | head -c 1000000", dirs["ws"])
    assert result.truncated and len(result.output) == 64 * 1024


def test_a_command_flooding_its_output_past_the_deadline_returns_the_capped_output_at_the_deadline(
    dirs: dict[str, Path],
) -> None:
    # Issue 37: `yes | head -c 1000000000` with an 8 s limit came back after 13.1 s as the error
    # "run_command: " (the reap waited for a pipe nobody read, then raised an empty TimeoutError).
    started = time.monotonic()
    result = sandboxed("yes | head -c 100000000000", dirs["ws"], timeout_s=2.0)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.truncated and len(result.output) == 64 * 1024
    assert result.text().startswith("[killed at the deadline]\ny\ny\n")
    assert result.text().endswith("[output cut at 65536 bytes]")
    assert elapsed < 2.0 + 2.0 * FACTOR, f"returned {elapsed:.1f} s after a 2 s deadline"


def test_an_agent_runs_a_command_through_its_tools_in_a_team_run(tmp_path: Path) -> None:
    a = scripted("a", [step(tool="run_command", args={"command": "echo $((2+2)) > r.txt; cat r.txt"})],
                 [step(new_answer="{last_tool_result}")])
    config = team_config(a, orchestrator={"command_execution": "sandbox", "command_timeout_seconds": 20})
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "[exit code 0]\n4"
    assert (tmp_path / "workspaces" / result.run_id / "a" / "r.txt").read_text() == "4\n"
    calls = [r["payload"] for r in of_type(records(result), "ToolCallResult")]
    assert [c["name"] for c in calls] == ["run_command"] and not calls[0]["is_error"]


def test_a_context_path_naming_a_file_binds_that_file_alone_into_the_sandbox(tmp_path: Path) -> None:
    # Issue 37/38: a context path naming a file grants that file, never its folder: run_command sees
    # the file (read-only) and nothing beside it.
    folder = tmp_path / "etc"
    folder.mkdir(mode=0o755)
    (folder / "hostname").write_text("box\n")
    (folder / "hostname").chmod(0o644)
    (folder / "shadow").write_text("secret\n")
    (folder / "shadow").chmod(0o644)
    tmp_path.chmod(0o755)  # run as root, bubblewrap enters it before dropping to nobody
    script = f"cat {folder}/hostname; ls -a {folder}; cat {folder}/shadow; echo x > {folder}/hostname"
    a = scripted("a", [step(tool="run_command", args={"command": script})], [step(new_answer="{last_tool_result}")])
    config = team_config(a, orchestrator={"command_execution": "sandbox", "command_timeout_seconds": 20,
                                          "context_paths": [{"path": str(folder / "hostname")}]})
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    output = result.final_answer or ""
    assert output.startswith("[exit code 2]\nbox\n.\n..\nhostname\n"), output  # the folder holds the file alone
    assert "secret" not in output and "shadow: No such file or directory" in output
    assert "Read-only file system" in output and (folder / "hostname").read_text() == "box\n"


def test_a_command_running_longer_than_the_idle_deadline_is_not_cut_as_idle(tmp_path: Path) -> None:
    # Issue 37: a 150 s run scaled the idle deadline down to 15 s, and `sleep 20; echo done` under
    # `command_timeout_seconds: 60` was cut three times, ran four times, and the run exited 2.
    # A running command is not idleness: its own deadline bounds it.
    a = scripted("a", [step(tool="run_command", args={"command": "sleep 3; echo done"})],
                 [step(new_answer="{last_tool_result}")])
    config = team_config(a, orchestrator={"command_execution": "sandbox", "command_timeout_seconds": 30 * FACTOR},
                         idle_timeout=1.0, turn_timeout=40.0, run_timeout=60.0)
    result = run_team(config, tmp_path)
    assert result.status == "completed", result.reason
    assert result.final_answer == "[exit code 0]\ndone"
    trace = records(result)
    assert not of_type(trace, "DeadlineExpired", "ChildFailed")
    assert len(of_type(trace, "ToolCallRequested")) == 1  # run once, not once per restart


def test_the_docker_command_has_the_same_shape_without_network(dirs: dict[str, Path]) -> None:
    # No Docker engine is reachable on these machines: only the command line is checked here.
    argv = docker_argv("make test", dirs["ws"], (dirs["ctx"],), "massgen-cmd-1", 60)
    assert argv[:3] == ["docker", "run", "--rm"] and argv[-3:] == ["/bin/sh", "-c", "make test"]
    assert argv[argv.index("--network") + 1] == "none" and argv[argv.index("--name") + 1] == "massgen-cmd-1"
    mounts = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-v"]
    assert mounts == [f"{dirs['ws']}:{dirs['ws']}", f"{dirs['ctx']}:{dirs['ctx']}:ro"]
    assert argv[argv.index("-w") + 1] == str(dirs["ws"]) and "cpu=60" in argv
    # never the image's root, which is the host's root on the mounts: the caller, or nobody run as root
    caller = "65534:65534" if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}"
    assert argv[argv.index("--user") + 1] == caller and argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "1000:100" in docker_argv("true", dirs["ws"], (), "n", 1, user=(1000, 100))


# -- who the command is outside: run as root, the host's nobody; run as a user, that user ------------------------

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="massgen run as root: these machines and CI run so")


def host_status(output: str) -> dict[str, str]:
    """The lines of /proc/self/status the command printed, by field."""
    fields = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")
    return {k: v.strip() for k, _, v in (line.partition(":") for line in output.splitlines()) if k in fields}


@as_root
def test_run_as_root_a_root_only_file_the_command_can_see_stays_unreadable(dirs: dict[str, Path]) -> None:
    secret = dirs["ctx"] / "root-only.txt"
    secret.write_text("topsecret\n")
    secret.chmod(0o600)
    shadow = Path("/etc/shadow")  # root:shadow 0640, mounted in on purpose
    script = (f"cat {secret}; cat {shadow}; cat {dirs['ctx']}/data.txt; id -un; touch made.txt; "
              "cat /proc/self/status; "  # no user namespace: these are the host's own ids
              f"unshare -r sh -c 'echo nested uid $(id -u); cat {secret}'")
    result = sandboxed(script, dirs["ws"], read_only=(dirs["ctx"], shadow))
    assert "topsecret" not in result.output and "root:" not in result.output, result.output
    assert f"cat: {secret}: Permission denied" in result.output
    assert f"cat: {shadow}: Permission denied" in result.output
    assert "context" in result.output.splitlines() and "nobody" in result.output.splitlines()
    status = host_status(result.output)
    assert status["Uid"].split() == ["65534"] * 4 and status["Gid"].split() == ["65534"] * 4, status
    assert status["Groups"] == "", status  # no supplementary groups: not root's (shadow, ...)
    assert {status[c] for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
    assert status["NoNewPrivs"] == "1"  # a setuid program would not run as its owner
    # no user namespace of its own either (root there, it could mount past every limit: files/seccomp.py)
    assert "nested uid" not in result.output and "unshare failed: Operation not permitted" in result.output
    made = (dirs["ws"] / "made.txt").stat()
    assert (made.st_uid, made.st_gid) == (65534, 65534)  # what it writes is the host's nobody's, not root's


@as_root
def test_run_as_root_the_host_sees_the_command_as_nobody_without_capabilities(dirs: dict[str, Path]) -> None:
    fifo = dirs["ws"] / "wait"
    os.mkfifo(fifo)  # the command blocks reading it; opening it here returns once the command has it open
    seen: dict[str, object] = {}

    def look_from_the_host() -> None:
        with open(fifo, "w") as writer:
            readers = [p for p in psutil.Process(os.getpid()).children(recursive=True)
                       if p.cmdline() == ["cat", "wait"]]
            seen["uids"] = [tuple(p.uids()) for p in readers]
            seen["gids"] = [tuple(p.gids()) for p in readers]
            seen["capeff"] = [Path(f"/proc/{p.pid}/status").read_text().split("CapEff:")[1].split()[0]
                              for p in readers]
            writer.write("go\n")

    host = threading.Thread(target=look_from_the_host, daemon=True)  # stuck in open if the command never reads
    host.start()
    result = sandboxed("cat wait", dirs["ws"])
    host.join(20)
    assert result.output == "go\n" and result.exit_code == 0, result.output
    assert seen["uids"] == [(65534, 65534, 65534)] and seen["gids"] == [(65534, 65534, 65534)], seen
    assert seen["capeff"] == ["0000000000000000"]


@as_root
def test_run_as_root_the_command_changes_what_massgen_wrote_in_the_workspace(dirs: dict[str, Path]) -> None:
    (dirs["ws"] / "sub").mkdir()
    (dirs["ws"] / "sub" / "notes.txt").write_text("by massgen\n")  # as root, like the file tools
    kept = dirs["outside"] / "kept.txt"
    kept.write_text("root's\n")
    os.link(kept, dirs["ws"] / "linked.txt")  # a second name of a root file: never given away
    (dirs["ws"] / "to-secret").symlink_to(dirs["outside"] / "secret.txt")
    script = "echo by the agent >> sub/notes.txt; echo new > sub/new.txt; echo x >> linked.txt; ls -n"
    result = sandboxed(script, dirs["ws"])
    assert (dirs["ws"] / "sub" / "notes.txt").read_text() == "by massgen\nby the agent\n"
    assert (dirs["ws"] / "sub" / "new.txt").read_text() == "new\n"
    assert "linked.txt: Permission denied" in result.output, result.output
    assert kept.read_text() == "root's\n" and kept.stat().st_uid == 0
    assert (dirs["outside"] / "secret.txt").stat().st_uid == 0  # the link itself was handed over, not its target
    for path in (dirs["ws"], dirs["ws"] / "sub", dirs["ws"] / "sub" / "notes.txt"):
        assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534), path
    assert os.lstat(dirs["ws"] / "to-secret").st_uid == 65534


# Where a command might write besides its workspace: each place's size in KiB (df), then whether a file can be made.
SCRATCH = ("df -k /tmp /dev/shm | tail -n 2 | while read -r _ size _; do echo size $size; done; "
           "for place in /tmp /dev/shm /dev / .; do "
           "touch \"$place/made-here\" 2>/dev/null && echo made $place || echo refused $place; done")


def check_scratch(output: str) -> None:
    tmp, shm = scratch_sizes(COMMAND_SCRATCH_BYTES)
    lines = output.splitlines()
    assert lines[:2] == [f"size {tmp // 1024}", f"size {shm // 1024}"], output  # memory, of a fixed size
    assert lines[2:4] == ["made /tmp", "made /dev/shm"], output
    assert [line.split()[0] for line in lines[4:]] == ["refused", "refused", "made"], output


def test_a_commands_scratch_is_memory_of_a_fixed_size_and_the_rest_but_its_workspace_is_read_only(
        dirs: dict[str, Path]) -> None:
    result = sandboxed(SCRATCH, dirs["ws"])
    check_scratch(result.output)
    assert (dirs["ws"] / "made-here").exists()


def test_as_a_user_a_commands_scratch_is_memory_of_a_fixed_size_and_the_rest_read_only() -> None:
    """Run as a normal user, bubblewrap's own tmpfs (the root, /dev) belong to the sandbox's user: read-only too."""
    if os.geteuid() != 0:
        check_scratch(sandboxed(SCRATCH, Path.cwd()).output)
        return
    output, _ = as_a_user(4242, SCRATCH)
    if "setting up uid map" in output or "No permissions to create" in output:
        unavailable(f"unprivileged user namespaces are disabled on this kernel: {output.strip()}")
    check_scratch(output)


def test_run_as_a_user_the_command_is_that_user_outside(tmp_path: Path) -> None:
    """The path every non-root user takes: a user namespace mapping nobody to the caller (here uid 4242)."""
    script = "id -u; touch made.txt; unshare -r true 2>/dev/null && echo nested || echo no nested"
    if os.geteuid() != 0:  # already a user: this very process is the caller
        caller = os.getuid()
        output, owner = sandboxed(script, tmp_path).output, (tmp_path / "made.txt").stat().st_uid
    else:
        caller = 4242
        output, owner = as_a_user(caller, script)
    if "setting up uid map" in output or "No permissions to create" in output:
        unavailable(f"unprivileged user namespaces are disabled on this kernel: {output.strip()}")
    assert output.splitlines() == ["65534", "no nested"], output  # nobody, no user namespace of its own
    assert owner == caller  # nobody inside is the caller outside


def as_a_user(uid: int, script: str) -> tuple[str, int | None]:
    """Run as root: the command line run_command builds for a user, run by user ``uid``; its output and
    the owner of the ``made.txt`` it makes."""
    import subprocess
    import tempfile

    if shutil.which("setpriv") is None:
        unavailable("setpriv (util-linux) is not installed")
    top = Path(tempfile.mkdtemp(prefix="massgen-user-sandbox-"))  # not under root's 0700 pytest folder
    try:
        os.chmod(top, 0o755)
        workspace = top / "ws"
        workspace.mkdir()
        os.chown(workspace, uid, uid)
        drop = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "--inh-caps=-all", "--"]
        ran = subprocess.run([*drop, *bwrap_argv(script, workspace, (), as_root=False)], capture_output=True,
                             text=True, timeout=60)
        made = workspace / "made.txt"
        return ran.stdout + ran.stderr, made.stat().st_uid if made.exists() else None
    finally:
        shutil.rmtree(top)
