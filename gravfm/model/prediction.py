"""One prediction of the analytical model: :class:`Prediction` and the limits' descriptions.

Kept apart from :mod:`gravfm.model.predict`, which computes it, so that the printers and the
superstep model read one small type.
"""

import math
from dataclasses import dataclass

from .units import to_mteps

__all__ = ["LIMIT_DESCRIPTIONS", "MEMORY_MODELS", "Prediction"]

LIMIT_DESCRIPTIONS = {
    "L_PE": "PE throughput (n p f / CPE)",
    "L_mem": "memory bandwidth for edge reads",
    "L_if": "network interface of one FPGA",
    "L_net": "total network bandwidth",
    "L_if_node": "interface of one node to the other nodes",
    "L_net_node": "total bandwidth between nodes",
    "L_intake": "update intake of a PE (lanes per cycle)",
    "L_msgnet": "on-chip message network",
    "L_linkend": "link ends (one update per cycle per peer stream)",
}

MEMORY_MODELS = ("simple", "granular", "layout")


@dataclass(frozen=True)
class Prediction:
    """What the analytical model predicts for one configuration (a prediction, not a measurement).

    Attributes
    ----------
    platform, algorithm, arch : str
        Platform name, algorithm name, architecture name (:data:`gravfm.architectures.ARCHITECTURES`).
    vertices, edges : int
        |V| and |E| of the graph.
    fpgas, pes : int
        n_FPGA and PEs per FPGA of the configuration.
    limits : dict of str to float
        Each limit that applies, in edges per second (keys of :data:`LIMIT_DESCRIPTIONS`). A single
        FPGA has no network limit; on-chip edge storage has no memory limit.
    t_sys : float
        Predicted system throughput, edges per second: the smallest limit.
    bottleneck : str
        Key of the smallest limit.
    fits : bool
        Whether n >= |V| m_vertex / M holds.
    fpgas_needed : int
        Smallest n for which the graph fits.
    chosen : bool
        True when the model chose n and/or p (they were not both given).
    memory_model : str
        Which L_mem enters T_sys: ``"simple"`` (equation (2)), ``"granular"`` (worst-case access
        granularity) or ``"layout"`` (the words this implementation's layout reads per pass).
    cpe : float
        CPE used for L_PE.
    details : dict
        Other figures: every memory limit (and the layout's words per FPGA per pass, with their
        source; pseudo-channel memory: its channels and PEs per channel), BW_if used (GiB/s),
        |E|/|V|, the update lanes of L_intake, the message network's efficiency.
    notes : tuple of str
        Caveats: extrapolated figures, estimates, lower bounds, defaults used.
    """

    platform: str
    algorithm: str
    arch: str
    vertices: int
    edges: int
    fpgas: int
    pes: int
    limits: dict
    t_sys: float
    bottleneck: str
    fits: bool
    fpgas_needed: int
    chosen: bool
    memory_model: str
    cpe: float
    details: dict
    notes: tuple

    @property
    def t_sys_mteps(self):
        """T_sys in MTEPS."""
        return to_mteps(self.t_sys)

    @property
    def degree(self):
        """Average degree |E|/|V|."""
        return self.edges / self.vertices

    def to_dict(self):
        """Plain-data form for JSON (limits in MTEPS; infinite limits are left out)."""
        return {
            "kind": "prediction",
            "model": "GraVF-M analytical performance model (Engelhardt & So, TRETS 2019, section 5)",
            "platform": self.platform,
            "algorithm": self.algorithm,
            "arch": self.arch,
            "vertices": self.vertices,
            "edges": self.edges,
            "average_degree": self.degree,
            "fpgas": self.fpgas,
            "pes_per_fpga": self.pes,
            "chosen_by_model": self.chosen,
            "fits": self.fits,
            "fpgas_needed": self.fpgas_needed,
            "memory_model": self.memory_model,
            "cpe": self.cpe,
            "limits_mteps": {name: to_mteps(value) for name, value in self.limits.items()},
            "bottleneck": self.bottleneck,
            "t_sys_mteps": self.t_sys_mteps,
            "details": {key: (None if isinstance(value, float) and math.isinf(value) else value)
                        for key, value in self.details.items()},
            "notes": list(self.notes),
        }
