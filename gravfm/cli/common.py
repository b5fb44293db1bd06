"""Helpers the subcommands share: the graph input options, option checks, JSON output."""

import argparse
import contextlib
import json
import sys
from pathlib import Path

from ..algorithms.loading import algorithm_file
from ..provenance import stamped
from ..errors import ConfigError, GravfmError
from ..files import can_create_in
from ..graph import RELABEL_POLICIES
from ..graph.readers import FORMATS

__all__ = ["write_json", "json_document", "report_stream", "check_output_file", "add_graph_argument",
           "graph_argument", "deprecated", "add_deprecated_option", "add_capacity_arguments", "local_bits_of", "add_graph_input_arguments",
           "graph_load_options", "positive_int", "parse_params"]


def json_document(figures, args):
    """``figures`` as the document ``--json`` writes: with ``schema_version`` and the
    ``provenance`` of the command line in ``args`` (and of the user's algorithm file it names)."""
    return stamped(figures, command=getattr(args, "command_line", None),
                   algorithm_file=algorithm_file(getattr(args, "algorithm", None)))


def write_json(path, figures, args):
    """Write ``figures`` (through :func:`json_document`) to ``path`` as indented JSON, the
    ``--json FILE`` option; ``-`` is the standard output.

    Raises
    ------
    gravfm.errors.GravfmError
        The file cannot be written (one line naming it, for the CLI to print).
    """
    text = json.dumps(json_document(figures, args), indent=2) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise GravfmError(f"--json {path}: cannot write the figures: {error.strerror or error}") from None


def report_stream(args):
    """Context manager: with ``--json -`` the standard output holds the JSON alone, so the
    human-readable report goes to the standard error."""
    if getattr(args, "json", None) == "-":
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()


def check_output_file(path, option="--json", *, stdout=False):
    """Refuse, before any work, an output file that could not be written afterwards: a folder,
    a missing or unwritable parent folder, an unwritable file. Nothing is left behind.
    ``stdout``: ``-`` stands for the standard output."""
    if path is None or stdout and path == "-":
        return
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory, not a file")
    if not path.parent.is_dir():
        raise ConfigError(f"{option} {path}: folder {path.parent} does not exist")
    if path.exists():
        try:
            with open(path, "ab"):  # appends nothing: the file stays as it is
                pass
        except OSError as error:
            raise ConfigError(f"{option} {path}: not writable ({error.strerror})") from None
    elif not can_create_in(path.parent):
        raise ConfigError(f"{option} {path}: cannot create files in {path.parent}")


def deprecated(old, new):
    """The one line an old spelling of an option prints on the standard error (it still works)."""
    print(f"gravfm: note: {old} is deprecated; write {new}", file=sys.stderr)


def add_deprecated_option(parser, old, new, *, dest, type=None, convert=None):
    """Accept ``old``, an earlier spelling of the option ``new``, into ``dest`` (``convert``ed),
    with :func:`deprecated`'s line; it is left out of ``--help``."""
    class _Old(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            deprecated(option_string, new)
            setattr(namespace, dest, values if convert is None else convert(values))

    parser.add_argument(old, dest=f"_old_{dest}", type=type, action=_Old, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS)


def add_capacity_arguments(parser, *, vertices_default=None, edges_default=None, edges_help=None):
    """``--vertices-per-pe`` and ``--edges-per-pe``, the capacity of a PE's memories, spelt alike
    by ``run``, ``synth`` and ``partition``."""
    vertices = "default: from the graph" if vertices_default is None else f"default {vertices_default}"
    parser.add_argument("--vertices-per-pe", type=positive_int, default=vertices_default, metavar="N",
                        help=f"vertex capacity of a PE (a power of two; {vertices})")
    if edges_help is not False:
        parser.add_argument("--edges-per-pe", type=positive_int, default=edges_default, metavar="N",
                            help=edges_help or f"edge capacity of a PE (default "
                                               f"{'from the graph, rounded up to a power of two' if edges_default is None else edges_default})")


def local_bits_of(vertices_per_pe, option="--vertices-per-pe"):
    """``--vertices-per-pe`` as local_bits (it must be a power of two)."""
    if vertices_per_pe is None:
        return None
    if vertices_per_pe < 1 or vertices_per_pe & (vertices_per_pe - 1):
        raise ConfigError(f"{option} must be a power of two, not {vertices_per_pe}")
    return vertices_per_pe.bit_length() - 1


def add_graph_argument(parser, *, required=True, default=None,
                       help="graph file or generator spec, e.g. rmat:scale=12,ef=16,seed=1"):
    """``--graph SPEC``, the graph's one spelling in every subcommand; the positional ``SPEC`` of
    ``partition`` and ``graph info`` is still taken (:func:`graph_argument` notes it)."""
    parser.add_argument("--graph", metavar="SPEC", default=default, help=help)
    parser.set_defaults(graph_required=required)
    parser.add_argument("positional_graph", nargs="?", metavar="SPEC", help=argparse.SUPPRESS)


def graph_argument(args):
    """The graph spec of :func:`add_graph_argument`'s options (None when optional and not given)."""
    old = getattr(args, "positional_graph", None)
    if old is not None:
        if args.graph is not None:
            raise ConfigError(f"the graph given twice: --graph {args.graph} and {old}")
        deprecated(f"the positional graph {old!r}", f"--graph {old}")
        return old
    if args.graph is None and args.graph_required:
        raise ConfigError("the following argument is required: --graph SPEC")
    return args.graph


def add_graph_input_arguments(parser):
    """The options that read and clean a graph (``graph info``, ``graph convert``, ``run``)."""
    parser.add_argument("--input-format", choices=FORMATS, default=None,
                        help="input file format (default: from extension and contents)")
    parser.add_argument("--keep-self-loops", action="store_true", help="keep edges (v, v) (default: drop)")
    parser.add_argument("--keep-duplicates", action="store_true",
                        help="keep repeated edges (default: merge them)")
    parser.add_argument("--undirected", action="store_true",
                        help="treat edges as undirected: add every edge's reverse")
    parser.add_argument("--relabel", choices=RELABEL_POLICIES, default="auto",
                        help="vertex id renumbering (default: auto, only for sparse or 1-based ids); "
                             "vertex ids given and printed stay the file's own")


def graph_load_options(args):
    """The keywords of :func:`gravfm.graph.load_graph` set by :func:`add_graph_input_arguments`.

    Self-loops and duplicates are left to ``load_graph``'s defaults unless kept, so that a
    ``tiny:`` graph stays exactly as defined, as ``gravfm graph info`` shows it.
    """
    options = {"fmt": args.input_format, "relabel": args.relabel, "undirected": args.undirected}
    if args.keep_self_loops:
        options["self_loops"] = "keep"
    if args.keep_duplicates:
        options["duplicates"] = "keep"
    return options


def positive_int(text):
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {value}")
    return value


def _value(text):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_params(items, root=None):
    """``--param NAME=VALUE`` options (and ``--root V``, their shorthand) as a dict.

    Values are integers, numbers, ``true``/``false`` or else strings; the algorithm rejects
    names it does not have.
    """
    params = {}
    for item in items or ():
        name, equals, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not equals or not name.isidentifier() or not text:
            raise ConfigError(f"--param {item!r}: expected NAME=VALUE, e.g. root=3")
        if name in params:
            raise ConfigError(f"--param {name}: given twice")
        params[name] = _value(text)
    if root is not None:
        if "root" in params and params["root"] != root:
            raise ConfigError(f"--root {root} and --param root={params['root']} disagree")
        params["root"] = root
    return params
