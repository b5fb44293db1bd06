"""Every way of stopping ``gravfm run`` cleans up.

SIGINT, SIGTERM and SIGHUP during the Verilator build or the simulation end the build's and the
simulator's processes, remove the temporary folders in the cache and in ``$TMPDIR`` and exit
with 128 + the signal's number and one line on stderr. The command runs in a session of its
own with a private ``$TMPDIR`` and a tag in its environment, which every process it starts
inherits: that is how the tests find its processes, even those that left its session.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from gravfm.sim.build_cache import BuildCache
from gravfm.sim.design_memo import MEMO_FOLDER
from gravfm.sim.verilator_build import EXECUTABLE, end_process_group

REPOSITORY = Path(__file__).resolve().parents[1]
TAG = "GRAVFM_TEST_TAG"


def tagged_processes(tag):
    """``{pid: name}`` of the live processes whose environment carries ``TAG=tag``."""
    found, marker = {}, f"{TAG}={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                if marker not in file.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/comm") as file:
                found[int(entry)] = file.read().strip()
        except OSError:  # gone meanwhile
            continue
    return found


def wait_for(condition, what, timeout=120):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)
    return result


def _terminal_dispositions():
    """In the child: the stop signals at their defaults, as a terminal's foreground job has them.
    gravfm keeps a signal ignored when it starts (``nohup``, a background job's SIGINT), so a
    suite run under ``nohup`` or with ``&`` would otherwise hand that on and the stop tests fail."""
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


class GravfmRun:
    """``python -m gravfm run ...`` in a session of its own, with a private cache and ``$TMPDIR``."""

    def __init__(self, tmp_path, *arguments):
        self.tag = uuid.uuid4().hex
        self.cache, self.tmpdir = tmp_path / "cache", tmp_path / "tmp"
        self.tmpdir.mkdir()
        self.stderr_path = tmp_path / "stderr.txt"
        env = dict(os.environ, PYTHONPATH=str(REPOSITORY), TMPDIR=str(self.tmpdir), PYTHONUNBUFFERED="1",
                   **{TAG: self.tag})
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gravfm", "run", *arguments, "--cache", str(self.cache),
                 "--edge-memory", "onchip"],   # not --quiet: the test follows the log lines
                env=env, stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True,
                preexec_fn=_terminal_dispositions)
        self.lines = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True)
        self._reader.start()

    def wait_for_line(self, text):
        try:
            wait_for(lambda: any(text in line for line in self.lines) or self.process.poll() is not None,
                     f"a line with {text!r}")
            assert self.process.poll() is None, f"gravfm ended early: {self.lines}"
        except BaseException:
            self.end()  # a failed wait leaves no run (or its simulator) behind
            raise

    def end(self):
        """End the session's processes, if any are left, and close the pipe."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # gravfm ends its build or simulator itself
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        self._reader.join(timeout=10)
        self.process.stdout.close()

    def stop(self, signum):
        """Send ``signum`` to the session's process group, as a terminal would; seconds until exit."""
        started = time.monotonic()
        os.killpg(self.process.pid, signum)
        self.process.wait(timeout=60)
        elapsed = time.monotonic() - started
        self._reader.join(timeout=10)
        self.process.stdout.close()
        return elapsed

    def stderr_lines(self):
        return self.stderr_path.read_text().splitlines()

    def work_folders(self):
        """Temporary folders left in the cache (entries and lock files are not)."""
        return sorted(p.name for p in self.cache.iterdir() if p.name.startswith(".") and p.is_dir())


STOPS = [(signal.SIGTERM, 143, "gravfm: terminated (SIGTERM)"), (signal.SIGHUP, 129, "gravfm: hung up (SIGHUP)"),
         (signal.SIGINT, 130, "gravfm: interrupted")]


@pytest.mark.parametrize("signum,status,line", STOPS, ids=[s[0].name for s in STOPS])
def test_stop_during_the_verilator_build(signum, status, line, tmp_path):
    run = GravfmRun(tmp_path, "wcc", "--graph", "tiny:grid")
    run.wait_for_line("building simulator")
    # The build tree is running: make and a compiler, in a process group of their own.
    wait_for(lambda: {"make", "cc1plus"} <= set(tagged_processes(run.tag).values()), "make and the compiler")
    assert run.work_folders()  # the build's private folder, which must go
    elapsed = run.stop(signum)
    assert run.process.returncode == status
    assert run.stderr_lines() == [line]
    assert elapsed < 10
    assert tagged_processes(run.tag) == {}
    assert [p.name for p in run.cache.iterdir() if not p.name.endswith(".lock")] == []
    assert list(run.tmpdir.iterdir()) == []


STUCK_ALGORITHM = '''
"""WCC with a gather kernel that never accepts a message: the simulation runs until stopped."""
import dataclasses

from amaranth.hdl import Module
from amaranth.lib import wiring

from gravfm.algorithms import WCC
from gravfm.hw.kernels import gather_signature


def stuck_gather(layouts):
    class StuckGather(wiring.Component):
        def __init__(self):
            super().__init__(gather_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            m.d.comb += [self.i.ready.eq(0), self.o.valid.eq(0)]
            return m

    return StuckGather()


STUCK = dataclasses.replace(WCC, name="wcc_stuck", gather=stuck_gather)
'''


def test_sigterm_during_the_simulation(tmp_path):
    """One tiny build (1 PE, about 10 s); the simulation deadlocks and only the signal ends it."""
    algorithm = tmp_path / "stuck.py"
    algorithm.write_text(STUCK_ALGORITHM)
    # --no-kernel-check: the kernel contract check would refuse the stuck gather before the build.
    run = GravfmRun(tmp_path, f"{algorithm}:STUCK", "--graph", "tiny:grid", "--watchdog", str(1 << 40),
                    "--no-kernel-check")
    run.wait_for_line("built in")
    wait_for(lambda: EXECUTABLE in tagged_processes(run.tag).values(), "the simulator")
    assert [p.name for p in run.tmpdir.iterdir() if p.name.startswith("gravfm-run-")]  # its run folder
    elapsed = run.stop(signal.SIGTERM)
    assert run.process.returncode == 143
    assert run.stderr_lines() == ["gravfm: terminated (SIGTERM)"]
    assert elapsed < 10
    assert tagged_processes(run.tag) == {}
    assert list(run.tmpdir.iterdir()) == []
    # The finished build stays, sound, for the next run.
    assert run.work_folders() == []
    # The build, beside the remembered design keys (gravfm.sim.design_memo's "designs" folder).
    entries = [p.name for p in run.cache.iterdir() if not p.name.startswith(".") and p.name != MEMO_FOLDER]
    assert len(entries) == 1
    assert BuildCache(run.cache).lookup("verilator", entries[0].removeprefix("verilator-"), EXECUTABLE)


# ---- ending a process group ----------------------------------------------------------------------

def start_group(script):
    """``sh -c script`` in a session of its own; wait until it and its two children run."""
    tag = uuid.uuid4().hex
    process = subprocess.Popen(["sh", "-c", script], env=dict(os.environ, **{TAG: tag}), start_new_session=True)
    wait_for(lambda: len(tagged_processes(tag)) >= 3, "the group's processes", timeout=30)
    return process, tag


def test_end_process_group_ends_children_at_once():
    process, tag = start_group("sleep 600 & sleep 600 & wait")
    started = time.monotonic()
    end_process_group(process, grace=30)
    assert time.monotonic() - started < 5  # SIGTERM sufficed: no waiting for the grace period
    assert process.returncode == -signal.SIGTERM
    assert tagged_processes(tag) == {}


def test_end_process_group_kills_what_ignores_sigterm():
    # The children inherit the ignored SIGTERM; only SIGKILL after the grace period ends them.
    process, tag = start_group("trap '' TERM; sleep 600 & sleep 600 & wait")
    started = time.monotonic()
    end_process_group(process, grace=0.5)
    assert 0.5 <= time.monotonic() - started < 5
    assert process.returncode == -signal.SIGKILL
    assert tagged_processes(tag) == {}


# ---- a caller that dies without a word -----------------------------------------------------------

GUARDED_CALLER = """
import sys, time
from gravfm.sim.design_memo import MEMO_FOLDER
from gravfm.sim.verilator_build import start_guarded
start_guarded(["sh", "-c", "sleep 600 & sleep 600 & wait"])
print("started", flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard needs PR_SET_PDEATHSIG (Linux)")
def test_guarded_processes_end_with_a_caller_killed_by_sigkill():
    """A library caller (a benchmark) killed by SIGKILL runs no clean-up: the guard of
    start_guarded (which the Verilator build runs under) ends the processes it started."""
    tag = uuid.uuid4().hex
    caller = subprocess.Popen([sys.executable, "-c", GUARDED_CALLER], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPOSITORY), **{TAG: tag}))
    try:
        assert caller.stdout.readline() == "started\n"
        # The caller, the guard, sh and two sleeps.
        wait_for(lambda: len(tagged_processes(tag)) >= 5, "the guarded processes", timeout=30)
    finally:
        caller.kill()
        caller.wait()
        caller.stdout.close()
    wait_for(lambda: tagged_processes(tag) == {}, "the guarded processes to end", timeout=10)


@pytest.mark.slow  # a Verilator build of one PE (10-60 s on a shared machine)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the harness needs PR_SET_PDEATHSIG (Linux)")
def test_simulator_stops_when_gravfm_is_killed_by_sigkill(tmp_path):
    """gravfm killed by SIGKILL (no handler runs): its simulator, which would otherwise simulate
    on or block on the dead parent's pipe, stops (the harness's PR_SET_PDEATHSIG)."""
    algorithm = tmp_path / "stuck.py"
    algorithm.write_text(STUCK_ALGORITHM)
    run = GravfmRun(tmp_path, f"{algorithm}:STUCK", "--graph", "tiny:grid", "--watchdog", str(1 << 40),
                    "--no-kernel-check")
    try:
        run.wait_for_line("built in")
        wait_for(lambda: EXECUTABLE in tagged_processes(run.tag).values(), "the simulator")
        os.kill(run.process.pid, signal.SIGKILL)  # gravfm alone, not its session
        run.process.wait(timeout=30)
        wait_for(lambda: tagged_processes(run.tag) == {}, "the simulator to stop", timeout=10)
    finally:
        run.end()
