"""Kernel port signatures and the check that a user's kernel matches them.

A kernel author builds their component with the signature returned here, e.g.::

    class MyGather(wiring.Component):
        def __init__(self, layouts):
            super().__init__(gather_signature(layouts))

:func:`build_kernels` calls the algorithm's three factories and rejects, with a
:class:`~gravfm.errors.ConfigError` naming kernel, port and field, any kernel whose ports do not
carry exactly the fields and widths of :class:`~gravfm.hw.layouts.KernelLayouts`.
"""

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..errors import ConfigError
from .unused import silence_unused

__all__ = ["KernelSignature", "gather_signature", "apply_signature", "scatter_signature", "combiner_signature",
           "build_kernels", "kernel_traits", "KERNEL_PORTS"]


class KernelSignature(wiring.Signature):
    """The ports of a kernel and its timing traits, as ``stream.Signature`` carries ``always_valid``.

    Parameters
    ----------
    members : dict
        The ports (:func:`gather_signature` and its siblings build them).
    latency : int or None
        Cycles from an input's handshake to its output's; None: declared none (0 for the PE's
        sizing). The kernel contract (:mod:`gravfm.hw.kernel_contract`) measures it.
    combinational : bool
        A gather whose output comes in its input's cycle and which is ready when its output is:
        the PE may forward its results (:mod:`gravfm.hw.pe.gather_forward`).
    """

    def __init__(self, members, *, latency=None, combinational=False):
        if latency is not None and (not isinstance(latency, int) or isinstance(latency, bool) or latency < 0):
            raise TypeError(f"Kernel latency must be None or a non-negative integer, not {latency!r}")
        if not isinstance(combinational, bool):
            raise TypeError(f"Kernel combinational must be True or False, not {combinational!r}")
        self._latency, self._combinational = latency, combinational
        super().__init__(members)

    @property
    def latency(self):
        return self._latency

    @property
    def combinational(self):
        return self._combinational

    def __eq__(self, other):
        return (isinstance(other, KernelSignature) and self.members == other.members
                and (self.latency, self.combinational) == (other.latency, other.combinational))

    def __repr__(self):
        return (f"KernelSignature({dict(self.members)!r}, latency={self.latency!r}, "
                f"combinational={self.combinational!r})")


def kernel_traits(component):
    """``(latency, combinational)`` a kernel declares on its signature (``(None, False)`` for a
    plain ``wiring.Signature``)."""
    signature = getattr(component, "signature", None)   # any object: one without a signature declares nothing
    if isinstance(signature, KernelSignature):
        return signature.latency, signature.combinational
    return None, False


def _attribute(component, name):
    """Whether ``component`` sets ``name`` as a plain attribute (a property is not one)."""
    if name in vars(component):
        return True
    for klass in type(component).__mro__:
        if name in vars(klass):
            return not isinstance(vars(klass)[name], property)
    return False


def gather_signature(layouts, *, latency=None, combinational=False):
    """Ports of a gather kernel: ``i`` (In stream gather_in), ``o`` (Out stream gather_out)."""
    return KernelSignature({"i": In(stream.Signature(layouts.gather_in)),
                            "o": Out(stream.Signature(layouts.gather_out))},
                           latency=latency, combinational=combinational)


def apply_signature(layouts, *, latency=None):
    """Ports of an apply kernel: ``i``, ``state_o`` (always ready), ``update_o``."""
    return KernelSignature({"i": In(stream.Signature(layouts.apply_in)),
                            "state_o": Out(stream.Signature(layouts.apply_state, always_ready=True)),
                            "update_o": Out(stream.Signature(layouts.apply_update))}, latency=latency)


def scatter_signature(layouts, *, latency=None):
    """Ports of a scatter kernel: ``i`` (In stream scatter_in), ``o`` (Out stream scatter_out)."""
    return KernelSignature({"i": In(stream.Signature(layouts.scatter_in)),
                            "o": Out(stream.Signature(layouts.scatter_out))}, latency=latency)


def combiner_signature(layouts, *, latency=None):
    """Ports of an optional combiner kernel: ``i`` (In stream of ``{a, b}``, two messages to one
    vertex), ``o`` (Out stream of the one message they amount to)."""
    pair = data.StructLayout({"a": layouts.message, "b": layouts.message})
    return KernelSignature({"i": In(stream.Signature(pair)),
                            "o": Out(stream.Signature(layouts.message))}, latency=latency)


KERNEL_PORTS = {"gather": gather_signature, "apply": apply_signature, "scatter": scatter_signature,
                "combiner": combiner_signature}


def _layout_difference(got, expected, prefix=""):
    """First difference between two shapes as a phrase, or None when they are equal."""
    if isinstance(expected, data.StructLayout):
        if not isinstance(got, data.StructLayout):
            return f"{prefix or 'payload'} is {got!r}, expected a struct"
        for name, field in expected:
            path = f"{prefix}.{name}" if prefix else name
            try:
                got_field = got[name]
            except KeyError:
                return f"field {path!r} is missing"
            difference = _layout_difference(got_field.shape, field.shape, path)
            if difference:
                return difference
        extra = [name for name, _ in got if name not in dict(iter(expected))]
        if extra:
            path = f"{prefix}.{extra[0]}" if prefix else extra[0]
            return f"field {path!r} is not part of the interface"
        return None
    got_shape = data.Layout.cast(got) if isinstance(got, data.Layout) else got
    if isinstance(got_shape, data.Layout) or got_shape != expected:
        got_width = got_shape.size if isinstance(got_shape, data.Layout) else got_shape.width
        want = expected.width if hasattr(expected, "width") else expected
        return f"field {prefix!r} has width {got_width}, expected {want}"
    return None


def check_kernel(kind, component, layouts, algorithm_name):
    """Raise ConfigError unless ``component`` has exactly the ports of a ``kind`` kernel."""
    if not isinstance(component, wiring.Component):
        raise ConfigError(f"algorithm {algorithm_name!r}: {kind} factory returned "
                          f"{type(component).__name__}, expected an amaranth wiring.Component")
    expected = KERNEL_PORTS[kind](layouts)
    members = component.signature.members
    for trait in ("latency", "combinational"):
        # Traits are read from the signature only: an attribute of that name would be ignored.
        if _attribute(component, trait):
            raise ConfigError(f"algorithm {algorithm_name!r}: {kind} kernel declares {trait} as an attribute; "
                              f"declare it on its signature: {kind}_signature(layouts, {trait}=...)")
    for name, member in expected.members.items():
        where = f"algorithm {algorithm_name!r}: {kind} kernel port {name!r}"
        if name not in members:
            raise ConfigError(f"{where} is missing")
        got = members[name]
        if not got.is_signature or not isinstance(got.signature, stream.Signature):
            raise ConfigError(f"{where} is not a stream")
        if got.flow != member.flow:
            raise ConfigError(f"{where} has direction {got.flow.name}, expected {member.flow.name}")
        if got.signature.always_ready != member.signature.always_ready:
            raise ConfigError(f"{where}: always_ready must be {member.signature.always_ready}")
        difference = _layout_difference(got.signature.members["payload"].shape,
                                        member.signature.members["payload"].shape)
        if difference:
            raise ConfigError(f"{where}: {difference}")


def build_kernels(algorithm, layouts):
    """Instantiate and check the algorithm's three kernels; return ``{kind: component}``."""
    kernels = {}
    for kind in ("gather", "apply", "scatter"):
        component = getattr(algorithm, kind)(layouts)
        # Built for checking; whether it is ever elaborated is the caller's business, so
        # Amaranth's "created but never used" warning would only be noise here.
        if isinstance(component, wiring.Component):
            silence_unused(component)
        check_kernel(kind, component, layouts, algorithm.name)
        kernels[kind] = component
    return kernels
