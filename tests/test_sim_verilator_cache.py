"""The content-addressed build cache of the compiled simulator."""

import pytest

from gravfm.sim.build_cache import BuildCache, build_key, cache_root


def test_key_depends_on_names_contents_and_order():
    base = build_key({"verilog": "module a;", "harness": "int main;"})
    assert base == build_key({"verilog": "module a;", "harness": "int main;"})
    assert base != build_key({"verilog": "module b;", "harness": "int main;"})
    assert base != build_key({"harness": "int main;", "verilog": "module a;"})
    # Moving text across the boundary of two parts changes the key.
    assert build_key({"a": "xy", "b": ""}) != build_key({"a": "x", "b": "y"})


def test_cache_root_prefers_argument_then_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAVFM_CACHE", str(tmp_path / "env"))
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    assert cache_root() == tmp_path / "env"
    monkeypatch.delenv("GRAVFM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "gravfm"     # the user's cache folder, whatever the cwd
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")       # not absolute: ignored, as XDG says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "gravfm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == tmp_path / "home" / ".cache" / "gravfm"


def test_make_builds_once_then_serves_from_cache(tmp_path):
    cache = BuildCache(tmp_path)
    calls = []

    def builder(folder):
        calls.append(folder)
        (folder / "product").write_text("binary")

    first, cached_first = cache.make("kind", "k1", "product", builder)
    second, cached_second = cache.make("kind", "k1", "product", builder)
    assert (cached_first, cached_second) == (False, True)
    assert first == second == tmp_path / "kind-k1" / "product"
    assert len(calls) == 1
    assert first.read_text() == "binary"


def test_failed_build_leaves_nothing_behind(tmp_path):
    cache = BuildCache(tmp_path)

    def broken(folder):
        (folder / "half-written").write_text("x")
        raise RuntimeError("compiler crashed")

    with pytest.raises(RuntimeError, match="compiler crashed"):
        cache.make("kind", "k2", "product", broken)
    # Only the lock file stays (removing it could let two builders lock different files).
    assert [p.name for p in tmp_path.iterdir()] == [".kind-k2.lock"]
    assert cache.lookup("kind", "k2", "product") is None


def test_builder_that_forgets_its_product_is_an_error(tmp_path):
    cache = BuildCache(tmp_path)
    with pytest.raises(RuntimeError, match="did not produce product"):
        cache.make("kind", "k3", "product", lambda folder: None)
    assert [p.name for p in tmp_path.iterdir()] == [".kind-k3.lock"]


def test_relative_cache_root_gives_absolute_build_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen = []

    def builder(folder):
        seen.append(folder)
        (folder / "product").write_text("x")

    path, _ = BuildCache("relative-cache").make("kind", "k4", "product", builder)
    assert seen[0].is_absolute() and path.is_absolute()
    assert path == tmp_path / "relative-cache" / "kind-k4" / "product"
