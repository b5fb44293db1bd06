"""Write README.md's table of the paper's Table 3 and road figures beside the full reproduction's.

The README holds the table between the markers of :mod:`gravfm.reproduce.headline`; this replaces
what is between them with what ``results/paper/results.json`` gives (``gravfm reproduce all --full``
writes it). tests/test_paper_table.py fails while the README differs::

    python scripts/paper_table.py            # rewrite the README's table
    python scripts/paper_table.py --check    # exit 1 if it differs
"""

import argparse
import sys

from gravfm.errors import ConfigError
from gravfm.generated_text import rewrite_pages
from gravfm.reproduce.headline import PAGE, RESULTS, SECTION, headline_table, load_document


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if the README differs")
    args = parser.parse_args(argv)
    try:
        return rewrite_pages(SECTION, [PAGE], headline_table(load_document(RESULTS)), check=args.check)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
