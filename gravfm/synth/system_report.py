"""Cost of a generated FPGA top: resources per FPGA and per PE, Fmax, and how many PEs fit a device.

Logic comes from synthesising the top (:func:`gravfm.synth.report.synthesize`) at a small build
capacity; memory comes from the layouts at the capacity of a stated graph, because block RAM grows
with the graph while logic does not. A PE needs, on chip: its vertex states, its update queue, and
(unless edges live off chip, as on the paper's HMC platform) its edge index — one entry for EVERY
vertex of the graph in the GraVF-M layout — and its edge array.
"""

import math
from dataclasses import dataclass

from ..architectures import DEFAULT_ARCHITECTURE
from ..flow.planning import stated_capacity, system_config
from ..hw.fpga import FpgaTop
from ..hw.layouts import KernelLayouts
from ..hw.multi import MultiFpgaSystem
from ..hw.unused import silence_unused
from .report import synthesize
from .targets import TARGETS, get_target

__all__ = ["GraphCapacity", "pe_memory_bits", "config_memory_bits", "on_chip_memories", "blocks_for", "synth_system",
           "fpga_top_design"]


@dataclass(frozen=True)
class GraphCapacity:
    """The graph a design must hold: vertices and edges of the whole graph."""

    vertices: int
    edges: int


def _capacity_config(algorithm, fpgas, pes, capacity):
    """One FPGA of ``pes`` PEs sized for its share of ``capacity`` (a graph spread over all FPGAs)."""
    local_bits, edges_per_pe = stated_capacity(capacity.vertices, capacity.edges, fpgas * pes)
    return system_config(algorithm, fpgas=1, pes=pes, local_bits=local_bits, edges_per_pe=edges_per_pe)


def pe_memory_bits(algorithm, *, fpgas, pes, capacity):
    """Bits of each on-chip memory of one GraVF-M PE for ``capacity``: {name: (depth, width)} (the
    PE-fit estimate's, for every architecture)."""
    return config_memory_bits(_capacity_config(algorithm, fpgas, pes, capacity))


def config_memory_bits(config):
    """Bits of each on-chip memory of one PE of ``config`` (a SystemConfig): {name: (depth, width)}."""
    layouts = KernelLayouts(config.algorithm, config)
    per_pe = config.pe.vertices_per_pe
    return {
        "vertex_state": (per_pe, layouts.vertex.size),
        "update_queue": (config.pe.update_queue_depth, layouts.net_update.size),
        "edge_index": (config.total_pes * per_pe, layouts.edge_index.size),
        "edge_array": (config.pe.edges_per_pe, layouts.edge_word.size),
    }


def blocks_for(depth, width, block_bits):
    """Block RAMs for a depth x width memory, each block at its widest useful aspect ratio."""
    return math.ceil(depth * width / block_bits) if depth * width else 0


def on_chip_memories(memories, offchip_edges):
    """The memories of :func:`config_memory_bits` that stay on chip."""
    if offchip_edges:
        return {k: v for k, v in memories.items() if k not in ("edge_index", "edge_array")}
    return memories


def _pes_that_fit(algorithm, device, luts_per_pe, capacity, offchip_edges, fpgas=1, most=512):
    """Largest p with p PEs' LUTs and block RAMs within ``device``, for a graph of ``capacity``
    spread over ``fpgas`` such devices.

    Each PE's vertex and edge memories shrink as p grows; its GraVF-M edge index does not.
    """
    best = {"pes_fit": 0, "bram_blocks_per_pe": None, "luts_per_pe_estimate": round(luts_per_pe, 1)}
    for p in range(1, most + 1):
        if p * luts_per_pe > device.luts:
            best["limited_by"] = "luts"
            break
        memories = on_chip_memories(pe_memory_bits(algorithm, fpgas=fpgas, pes=p, capacity=capacity), offchip_edges)
        blocks = sum(blocks_for(d, w, device.bram_block_bits) for d, w in memories.values())
        if p * blocks > device.bram_blocks:
            best["limited_by"] = "bram"
            if p == 1:  # not even one PE fits: report what one would need
                best["bram_blocks_per_pe"] = blocks
            break
        best.update(pes_fit=p, bram_blocks_per_pe=blocks)
    return best


def fpga_top_design(algorithm, *, pes, fpgas=1, offchip_edges=False, build_local_bits=8, build_edges_per_pe=4096,
                    update_lanes=None, arch=DEFAULT_ARCHITECTURE):
    """The FPGA top :func:`synth_system` synthesises, unelaborated, with its configuration:
    ``(config, top)`` (parameters as there)."""
    # Off chip, the PEs' AXI4 read ports are the top's ``mem`` ports, wrapped like the host ports.
    config = system_config(algorithm, fpgas=fpgas, pes=pes, local_bits=build_local_bits,
                           edges_per_pe=build_edges_per_pe, update_lanes=update_lanes, arch=arch,
                           edge_memory={"edge_memory": "offchip"} if offchip_edges else None)
    if fpgas == 1:
        return config, FpgaTop(config)
    system = MultiFpgaSystem(config)
    silence_unused(system)  # only builds FPGA 0's top; never elaborated itself
    return config, system.fpga_top(0)


def synth_system(algorithm, *, pes, target, workdir, capacity, offchip_edges=False, fpgas=1,
                 build_local_bits=8, build_edges_per_pe=4096, update_lanes=None, freq_mhz=None, seed=1,
                 router="router1", arch=DEFAULT_ARCHITECTURE):
    """Synthesise one FPGA top of ``pes`` PEs and estimate how many PEs fit each known device.

    With ``fpgas`` > 1 the top is FPGA 0 of that many (GraVF-M): its PEs, network, neighbour
    filter and link ends, the link ports reaching the wrapper like the host ports. The update
    lanes and the FIFO depths default to what ``gravfm run`` builds for ``fpgas`` x ``pes``.
    ``freq_mhz``: the clock nextpnr is asked for (default: the target's); ``seed``: nextpnr's
    placement seed; ``router``: nextpnr's router (``router1`` or ``router2``); ``arch``: the
    architecture built (:data:`gravfm.architectures.BUILT_ARCHITECTURES`).
    """
    config, top = fpga_top_design(algorithm, pes=pes, fpgas=fpgas, offchip_edges=offchip_edges,
                                  build_local_bits=build_local_bits, build_edges_per_pe=build_edges_per_pe,
                                  update_lanes=update_lanes, arch=arch)
    update_lanes = config.pe.update_lanes
    result = synthesize(top, target=target, workdir=workdir, name="fpga_top", freq_mhz=freq_mhz, seed=seed,
                         router=router)
    memories = on_chip_memories(pe_memory_bits(algorithm, fpgas=fpgas, pes=pes, capacity=capacity), offchip_edges)
    luts_per_pe = result.luts / pes
    fits = {name: _pes_that_fit(algorithm, device, luts_per_pe, capacity, offchip_edges, fpgas)
            for name, device in TARGETS.items()}
    for name, fit in fits.items():
        fit["note"] = ("LUTs per PE from this synthesis" if name == target else
                       f"LUTs per PE from the {target} synthesis (LUT sizes differ between families)")
    return {
        "algorithm": algorithm.name, "arch": arch, "target": target, "description": get_target(target).description,
        "pes": pes, "fpgas": fpgas, "build": {"local_bits": build_local_bits, "edges_per_pe": build_edges_per_pe,
                              "update_lanes": update_lanes, "network_fifo_depth": config.network.fifo_depth,
                              "link_fifo_depth": config.network.link_fifo_depth if fpgas > 1 else None},
        "fpga": result.to_dict(),
        "per_pe": {"luts": round(result.luts / pes, 1), "flip_flops": round(result.flip_flops / pes, 1),
                   "bram_blocks": round(result.bram_blocks / pes, 2)},
        "capacity": {"vertices": capacity.vertices, "edges": capacity.edges,
                     "offchip_edges": offchip_edges,
                     "pe_memories_bits": {k: d * w for k, (d, w) in memories.items()}},
        "fits": fits,
    }
