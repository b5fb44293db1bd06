"""Stage 6, verify: the one rule by which a run is verified."""

from dataclasses import dataclass

from ..algorithms import REGISTRY

__all__ = ["Verdict", "verify"]


@dataclass(frozen=True)
class Verdict:
    """``ok`` only when the run terminated without a link error, its answer passes the algorithm's
    check against the reference, and the hardware sent as many messages as the reference;
    ``detail`` says why not (or what the check reported)."""

    ok: bool
    detail: str


def verify(prepared, readback, *, partition_hint=True):
    """Judge ``readback`` (a :class:`~gravfm.sim.readback.Readback`) against ``prepared``'s reference.

    ``partition_hint``: a user's algorithm failing on several PEs gets a pointer to
    :func:`gravfm.flow.check_partition_independence` (which itself does without it).
    """
    if readback.status == "link_error":
        return Verdict(False, f"link error: {readback.diagnosis[0]}")
    if readback.status != "done":
        return Verdict(False, f"simulation did not terminate: {readback.status}")
    ok, detail = prepared.algorithm.check(prepared.graph, prepared.params, readback.state, prepared.reference)
    if ok and readback.messages != prepared.reference_messages:
        ok, detail = False, (f"answer matches, but the hardware sent {readback.messages} messages where the "
                             f"reference sends {prepared.reference_messages}")
    if not ok and partition_hint and _users_algorithm_on_several_pes(prepared, readback):
        hint = ("if it verifies on 1 PE, a kernel may compare hardware ids, which depend on the partition: "
                "gravfm.flow.check_partition_independence(algorithm) tells (docs/kernels.md)")
        detail = f"{detail}; {hint}" if detail else hint
    return Verdict(bool(ok), detail)


def _users_algorithm_on_several_pes(prepared, readback):
    """A user's algorithm (not a built-in) run on several PEs: its hardware ids depend on the partition."""
    return prepared.algorithm not in REGISTRY.values() and len(readback.counters["messages"]) > 1
