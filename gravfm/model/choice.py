"""Choosing the architecture for a graph and a platform: every architecture's prediction, the best.

GraVF-M, GraVF and the hybrid (:data:`gravfm.architectures.ARCHITECTURES`) are each predicted by
:func:`gravfm.model.predict` for the same platform, graph and algorithm (n and p chosen for each
unless given), and the one with the highest T_sys is the model's choice (the first of the list
among equals). An architecture the platform cannot describe (the hybrid without a stated message
network) is left out with its reason. Predictions only (each architecture's hardware runs with
``gravfm run --arch``).
"""

from dataclasses import dataclass

from ..architectures import ARCHITECTURES, architecture_info
from ..errors import ConfigError
from .predict import _resolve, predict

__all__ = ["ArchitectureChoice", "choose_architecture"]


@dataclass(frozen=True)
class ArchitectureChoice:
    """Each architecture's prediction and the best (predictions, not measurements).

    Attributes
    ----------
    predictions : dict of str to Prediction
        The architectures the model predicted, in :data:`~gravfm.architectures.ARCHITECTURES` order.
    left_out : dict of str to str
        The architectures it could not predict on this platform, with the reason (one line).
    best : str
        The architecture of the highest predicted T_sys.
    """

    predictions: dict
    left_out: dict
    best: str

    @property
    def best_prediction(self):
        """The :class:`~gravfm.model.Prediction` of :attr:`best`."""
        return self.predictions[self.best]

    def to_dict(self):
        """Plain-data form for JSON."""
        return {"kind": "prediction", "best": self.best,
                "architectures": {arch: {"t_sys_mteps": p.t_sys_mteps, "bottleneck": p.bottleneck, "fpgas": p.fpgas,
                                         "pes_per_fpga": p.pes, "built": architecture_info(arch).built}
                                  for arch, p in self.predictions.items()},
                "left_out": dict(self.left_out)}


def choose_architecture(platform, algorithm_params, vertices, edges, *, fpgas=None, pes=None, archs=ARCHITECTURES,
                        **options):
    """Predict every architecture in ``archs`` and choose the best.

    Parameters
    ----------
    platform, vertices, edges, fpgas, pes
        As for :func:`gravfm.model.predict`.
    algorithm_params : AlgorithmParams or str or dict
        The algorithm's sizes, or a dict of architecture name to sizes (where they differ by
        architecture, e.g. the link check's frame counted in the item each sends).
    archs : sequence of str
        The architectures to compare (default all).
    **options
        Other keywords of :func:`gravfm.model.predict` (``memory_model``, ...).

    Returns
    -------
    ArchitectureChoice

    Raises
    ------
    ConfigError
        No architecture could be predicted (the first one's reason, e.g. a bad graph size).
    """
    predictions, left_out = {}, {}
    for arch in archs:
        params = algorithm_params[arch] if isinstance(algorithm_params, dict) else algorithm_params
        platform, params = _resolve(platform, params)
        try:
            predictions[arch] = predict(platform, params, vertices, edges, fpgas=fpgas, pes=pes, arch=arch, **options)
        except ConfigError as error:  # e.g. the hybrid on a platform without a message network
            left_out[arch] = str(error)
    if not predictions:
        raise ConfigError(next(iter(left_out.values())))
    best = max(predictions, key=lambda arch: (predictions[arch].t_sys, -archs.index(arch)))
    return ArchitectureChoice(predictions=predictions, left_out=left_out, best=best)
