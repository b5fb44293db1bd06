"""The clocks a run's (or a prediction's) MTEPS are given at: the platform's, met or assumed, and,
for a platform with a ``gravfm synth`` target (the ECP5 boards), the Fmax measured for the top.

:func:`clock_rates` returns them as plain dicts, the form ``gravfm run --json`` and ``gravfm model
--json`` write (``clocks``): ``kind`` (``platform`` or ``measured_fmax``), ``mhz`` (None: no
measurement), ``label`` (what the terminal prints in parentheses) and the facts behind the label.
A met clock's row and a measured Fmax say whether they were measured on today's RTL
(:mod:`gravfm.synth.fingerprint`): a figure of older RTL is labelled so.

Nothing here imports Amaranth.
"""

from ..architectures import DEFAULT_ARCHITECTURE
from ..errors import ConfigError
from .fingerprint import rtl_fingerprint
from .netlists import today_netlists
from .results import MATRIX, RESULTS_FILE, latest_measurement, load_rows, rtl_note, seeds_words
from .targets import TARGETS

__all__ = ["check_synth_target", "clock_rates", "top_words"]


def check_synth_target(platform):
    """Raise ConfigError (one line naming the file and field) unless the platform's
    ``clock.synth_target`` is None or a ``gravfm synth`` target."""
    target = platform.clock.synth_target
    if target is not None and target not in TARGETS:
        raise ConfigError(f"{platform.origin or platform.name}: clock.synth_target {target!r} is not a gravfm synth "
                          f"target (one of {', '.join(TARGETS)})")


def top_words(algorithm, fpgas, pes, edge_memory):
    """``wcc, FPGA 0 of 2 x 4 PEs, edges offchip``: a top as the labels name it."""
    pe_count = f"{pes} PE{'s' if pes > 1 else ''}"
    system = f"FPGA 0 of {fpgas} x {pe_count}" if fpgas > 1 else f"1 FPGA x {pe_count}"
    return f"{algorithm}, {system}, edges {edge_memory}"


def _fingerprints(commit):
    """(the checkout's fingerprint, ``commit``'s), each None when git cannot tell."""
    try:
        today = rtl_fingerprint()
    except ConfigError:
        return None, None
    try:
        return today, None if commit is None else rtl_fingerprint(commit)
    except ConfigError:
        return today, None


def _today_netlist(key, fingerprint):
    """The checkout's netlist fingerprint of the matrix top ``key`` (None: not a matrix top, or
    the netlists file is not of this RTL)."""
    try:
        netlists = today_netlists(fingerprint)
    except ConfigError:
        return None
    return next((netlists.get(top.name) for top in MATRIX if top.key() == key), None)


def _platform_clock(platform):
    clock, mhz = platform.clock, platform.fpga.f_clk_mhz
    entry = {"kind": "platform", "mhz": mhz, "basis": clock.basis}
    if clock.met is None:
        return {**entry, "label": "assumed"}
    today, then = _fingerprints(clock.met.commit)
    stale = None if today is None or then is None else today != then
    return {**entry, "label": f"met by {clock.met.describe()}, {rtl_note(clock.met.commit, stale)}",
            "row": {"source": clock.met.source, "target": clock.met.target, "top": clock.met.top,
                    "commit": clock.met.commit, "fmax_mhz": clock.met.fmax_mhz}, "stale": stale}


def _measured_fmax(target, top, arch, results):
    entry = {"kind": "measured_fmax", "target": target, "top": top}
    words = top_words(**top) + ("" if arch == DEFAULT_ARCHITECTURE else f", {arch} architecture")
    try:
        rows = load_rows(results)
    except ConfigError as error:
        return {**entry, "mhz": None, "label": f"no measured Fmax: {error}"}
    today, _ = _fingerprints(None)
    key = {**top, "arch": arch, "target": target}
    measurement = latest_measurement(rows, key, today, _today_netlist(key, today))
    if measurement is None:
        return {**entry, "mhz": None, "label": f"no measured Fmax for {words} on {target} in {results.name}"}
    median = measurement.median
    return {**entry, "mhz": median["fmax_mhz"], "commit": median["commit"], "rtl": median["rtl"],
            "stale": measurement.stale, "seeds": median["seeds_measured"], "router": median["router"],
            "label": f"{words} on {target}, {seeds_words(median)}; {measurement.rtl_label()}"}


def clock_rates(platform, *, algorithm, fpgas, pes, edge_memory, arch=DEFAULT_ARCHITECTURE, results=RESULTS_FILE):
    """The platform's clock and, with a ``clock.synth_target``, the Fmax measured for the top of
    ``algorithm`` on ``fpgas`` x ``pes`` with ``edge_memory`` (the latest in ``results``, of
    today's RTL if any: :func:`~gravfm.synth.results.latest_measurement`)."""
    check_synth_target(platform)
    rates = [_platform_clock(platform)]
    if platform.clock.synth_target is not None:
        top = {"algorithm": algorithm, "fpgas": fpgas, "pes": pes, "edge_memory": edge_memory}
        rates.append(_measured_fmax(platform.clock.synth_target, top, arch, results))
    return rates
