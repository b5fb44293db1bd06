"""Stage 6, verify: the one rule by which a run is verified."""

from dataclasses import dataclass

__all__ = ["Verdict", "verify"]


@dataclass(frozen=True)
class Verdict:
    """``ok`` only when the run terminated without a link error, its answer passes the algorithm's
    check against the reference, and the hardware sent as many messages as the reference;
    ``detail`` says why not (or what the check reported)."""

    ok: bool
    detail: str


def verify(prepared, readback):
    """Judge ``readback`` (a :class:`~gravfm.sim.readback.Readback`) against ``prepared``'s reference."""
    if readback.status == "link_error":
        return Verdict(False, f"link error: {readback.diagnosis[0]}")
    if readback.status != "done":
        return Verdict(False, f"simulation did not terminate: {readback.status}")
    ok, detail = prepared.algorithm.check(prepared.graph, prepared.params, readback.state, prepared.reference)
    if ok and readback.messages != prepared.reference_messages:
        return Verdict(False, f"answer matches, but the hardware sent {readback.messages} messages where the "
                              f"reference sends {prepared.reference_messages}")
    return Verdict(bool(ok), detail)
