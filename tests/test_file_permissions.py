"""The one permission check: every way out of the tree is refused, at check time and at open time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from massgen.files import PathDenied, PathGuard, Root
from massgen.files.file_tools import FileOps


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    workspace = tmp_path / "ws"
    context = tmp_path / "project"
    outside = tmp_path / "outside"
    for directory in (workspace, context / "src", context / "secrets", outside):
        directory.mkdir(parents=True)
    (workspace / "notes.txt").write_text("mine\n")
    (context / "src" / "app.py").write_text("print('hi')\n")
    (context / "secrets" / "key.txt").write_text("s3cret\n")
    (outside / "target.txt").write_text("do not touch\n")
    return {"ws": workspace, "ctx": context, "out": outside}


def guard(tree: dict[str, Path], context_writable: bool = False) -> PathGuard:
    return PathGuard(
        Root.make("workspace", tree["ws"], writable=True),
        [Root.make("context:project", tree["ctx"], writable=context_writable, protected=("secrets",))],
    )


def ops(tree: dict[str, Path], context_writable: bool = False) -> FileOps:
    return FileOps(lambda: guard(tree, context_writable))


def denied(tree: dict[str, Path], name: str, context_writable: bool = False, **args: object) -> str:
    with pytest.raises(PathDenied) as caught:
        ops(tree, context_writable).run(name, dict(args))
    return caught.value.reason


def test_relative_paths_live_in_the_workspace_and_context_paths_are_named_absolutely(tree: dict[str, Path]) -> None:
    files = ops(tree)
    assert files.run("read_file", {"path": "notes.txt"}) == "mine\n"
    assert files.run("read_file", {"path": str(tree["ctx"] / "src" / "app.py")}) == "print('hi')\n"
    files.run("write_file", {"path": "deep/new.txt", "content": "x"})
    assert (tree["ws"] / "deep" / "new.txt").read_text() == "x"


@pytest.mark.parametrize("path", ["../outside/target.txt", "deep/../../outside/target.txt", "..", "../ws2"])
def test_dot_dot_cannot_leave_the_workspace(tree: dict[str, Path], path: str) -> None:
    assert "outside the workspace" in denied(tree, "read_file", path=path)


def test_absolute_paths_outside_every_root_are_refused(tree: dict[str, Path]) -> None:
    assert "not inside" in denied(tree, "read_file", path=str(tree["out"] / "target.txt"))
    assert "not inside" in denied(tree, "write_file", path="/etc/massgen-test", content="x")
    assert not Path("/etc/massgen-test").exists()


def test_a_symlink_pointing_outside_is_neither_read_nor_written_through(tree: dict[str, Path]) -> None:
    (tree["ws"] / "link.txt").symlink_to(tree["out"] / "target.txt")
    (tree["ws"] / "linkdir").symlink_to(tree["out"])
    assert "symbolic link" in denied(tree, "read_file", path="link.txt")
    assert "symbolic link" in denied(tree, "write_file", path="link.txt", content="pwned")
    assert "symbolic link" in denied(tree, "write_file", path="linkdir/target.txt", content="pwned")
    assert "symbolic link" in denied(tree, "list_directory", path="linkdir")
    assert (tree["out"] / "target.txt").read_text() == "do not touch\n"


def test_a_symlink_swapped_in_after_the_check_fails_at_open_time(tree: dict[str, Path]) -> None:
    rules = guard(tree)
    checked = rules.check("notes.txt", "write")  # a regular file when checked
    (tree["ws"] / "notes.txt").unlink()
    (tree["ws"] / "notes.txt").symlink_to(tree["out"] / "target.txt")  # the race an attacker wins
    with pytest.raises(PathDenied, match="symbolic link"):
        rules.open_file(checked, write=True)
    assert (tree["out"] / "target.txt").read_text() == "do not touch\n"


def test_a_directory_swapped_for_a_symlink_after_the_check_fails_at_open_time(tree: dict[str, Path]) -> None:
    (tree["ws"] / "sub").mkdir()
    rules = guard(tree)
    checked = rules.check("sub/target.txt", "write")
    (tree["ws"] / "sub").rmdir()
    (tree["ws"] / "sub").symlink_to(tree["out"])
    with pytest.raises(PathDenied):
        rules.open_file(checked, write=True, create=True)
    assert (tree["out"] / "target.txt").read_text() == "do not touch\n"


def test_a_hard_link_to_a_file_outside_is_refused_and_never_truncated(tree: dict[str, Path]) -> None:
    os.link(tree["out"] / "target.txt", tree["ws"] / "hard.txt")
    assert "hard links" in denied(tree, "read_file", path="hard.txt")
    assert "hard links" in denied(tree, "write_file", path="hard.txt", content="")
    # and when the link appears between check and open, the open-time fstat refuses before truncating
    rules = guard(tree)
    checked = rules.check("late.txt", "write")
    os.link(tree["out"] / "target.txt", tree["ws"] / "late.txt")
    with pytest.raises(PathDenied, match="hard links"):
        rules.open_file(checked, write=True, create=True)
    assert (tree["out"] / "target.txt").read_text() == "do not touch\n"


def test_context_paths_are_read_only_during_coordination(tree: dict[str, Path]) -> None:
    app = str(tree["ctx"] / "src" / "app.py")
    reason = denied(tree, "write_file", path=app, content="x")
    assert "only the final presenter may write" in reason
    assert "only the final presenter" in denied(tree, "delete_file", path=app)
    assert "only the final presenter" in denied(tree, "edit_file", path=app, old="hi", new="ho")
    assert (tree["ctx"] / "src" / "app.py").read_text() == "print('hi')\n"


def test_protected_paths_are_never_written_even_with_write_permission_or_case_tricks(tree: dict[str, Path]) -> None:
    files = ops(tree, context_writable=True)
    files.run("edit_file", {"path": str(tree["ctx"] / "src" / "app.py"), "old": "hi", "new": "ho"})
    assert (tree["ctx"] / "src" / "app.py").read_text() == "print('ho')\n"
    for path in ("secrets/key.txt", "SECRETS/key.txt", "Secrets/new.txt", "src/../secrets/key.txt"):
        reason = denied(tree, "write_file", context_writable=True, path=str(tree["ctx"]) + "/" + path, content="x")
        assert "protected" in reason, path
    assert (tree["ctx"] / "secrets" / "key.txt").read_text() == "s3cret\n"


def test_a_root_cannot_be_deleted_or_moved(tree: dict[str, Path]) -> None:
    assert "root directory" in denied(tree, "delete_file", path=".")
    assert "root directory" in denied(tree, "move_file", source=".", destination="x")


def test_listing_a_folder_of_20000_entries_shows_the_first_1000_by_name_with_a_note(tree: dict[str, Path]) -> None:
    # Issue 37: list_directory was uncapped: 20,000 entries put 248,893 characters into the prompt.
    big = tree["ws"] / "big"
    big.mkdir()
    for i in range(20_000):
        (big / f"file_{i:05d}.txt").touch()
    listed = ops(tree).run("list_directory", {"path": "big"}).split("\n")
    assert listed[:2] == ["[FILE] file_00000.txt", "[FILE] file_00001.txt"] and listed[999] == "[FILE] file_00999.txt"
    assert listed[1000] == ("[1,000 of 20,000 entries shown, by name; list a subfolder, or find files with "
                            "search_files and a pattern]")
    assert len(listed) == 1001 and len("\n".join(listed)) < 30_000


def test_the_tools_do_what_their_names_say(tree: dict[str, Path]) -> None:
    files = ops(tree)
    files.run("write_file", {"path": "a/b.txt", "content": "one\ntwo\nthree\n"})
    assert files.run("read_file", {"path": "a/b.txt", "offset": 1, "limit": 1}) == "two\n"
    assert files.run("edit_file", {"path": "a/b.txt", "old": "two", "new": "2"}) == "Edited a/b.txt"
    with pytest.raises(Exception, match="exactly once"):
        files.run("edit_file", {"path": "a/b.txt", "old": "e", "new": "E"})
    assert files.run("list_directory", {"path": "."}) == "[DIR] a\n[FILE] notes.txt"
    assert files.run("search_files", {"pattern": "*.txt"}) == "a/b.txt\nnotes.txt"
    files.run("move_file", {"source": "a/b.txt", "destination": "c/d.txt"})
    assert (tree["ws"] / "c" / "d.txt").read_text() == "one\n2\nthree\n"
    files.run("delete_file", {"path": "c/d.txt"})
    assert not (tree["ws"] / "c" / "d.txt").exists()


def test_a_protected_path_named_through_a_symlink_still_protects(tree: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(tree["ctx"])
    rules = PathGuard(Root.make("workspace", tree["ws"], writable=True),
                      [Root.make("context", tmp_path / "alias", writable=True,
                                 protected=(str(tmp_path / "alias" / "src"),))])
    with pytest.raises(PathDenied, match="protected"):
        rules.check(str(tree["ctx"] / "src" / "app.py"), "write")


def test_a_file_root_grants_that_file_and_a_symlink_swapped_in_for_it_fails_at_open_time(
        tree: dict[str, Path]) -> None:
    # A context path naming one file (issue 37): the file alone, opened with O_NOFOLLOW through its folder.
    granted = tree["ctx"] / "src" / "app.py"
    rules = PathGuard(Root.make("workspace", tree["ws"], writable=True),
                      [Root.make("context:app", granted, writable=True, file=True)])
    files = FileOps(lambda: rules)
    assert files.run("read_file", {"path": str(granted)}) == "print('hi')\n"
    assert files.run("write_file", {"path": str(granted), "content": "print('bye')\n"}).startswith("Wrote 13 bytes")
    for path in (tree["ctx"] / "src", tree["ctx"] / "src" / "other.py", granted / "below"):
        with pytest.raises(PathDenied):
            rules.check(str(path), "read")
    checked = rules.check(str(granted), "write", may_be_root="file")  # a regular file when checked
    granted.unlink()
    granted.symlink_to(tree["out"] / "target.txt")  # the race an attacker wins
    with pytest.raises(PathDenied, match="symbolic link"):
        rules.open_file(checked, write=True)
    assert (tree["out"] / "target.txt").read_text() == "do not touch\n"
