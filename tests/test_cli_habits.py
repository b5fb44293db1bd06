"""The command line's habits (issue 35 item 5): ``--json -`` is the standard output everywhere, a
closed pipe ends quietly, one spelling of the graph and of the capacity options (old ones taken
with a note), every option has help, ``reproduce --dry-run`` without ``--out``, ``--quiet`` says
why a run is not verified, figures formatted for reading, long tables folded."""

import argparse
import json
import subprocess
import sys

import pytest

from gravfm.cli import build_parser, main
from gravfm.cli.run_report import FOLD_KEEP, _count, _figure, folded

FAST = ["run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--edge-memory", "onchip"]


@pytest.mark.parametrize("argv", [
    ["graph", "info", "--graph", "tiny:grid"],
    ["partition", "--graph", "tiny:grid", "--pes", "2"],
    ["model", "--graph", "tiny:grid", "--fpgas", "1", "--pes", "2"],
    FAST,
], ids=["graph info", "partition", "model", "run"])
def test_json_dash_is_the_standard_output_and_the_report_goes_to_stderr(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)                          # stdout is the JSON, whole
    assert document["schema_version"] >= 1 and "provenance" in document
    assert not (tmp_path / "-").exists()                # no file named "-"
    if argv[0] != "graph":
        assert err.strip()                              # the human-readable report, on stderr


def test_a_closed_pipe_ends_quietly():
    with subprocess.Popen([sys.executable, "-m", "gravfm", "partition", "--graph", "rmat:scale=10", "--pes", "64"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader:
        reader.stdout.close()                           # as `| head -0` would
        err = reader.stderr.read().decode()
        assert reader.wait(timeout=120) == 141          # 128 + SIGPIPE, like any Unix filter
    assert "Traceback" not in err and err == ""


def test_the_positional_graph_is_still_taken_with_one_note(capsys):
    assert main(["partition", "tiny:grid", "--pes", "2"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == ["gravfm: note: the positional graph 'tiny:grid' is deprecated; "
                                "write --graph tiny:grid"]
    assert "16 vertices" in out
    assert main(["graph", "info", "tiny:grid"]) == 0
    assert "deprecated" in capsys.readouterr().err
    assert main(["partition", "--graph", "tiny:grid", "tiny:grid"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["partition", "--pes", "2"]) == 2
    assert "--graph SPEC" in capsys.readouterr().err


def test_synth_spells_the_capacities_as_run_and_model_do(monkeypatch, capsys, tmp_path):
    import gravfm.synth.system_report as synth_report
    from test_cli_provenance import _fake_synth

    seen = []

    def fake(algorithm, **options):
        seen.append(options)
        return _fake_synth(algorithm, **options)

    monkeypatch.setattr(synth_report, "synth_system", fake)
    common = ["synth", "wcc", "--pes", "1", "--workdir", str(tmp_path)]
    assert main([*common, "--vertices", "1000", "--edges", "5000", "--vertices-per-pe", "64",
                 "--edges-per-pe", "512"]) == 0
    assert capsys.readouterr().err == ""
    assert main([*common, "--capacity-vertices", "1000", "--capacity-edges", "5000", "--build-local-bits", "6",
                 "--build-edges-per-pe", "512"]) == 0
    notes = capsys.readouterr().err.splitlines()
    assert notes == ["gravfm: note: --capacity-vertices is deprecated; write --vertices",
                     "gravfm: note: --capacity-edges is deprecated; write --edges",
                     "gravfm: note: --build-local-bits is deprecated; write --vertices-per-pe 2^B",
                     "gravfm: note: --build-edges-per-pe is deprecated; write --edges-per-pe"]
    new, old = seen
    assert new == old
    assert (new["capacity"].vertices, new["capacity"].edges) == (1000, 5000)
    assert (new["build_local_bits"], new["build_edges_per_pe"]) == (6, 512)


def _parsers(parser, name="gravfm"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_every_option_has_help():
    missing = [f"{name} {action.option_strings or action.dest}" for name, parser in _parsers(build_parser())
               for action in parser._actions
               if not action.help and not isinstance(action, argparse._SubParsersAction)]
    assert missing == []


def test_reproduce_dry_run_needs_no_out(capsys):
    assert main(["reproduce", "fig11", "--dry-run"]) == 0
    assert "fig11" in capsys.readouterr().out
    assert main(["reproduce", "fig11"]) == 2
    assert "--out DIR is required" in capsys.readouterr().err


def test_quiet_says_why_a_run_is_not_verified(capsys, build_cache):
    assert main(["run", "wcc", "--graph", "tiny:grid", "--edge-memory", "onchip", "--quiet", "--max-cycles", "20",
                 "--cache", build_cache]) == 1
    line, = capsys.readouterr().out.splitlines()
    assert "NOT VERIFIED (simulation did not terminate: max_cycles)" in line


def test_figures_are_formatted_for_reading():
    assert _figure(round(3212.0)) == "3,212" and _figure(1234567) == "1,234,567" and _figure(2.5) == "2.500"
    assert _figure(1234.5, 1) == "1,234.5"
    assert _figure(None) == "-" and _figure(float("inf")) == "-"
    assert (_count(1, "FPGA"), _count(1, "PE"), _count(4, "PE")) == ("1 FPGA", "1 PE", "4 PEs")


def test_long_superstep_tables_fold_unless_asked(tmp_path, capsys):
    rows = list(range(30))
    assert folded(rows) == [*rows[:FOLD_KEEP], None, *rows[-FOLD_KEEP:]]
    assert folded(rows, show_all=True) == rows and folded(rows[:12]) == rows[:12]
    path = tmp_path / "path.txt"
    path.write_text("".join(f"{i} {i + 1}\n" for i in range(29)))
    run = ["run", "bfs", "--graph", str(path), "--root", "0", "--backend", "amaranth", "--edge-memory", "onchip"]
    assert main(run) == 0
    text = capsys.readouterr().out
    assert "rounds folded" in text and "1 FPGA x 1 PE (" in text
    assert main([*run, "--all-supersteps"]) == 0
    assert "rounds folded" not in capsys.readouterr().out


def test_link_bytes_print_as_whole_numbers():
    import io

    from rich.console import Console
    from test_run_report import a_report

    from gravfm.cli.run_cmd import print_report

    row = {"items": 2141, "bytes": 3211.5, "words": 402, "link_bound_cycles": 402}
    links = {"item_bits": 12, "word_bits": 64, **row, "bytes": 3212.0, "bytes_per_edge": 1.5,
             "bytes_per_edge_theory": 1.4, "per_link": [{"from": 0, "to": 1, **row}]}
    console = Console(file=io.StringIO(), width=200)
    print_report(a_report(fpgas=2, links=links), console)
    text = console.file.getvalue()
    assert "3,212" in text and "3212.000" not in text and "3,211.500" not in text
    assert "2 FPGAs x 4 PEs (" in text
