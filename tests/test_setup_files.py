"""The set-up files agree with each other and with the README.

pyproject.toml's dependencies plus its extras test, browser and site, and environment.yml, list the same
packages with the same version ranges (ranges, not pins); the README's two set-up commands
must be there; CI must run the README's test command.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
# The extras CI installs and environment.yml lists (others, e.g. a benchmark's, are optional).
CI_EXTRAS = {"test", "browser", "site"}
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


def split_requirement(text: str) -> tuple[str, str]:
    """'numpy>=1.24,<3' -> ('numpy', '>=1.24,<3'): a normalised name and its range, spaces removed."""
    match = NAME.match(text)
    assert match, f"cannot read the requirement {text!r}"
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    return name, match.group(2).replace(" ", "")


def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def pyproject_requirements() -> dict[str, str]:
    project = pyproject()["project"]
    extras = [project["optional-dependencies"][name] for name in sorted(CI_EXTRAS)]
    reqs = list(project["dependencies"]) + [r for extra in extras for r in extra]
    out = dict(split_requirement(r) for r in reqs)
    assert len(out) == len(reqs), "a package is listed twice in pyproject.toml"
    return out


def environment_dependencies() -> list[str]:
    """The plain ``- spec`` lines under ``dependencies:`` (read by hand: no YAML library needed)."""
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    deps, inside = [], False
    for line in lines:
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped:
            continue
        if not line.startswith((" ", "\t", "-")):  # a top-level key
            inside = stripped == "dependencies:"
            continue
        if inside:
            item = re.match(r"^\s*-\s*(.+)$", stripped)
            assert item, f"environment.yml: unexpected line under dependencies: {line!r}"
            assert not item.group(1).startswith("pip:"), "a pip: section is not read by this test"
            deps.append(item.group(1).strip().strip("'\""))
    return deps


# conda-forge names that differ from PyPI's: conda-forge's "playwright" is the Node.js tool.
CONDA_TO_PYPI = {"playwright-python": "playwright"}


def environment_requirements() -> dict[str, str]:
    out = {CONDA_TO_PYPI.get(name, name): spec
           for name, spec in (split_requirement(d) for d in environment_dependencies())}
    out.pop("pip", None)
    return out


def test_environment_yml_names_the_python_playwright_of_conda_forge():
    names = [split_requirement(d)[0] for d in environment_dependencies()]
    assert "playwright-python" in names and "playwright" not in names


def test_environment_yml_is_read():
    deps = environment_dependencies()
    assert "numpy>=1.24,<3" in [d.replace(" ", "") for d in deps]
    assert any(d.startswith("python") for d in deps)


def test_same_packages_in_pyproject_and_environment_yml():
    env = environment_requirements()
    env.pop("python")
    py = pyproject_requirements()
    assert sorted(env) == sorted(py), (
        f"only in environment.yml: {sorted(set(env) - set(py))}; "
        f"only in pyproject.toml: {sorted(set(py) - set(env))}"
    )


def test_same_version_ranges():
    env, py = environment_requirements(), pyproject_requirements()
    differing = {name: (py[name], env[name]) for name in py if env.get(name) != py[name]}
    assert differing == {}, f"pyproject.toml vs environment.yml: {differing}"


def test_same_python_version():
    requires = pyproject()["project"]["requires-python"].replace(" ", "")
    assert environment_requirements()["python"] == requires


def test_ranges_not_pins():
    for name, spec in pyproject_requirements().items():
        assert "==" not in spec and "~=" not in spec, f"{name} is pinned: {spec}"
        assert ">=" in spec and "<" in spec.replace("<=", ""), (
            f"{name} needs a lower and an upper bound: {spec!r}"
        )


def test_the_checker_catches_a_differing_range(tmp_path, monkeypatch):
    """The comparison has teeth: a copy of the files with one range changed disagrees."""
    (tmp_path / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert "numpy>=1.24,<3" in text
    (tmp_path / "environment.yml").write_text(text.replace("numpy>=1.24,<3", "numpy>=1.26,<3"))
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="numpy"):
        test_same_version_ranges()


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip()]


def test_readme_has_the_two_set_up_commands():
    commands = readme_commands()
    install = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && python -m lessons.l13"
    tests = 'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest'
    assert install in commands
    assert tests in commands


def test_readme_commands_refer_to_things_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "test" in pyproject()["project"]["optional-dependencies"]  # pip install -e ".[test]"
    assert (ROOT / "lessons" / "l13.py").is_file()  # python -m lessons.l13
    assert (ROOT / "lessons" / "run_notebooks.py").is_file()  # python -m lessons.run_notebooks
    env_name = re.search(r"^name:\s*(\S+)", (ROOT / "environment.yml").read_text(), flags=re.M).group(1)
    assert f"conda activate {env_name}" in text
    for script in re.findall(r"python (benchmarks/\S+\.py)", text):
        assert (ROOT / script).is_file(), script
    listed = re.findall(r"`((?:notebooks|solutions)/[^`]+\.ipynb)`", text)
    assert len(listed) >= 9
    missing = [nb for nb in listed if not (ROOT / nb).is_file()]
    assert missing == [], f"the README lists notebooks that do not exist: {missing}"


def ci_commands() -> list[list[str]]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [shlex.split(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]


def ci_extras(command: list[str]) -> set[str]:
    """The extras a ``pip install -e ".[a,b]"`` command installs."""
    spec = next((a for a in command if a.startswith(".[")), "")
    return set(spec[2:-1].split(",")) if spec.endswith("]") else set()


def test_ci_runs_python_m_pytest():
    commands = ci_commands()
    assert ["python", "-m", "pytest"] in [c[:3] for c in commands]
    installs = [c for c in commands if c[:4] == ["python", "-m", "pip", "install"] and "-e" in c]
    # CI installs the tests, the browser check and the site builder: all three are tested.
    assert any(ci_extras(c) >= CI_EXTRAS for c in installs)
    assert CI_EXTRAS <= set(pyproject()["project"]["optional-dependencies"])
    assert os.access(ROOT / ".ci" / "run", os.X_OK)
    pytest_line = next(i for i, c in enumerate(commands) if c[:3] == ["python", "-m", "pytest"])
    install_line = next(i for i, c in enumerate(commands) if "test" in ci_extras(c))
    assert install_line < pytest_line


def test_ci_installs_chromium_from_the_distribution_not_a_playwright_download():
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\S.*\bapt_get_install chromium$", text, flags=re.M)
    assert re.search(r"apt-get install -y -qq \"\$@\"", text)
    assert "playwright install" not in text


def test_pytest_configuration_runs_the_notebooks_under_nbval():
    options = pyproject()["tool"]["pytest"]["ini_options"]
    assert options["testpaths"] == ["tests", "notebooks", "solutions"]
    assert "--nbval" in options["addopts"]
    sanitize = re.search(r"--nbval-sanitize-with\s+(\S+)", options["addopts"]).group(1)
    assert (ROOT / sanitize).is_file()


# ------------------------------------------------------------------ the Chinese edition (issue 13)
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && python -m lessons.l13"
TESTS = 'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest'


def indented_commands(name: str) -> list[str]:
    text = (ROOT / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip()]


def test_chinese_readme_has_the_same_two_set_up_commands():
    english = [c for c in indented_commands("README.md") if c in (INSTALL, TESTS)]
    chinese = [c for c in indented_commands("README.zh-CN.md") if c.startswith("python3 -m venv")]
    assert english == [INSTALL, TESTS]
    assert chinese == english  # the same two commands, character for character, in the same order


def test_the_two_readmes_link_each_other_and_the_chinese_notebooks():
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](README.zh-CN.md)" in english and "](README.md)" in chinese
    assert "](notebooks/zh/)" in chinese and "](notebooks/zh/)" in english
    assert len(re.findall(r"[\u4e00-\u9fff]", chinese)) > 500, "README.zh-CN.md has little Chinese prose"


def test_babel_is_a_test_dependency_and_the_catalogs_are_package_data():
    project = pyproject()
    assert "babel>=2.12,<3" in project["project"]["optional-dependencies"]["test"]
    assert environment_requirements()["babel"] == ">=2.12,<3"
    data = project["tool"]["setuptools"]["package-data"]["lessons"]
    assert "locale/*/LC_MESSAGES/*.mo" in data and "locale/*/LC_MESSAGES/*.po" in data


def test_ci_installs_a_chinese_font_from_the_distribution():
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\S.*\bapt_get_install fonts-noto-cjk$", text, flags=re.M)
    assert "fc-list :lang=zh" in text  # installed only where no font covers Chinese yet
