"""What a measured point's own counters say about where its cycles went.

A claim that does not hold is explained from the run, not guessed: these read the hardware's
counters stored with each point (``measured``) and set them beside the figures of the platform
file the run simulated. Each returns None when the point has nothing to say (edges on chip, no
counters).
"""

from dataclasses import dataclass

from ..model import load_platform

__all__ = ["MemoryWait", "SparseSuperstep", "memory_wait", "sparse_supersteps"]


@dataclass(frozen=True)
class MemoryWait:
    """Off-chip edge reads of one run (measured), and the request-rate bound they imply.

    A PE keeps at most ``in_flight`` edge-list reads outstanding, each taking the memory's round
    trip, so it issues at most ``in_flight / round_trip`` requests a cycle whatever the bytes: a
    PE whose lists are short (a vertex's edges spread over many PEs) needs a request for every
    few edges, and that rate, not the memory's bandwidth, can bound it.
    """

    wait_share: float          #: PE-cycles scatter held a list but waited for memory (measured)
    requests_per_edge: float   #: edge-list read requests per traversed edge (measured)
    round_trip: float          #: mean cycles per request without queueing (the platform file's latency and jitter)
    in_flight: int             #: requests a PE may have outstanding (the hardware's)
    bound_cycles: float        #: a PE's requests x round trip / in flight (the mean PE; a lower bound)
    cycles: int                #: the run's measured cycles

    def describe(self):
        return (f"PEs waited for off-chip memory {100 * self.wait_share:.0f}% of their cycles, "
                f"{self.requests_per_edge:.2f} read requests per edge; at {self.in_flight} in flight and "
                f"~{self.round_trip:.0f} cycles each a PE issues at most {self.in_flight / self.round_trip:.2f} a "
                f"cycle: {self.bound_cycles / 1e3:.0f}k of the {self.cycles / 1e3:.0f}k cycles measured")


def memory_wait(result):
    """The :class:`MemoryWait` of a stored point, or None (edges on chip, or no memory counters)."""
    point, measured = result["point"], result["measured"]
    memory = measured.get("memory")
    if point.get("edge_memory") != "offchip" or not memory or not memory.get("requests") or not measured.get("cycles"):
        return None
    pes = point["fpgas"] * point["pes"]
    spec = load_platform(point["platform"]).memory
    round_trip = spec.round_trip_cycles   # queueing in the memory's banks only adds to it
    in_flight = memory["requests_in_flight"]
    return MemoryWait(
        wait_share=memory["wait_cycles"] / (pes * measured["cycles"]),
        requests_per_edge=memory["requests"] / measured["messages"] if measured.get("messages") else float("nan"),
        round_trip=round_trip, in_flight=in_flight,
        bound_cycles=memory["requests"] / pes * round_trip / in_flight, cycles=measured["cycles"])


@dataclass(frozen=True)
class SparseSuperstep:
    """A superstep that ran far below the run's best rate (measured per-superstep rows): its
    updates (active vertices) against its edges. A GraVF-M PE takes every update that reaches its
    FPGA, ``lanes`` a cycle, whatever its share of the edges: with few edges per update the
    updates, not the edges, fill its cycles."""

    superstep: int
    updates: int
    edges: int
    cycles: int
    best_edges_per_cycle: float
    lanes: int

    def describe(self):
        return (f"superstep {self.superstep}: {self.updates:,} updates for {self.edges:,} edges "
                f"({self.edges / self.updates:.1f} per update), {self.edges / self.cycles:.1f} edges a cycle against "
                f"{self.best_edges_per_cycle:.1f} at best; taking {self.lanes} updates a cycle, a PE needs up to "
                f"{self.updates / self.lanes / 1e3:.0f}k of the superstep's {self.cycles / 1e3:.0f}k cycles for them")


def sparse_supersteps(result, lanes, *, below=0.6, share=0.05):
    """The supersteps of a stored GraVF-M point that ran below ``below`` of its best superstep's
    edges per cycle and took at least ``share`` of its cycles (messages of row r are handled in the
    cycles of row r + 1)."""
    rows, cycles = result.get("per_superstep") or [], result["measured"].get("cycles") or 0
    steps = [(r, rows[r]["active"], rows[r]["messages"], rows[r + 1]["cycles"]) for r in range(len(rows) - 1)
             if rows[r]["messages"] and rows[r + 1]["cycles"]]
    if not steps or not cycles:
        return []
    best = max(edges / spent for _, _, edges, spent in steps)
    return [SparseSuperstep(r, active, edges, spent, best, lanes) for r, active, edges, spent in steps
            if edges / spent < below * best and spent >= share * cycles and active]
