"""gravfm.provenance: the git revision, dirty state and machine a benchmark's results record."""

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import gravfm
from gravfm import provenance as prov

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder, *arguments):
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
                           "-c", "commit.gpgsign=false", *arguments], cwd=folder, check=True,
                          capture_output=True, text=True, timeout=10).stdout.strip()


@pytest.fixture
def no_repository_above(tmp_path, monkeypatch):
    """git must not find a repository above ``tmp_path`` (were /tmp inside one)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return tmp_path


@pytest.fixture
def checkout(no_repository_above):
    """A one-commit repository shaped like gravfm's: package, benchmarks, results, pyproject."""
    root = no_repository_above / "checkout"
    for name in ("gravfm/__init__.py", "benchmarks/bench_x.py", "benchmarks/results/x.json", "pyproject.toml",
                 "docs/notes.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("original\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    return root


@needs_git
def test_revision_is_head_of_the_checkout_gravfm_is_imported_from(checkout, monkeypatch):
    # A checkout of our own: CI runs the suite on a copy of the tracked files, without .git.
    monkeypatch.setattr(prov, "PACKAGE_PARENT", checkout)
    record = prov.provenance()
    assert re.fullmatch(r"[0-9a-f]{40}", record["git_revision"])
    assert record["git_revision"] == git(checkout, "rev-parse", "HEAD")
    assert isinstance(record["git_dirty"], bool)
    assert "git_note" not in record
    assert record["version"] == gravfm.__version__
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["time_utc"])
    assert set(record["machine"]) == {"cpus", "python", "platform", "load_average"}


@needs_git
def test_dirty_means_changed_tracked_code_not_results_or_new_files(checkout):
    state = prov.git_state(checkout)
    assert state == {"git_revision": git(checkout, "rev-parse", "HEAD"), "git_dirty": False}
    (checkout / "benchmarks/results/x.json").write_text("a benchmark wrote this\n")
    (checkout / "docs/notes.md").write_text("edited\n")
    (checkout / "gravfm/untracked.py").write_text("new\n")
    assert prov.git_state(checkout)["git_dirty"] is False
    (checkout / "benchmarks/bench_x.py").write_text("edited\n")
    assert prov.git_state(checkout)["git_dirty"] is True
    git(checkout, "checkout", "--", "benchmarks/bench_x.py")
    (checkout / "pyproject.toml").write_text("edited\n")
    assert prov.git_state(checkout)["git_dirty"] is True
    git(checkout, "checkout", "--", "pyproject.toml")
    (checkout / "gravfm/__init__.py").write_text("edited\n")
    assert prov.git_state(checkout)["git_dirty"] is True


def test_outside_a_repository_the_revision_is_none_with_a_note(no_repository_above, monkeypatch):
    (no_repository_above / "gravfm").mkdir()
    (no_repository_above / "gravfm/__init__.py").write_text("")
    monkeypatch.setattr(prov, "PACKAGE_PARENT", no_repository_above)  # as if installed from an sdist
    record = prov.provenance()
    assert record["git_revision"] is None and record["git_dirty"] is None
    assert record["git_note"]
    assert record["machine"]["cpus"] == prov.machine()["cpus"]


@needs_git
def test_a_package_inside_someone_elses_repository_has_no_revision(checkout):
    site = checkout / "venv/site-packages"          # an installed copy, untracked
    (site / "gravfm").mkdir(parents=True)
    (site / "gravfm/__init__.py").write_text("")
    state = prov.git_state(site)
    assert state["git_revision"] is None and state["git_dirty"] is None
    assert "no git checkout" in state["git_note"]


def test_without_git_the_revision_is_none_and_nothing_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))          # no git on PATH
    state = prov.git_state(Path(gravfm.__file__).resolve().parent.parent)
    assert state["git_revision"] is None and state["git_dirty"] is None
    assert "not installed" in state["git_note"]
    assert prov.git_state(tmp_path / "missing")["git_revision"] is None


def test_write_results_round_trips_and_keeps_the_callers_keys(tmp_path):
    document = {"benchmark": "x", "results": [1, 2.5, None], "nested": {"a": [True]}}
    path = tmp_path / "new_folder" / "out.json"
    stream = io.StringIO()
    final = prov.write_results(document, path, stream=stream)
    text = path.read_text()
    assert text.endswith("}\n") and stream.getvalue() == text
    assert json.loads(text) == final
    assert "provenance" not in document                          # the caller's dict is not modified
    assert {k: final[k] for k in document} == document
    assert set(final["provenance"]) >= {"git_revision", "git_dirty", "version", "time_utc", "command", "machine"}
    assert list(final)[-1] == "provenance"
    assert not list(tmp_path.glob("new_folder/*.partial"))

    own = {"benchmark": "y", "provenance": {"git_revision": "given by the caller"}}
    again = prov.write_results(own, path, stream=None)
    assert again == {"schema_version": prov.SCHEMA_VERSION, **own} and json.loads(path.read_text()) == again


def test_write_results_prints_to_stdout_by_default(capsys):
    final = prov.write_results({"a": 1})
    assert json.loads(capsys.readouterr().out) == final


def test_arguments_are_json_safe():
    import argparse
    namespace = argparse.Namespace(out=Path("x/y.json"), pes=(1, 4), seeds=[1], cache=None, ratio=0.5,
                                   flag=True, table={1: {"a"}})
    assert prov.arguments(namespace) == {"out": "x/y.json", "pes": [1, 4], "seeds": [1], "cache": None,
                                         "ratio": 0.5, "flag": True, "table": {"1": "{'a'}"}}
    json.dumps(prov.arguments(namespace))
