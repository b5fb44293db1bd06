"""The build cache repairs itself and is shared safely.

Every kind of damage to an entry is found on use and the entry rebuilt (saying so); a product
that crashes at start is rebuilt once, never in a loop; builders of one key build it once; an
unusable cache folder is one line and exit 2 before any work. A cheap fake builder (a shell
script standing in for the simulator) replaces Verilator.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gravfm.errors import CacheError
from gravfm.sim.build_cache import MANIFEST, BuildCache, check_cache_root
from gravfm.sim.verilator_build import start_problem

REPOSITORY = Path(__file__).resolve().parents[1]

# Started without arguments, like the harness: prints its usage and exits with status 2.
GOOD = b"#!/bin/sh\n# a stand-in for the compiled simulator" + b"." * 200 + b"\nexit 2\n"
CRASHING = b"#!/bin/sh\nkill -SEGV $$\n"
NOT_A_PROGRAM = b"\x7fELF" + b"\0" * 60


class Builder:
    """Writes ``content`` as the executable ``product``; counts its builds."""

    def __init__(self, content=GOOD):
        self.content, self.builds = content, 0

    def __call__(self, folder):
        self.builds += 1
        product = folder / "product"
        product.write_bytes(self.content)
        product.chmod(0o755)


def make(cache, builder, messages):
    return cache.make("kind", "key", "product", builder, check=start_problem, log=messages.append,
                      info={"tool": "sh"})


def replace_product(entry, content):
    """Put ``content`` in the product and make the manifest agree (damage the manifest cannot see)."""
    (entry / "product").write_bytes(content)
    manifest = json.loads((entry / MANIFEST).read_text())
    manifest.update(size=len(content), sha256=hashlib.sha256(content).hexdigest())
    (entry / MANIFEST).write_text(json.dumps(manifest))


def edit_manifest(entry, **changes):
    manifest = json.loads((entry / MANIFEST).read_text())
    manifest.update(changes)
    (entry / MANIFEST).write_text(json.dumps(manifest))


DAMAGE = {
    "truncated": (lambda e: (e / "product").write_bytes(GOOD[:len(GOOD) // 2]), f"has {len(GOOD) // 2} bytes, manifest says {len(GOOD)}"),
    "empty": (lambda e: (e / "product").write_bytes(b""), "has 0 bytes"),
    "not executable": (lambda e: (e / "product").chmod(0o644), "is not executable"),
    "same size, other bytes": (lambda e: (e / "product").write_bytes(GOOD.replace(b"exit 2", b"exit 3")),
                               "checksum differs"),
    "binary deleted, folder left": (lambda e: (e / "product").unlink(), "product missing"),
    "manifest missing": (lambda e: (e / MANIFEST).unlink(), "no manifest"),
    "manifest corrupt": (lambda e: (e / MANIFEST).write_text('{"format": 1, "kind": '), "unreadable manifest"),
    "manifest of another key": (lambda e: edit_manifest(e, key="other"), "manifest of another build"),
    "crashes at start": (lambda e: replace_product(e, CRASHING), "crashes at start (SIGSEGV)"),
    "exec format error": (lambda e: replace_product(e, NOT_A_PROGRAM), "cannot be started (Exec format error)"),
    "entry is a file": (lambda e: (shutil.rmtree(e), e.write_text("x")), "unreadable manifest"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damaged_entry_is_found_and_rebuilt(damage, tmp_path):
    cache, builder, messages = BuildCache(tmp_path), Builder(), []
    path, cached = make(cache, builder, messages)
    assert not cached and messages == []
    assert json.loads((path.parent / MANIFEST).read_text())["info"] == {"tool": "sh"}

    spoil, reason = DAMAGE[damage]
    spoil(cache.path("kind", "key"))
    rebuilt, cached = make(cache, builder, messages)
    assert not cached and builder.builds == 2
    assert len(messages) == 1 and "is damaged (" in messages[0] and "rebuilding" in messages[0]
    assert reason in messages[0]
    assert rebuilt == path and rebuilt.read_bytes() == GOOD and os.access(rebuilt, os.X_OK)
    # Repaired for good: served from the cache, and nothing moved aside is left over.
    assert make(cache, builder, messages) == (path, True) and builder.builds == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kind-key.lock", "kind-key"]


def test_new_build_that_crashes_is_an_error_not_a_loop(tmp_path):
    cache, messages = BuildCache(tmp_path), []
    crashing = Builder(CRASHING)
    with pytest.raises(RuntimeError, match=r"product crashes at start \(SIGSEGV\)"):
        make(cache, crashing, messages)
    assert crashing.builds == 1
    assert [p.name for p in tmp_path.iterdir()] == [".kind-key.lock"]


def test_cached_product_that_crashes_is_rebuilt_once(tmp_path):
    cache, messages = BuildCache(tmp_path), []
    make(cache, Builder(), messages)
    replace_product(cache.path("kind", "key"), CRASHING)
    # The build itself is broken: one rebuild, which fails, and the damaged entry is gone.
    crashing = Builder(CRASHING)
    with pytest.raises(RuntimeError, match="crashes at start"):
        make(cache, crashing, messages)
    assert crashing.builds == 1 and len(messages) == 1 and "crashes at start" in messages[0]
    assert [p.name for p in tmp_path.iterdir()] == [".kind-key.lock"]


def test_work_folders_of_killed_builds_are_removed(tmp_path):
    cache = BuildCache(tmp_path)
    for stale in (".kind-key-x1y2z3", ".kind-key-damaged-abc"):
        (tmp_path / stale / "obj").mkdir(parents=True)
    (tmp_path / ".kind-other-x1y2z3").mkdir()  # another key's build, maybe running: left alone
    make(cache, Builder(), [])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kind-key.lock", ".kind-other-x1y2z3", "kind-key"]


WORKER = """
import sys, time
from pathlib import Path
from gravfm.sim.build_cache import BuildCache

root, gate = sys.argv[1], Path(sys.argv[2])

def builder(folder):
    with open(gate / "builds", "a") as builds:
        builds.write("one build\\n")
    (gate / "building").touch()
    deadline = time.monotonic() + 60
    while not (gate / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    (folder / "product").write_text("built")

path, cached = BuildCache(root).make("kind", "shared", "product", builder,
                                     log=lambda message: print(message, file=sys.stderr, flush=True))
print("cached" if cached else "built", path)
"""


def wait_for(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_concurrent_builders_of_one_key_build_once(tmp_path):
    root, gate = tmp_path / "cache", tmp_path / "gate"
    gate.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY))

    def start(name):
        with open(gate / f"{name}.err", "w") as log:
            return subprocess.Popen([sys.executable, "-c", WORKER, str(root), str(gate)], env=env,
                                    stdout=subprocess.PIPE, stderr=log, text=True)

    first = start("first")
    wait_for((gate / "building").exists, "the first builder to start")
    second = start("second")
    # The second process sees the build under way, says so and waits for it.
    wait_for(lambda: "waiting for another process building kind-shared" in (gate / "second.err").read_text(),
             "the second builder to wait")
    (gate / "release").touch()
    outputs = [process.communicate(timeout=60)[0].split() for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0]
    assert outputs == [["built", str(root / "kind-shared" / "product")],
                       ["cached", str(root / "kind-shared" / "product")]]
    assert (gate / "builds").read_text() == "one build\n"
    assert BuildCache(root).lookup("kind", "shared", "product") is not None


# ---- an unusable cache folder --------------------------------------------------------------------

def test_check_cache_root(tmp_path, monkeypatch):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert check_cache_root(tmp_path / "new" / "cache") == tmp_path / "new" / "cache"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    with pytest.raises(CacheError, match=r"^build cache .*/file is not a folder$"):
        check_cache_root(a_file)
    with pytest.raises(CacheError, match=r"^build cache .*/file/sub: .*/file is not a folder$"):
        check_cache_root(a_file / "sub")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere" / "x")
    with pytest.raises(CacheError, match="is a broken link"):
        check_cache_root(tmp_path / "link")
    monkeypatch.setenv("GRAVFM_CACHE", str(a_file))
    with pytest.raises(CacheError, match=r"\(\$GRAVFM_CACHE\) is not a folder"):
        check_cache_root()


def gravfm_run(*options, env=None, prefix=()):
    """``python -m gravfm run wcc --graph tiny:grid`` with ``options``; the completed process."""
    command = [*prefix, sys.executable, "-m", "gravfm", "run", "wcc", "--graph", "tiny:grid", "--quiet",
               "--edge-memory", "onchip", *options]
    return subprocess.run(command, env=dict(os.environ, PYTHONPATH=str(REPOSITORY), **(env or {})),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["--cache", "$GRAVFM_CACHE"])
def test_cache_that_is_a_file_is_one_line_before_any_work(how, tmp_path):
    a_file = tmp_path / "cache"
    a_file.write_text("not a folder")
    done = gravfm_run("--cache", str(a_file)) if how == "--cache" else gravfm_run(env={"GRAVFM_CACHE": str(a_file)})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"gravfm: error: build cache {a_file}"
                                        f"{' ($GRAVFM_CACHE)' if how != '--cache' else ''} is not a folder"]
    assert done.stdout == ""  # no graph read, nothing built


def test_unwritable_cache_is_one_line_before_any_work(tmp_path):
    prefix = ()
    if os.geteuid() == 0:  # root writes anywhere: drop that privilege for the command
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv")
        prefix = ("setpriv", "--bounding-set", "-dac_override")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for cache, message in ((locked, "is not writable"),
                               (locked / "sub", f"cannot be created: {locked} is not writable")):
            done = gravfm_run("--cache", str(cache), prefix=prefix)
            assert done.returncode == 2
            assert done.stderr.splitlines() == [f"gravfm: error: build cache {cache} {message}"]
            assert done.stdout == ""
    finally:
        locked.chmod(0o700)
