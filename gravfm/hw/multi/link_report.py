"""What the link counters of a multi-FPGA run say: traffic figures, and which link a stall is on.

Plain arithmetic on the counters read back from the hardware (``host_rd_mem = 4``, see
:data:`~gravfm.hw.protocol.LINK_COUNTER_NAMES`), given as ``{name: array (fpgas, fpgas - 1)}``
with row = sending FPGA and column ``k`` = link to ``peers_of(row)[k]``.
"""

from ...architectures import architecture_info
from ...partition.report import crossing_edges
from ..link_check import decode_error
from ..protocol import peers_of

__all__ = ["link_figures", "diagnose_links", "link_faults", "bytes_per_edge_theory", "crossing_fraction"]

#: Fault counters of the link model, reported when the run injected faults.
FAULT_COUNTERS = ("dropped", "duplicated", "flipped")


def crossing_fraction(graph, fpga_of_vertex):
    """Fraction of the graph's edges whose endpoints live on different FPGAs."""
    return crossing_edges(graph, fpga_of_vertex) / graph.num_edges if graph.num_edges else 0.0


def bytes_per_edge_theory(arch, *, fpgas, vertices, edges, item_bits, crossing):
    """Inter-FPGA bytes per traversed edge that the model expects (gravfm.model).

    GraVF-M: every update to every other FPGA, ``m_update (n-1) |V|/|E|`` (an upper bound: the
    neighbor filter only lowers it; exact when every vertex is active as often as the average).
    GraVF: one message per edge that crosses FPGAs, ``m_message x crossing``. ``item_bits`` is
    the architecture's item (``m_update`` or ``m_message``).
    """
    if fpgas < 2 or edges == 0:
        return 0.0
    if not architecture_info(arch).broadcasts:
        return item_bits * crossing / 8
    return item_bits * (fpgas - 1) * vertices / edges / 8


def _receiving_end(counters, name, a, b, fpgas):
    """Counter ``name`` of FPGA ``b``'s receiver of the link from ``a`` (kept in ``b``'s row)."""
    return int(counters[name][b, peers_of(b, fpgas).index(a)])


def link_figures(counters, *, fpgas, item_bits, word_bits, messages, theory, faults=False, check="off"):
    """Plain-data link figures of a run: per link and in total, bytes per traversed edge.

    Parameters
    ----------
    counters : dict of str to array (fpgas, fpgas - 1)
        ``items``, ``bits``, ``bound_cycles`` (and the end counters when read).
    item_bits, word_bits : int
        Bits of one item on the link and of one physical word.
    messages : int
        Traversed edges of the run.
    theory : float
        :func:`bytes_per_edge_theory` for the run.
    faults : bool
        The links injected faults: report what each did (:data:`FAULT_COUNTERS`).
    check : str
        The link check's mode: when on, report retransmissions and discarded frames per link.
    """
    per_link = []
    for a in range(fpgas):
        for k, b in enumerate(peers_of(a, fpgas)):
            bits = int(counters["bits"][a, k])
            row = {"from": a, "to": b, "items": int(counters["items"][a, k]), "bits": bits,
                   "bytes": bits / 8, "words": -(-bits // word_bits),
                   "link_bound_cycles": int(counters["bound_cycles"][a, k])}
            for name in ("delivered", "barriers_sent", "barriers_delivered") + (FAULT_COUNTERS if faults else ()):
                if name in counters:
                    row[name] = int(counters[name][a, k])
            if check != "off":
                row["retransmissions"] = int(counters["retransmissions"][a, k])
                row["discarded"] = _receiving_end(counters, "discarded_in", a, b, fpgas)
            per_link.append(row)
    bits = sum(row["bits"] for row in per_link)
    extra = {name: sum(row[name] for row in per_link) for name in
             (FAULT_COUNTERS if faults else ()) + (("retransmissions", "discarded") if check != "off" else ())}
    return {
        "kind": "measured",
        "item_bits": item_bits,
        "word_bits": word_bits,
        "items": sum(row["items"] for row in per_link),
        # Items include one barrier per link and round (when counted: the rest are updates/messages).
        "barriers": sum(row.get("barriers_sent", 0) for row in per_link),
        "bits": bits,
        "bytes": bits / 8,
        "words": sum(row["words"] for row in per_link),
        "link_bound_cycles": sum(row["link_bound_cycles"] for row in per_link),
        "bytes_per_edge": bits / 8 / messages if messages else 0.0,
        "bytes_per_edge_theory": theory,
        **extra,
        **({"check": check} if check != "off" else {}),
        "per_link": per_link,
    }


def diagnose_links(counters, *, fpgas, supersteps):
    """Lines naming the links a stalled run waits on (empty when every link is drained).

    Parameters
    ----------
    counters : dict of str to array (fpgas, fpgas - 1)
        ``items``, ``delivered``, ``barriers_sent``, ``barriers_delivered``.
    supersteps : sequence of int
        Per FPGA, the fewest apply rounds any of its PEs has finished (``s``): its PEs wait for
        the round ``s - 1`` barrier of every peer, i.e. the ``s``-th barrier on each incoming link.
    """
    lines = []
    for a in range(fpgas):
        for k, b in enumerate(peers_of(a, fpgas)):
            sent, received = int(counters["items"][a, k]), int(counters["delivered"][a, k])
            barriers_sent = int(counters["barriers_sent"][a, k])
            barriers_received = int(counters["barriers_delivered"][a, k])
            needed = int(supersteps[b])
            problems = []
            if sent != received:
                problems.append(f"{sent - received} in flight")
            if barriers_received < needed:
                state = "not sent yet" if barriers_sent < needed else "sent, not delivered"
                problems.append(f"barrier of round {needed - 1} from fpga {a} missing ({state})")
            injected = [f"{int(counters[name][a, k])} {name}" for name in FAULT_COUNTERS
                        if name in counters and counters[name][a, k]]
            if problems and injected:
                problems.append("the link injected faults: " + ", ".join(injected) + " items")
            if problems:
                lines.append(f"link {a}->{b}: {sent} items sent, {received} received, "
                             f"{barriers_sent} barriers sent, {barriers_received} received; "
                             + "; ".join(problems))
    return tuple(lines)


def _error_line(a, b, error, check):
    """The diagnosis of one receiver's error word (:func:`gravfm.hw.link_check.decode_error`)."""
    item = f"item {error['ordinal']} (sequence number {error['expected']})"
    what = {
        "corrupt": f"corrupt frame (CRC mismatch) where {item} was expected",
        "lost": f"{item} lost: sequence number {error['received']} arrived in its place",
        "duplicate": f"duplicate frame (sequence number {error['received']}) where {item} was expected",
        "dead": f"dead link: nothing arrived for {check.silence_cycles} cycles; {item} was expected next",
        "count": f"barrier counts do not add up: more updates delivered in a round than its barrier counts "
                 f"(after item {error['ordinal']})",
        "overflow": f"receive buffer overflow at {item}",
    }.get(error["kind"], f"error {error['kind']} at {item}")
    return f"link {a}->{b} (FPGA {a} -> FPGA {b}): {error['kind']}: {what}"


def link_faults(counters, *, fpgas, check):
    """Lines naming what went wrong on the links (empty when nothing did); ``check`` is the links'
    :class:`~gravfm.hw.link_check.LinkCheck`.

    With the link check, every receiver's latched error (a corrupt, lost or duplicate frame, a
    dead link, a round whose counts do not add up). Without it, a link that delivered more items
    or barriers than it took: a duplicate that nobody caught, never a pass.
    """
    lines = []
    for a in range(fpgas):
        for k, b in enumerate(peers_of(a, fpgas)):
            if check.enabled:
                error = decode_error(_receiving_end(counters, "error_in", a, b, fpgas))
                if error["kind"]:
                    lines.append(_error_line(a, b, error, check))
                continue
            sent, delivered = int(counters["items"][a, k]), int(counters["delivered"][a, k])
            barriers = int(counters["barriers_sent"][a, k]), int(counters["barriers_delivered"][a, k])
            if delivered > sent or barriers[1] > barriers[0]:
                lines.append(f"link {a}->{b} (FPGA {a} -> FPGA {b}): counts do not add up: {delivered} items "
                             f"delivered for {sent} sent, {barriers[1]} barriers for {barriers[0]} "
                             f"(a duplicate no link check caught; --link-check detect would name it)")
    return tuple(lines)
