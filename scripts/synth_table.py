"""Write the Fmax table of README.md and docs/results.md from benchmarks/results/synth_matrix.json.

Each page holds the table between the markers of :mod:`gravfm.synth.fmax_table`; this replaces
what is between them with what the results file gives for the checkout's RTL (stale rows marked
"measured on older RTL"; a top whose netlist a later change left as it was keeps its rows). After
a change to the RTL it first elaborates every top of the matrix for its netlist fingerprint
(a few minutes; ``benchmarks/results/synth_netlists.json``, :mod:`gravfm.synth.netlists`). Run it
after adding rows (``benchmarks/bench_synth.py --matrix``) and after changing the RTL:
tests/test_synth_fmax_table.py fails while a page or the netlists file is behind::

    python scripts/synth_table.py            # rewrite the pages
    python scripts/synth_table.py --check    # exit 1 if a page differs, naming it
"""

import argparse
import sys

from gravfm.errors import ConfigError
from gravfm.generated_text import rewrite_pages
from gravfm.synth.fingerprint import rtl_fingerprint
from gravfm.synth.fmax_table import PAGES, SECTION, fmax_table
from gravfm.synth.netlists import today_netlists, write_today
from gravfm.synth.results import MATRIX, RESULTS_FILE, load_rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page differs")
    args = parser.parse_args(argv)
    try:
        fingerprint = rtl_fingerprint()
        netlists = today_netlists(fingerprint)
        if not netlists and not args.check:
            netlists = write_today(MATRIX, progress=lambda top: print(f"elaborating {top.name} ...", file=sys.stderr))
        table = fmax_table(load_rows(RESULTS_FILE), fingerprint, netlists)
        return rewrite_pages(SECTION, PAGES, table, check=args.check)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
