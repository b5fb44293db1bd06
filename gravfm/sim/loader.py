"""What the host writes before a run, and how it reads the answer back.

:func:`build_load` turns (algorithm, graph, partition, :class:`~gravfm.hw.SystemConfig`) into a
:class:`LoadPlan`: the host writes ``(pe, mem, addr, data)`` of docs/host-interface.md —
PE registers, vertex initial states, edge index, edge array — plus the vertex-id mapping needed
to decode the states read back (:meth:`LoadPlan.decode_states`). Both simulation back-ends use it.
This module does not import Amaranth: the word layouts are computed from the algorithm's dicts
(an Amaranth ``StructLayout`` packs fields from the least significant bit, in order).

Memories start zeroed (power-up / a fresh simulation), so index entries of empty edge lists
are not written unless ``write_empty_lists=True``. For an algorithm with ``sparse_apply`` and
``initially_active``, PE register 1 is set and the initially active vertices' local indices are
written to memory 5 (the list round 0's apply visits).

The codes and the load file's format (:meth:`LoadPlan.write_load_file`, read by the compiled
simulator's harness) are those of :mod:`gravfm.hw.protocol`.
"""

from dataclasses import dataclass

import numpy as np

from ..algorithms.base import VERTEXID
from ..architectures import architecture_info
from ..errors import ConfigError
from ..hw.protocol import FpgaRegister, HostMem, PeRegister, split_words, write_load_file
from ..partition import edge_stores, neighbor_filter
from .memory_image import memory_images

__all__ = ["LoadPlan", "build_load", "field_offsets"]



def field_offsets(fields, vertexid_bits):
    """``{field: (offset, width)}`` of a ``{field: width}`` layout packed LSB first, and its total width."""
    offsets, offset = {}, 0
    for name, width in fields.items():
        width = vertexid_bits if width == VERTEXID else int(width)
        offsets[name] = (offset, width)
        offset += width
    return offsets, offset


def _pack(columns, offsets):
    """Pack ``{field: int array}`` into words (uint64 when they fit, else Python ints)."""
    total = sum(width for _, width in offsets.values())
    n = len(next(iter(columns.values()))) if columns else 0
    if total <= 64:
        word = np.zeros(n, dtype=np.uint64)
        for name, (offset, width) in offsets.items():
            word |= (np.asarray(columns[name]).astype(np.uint64) & np.uint64((1 << width) - 1)) \
                << np.uint64(offset)
        return word
    word = np.zeros(n, dtype=object)
    for name, (offset, width) in offsets.items():
        word = word + np.array([(int(v) & ((1 << width) - 1)) << offset for v in columns[name]],
                               dtype=object)
    return word


def _unpack(words, offsets):
    """Inverse of :func:`_pack`: ``{field: int64 array}``."""
    out = {}
    for name, (offset, width) in offsets.items():
        out[name] = np.array([(int(w) >> offset) & ((1 << width) - 1) for w in words], dtype=np.int64)
    return out


def _check_fits(what, values, width, item="item"):
    values = np.asarray(values, dtype=np.int64)
    if values.size and (values.min() < 0 or values.max() >= 1 << width):
        bad = int(np.flatnonzero((values < 0) | (values >= 1 << width))[0])
        raise ConfigError(f"{what}: value {int(values[bad])} ({item} {bad}) does not fit in its {width} bits")


@dataclass(frozen=True, eq=False)
class LoadPlan:
    """Host writes for one run and what is needed to decode the results.

    Attributes
    ----------
    pe, mem, addr : np.ndarray of int64
        One entry per host write, in the order to apply them.
    data : np.ndarray
        Written words (uint64, or Python ints when ``data_bits > 64``).
    data_bits : int
        Width of ``host_wr_data``.
    num_local : np.ndarray of int64
        Vertices per PE (host reads states ``0 .. num_local[g]-1`` of PE ``g``).
    vertex_of_pe : list of np.ndarray
        Original vertex id of every local index, per PE.
    hw_id : np.ndarray of int64
        Hardware id of every original vertex.
    memory_images : tuple of np.ndarray of uint8, or None
        Off-chip edges: each FPGA's memory image (:mod:`gravfm.sim.memory_image`).
    memory_channels, memory_channel_bytes : int
        Off-chip edges: the pseudo-channels the images are split into, and each one's bytes
        (:class:`gravfm.sim.memory_image.MemoryImages`; 1 and 0 for one memory).
    memory : gravfm.sim.memory_params.MemoryLoad, or None
        Off-chip edges: the images with the simulated memory's parameters (the run's plan adds
        them; the back-ends serve the memory ports from it).
    """

    pe: np.ndarray
    mem: np.ndarray
    addr: np.ndarray
    data: np.ndarray
    data_bits: int
    num_local: np.ndarray
    vertex_of_pe: list
    hw_id: np.ndarray
    algorithm: object
    config: object
    memory_images: tuple | None = None
    memory_channels: int = 1
    memory_channel_bytes: int = 0
    memory: object = None

    def __len__(self):
        return len(self.pe)

    @property
    def num_vertices(self):
        return self.hw_id.size

    def decode_states(self, words_per_pe):
        """Vertex-state fields in original vertex order from the words read per PE.

        ``words_per_pe[g]`` holds the state words of local indices ``0 .. num_local[g]-1``.
        Fields listed in ``algorithm.vertexid_fields`` are translated from hardware ids to
        original ids (-1 where a value is no vertex's id).
        """
        offsets, _ = field_offsets(self.algorithm.vertex, self.config.vertexid_bits)
        out = {name: np.zeros(self.num_vertices, dtype=np.int64) for name in offsets}
        for g, words in enumerate(words_per_pe):
            if len(words) != self.num_local[g]:
                raise ValueError(f"PE {g}: {len(words)} state words read, expected {self.num_local[g]}")
            fields = _unpack(words, offsets)
            for name in offsets:
                out[name][self.vertex_of_pe[g]] = fields[name]
        if self.algorithm.vertexid_fields:
            lookup = np.full(1 << self.config.vertexid_bits, -1, dtype=np.int64)
            lookup[self.hw_id] = np.arange(self.num_vertices)
            for name in self.algorithm.vertexid_fields:
                out[name] = lookup[out[name]]
        return out

    def write_load_file(self, path):
        """Write the binary load file (:func:`gravfm.hw.protocol.write_load_file`)."""
        write_load_file(path, self.pe, self.mem, self.addr, split_words(self.data, self.data_bits))


def build_load(algorithm, graph, partition, config, params=None, *, data_bits=None,
               write_empty_lists=False, memory_channels=1):
    """Host writes that load ``graph`` (already prepared) into a system built from ``config``.

    Parameters
    ----------
    algorithm : gravfm.algorithms.Algorithm
    graph : gravfm.graph.Graph
        The graph as the hardware runs it (after ``algorithm.prepare``).
    partition : gravfm.partition.Partition
    config : gravfm.hw.SystemConfig
    params : dict, optional
        Algorithm parameters (defaults filled in).
    data_bits : int, optional
        Width of ``host_wr_data`` (default: the widest word written).
    write_empty_lists : bool
        Also write the zero index entries (when the memories may hold a previous graph).
    memory_channels : int
        Off-chip edges: pseudo-channels of each FPGA's memory, each PE's edges in one
        (:mod:`gravfm.sim.memory_image`); 1 for one memory.

    Raises
    ------
    gravfm.errors.ConfigError
        The partition does not match the configuration, or the graph does not fit: too many
        vertices or edges on a PE, or a value wider than its field (named, with the excess).
    """
    info = architecture_info(config.arch)
    gravf = not info.broadcasts   # GraVF: each PE holds its own vertices' lists
    params = algorithm.params(params)
    _check_partition(graph, partition, config)
    vid = config.vertexid_bits
    # GraVF-M: per PE, every sender's edges into it (index by sender hw id, dst = local index);
    # GraVF baseline: per PE, its own vertices' full lists (index by local index, dst = hw id);
    # hybrid: per scatter unit, its owned senders' edges into its FPGA (index by hw id, dst = hw id).
    stores = edge_stores(graph, partition, config.pe.local_bits, layout=config.arch,
                         weights=_edge_data(algorithm, graph, vid))
    dst_bits = vid if info.message_network else config.pe.local_bits
    _check_edge_capacity(stores, config)

    hw_id = partition.hw_ids(config.pe.local_bits)
    state, vertex_offsets, vertex_bits = _initial_state(algorithm, graph, params, hw_id, vid)
    edge_field_offsets, _ = field_offsets(algorithm.edge, vid)
    edge_offsets = {"dst": (0, dst_bits)}
    edge_offsets.update({name: (dst_bits + o, w) for name, (o, w) in edge_field_offsets.items()})
    edge_bits = dst_bits + sum(w for _, w in edge_field_offsets.values())
    widest = max(vertex_bits, config.pe.edge_addr_bits + config.pe.edge_len_bits, edge_bits,
                 config.pe.local_bits + 1)
    data_bits = widest if data_bits is None else data_bits
    if data_bits < widest:
        raise ConfigError(f"host data width {data_bits} is narrower than the widest word ({widest} bits)")
    round0_list = _round0_list(algorithm, graph, params)

    # Every FPGA has the same top: each learns its index first (addressed by its first PE).
    p = config.pes_per_fpga
    parts = [(f * p, HostMem.FPGA, np.array([FpgaRegister.INDEX]), np.array([f], dtype=np.uint64))
             for f in range(config.fpgas)]   # (pe, mem, addr array, data words)
    vertex_of_pe = []
    for g in range(config.total_pes):
        members = np.asarray(partition.vertices_of_pe(g), dtype=np.int64)
        vertex_of_pe.append(members)
        parts += _vertex_writes(g, members, partition.local_index, round0_list,
                                {name: state[name][members] for name in vertex_offsets}, vertex_offsets)
        if not config.pe.offchip:
            parts += _onchip_edge_writes(g, stores[g], config, gravf=gravf, write_empty_lists=write_empty_lists,
                                         edge_fields=(edge_field_offsets, edge_offsets))
    memory = None
    if config.pe.offchip:
        memory = memory_images(stores, [_edge_words(stores[g], edge_field_offsets, edge_offsets)
                                        for g in range(config.total_pes)], config, edge_bits=edge_bits,
                               channels=memory_channels)
        parts.extend(memory.parts)
    if config.fpgas > 1 and not gravf:   # the GraVF baseline has no neighbor filter
        parts.extend(_filter_writes(graph, partition, config))
    if config.network.hub_path:
        parts += [(g, HostMem.FPGA, np.array([FpgaRegister.HUB_SENDERS]), np.array([hubs], dtype=np.uint64))
                  for g, hubs in enumerate(partition.hub_senders)]
    pe, mem, addr, data = _concatenate(parts)
    return LoadPlan(pe=pe, mem=mem, addr=addr, data=data, data_bits=data_bits,
                    num_local=partition.vertices_per_pe.astype(np.int64),
                    vertex_of_pe=vertex_of_pe, hw_id=hw_id, algorithm=algorithm, config=config,
                    memory_images=memory.images if memory else None,
                    memory_channels=memory.channels if memory else 1,
                    memory_channel_bytes=memory.channel_bytes if memory else 0)


def _check_partition(graph, partition, config):
    """The partition matches the system and no PE gets more vertices than it holds."""
    if partition.num_pes != config.total_pes:
        raise ConfigError(f"partition has {partition.num_pes} PEs but the system has {config.total_pes}")
    if partition.num_vertices != graph.num_vertices:
        raise ConfigError(f"partition covers {partition.num_vertices} vertices, graph has {graph.num_vertices}")
    if partition.hubs is not None and partition.hubs.any() and not config.network.hub_path:
        raise ConfigError("the partition has hub senders but the system has no hub path (hub_path = false): "
                          "their edges would be dealt to units that never see their updates")
    capacity = config.pe.vertices_per_pe
    busiest = int(partition.vertices_per_pe.max()) if graph.num_vertices else 0
    if busiest > capacity:
        g = int(np.argmax(partition.vertices_per_pe))
        raise ConfigError(f"PE {g} gets {busiest} vertices but holds at most {capacity} "
                          f"(local_bits={config.pe.local_bits}): {busiest - capacity} too many")


def _initial_state(algorithm, graph, params, hw_id, vid):
    """The initial state's fields (vertex ids as hardware ids), checked against their widths;
    returns ``(state, vertex field offsets, vertex bits)``."""
    state = algorithm.initial_state_arrays(graph, params)
    # "No vertex" (-1) is stored as the all-ones id, which decodes back to -1 unless a vertex
    # happens to have that hardware id (the last slot of the last PE of a power-of-two system).
    none = (1 << vid) - 1
    for name in algorithm.vertexid_fields:
        original = state[name]
        if original.size and original.max() >= graph.num_vertices:
            raise ConfigError(f"initial state field {name!r} holds vertex {int(original.max())}, "
                              f"but the graph has {graph.num_vertices} vertices")
        state[name] = np.where(original >= 0, hw_id[np.clip(original, 0, None)], none)
    vertex_offsets, vertex_bits = field_offsets(algorithm.vertex, vid)
    for name, (_, width) in vertex_offsets.items():
        _check_fits(f"algorithm {algorithm.name!r}: initial state field {name!r}", state[name], width, "vertex")
    return state, vertex_offsets, vertex_bits


def _round0_list(algorithm, graph, params):
    """Sparse apply: which vertices round 0's apply visits (None: all of them)."""
    if not (algorithm.sparse_apply and algorithm.initially_active is not None):
        return None
    round0_list = np.asarray(algorithm.initially_active(graph, params), dtype=bool)
    if round0_list.shape != (graph.num_vertices,):
        raise ConfigError(f"algorithm {algorithm.name!r}: initially_active has shape "
                          f"{round0_list.shape}, expected ({graph.num_vertices},)")
    return round0_list


def _vertex_writes(g, members, local_index, round0_list, state, vertex_offsets):
    """PE ``g``'s registers, round 0's list and vertex words (``state``: its members' fields)."""
    parts = [(g, HostMem.REGISTERS, np.array([PeRegister.NUM_LOCAL]), np.array([members.size], dtype=np.uint64))]
    if round0_list is not None:
        # Round 0's apply visits only these vertices (register 1 says the list is loaded).
        listed = local_index[members[round0_list[members]]].astype(np.uint64)
        parts.append((g, HostMem.REGISTERS, np.array([PeRegister.SPARSE_ROUND0]), np.array([1], dtype=np.uint64)))
        parts.append((g, HostMem.APPLY_LIST, np.arange(listed.size), listed))
    if members.size:
        parts.append((g, HostMem.VERTEX, np.arange(members.size), _pack(state, vertex_offsets)))
    return parts


def _onchip_edge_writes(g, store, config, *, gravf, write_empty_lists, edge_fields):
    """PE ``g``'s edge index and edge array, on chip (``edge_fields``: the edge data's offsets and
    the edge word's, as :func:`_edge_words` takes them)."""
    parts = []
    entries = np.arange(store.length.size) if write_empty_lists else np.flatnonzero(store.length)
    if entries.size:
        index_offsets = {"start": (0, config.pe.edge_addr_bits),
                         "length": (config.pe.edge_addr_bits, config.pe.edge_len_bits)}
        words = _pack({"start": store.start[entries], "length": store.length[entries]}, index_offsets)
        # The GraVF index is by local index; the hardware addresses it by the sender's hw id.
        addresses = (g << config.pe.local_bits) | entries if gravf else entries
        parts.append((g, HostMem.EDGE_INDEX, addresses, words))
    if store.num_edges:
        parts.append((g, HostMem.EDGES, np.arange(store.num_edges), _edge_words(store, *edge_fields)))
    return parts


def _concatenate(parts):
    """``(pe, mem, addr, data)`` arrays of the host writes listed as ``(pe, mem, addresses, words)``."""
    pe = np.concatenate([np.full(len(a), g, dtype=np.int64) for g, _, a, _ in parts])
    mem = np.concatenate([np.full(len(a), code, dtype=np.int64) for _, code, a, _ in parts])
    addr = np.concatenate([np.asarray(a, dtype=np.int64) for _, _, a, _ in parts])
    if any(d.dtype == object for *_, d in parts):
        data = np.concatenate([np.asarray(d, dtype=object) for *_, d in parts])
    else:
        data = np.concatenate([d for *_, d in parts]).astype(np.uint64)
    return pe, mem, addr, data


def _check_edge_capacity(stores, config):
    """On chip a PE holds at most ``edges_per_pe`` edges; off chip, its longest list does."""
    if config.pe.offchip:
        longest = [int(store.length.max()) if store.length.size else 0 for store in stores]
        what = "edges in one list"
    else:
        longest = [int(count) for count in stores.edges_per_pe]
        what = "edges"
    if longest and max(longest) > config.pe.edges_per_pe:
        g = int(np.argmax(longest))
        raise ConfigError(f"PE {g} gets {longest[g]} {what} but holds at most {config.pe.edges_per_pe} "
                          f"(edges_per_pe): {longest[g] - config.pe.edges_per_pe} too many")


def _edge_words(store, edge_field_offsets, edge_offsets):
    """A store's edges packed as edge words (destination, then the edge data)."""
    columns = {"dst": store.destination}
    for name in edge_field_offsets:
        columns[name] = store.weights[name] if isinstance(store.weights, dict) else store.weights
    return _pack(columns, edge_offsets)


def _filter_writes(graph, partition, config):
    """Neighbor-filter words (mem 4, address = local index) of every PE; zero words are skipped."""
    bitmap = neighbor_filter(graph, partition)
    parts = []
    for g in range(config.total_pes):
        words = _by_link(bitmap.words_of_pe(partition, g, config.pe.local_bits), g // config.pes_per_fpga)
        entries = np.flatnonzero(words)
        if entries.size:
            parts.append((g, HostMem.FILTER, entries, words[entries].astype(np.uint64)))
    return parts


def _by_link(words, fpga):
    """Filter words with bit ``f`` per FPGA as FPGA ``fpga``'s top reads them: bit ``k`` for its
    link ``k`` (to ``peers_of(fpga)[k]``), its own bit dropped."""
    words = np.asarray(words, dtype=np.uint64)
    below = words & np.uint64((1 << fpga) - 1)
    return below | ((words >> np.uint64(fpga + 1)) << np.uint64(fpga))


def _edge_data(algorithm, graph, vertexid_bits):
    """Edge data of a single-field edge layout in CSR order (None without edge data)."""
    if not algorithm.edge:
        return None
    if len(algorithm.edge) != 1:
        raise ConfigError(f"algorithm {algorithm.name!r}: only one edge-data field is supported, "
                          f"not {list(algorithm.edge)}")
    (name, width), = algorithm.edge.items()
    values = np.asarray(algorithm.edge_data(graph)[name], dtype=np.int64)
    _check_fits(f"edge data field {name!r}", values, vertexid_bits if width == VERTEXID else width)
    return values
