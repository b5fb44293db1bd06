"""Stage 4, load: the host writes that fill a top with the prepared graph, and their decoder."""

from ..sim.loader import build_load

__all__ = ["load"]


def load(prepared, plan, top):
    """The :class:`gravfm.sim.loader.LoadPlan` of ``prepared`` on ``top`` (built from ``plan``):
    host writes before ``start``, and ``decode_states`` for the words read back."""
    return build_load(prepared.algorithm, prepared.graph, plan.partition, plan.config, prepared.params,
                      data_bits=len(top.host_wr_data), memory_channels=plan.memory_channels)
