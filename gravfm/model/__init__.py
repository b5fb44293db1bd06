"""The analytical performance model of GraVF-M (paper §5; gravfm/model/README.md), its platforms and parameters.

``predict(platform, algorithm_params, vertices, edges, fpgas=None, pes=None, arch=DEFAULT_ARCHITECTURE)``
returns a :class:`Prediction`: every throughput limit, T_sys, the bottleneck and, when not given,
the number of FPGAs and PEs per FPGA chosen by the model. Platforms are TOML files
(:func:`load_platform`); algorithm sizes come from named defaults (:func:`algorithm_params`) or
hardware layouts (:func:`params_from_layouts`). Only |V| and |E| of the graph are needed, plus the
per-superstep message counts for :func:`predict_supersteps`. :func:`choose_architecture` predicts
GraVF-M, GraVF and the hybrid and chooses the best. Pure Python: no Amaranth import.
"""

from .algorithm_params import (
    AlgorithmParams,
    algorithm_params,
    builtin_algorithm_params,
    model_params,
    params_for_algorithm,
    params_from_layouts,
    with_link_overhead,
)
from .choice import ArchitectureChoice, choose_architecture
from .clock import ClockSpec, MetRow
from .limits import (
    channel_memory_bandwidth,
    fpgas_needed,
    intake_limit,
    interface_limit,
    memory_limit,
    memory_limit_granular,
    message_network_limit,
    network_limit,
    node_interface_limit,
    node_network_limit,
    pe_limit,
    pes_needed,
)
from .memory_channels import ChannelSpec
from .platform import (
    FpgaSpec,
    HierarchySpec,
    LatencySpec,
    LinkSpec,
    MemorySpec,
    NetworkSpec,
    Platform,
    builtin_platforms,
    load_platform,
)
from .predict import LIMIT_DESCRIPTIONS, MEMORY_MODELS, Prediction, check_fit, evaluate, predict, sweep
from .supersteps import SuperstepPrediction, predict_supersteps, superstep_latency_cycles

__all__ = [
    "AlgorithmParams",
    "ArchitectureChoice",
    "ChannelSpec",
    "ClockSpec",
    "FpgaSpec",
    "HierarchySpec",
    "LIMIT_DESCRIPTIONS",
    "LatencySpec",
    "LinkSpec",
    "MEMORY_MODELS",
    "MemorySpec",
    "MetRow",
    "NetworkSpec",
    "Platform",
    "Prediction",
    "SuperstepPrediction",
    "algorithm_params",
    "builtin_algorithm_params",
    "builtin_platforms",
    "channel_memory_bandwidth",
    "check_fit",
    "choose_architecture",
    "evaluate",
    "fpgas_needed",
    "intake_limit",
    "interface_limit",
    "load_platform",
    "memory_limit",
    "memory_limit_granular",
    "message_network_limit",
    "model_params",
    "network_limit",
    "node_interface_limit",
    "node_network_limit",
    "params_for_algorithm",
    "params_from_layouts",
    "pe_limit",
    "pes_needed",
    "predict",
    "predict_supersteps",
    "superstep_latency_cycles",
    "sweep",
    "with_link_overhead",
]
