"""The package front door: its names resolve, and importing it does not load the hardware stack."""

import subprocess
import sys

import gravfm


def test_every_public_name_resolves():
    for name in gravfm.__all__:
        assert getattr(gravfm, name) is not None, name


def test_import_stays_light():
    code = "import sys, gravfm; print('amaranth' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
