"""Data layouts of the generated hardware, resolved from an algorithm's ``{field: width}`` dicts.

Every stream payload in :mod:`gravfm.hw` is one of the ``StructLayout`` s built here.
:class:`KernelLayouts` is what a kernel factory receives; its attributes name the payload of
each kernel port (the paper's Listings 1-3):

=========== ======================= =============================================================
kernel      port (direction)        payload
=========== ======================= =============================================================
gather      ``i`` (In stream)       ``gather_in``: level, nodeid, sender, message, state
gather      ``o`` (Out stream)      ``gather_out``: nodeid, state — the new state to write back
apply       ``i`` (In stream)       ``apply_in``: nodeid, state, round, barrier
apply       ``state_o`` (Out,       ``apply_state``: nodeid, state, barrier — write-back, no
            ``always_ready``)       handshake (written whenever valid; ignored when barrier=1)
apply       ``update_o`` (Out)      ``apply_update``: update, sender, round, barrier
scatter     ``i`` (In stream)       ``scatter_in``: update, sender, round, barrier, neighbor,
                                    num_neighbors, edge
scatter     ``o`` (Out stream)      ``scatter_out``: message, neighbor, sender, round, barrier
=========== ======================= =============================================================

Rules every kernel must keep: streams preserve order; gather emits exactly one output per input;
apply receives, after the round's last vertex, one item with ``barrier=1`` and must pass it to
``update_o`` (``barrier=1``) after the round's updates and after its last state write-back;
scatter receives the barrier as one item with ``barrier=1`` and must pass it to ``o``.
``num_neighbors`` is the length of the sender's edge list stored in this PE (the GraVF-M edge
store holds, per PE, only the edges whose destination lives there).
"""

from amaranth.hdl import Cat, Const, Value, unsigned
from amaranth.lib import data

from ..widths import VERTEXID

__all__ = ["KernelLayouts", "hardware_id", "lanes_layout", "resolve_layout", "edge_list_layout", "edge_address_layout",
           "edge_item_layout"]


def hardware_id(local_index, pe_index, config):
    """The hardware id of local vertex ``local_index`` of PE ``pe_index`` (global): the PE index
    above the local index. ``pe_index`` is an int, or a signal when the PE learns its index from
    the host (identical FPGA tops)."""
    pe = Const(pe_index, config.pe_bits) if isinstance(pe_index, int) else Value.cast(pe_index)
    return Cat(local_index, pe)


def resolve_layout(fields, vertexid_bits):
    """``StructLayout`` of a ``{field: width}`` dict, with ``"vertexid"`` set to ``vertexid_bits``."""
    return data.StructLayout({name: unsigned(vertexid_bits if width == VERTEXID else width)
                              for name, width in fields.items()})


def lanes_layout(layout, lanes):
    """Several items per cycle: ``layout`` itself for one lane, else ``{lanes: [layout] * lanes,
    valid: one bit per lane}``."""
    if lanes == 1:
        return layout
    return data.StructLayout({"lanes": data.ArrayLayout(layout, lanes), "valid": unsigned(lanes)})


def edge_list_layout(layouts, config):
    """A sender's edge list in an on-chip scatter unit: its update, first edge's address, length."""
    return data.StructLayout({"item": layouts.net_update, "start": config.pe.edge_addr_bits,
                              "length": config.pe.edge_len_bits})


def edge_address_layout(layouts, config):
    """An edge (or a barrier) to read from a scatter unit's edge array: the list's update and
    length, the edge's address."""
    return data.StructLayout({"item": layouts.net_update, "length": config.pe.edge_len_bits,
                              "address": config.pe.edge_addr_bits})


def edge_item_layout(layouts, config):
    """An edge (or a barrier) on its way into the scatter kernel: the list's update, round and
    length, the edge word."""
    return data.StructLayout({"item": layouts.net_update, "round": config.pe.round_bits,
                              "length": config.pe.edge_len_bits, "edge": layouts.edge_word})


class KernelLayouts:
    """All payload layouts of one build.

    Parameters
    ----------
    algorithm : gravfm.algorithms.Algorithm
    config : gravfm.hw.SystemConfig

    Attributes
    ----------
    vertexid_bits, round_bits, local_bits : int
    vertex, update, message, edge : StructLayout
        The algorithm's layouts with widths resolved.
    gather_in, gather_out, apply_in, apply_state, apply_update, scatter_in, scatter_out : StructLayout
        Kernel port payloads (see the module docstring).
    net_update : StructLayout
        An update on the network: sender, update, barrier, count (updates the source sent to
        this destination in the round; valid with barrier), sent_any.
    pe_updates : ShapeLike
        What an endpoint hands its PE per cycle: ``net_update`` with one update lane; with
        ``config.pe.update_lanes`` > 1, ``lanes`` (that many ``net_update`` s) and ``valid`` (one
        bit per lane, any of them set; a barrier travels alone in lane 0).
    edge_index : StructLayout
        One edge-index word: start, length.
    edge_word : StructLayout
        One edge-array word: dst (local index), edge data.
    vertex_word : StructLayout
        One vertex-memory word: state, ``touched`` (gathered into since the last apply) and
        ``epoch`` (the parity of the gather round that set ``touched``: while apply runs, gather
        of the next round tells a vertex apply has still to visit from one it touched itself).
        The host sees only the state bits; the flags sit above them and load as 0.
    """

    def __init__(self, algorithm, config):
        vid = config.vertexid_bits
        self.vertexid_bits = vid
        self.round_bits = config.pe.round_bits
        self.local_bits = config.pe.local_bits
        self.vertex = resolve_layout(algorithm.vertex, vid)
        self.update = resolve_layout(algorithm.update, vid)
        self.message = resolve_layout(algorithm.message, vid)
        self.edge = resolve_layout(algorithm.edge, vid)
        vertexid = unsigned(vid)
        rnd = unsigned(config.pe.round_bits)
        self.gather_in = data.StructLayout({
            "level": rnd, "nodeid": vertexid, "sender": vertexid,
            "message": self.message, "state": self.vertex})
        self.gather_out = data.StructLayout({"nodeid": vertexid, "state": self.vertex})
        self.apply_in = data.StructLayout({
            "nodeid": vertexid, "state": self.vertex, "round": rnd, "barrier": 1})
        self.apply_state = data.StructLayout({"nodeid": vertexid, "state": self.vertex, "barrier": 1})
        self.apply_update = data.StructLayout({
            "update": self.update, "sender": vertexid, "round": rnd, "barrier": 1})
        self.scatter_in = data.StructLayout({
            "update": self.update, "sender": vertexid, "round": rnd, "barrier": 1,
            "neighbor": vertexid, "num_neighbors": unsigned(config.pe.edge_len_bits), "edge": self.edge})
        self.scatter_out = data.StructLayout({
            "message": self.message, "neighbor": vertexid, "sender": vertexid, "round": rnd, "barrier": 1})
        self.net_update = data.StructLayout({
            "sender": vertexid, "update": self.update, "barrier": 1,
            "count": unsigned(config.count_bits), "sent_any": 1})
        self.pe_updates = lanes_layout(self.net_update, config.pe.update_lanes)
        self.edge_index = data.StructLayout({
            "start": unsigned(config.pe.edge_addr_bits), "length": unsigned(config.pe.edge_len_bits)})
        self.edge_word = data.StructLayout({"dst": unsigned(config.pe.local_bits), "edge": self.edge})
        self.vertex_word = data.StructLayout({"state": self.vertex, "touched": 1, "epoch": 1})
