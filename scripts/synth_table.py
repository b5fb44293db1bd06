"""Write the Fmax table of README.md and docs/results.md from benchmarks/results/synth_matrix.json.

Each page holds the table between the markers of :mod:`gravfm.synth.fmax_table`; this replaces
what is between them with what the results file gives for the checkout's RTL (stale rows marked
"measured on older RTL"). Run it after adding rows (``benchmarks/bench_synth.py --matrix``) and
after changing the RTL: tests/test_synth_fmax_table.py fails while a page differs::

    python scripts/synth_table.py            # rewrite the pages
    python scripts/synth_table.py --check    # exit 1 if a page differs, naming it
"""

import argparse
import sys

from gravfm.errors import ConfigError
from gravfm.generated_text import rewrite_pages
from gravfm.synth.fingerprint import rtl_fingerprint
from gravfm.synth.fmax_table import PAGES, SECTION, fmax_table
from gravfm.synth.results import RESULTS_FILE, load_rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page differs")
    args = parser.parse_args(argv)
    try:
        return rewrite_pages(SECTION, PAGES, fmax_table(load_rows(RESULTS_FILE), rtl_fingerprint()), check=args.check)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
