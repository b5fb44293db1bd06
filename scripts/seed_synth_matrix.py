"""Seed benchmarks/results/synth_matrix.json with the synthesis rows measured before it existed.

Converts every row of ``bench_synth.json`` (each of its lists) and the single reports
``synth_*.json`` that names one FPGA top (algorithm, FPGAs and PEs) and the commit it was measured
on into the row format of :mod:`gravfm.synth.results`, with that commit's date and RTL fingerprint
read from git. Figures are copied, never changed. Left out: rows whose RTL is only described as
"before <commit>" (no commit holds it) and the kernel-level rows (no top). Rows of 6a9ea83, whose
change a9c0cc4 reverted, carry ``reverted_by`` so that no table takes them as a top's latest RTL.
Run once; it refuses to overwrite a results file that exists::

    python scripts/seed_synth_matrix.py [--out benchmarks/results/synth_matrix.json]
"""

import argparse
import json
import sys
from pathlib import Path

from gravfm.errors import ConfigError
from gravfm.synth.fingerprint import commit_facts, rtl_fingerprint
from gravfm.synth.results import FIGURES, FORMAT_NOTE, RESULTS_FILE, save_rows, seed_row

RESULTS = RESULTS_FILE.parent

#: Commits whose RTL change a later commit reverted (git log: "Revert 6a9ea83 ...").
REVERTED = {"6a9ea83": "a9c0cc4"}

NOTES = [
    FORMAT_NOTE,
    "Seeded by scripts/seed_synth_matrix.py from bench_synth.json and synth_*.json (their figures unchanged; "
    "'source' names the file and list, 'note' is the original note). 'router' router1 for rows measured before "
    "gravfm synth had --router (nextpnr's default then and now); 'seed' 1 for runs that did not record it "
    "(gravfm synth's default). Rows described only as 'before <commit>' and kernel-level rows are not here.",
]


def facts(revision):
    """``commit``, ``commit_date`` and ``rtl`` of a revision named by a row."""
    known = commit_facts(revision)
    return {**known, "rtl": rtl_fingerprint(known["commit"])}


def revision_of(row):
    """The commit a bench_synth.json row was measured on, or None when only "before" one."""
    origin = row.get("provenance", {}).get("git_revision") or row.get("rtl") or ""
    return None if " " in origin or not origin else origin


def flat_row(row, source):
    """A bench_synth.json row in the results format, or None when it names no top or commit."""
    revision = revision_of(row)
    if revision is None or row.get("pes") is None or row.get("fpgas") is None:
        return None
    when = row.get("provenance", {})
    nextpnr = row["target"].startswith("ecp5")
    converted = {"kind": "seed", "algorithm": row["algorithm"], "fpgas": row["fpgas"], "pes": row["pes"],
                 "edge_memory": "onchip", "target": row["target"], "pnr_freq_mhz": row.get("pnr_freq_mhz"),
                 "router": row.get("pnr_router") or ("router1" if nextpnr else None),
                 "seed": row.get("pnr_seed") or (1 if nextpnr else None), **facts(revision),
                 **{key: row.get(key) for key in FIGURES},
                 "measured": when.get("time_utc") or when.get("date") or row["measured"], "source": source}
    for key in ("command", "note"):
        if row.get(key):
            converted[key] = row[key]
    reverted = next((later for early, later in REVERTED.items() if converted["commit"].startswith(early)), None)
    return {**converted, "reverted_by": reverted} if reverted else converted


def bench_synth_rows(path):
    """The rows of bench_synth.json, every list of it, in the file's order."""
    document = json.loads(path.read_text())
    rows = []
    for section, entries in document.items():
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict) and "algorithm" in entry:
                    row = flat_row({"measured": document["date"], **entry}, f"{path.name}: {section}")
                    rows.extend([row] if row else [])
    return rows


def report_rows():
    """The single ``gravfm synth --json`` reports (synth_*.json) that name their commit."""
    rows = []
    for path in sorted(RESULTS.glob("synth_*.json")):
        report = json.loads(path.read_text())
        revision = report.get("provenance", {}).get("git_revision")
        if "fpga" not in report or revision is None:
            print(f"left out {path.name}: no commit recorded", file=sys.stderr)
            continue
        known = facts(revision)
        row = seed_row(report, rtl=known["rtl"], commit=known["commit"], commit_date=known["commit_date"],
                       source=path.name)
        rows.append({**row, **({"note": report["note"]} if report.get("note") else {})})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS_FILE)
    args = parser.parse_args(argv)
    if args.out.exists():
        print(f"{args.out} exists: the rows are seeded once", file=sys.stderr)
        return 2
    try:
        rows = bench_synth_rows(RESULTS / "bench_synth.json") + report_rows()
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    save_rows(args.out, rows, NOTES)
    print(f"{len(rows)} rows written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
