"""A kernel written in Verilog: its expected ports, the checks, and the ``Instance`` around it."""

import tomllib
from importlib import resources
from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ...errors import ConfigError
from ..kernels import KERNEL_PORTS
from .parse import parse_verilog_module
from ..unused import silence_unused

__all__ = ["VerilogKernel", "VerilogKernelFactory", "verilog_kernel", "expected_ports", "check_ports",
           "verilog_sources", "instance_parameters", "system_parameters", "SYSTEM_PARAMETERS",
           "CLOCK_PORT", "RESET_PORT"]

#: Parameters gravfm sets on a Verilog kernel that declares them.
SYSTEM_PARAMETERS = ("VERTEXID_BITS", "ROUND_BITS", "LOCAL_BITS", "NUM_NEIGHBORS_BITS")

CLOCK_PORT = "sys_clk"
RESET_PORT = "sys_rst"


# --- the ports a kernel must have ---------------------------------------------------------------

#: ``{kind: ((Verilog port, direction, width, Amaranth path), ...)}``: the ports of each kernel
#: kind, from ``ports.toml`` beside this module (where the widths are explained).
PORT_TABLE = {kind: tuple(tuple(row) for row in rows)
              for kind, rows in tomllib.loads(resources.files(__package__).joinpath("ports.toml").read_text()).items()}

_LAYOUT_WIDTHS = ("message", "vertex", "update", "edge")


def _port_map(kind, layouts, component):
    """``[(verilog port, direction, width, amaranth value)]`` of a ``kind`` kernel.

    ``component`` may be None (only names, directions and widths are then meaningful).
    """
    if kind not in PORT_TABLE:
        raise ConfigError(f"unknown kernel kind {kind!r} (known: {', '.join(KERNEL_PORTS)})")
    widths = {"vertexid": layouts.vertexid_bits, "round": layouts.round_bits,
              "num_neighbors": layouts.scatter_in["num_neighbors"].shape.width}

    def get(path):
        if component is None:
            return None
        value = component
        for step in path.split("."):
            value = getattr(value, step)
        return value

    ports = []
    for name, direction, width, path in PORT_TABLE[kind]:
        if width in _LAYOUT_WIDTHS:
            ports += [(f"{name}_{field}", direction, shape.shape.width, get(f"{path}.{field}"))
                      for field, shape in getattr(layouts, width)]
        else:
            ports.append((name, direction, widths.get(width, width), get(path)))
    return ports


def expected_ports(kind, layouts):
    """``{port: (direction, width)}`` a Verilog ``kind`` kernel must have (clock included)."""
    ports = {CLOCK_PORT: ("input", 1)}
    ports.update({name: (direction, width) for name, direction, width, _ in _port_map(kind, layouts, None)})
    return ports


def system_parameters(layouts):
    """Values of :data:`SYSTEM_PARAMETERS` for this build."""
    return {"VERTEXID_BITS": layouts.vertexid_bits, "ROUND_BITS": layouts.round_bits,
            "LOCAL_BITS": layouts.local_bits,
            "NUM_NEIGHBORS_BITS": layouts.scatter_in["num_neighbors"].shape.width}


def check_ports(kind, module, layouts, *, parameters=None):
    """Raise ConfigError unless ``module`` has exactly the ports of a ``kind`` kernel.

    ``parameters`` are the instance's parameter values (default: :func:`instance_parameters`).
    The message names the module and its file and lists every missing port (with direction and
    width), every extra port, and every port of the wrong direction or width.
    """
    if parameters is None:
        parameters = instance_parameters(module, layouts)
    got = module.port_widths(parameters)
    want = expected_ports(kind, layouts)
    missing = [f"{direction} [{width}] {name}" for name, (direction, width) in want.items() if name not in got]
    extra = [name for name in got if name not in want and name != RESET_PORT]
    wrong = []
    for name, (direction, width) in want.items():
        if name in got and got[name] != (direction, width):
            wrong.append(f"{name} is {got[name][0]} [{got[name][1]}], expected {direction} [{width}]")
    if RESET_PORT in got and got[RESET_PORT] != ("input", 1):
        wrong.append(f"{RESET_PORT} is {got[RESET_PORT][0]} [{got[RESET_PORT][1]}], expected input [1]")
    problems = []
    if missing:
        problems.append("missing ports: " + ", ".join(missing))
    if extra:
        problems.append("extra ports: " + ", ".join(extra))
    if wrong:
        problems.append("wrong ports: " + "; ".join(wrong))
    if problems:
        raise ConfigError(f"{module.origin}: Verilog {kind} kernel {module.name!r} does not match the "
                          f"layouts: " + "; ".join(problems))


# --- the component ------------------------------------------------------------------------------

class VerilogKernel(wiring.Component):
    """A gather, apply or scatter kernel implemented by a Verilog module.

    The ports are those of :func:`gravfm.hw.kernels.gather_signature` (``apply_signature``,
    ``scatter_signature``); ``elaborate`` instantiates the module with every Verilog port
    connected to the matching stream signal or payload field, ``sys_clk`` to the ``sync`` clock
    and ``sys_rst`` (if declared) to its reset.

    Parameters
    ----------
    kind : {"gather", "apply", "scatter"}
    verilog_module : VerilogModule
    layouts : gravfm.hw.layouts.KernelLayouts
    parameters : dict, optional
        ``{parameter: int}`` set on the instance, beside the :data:`SYSTEM_PARAMETERS` the
        module declares.

    Attributes
    ----------
    module : str
        The Verilog module's name.
    verilog_module : VerilogModule
    verilog_source : str
        Text to compile beside the exported system (:attr:`gravfm.hw.FpgaTop.verilog_sources`).
    parameters : dict
        Every parameter set on the instance.

    Raises
    ------
    gravfm.errors.ConfigError
        The module's ports do not match (see :func:`check_ports`), or a parameter it does not
        declare is given.
    """

    def __init__(self, *, kind, verilog_module, layouts, parameters=None):
        try:
            _check_kind(kind)
            self.parameters = instance_parameters(verilog_module, layouts, parameters)
            check_ports(kind, verilog_module, layouts, parameters=self.parameters)
        except ConfigError:
            # Rejected before it could be used: Amaranth's "never used" warning would be noise.
            silence_unused(self)
            raise
        self.kind = kind
        self.verilog_module = verilog_module
        self.module = verilog_module.name
        self.verilog_source = verilog_module.source
        self._layouts = layouts
        super().__init__(KERNEL_PORTS[kind](layouts))

    def elaborate(self, platform):
        m = Module()
        connections = [("i", CLOCK_PORT, ClockSignal("sync"))]
        if RESET_PORT in self.verilog_module.ports:
            connections.append(("i", RESET_PORT, ResetSignal("sync")))
        for name, direction, width, value in _port_map(self.kind, self._layouts, self):
            if direction == "input":
                connections.append(("i", name, value))
            else:
                # A named wire per output: the instance drives it, the payload field copies it.
                wire = Signal(width, name=f"{self.kind}_{name}")
                connections.append(("o", name, wire))
                m.d.comb += value.eq(wire)
        parameters = [("p", name, value) for name, value in self.parameters.items()]
        m.submodules.verilog = Instance(self.module, *parameters, *connections)
        return m


def _check_kind(kind):
    if kind not in KERNEL_PORTS:
        raise ConfigError(f"kernel kind must be one of {', '.join(KERNEL_PORTS)}, not {kind!r}")


def instance_parameters(verilog_module, layouts, given=None):
    """Parameters set on the instance: the declared :data:`SYSTEM_PARAMETERS`, then ``given``.

    ``given`` is a dict or a callable ``(layouts) -> dict``.
    """
    values = {name: value for name, value in system_parameters(layouts).items()
              if name in verilog_module.parameters}
    if callable(given):
        given = given(layouts)
    for name, value in (given or {}).items():
        if name not in verilog_module.parameters:
            known = ", ".join(verilog_module.parameters) or "none"
            raise ConfigError(f"{verilog_module.origin}: module {verilog_module.name!r} has no parameter "
                              f"{name!r} (declared: {known})")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{verilog_module.origin}: parameter {name!r} must be an integer, not {value!r}")
        values[name] = value
    return values


class VerilogKernelFactory:
    """A kernel factory ``(layouts) -> VerilogKernel`` for an :class:`~gravfm.algorithms.Algorithm`.

    Attributes
    ----------
    kind : str
    verilog_module : VerilogModule
        Parsed once, when the factory is made, so a file error shows up at once.
    parameters : dict, callable or None
        Extra instance parameters (see :func:`instance_parameters`).
    """

    def __init__(self, kind, verilog_module, parameters=None):
        _check_kind(kind)
        self.kind = kind
        self.verilog_module = verilog_module
        self.parameters = parameters

    def __call__(self, layouts):
        return VerilogKernel(kind=self.kind, verilog_module=self.verilog_module, layouts=layouts,
                             parameters=self.parameters)

    def __repr__(self):
        return (f"VerilogKernelFactory({self.kind!r}, module={self.verilog_module.name!r}, "
                f"origin={self.verilog_module.origin!r})")


def verilog_kernel(kind, source=None, *, module=None, text=None, parameters=None):
    """Factory of a ``kind`` kernel from a Verilog file ``source`` (or from ``text``).

    Parameters
    ----------
    kind : {"gather", "apply", "scatter"}
    source : path-like, optional
        Verilog file.
    module : str, optional
        The kernel's module name (needed when the text defines several modules).
    text : str, optional
        Verilog text instead of a file.
    parameters : dict or callable, optional
        Instance parameters, or ``(layouts) -> dict`` computing them (e.g. widths).

    Raises
    ------
    gravfm.errors.ConfigError
        Missing file, no such module, unknown kind.
    """
    _check_kind(kind)
    if (source is None) == (text is None):
        raise ConfigError("verilog_kernel: give either a source file or the Verilog text")
    origin = "<text>"
    if source is not None:
        origin = str(source)
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"{origin}: Verilog kernel file does not exist")
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"{origin}: cannot read Verilog kernel: {error}") from None
    return VerilogKernelFactory(kind, parse_verilog_module(text, name=module, origin=origin), parameters)


def verilog_sources(algorithm):
    """Verilog text of every Verilog kernel of ``algorithm`` (each source once), or ``""``."""
    texts = []
    for kind in KERNEL_PORTS:
        factory = getattr(algorithm, kind)
        if isinstance(factory, VerilogKernelFactory) and factory.verilog_module.source not in texts:
            texts.append(factory.verilog_module.source)
    return "\n".join(texts)
