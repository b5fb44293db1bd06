"""The throughput limits of the GraVF-M performance model (paper §5, gravfm/model/README.md) as plain functions of numbers.

Every function returns a limit on the system throughput T_sys in edges per second (traversed
edges: messages produced by the scatter kernels). Arguments are in SI units: Hz, bits, bits per
second. ``degree`` is the average degree |E|/|V|. Symbols: n FPGAs, p PEs per FPGA.

GraVF-M broadcasts one update (m_update bits) per active vertex to each other FPGA; GraVF sends one
message (m_message bits) per edge, of which the fraction (n-1)/n crosses to another FPGA. With the
neighbour filter a GraVF-M update goes only to the FPGAs holding an out-neighbour of its sender:
``fanout`` other FPGAs on average (n - 1 in the paper's model; a partition gives it exactly,
:func:`gravfm.partition.update_fanout`), which takes the place of n - 1 (g - 1 within a group).
The hybrid architecture is GraVF-M on the links; inside an FPGA its limits are
:func:`intake_limit` (one scatter unit per update instead of every PE) and
:func:`message_network_limit`. Not in the paper: :func:`intake_limit`, :func:`message_network_limit`,
:func:`link_end_limit` (one item per cycle per peer stream, whatever the link's bandwidth),
:func:`channel_memory_bandwidth`, :func:`in_flight_limit`.
"""

import math

from ..architectures import ARCHITECTURES, DEFAULT_ARCHITECTURE, architecture_info
from ..errors import ConfigError
from .offchip_layout import inline_edges

__all__ = [
    "ARCHITECTURES",
    "fpgas_needed",
    "does_not_fit",
    "pe_limit",
    "memory_limit",
    "memory_limit_granular",
    "memory_limit_layout",
    "layout_words_per_pass",
    "in_flight_limit",
    "intake_limit",
    "message_network_limit",
    "link_end_limit",
    "channel_memory_bandwidth",
    "interface_limit",
    "network_limit",
    "node_interface_limit",
    "node_network_limit",
    "pes_needed",
]



def _info(arch):
    """The :class:`~gravfm.architectures.ArchitectureInfo` called ``arch``; ``ValueError`` naming
    the known architectures otherwise."""
    try:
        return architecture_info(arch)
    except ConfigError as error:
        raise ValueError(f"arch: {error}") from None


def _broadcasts(arch):
    """Whether the architecture called ``arch`` broadcasts updates (GraVF-M, hybrid) rather than
    sending messages (GraVF)."""
    return _info(arch).broadcasts


def fpgas_needed(vertices, m_vertex, memory_bits):
    """Smallest n with n >= |V| m_vertex / M (the graph's vertex state must fit); at least 1."""
    return max(1, math.ceil(vertices * m_vertex / memory_bits))


def does_not_fit(vertices, m_vertex, memory_bits, fpgas):
    """Why the graph's vertex state does not fit in ``fpgas`` FPGAs (n >= |V| m_vertex / M fails),
    or None when it fits. The one fit rule: the model notes it, ``gravfm run`` refuses by it."""
    needed = fpgas_needed(vertices, m_vertex, memory_bits)
    if fpgas >= needed:
        return None
    return f"the graph does not fit: needs n >= |V| m_vertex / M = {needed} FPGAs"


def pe_limit(fpgas, pes, f_clk_hz, cpe):
    """L_PE = n p f / CPE (1)."""
    return fpgas * pes * f_clk_hz / cpe


def memory_limit(fpgas, bandwidth_bits_per_s, m_edge):
    """L_mem = n BW_mem / m_edge (2): one edge read per traversed edge, no wasted bits."""
    return fpgas * bandwidth_bits_per_s / m_edge


def memory_limit_granular(fpgas, pes, bandwidth_bits_per_s, m_edge, m_memword, degree, *, lists_per_vertex=None):
    """L_mem with access granularity (worst case).

    Each of the |V| n p edge lists ends in a memory word holding a single edge, which wastes
    m_memword - m_edge bits per list: n BW_mem / (m_edge + (|V|/|E|) n p (m_memword - m_edge)).
    Once (|V|/|E|) n p >= 1 a list holds one edge or none on average, and every edge costs a
    whole word: n BW_mem / m_memword. An edge wider than a word costs whole words.
    ``lists_per_vertex`` replaces n p where a vertex's edges are split otherwise (the hybrid: n).
    """
    word = m_memword * math.ceil(m_edge / m_memword)  # an edge never shares a word with less
    lists_per_edge = (fpgas * pes if lists_per_vertex is None else lists_per_vertex) / degree
    if lists_per_edge >= 1:
        return fpgas * bandwidth_bits_per_s / word
    return fpgas * bandwidth_bits_per_s / (m_edge + lists_per_edge * (word - m_edge))


def memory_limit_layout(bandwidth_bits_per_s, m_memword, edges_per_pass, words_per_pass):
    """L_mem of a known memory layout: edges traversed per memory word read.

    One pass in which every vertex is active traverses ``edges_per_pass`` edges and reads
    ``words_per_pass[f]`` words of ``m_memword`` bits from FPGA f's memory (per non-empty edge
    list its index word, which carries the first edges, and the word-aligned words of the
    others: :func:`gravfm.flow.memory.words_per_pass`
    counts them from a partition, :func:`layout_words_per_pass` estimates them). Each FPGA reads
    at BW_mem, so the FPGA with the most words sets the pace:
    L_mem = |E_pass| BW_mem / (m_memword max_f words_f).
    """
    busiest = max(words_per_pass)
    if busiest <= 0:
        return math.inf
    return edges_per_pass * bandwidth_bits_per_s / (m_memword * busiest)


def in_flight_limit(pes, requests_in_flight, round_trip_cycles, f_clk_hz, edges_per_pass, words_per_pass):
    """What the requests in flight can carry (Little's law), in edges/s; not one of the paper's limits.

    A PE keeps at most R requests outstanding, each for ``round_trip_cycles`` at least, so an
    FPGA's p PEs draw at most p R / round trip single-word requests per cycle; through the
    layout's words per edge (the busiest FPGA's, as :func:`memory_limit_layout`) that is
    p R f |E_pass| / (round trip max_f words_f). A lower bound on this limit: a burst request
    carries several words.
    """
    return pes * requests_in_flight / round_trip_cycles * f_clk_hz * edges_per_pass / max(words_per_pass)


def intake_limit(fpgas, pes, f_clk_hz, degree, *, arch, lanes, fanout=None):
    """L_intake, the limit set by the updates a PE takes, in edges/s; ``math.inf`` for GraVF.

    T_sys / degree updates per second leave the apply stages; each reaches its own FPGA and
    ``fanout`` others (n - 1 without the neighbour filter), so an FPGA receives
    (T_sys / degree) (1 + fanout) / n of them. Each is taken by k PEs of the FPGA (k = p in
    GraVF-M: every PE scatters every update for its own destinations; k = 1 in the hybrid: one
    scatter unit), so a PE takes (T_sys / degree) (1 + fanout) k / (n p) per second, at most
    ``lanes`` per cycle: L_intake = lanes f degree n p / (k (1 + fanout)). GraVF-M without the
    filter: lanes f degree, whatever n and p; the hybrid: p times that.
    """
    takers = _info(arch).intake_pes(pes)
    if takers is None:  # GraVF: a PE scatters its own updates only, one per vertex
        return math.inf
    copies = fpgas - 1 if fanout is None else _update_copies(fpgas, fanout)
    return lanes * f_clk_hz * degree * fpgas * pes / (takers * (1 + copies))


def link_end_limit(fpgas, f_clk_hz, degree, *, arch, fanout=None, items_per_cycle=1):
    """L_linkend, the limit set by the link ends of a broadcasting architecture (GraVF-M, hybrid):
    an FPGA's updates for a peer leave through its link lanes (a round merger each) and arrive
    through as many (the peer's routers), ``items_per_cycle`` (the lanes) a cycle whatever the
    link's bandwidth; ``math.inf`` for a single FPGA and for GraVF (not modelled).

    An FPGA's T_sys / (degree n) updates per second go to ``fanout`` of its n - 1 peers, spread
    over its n - 1 ports: L_linkend = items f degree n (n - 1) / fanout, f degree n without the
    filter. WCC on 4 x 64 PEs of a uniform graph of degree 32: 128 edges per cycle with one lane,
    256 with two.
    """
    if fpgas == 1 or not _broadcasts(arch):
        return math.inf
    return items_per_cycle * f_clk_hz * degree * fpgas * (fpgas - 1) / _update_copies(fpgas, fanout)


def message_network_limit(fpgas, pes, f_clk_hz, efficiency):
    """L_msgnet, an on-chip message network (GraVF, hybrid): every traversed edge is a message to the
    PE of its destination, which takes one per port per cycle at the network's ``efficiency``
    (the share a buffered multi-stage network sustains under this traffic): e n p f."""
    return efficiency * fpgas * pes * f_clk_hz


def channel_memory_bandwidth(bandwidth_bits_per_s, pes, channels):
    """The memory bandwidth of one FPGA that edge reads get when each PE's edges live in one of
    ``channels`` independent pseudo-channels (of BW_mem / channels each), in bits/s.

    ceil(p / c) PEs share the busiest channel, and the PEs advance together (each traverses its
    share of the edges), so the FPGA reads at BW_ch p / ceil(p / c): BW_mem when p is a
    multiple of c, the p channels used when p < c.
    """
    return bandwidth_bits_per_s / channels * pes / math.ceil(pes / channels)


def layout_words_per_pass(vertices, edges, fpgas, pes, m_edge, m_memword, *, arch=DEFAULT_ARCHITECTURE):
    """Expected memory words one all-active pass reads per FPGA, from |V| and |E| alone.

    The layout of this implementation (:mod:`gravfm.model.offchip_layout`): every PE holds one edge
    list per sender (GraVF-M: every vertex of the graph, its edges whose destinations live on
    this PE; GraVF: its own vertices, all their edges; hybrid: the p-th share of the vertices,
    their edges into this FPGA); a non-empty list costs one index word,
    which carries its first K = (m_memword - 64) // m_edge edges beside the 64-bit header, and
    ceil(max(0, k - K) / e) words for the other edges, e = m_memword // m_edge edges per word
    (lists start on a word boundary); an empty list costs nothing (its presence bit is on chip).
    ``m_edge`` is the bits an edge takes in a word (its slot). Assumption (an estimate, exact for
    no real graph): list lengths are Poisson with mean |E|/(|V| s), s the lists a vertex's
    edges are split into (n p GraVF-M, 1 GraVF, n hybrid), as for uniformly random
    destinations; skewed graphs (RMAT) have fewer, longer lists. Returns words per FPGA (a float).
    """
    from scipy.stats import poisson  # deferred: scipy.stats (heavy; only this estimate needs it)

    degree = edges / vertices
    split = _info(arch).edge_lists_per_vertex(fpgas, pes)
    lists, mean = vertices * split / (fpgas * pes), degree / split
    index_words = -math.expm1(-mean)             # P(k > 0): one index word per non-empty list
    if m_edge > m_memword:                       # an edge takes whole words: ceil(k/e) = k w
        per_list = index_words + mean * math.ceil(m_edge / m_memword)
    else:
        per_word, inline = m_memword // m_edge, inline_edges(m_memword, m_edge)
        # E[ceil(max(0, k - K)/e)] = sum_{j>=0} P(k > K + j e), k ~ Poisson(mean); the tail beyond
        # mean + 40 sd + 40 is < 1e-12
        terms = int((mean + 40 * math.sqrt(mean) + 40) // per_word) + 1
        list_words = float(poisson.sf([inline + j * per_word for j in range(terms)], mean).sum())
        per_list = index_words + list_words
    return pes * lists * per_list


def _update_copies(group, fanout):
    """Copies of one update sent to the group's other FPGAs: ``fanout`` (the partition's mean, at
    most g - 1), or g - 1 (every peer) when None; a ``fanout`` of 0 (no update leaves its FPGA)
    is kept tiny so that the limit is large rather than a division by zero."""
    if fanout is None:
        return group - 1
    if fanout < 0:
        raise ValueError(f"fanout must be >= 0, not {fanout!r}")
    return max(min(fanout, group - 1), 1e-12)


def interface_limit(fpgas, interface_bits_per_s, degree, *, arch, m_update, m_message, group=None, fanout=None):
    """L_if, the limit set by one FPGA's network interface; ``math.inf`` for a single FPGA.

    GraVF-M (3): each FPGA sends T_FPGA m_update (g-1)/degree bits/s, so
    L_if = n BW_if degree / (m_update (g-1)), which is (BW_if/m_update) n/(n-1) degree for g = n.
    With the neighbour filter ``fanout`` (the mean number of other FPGAs an update goes to) takes
    the place of g - 1: L_if = n BW_if degree / (m_update fanout).
    GraVF: each FPGA sends T_FPGA m_message (g-1)/n bits/s, so L_if = n^2 BW_if / (m_message (g-1)),
    which is (BW_if/m_message) n^2/(n-1) for g = n (``fanout`` does not apply: no filter).

    ``group`` is the number of FPGAs that exchange data over this interface (default n; inside a
    node of a hierarchical network, the node's size).
    """
    broadcasts = _broadcasts(arch)
    group = fpgas if group is None else group
    if group <= 1:
        return math.inf
    if broadcasts:
        return fpgas * interface_bits_per_s * degree / (m_update * _update_copies(group, fanout))
    return fpgas * fpgas * interface_bits_per_s / (m_message * (group - 1))


def network_limit(fpgas, network_bits_per_s, degree, *, arch, m_update, m_message, group=None, fanout=None):
    """L_net, the limit set by the total network bandwidth; ``math.inf`` for a single FPGA.

    GraVF-M (6): BW_net / ((n-1) m_update / degree). GraVF (7): BW_net n / ((n-1) m_message).
    With ``group`` = g < n (FPGAs of one node of a hierarchical network, BW_net being that node's
    internal network): GraVF-M n BW_net degree / (g (g-1) m_update); GraVF n^2 BW_net /
    (g (g-1) m_message). Both reduce to (6) and (7) for g = n. GraVF-M with the neighbour filter:
    ``fanout`` in place of g - 1 (:func:`interface_limit`).
    """
    broadcasts = _broadcasts(arch)
    group = fpgas if group is None else group
    if group <= 1:
        return math.inf
    if broadcasts:
        return fpgas * network_bits_per_s * degree / (group * _update_copies(group, fanout) * m_update)
    return fpgas * fpgas * network_bits_per_s / (group * (group - 1) * m_message)


def _nodes(fpgas, fpgas_per_node):
    """(k, N): FPGAs per node (at most all of them) and the number of nodes they fill."""
    group = min(fpgas_per_node, fpgas)
    return group, math.ceil(fpgas / group)


def node_interface_limit(fpgas, fpgas_per_node, node_interface_bits_per_s, degree, *, arch, m_update,
                         m_message):
    """Interface limit of the network between nodes of k FPGAs (hierarchical platforms).

    N = ceil(n/k) nodes; a node sends each of its updates once to each other node (GraVF-M:
    k T_FPGA m_update (N-1)/degree <= BW_node_if, which is equation (3) with N in place of n when
    every node is full), or the messages bound for other nodes (GraVF: k T_FPGA m_message (n-k)/n).
    """
    broadcasts = _broadcasts(arch)
    group, nodes = _nodes(fpgas, fpgas_per_node)
    if nodes <= 1:
        return math.inf
    if broadcasts:
        return fpgas * node_interface_bits_per_s * degree / (group * m_update * (nodes - 1))
    return fpgas * fpgas * node_interface_bits_per_s / (group * m_message * (fpgas - group))


def node_network_limit(fpgas, fpgas_per_node, node_network_bits_per_s, degree, *, arch, m_update,
                       m_message):
    """Total-bandwidth limit of the network between nodes (hierarchical platforms).

    GraVF-M: T_sys m_update (N-1)/degree <= BW_node_net (equation (6) with N nodes).
    GraVF: T_sys m_message (n-k)/n <= BW_node_net.
    """
    broadcasts = _broadcasts(arch)
    group, nodes = _nodes(fpgas, fpgas_per_node)
    if nodes <= 1:
        return math.inf
    if broadcasts:
        return node_network_bits_per_s * degree / ((nodes - 1) * m_update)
    return fpgas * node_network_bits_per_s / ((fpgas - group) * m_message)


def pes_needed(t_sys, fpgas, f_clk_hz, cpe):
    """Least p with L_PE >= T_sys: p >= T_sys CPE / (n f) (rounded up, at least 1)."""
    exact = t_sys * cpe / (fpgas * f_clk_hz)
    return max(1, math.ceil(exact - 1e-9))
