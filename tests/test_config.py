"""Config errors name the file, the key path and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from massgen.configs import ConfigError, list_examples, load_config, resolve_config_path


def write(tmp_path: Path, text: str, name: str = "team.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


GOOD_AGENT = "  - id: a\n    backend: {type: scripted}\n"


def test_every_shipped_example_is_valid() -> None:
    names = list_examples()
    assert "basic/scripted_three_agents" in names
    for name in names:
        config, _ = load_config(f"@examples/{name}", env={})
        assert config.agents


def test_unknown_keys_are_errors_with_their_path(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: a\n    backend: {type: scripted, temprature: 0.5}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert path in message and "agents[0].backend.temprature: unknown key" in message


def test_wrong_types_say_what_was_expected(tmp_path: Path) -> None:
    path = write(tmp_path, f"agents:\n{GOOD_AGENT}timeout_settings: {{orchestrator_timeout_seconds: soon}}\n")
    with pytest.raises(ConfigError, match=r"timeout_settings\.orchestrator_timeout_seconds: .*valid number"):
        load_config(path)


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_a_number_that_is_not_finite_is_an_error_naming_its_field(tmp_path: Path, value: str) -> None:
    # An infinite deadline would be none; NaN compares false with every bound a field sets.
    path = write(tmp_path, f"agents:\n  - id: a\n    backend: {{type: scripted, temperature: 0.5}}\n"
                           f"timeout_settings: {{orchestrator_timeout_seconds: {value}}}\n")
    with pytest.raises(ConfigError, match=r"timeout_settings\.orchestrator_timeout_seconds: .*finite number"):
        load_config(path)
    inside = write(tmp_path, f"agents:\n  - id: a\n    backend: {{type: scripted, temperature: {value}}}\n", "b.yaml")
    with pytest.raises(ConfigError, match=r"agents\[0\]\.backend\.temperature: .*finite number"):
        load_config(inside)


def test_a_directory_or_a_missing_absolute_path_is_said_as_it_is(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r": is a directory, not a config file \(give a YAML file\)$"):
        load_config(str(tmp_path))
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError) as err:
        load_config(str(missing))
    assert str(err.value) == f"config file not found: {missing}"  # no "(nor ...)" naming the same path again


def test_duplicate_agent_ids_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, f"agents:\n{GOOD_AGENT}{GOOD_AGENT}")
    with pytest.raises(ConfigError, match="duplicate agent id 'a'"):
        load_config(path)


def test_unknown_backend_type_lists_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "agents:\n  - id: a\n    backend: {type: gpt}\n")
    expected = r"agents\[0\]\.backend: unknown backend type 'gpt'; expected one of: .*scripted"
    with pytest.raises(ConfigError, match=expected):
        load_config(path)


def test_a_single_agent_key_is_accepted(tmp_path: Path) -> None:
    config, _ = load_config(write(tmp_path, "agent:\n  id: solo\n  backend: {type: scripted}\n"))
    assert [a.id for a in config.agents] == ["solo"]


def test_env_vars_are_expanded_and_a_missing_one_is_named(tmp_path: Path) -> None:
    text = "agents:\n  - id: a\n    backend: {type: openai, model: m, api_key: '${MY_KEY}'}\n"
    config, _ = load_config(write(tmp_path, text), env={"MY_KEY": "sk-test"})
    assert config.agents[0].backend.api_key == "sk-test"
    assert config.redacted()["agents"][0]["backend"]["api_key"] == "***"
    missing = r"agents\[0\]\.backend\.api_key: environment variable \$\{MY_KEY\} is not set"
    with pytest.raises(ConfigError, match=missing):
        load_config(write(tmp_path, text, "other.yaml"), env={})


def test_invalid_yaml_and_missing_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "agents: [\n"))
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(str(tmp_path / "nope.yaml"))


def test_example_names_resolve_exactly_and_ambiguity_lists_candidates(tmp_path: Path) -> None:
    assert resolve_config_path("@examples/basic/scripted_three_agents").name == "scripted_three_agents.yaml"
    assert resolve_config_path("@examples/scripted_three_agents").name == "scripted_three_agents.yaml"
    for folder in ("basic", "faults"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "team.yaml").write_text(f"agents:\n{GOOD_AGENT}")
    assert resolve_config_path("@examples/basic/team", tmp_path) == tmp_path / "basic" / "team.yaml"
    with pytest.raises(ConfigError) as err:
        resolve_config_path("@examples/team", tmp_path)
    assert "ambiguous" in str(err.value)
    assert "@examples/basic/team, @examples/faults/team" in str(err.value)
    with pytest.raises(ConfigError, match="no example named @examples/nothing"):
        resolve_config_path("@examples/nothing")


def test_script_steps_need_exactly_one_action(tmp_path: Path) -> None:
    text = "agents:\n  - id: a\n    backend:\n      type: scripted\n      script: [[{text: hi, vote: agent1}]]\n"
    with pytest.raises(ConfigError, match=r"script\[0\]\[0\]: a script step needs exactly one of"):
        load_config(write(tmp_path, text))


def test_every_package_and_example_folder_is_in_the_wheel() -> None:
    """A folder missing from pyproject's package list works editable and breaks in a wheel."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(project["packages"])
    roots = {name: Path(folder) for name, folder in project["package-dir"].items()}
    for name, folder in roots.items():
        for init in (root / folder).rglob("__init__.py"):
            package = ".".join([name, *init.parent.relative_to(root / folder).parts])
            assert package in listed, f"{package} is not in [tool.setuptools] packages"
    examples = root / "configs" / "examples"
    for folder in examples.rglob("*"):
        if folder.is_dir():
            assert ".".join(["massgen.configs.examples", *folder.relative_to(examples).parts]) in listed
