"""Kernels written in Verilog, instantiated in the PE through an Amaranth ``Instance``.

A user writes a gather, apply or scatter module with the port names of the paper's Listings 1-3
(SPEC §2); a layout field ``f`` becomes one port per field with the suffix ``_f``:

=========  ====================================================================================
kernel     Verilog ports (``->`` outputs of the module)
=========  ====================================================================================
gather     ``level_in nodeid_in sender_in message_in_<f> state_in_<f> valid_in state_ack``
           -> ``ready nodeid_out state_out_<f> state_valid``
apply      ``nodeid_in state_in_<f> round_in barrier_in valid_in update_ack``
           -> ``ready nodeid_out state_out_<f> state_barrier state_valid update_out_<f>
           update_sender update_round barrier_out update_valid``
scatter    ``update_in_<f> sender_in round_in barrier_in neighbor_in num_neighbors_in
           edge_in_<f> valid_in message_ack``
           -> ``ready message_out_<f> neighbor_out sender_out round_out barrier_out valid_out``
=========  ====================================================================================

plus the clock input ``sys_clk`` and, optionally, an active-high synchronous reset ``sys_rst``.
``edge_in_<f>`` (edge data, e.g. a weight) is gravfm's name; the paper's listing has none.
The handshakes map onto the Amaranth streams of :mod:`gravfm.hw.kernels`: ``valid_in``/``ready``
is the input stream, ``state_valid``/``state_ack`` (gather), ``update_valid``/``update_ack``
(apply) and ``valid_out``/``message_ack`` (scatter) the output streams; apply's ``state_valid``
has no acknowledge (the write-back is always accepted). The rules of
:mod:`gravfm.hw.layouts` hold as for any kernel (apply passes the barrier on ``update_valid``).

Port widths depend on the build (a ``vertexid`` field is as wide as a hardware vertex id), so
a module may declare any of the parameters :data:`SYSTEM_PARAMETERS`; gravfm sets them on the
instance and evaluates the port ranges with them. The module header is parsed in Python
(ANSI or Verilog-1995 port declarations, ranges with integer arithmetic on parameters) and
checked against the layouts before anything is built: a mismatch raises
:class:`~gravfm.errors.ConfigError` listing the missing, extra and wrongly sized ports.

Amaranth's simulator cannot run an ``Instance``; the compiled simulator can, given the module's
source: :attr:`gravfm.hw.System.verilog_sources` collects it and
:func:`gravfm.sim.verilator.simulator_sources` compiles it beside the exported system.
"""

import ast
import dataclasses
import operator
import re
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring

from ..errors import ConfigError
from .kernels import KERNEL_PORTS

__all__ = ["VerilogModule", "VerilogKernel", "VerilogKernelFactory", "verilog_kernel",
           "parse_verilog_module", "expected_ports", "check_ports", "verilog_sources",
           "instance_parameters", "system_parameters", "SYSTEM_PARAMETERS"]

#: Parameters gravfm sets on a Verilog kernel that declares them.
SYSTEM_PARAMETERS = ("VERTEXID_BITS", "ROUND_BITS", "LOCAL_BITS", "NUM_NEIGHBORS_BITS")

CLOCK_PORT = "sys_clk"
RESET_PORT = "sys_rst"


# --- parsing a module header -------------------------------------------------------------------

@dataclass(frozen=True)
class VerilogModule:
    """One Verilog module's interface, as far as gravfm needs it.

    Attributes
    ----------
    name : str
        Module name (the ``Instance`` type).
    ports : dict
        ``{port: (direction, msb_expression, lsb_expression)}`` in declaration order;
        direction is ``"input"``, ``"output"`` or ``"inout"``; the range expressions are
        ``None`` for a one-bit port.
    parameters : dict
        ``{parameter: default expression}``.
    source : str
        The full text the module came from (given to the compiled simulator).
    origin : str
        File name or ``"<text>"``, for messages.
    """

    name: str
    ports: dict
    parameters: dict
    source: str = dataclasses.field(repr=False)
    origin: str = "<text>"

    def port_widths(self, overrides=None):
        """``{port: (direction, width)}`` with the parameters set to ``overrides`` (else defaults)."""
        values = {}
        for name, expression in self.parameters.items():
            if overrides and name in overrides:
                values[name] = int(overrides[name])
            else:
                values[name] = _evaluate(expression, values, self, f"parameter {name}")
        out = {}
        for port, (direction, msb, lsb) in self.ports.items():
            if msb is None:
                out[port] = (direction, 1)
            else:
                high = _evaluate(msb, values, self, f"port {port}")
                low = _evaluate(lsb, values, self, f"port {port}")
                out[port] = (direction, abs(high - low) + 1)
        return out


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_MODULE = re.compile(r"\bmodule\s+([A-Za-z_][\w$]*)\s*(#\s*\((?P<params>.*?)\)\s*)?"
                     r"\((?P<ports>.*?)\)\s*;(?P<body>.*?)\bendmodule\b", re.S)
_RANGE = re.compile(r"\[([^:\]]+):([^\]]+)\]")
_DIRECTION = re.compile(r"^\s*(input|output|inout)\b(.*)$", re.S)
_NET_TYPES = {"wire", "reg", "logic", "signed", "unsigned", "var", "tri"}
_PARAMETER = re.compile(r"\b(?:parameter|localparam)\b(?:\s+integer)?\s*(?:\[[^\]]*\]\s*)?(.*)", re.S)


def parse_verilog_module(text, *, name=None, origin="<text>"):
    """Parse the header of module ``name`` (the only module when ``name`` is None) in ``text``.

    Raises
    ------
    gravfm.errors.ConfigError
        No such module, several modules and no ``name``, or a port without a direction.
    """
    clean = _COMMENTS.sub(" ", text)
    modules = list(_MODULE.finditer(clean))
    if not modules:
        raise ConfigError(f"{origin}: no Verilog module found")
    if name is None:
        if len(modules) > 1:
            names = ", ".join(match.group(1) for match in modules)
            raise ConfigError(f"{origin}: {len(modules)} modules ({names}); say which one is the kernel")
        match = modules[0]
    else:
        found = [match for match in modules if match.group(1) == name]
        if not found:
            names = ", ".join(match.group(1) for match in modules)
            raise ConfigError(f"{origin}: defines no module {name!r} (found: {names})")
        match = found[0]
    module_name = match.group(1)
    parameters = {}
    if match.group("params"):
        _parse_parameters(match.group("params"), parameters, separator=",")
    body = match.group("body")
    for statement in body.split(";"):
        found = _PARAMETER.match(statement.strip())
        if found and statement.strip().startswith("parameter"):
            _parse_parameters(found.group(1), parameters, separator=",")
    ports = _parse_port_list(match.group("ports"), body, origin, module_name)
    return VerilogModule(name=module_name, ports=ports, parameters=parameters, source=text, origin=origin)


def _parse_parameters(text, parameters, *, separator):
    for item in _split_top_level(text, separator):
        item = re.sub(r"^\s*(parameter|localparam)\b(\s+integer)?", "", item).strip()
        item = re.sub(r"^\[[^\]]*\]\s*", "", item)
        if "=" in item:
            key, value = item.split("=", 1)
            parameters[key.strip()] = value.strip()


def _split_top_level(text, separator):
    """Split on ``separator`` outside brackets and parentheses."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part for part in parts if part.strip()]


def _declaration(text):
    """``(direction or None, msb, lsb, names)`` of one declaration fragment."""
    direction = None
    found = _DIRECTION.match(text)
    if found:
        direction, text = found.group(1), found.group(2)
    msb = lsb = None
    rng = _RANGE.search(text)
    if rng:
        msb, lsb = rng.group(1).strip(), rng.group(2).strip()
        text = text[:rng.start()] + " " + text[rng.end():]
    words = [word for word in re.split(r"[\s,]+", text) if word and word not in _NET_TYPES]
    return direction, msb, lsb, words


def _parse_port_list(port_text, body, origin, module_name):
    ports = {}
    ansi = bool(re.search(r"\b(input|output|inout)\b", port_text))
    if ansi:
        direction = msb = lsb = None
        for item in _split_top_level(port_text, ","):
            new_direction, new_msb, new_lsb, words = _declaration(item)
            if new_direction:
                direction, msb, lsb = new_direction, new_msb, new_lsb
            elif new_msb is not None:
                msb, lsb = new_msb, new_lsb
            for word in words:
                ports[word] = (direction, msb, lsb)
        return ports
    names = [name.strip() for name in port_text.split(",") if name.strip()]
    declared = {}
    for statement in body.split(";"):
        direction, msb, lsb, words = _declaration(statement)
        if direction:
            for word in words:
                declared[word] = (direction, msb, lsb)
    for name in names:
        if name not in declared:
            raise ConfigError(f"{origin}: port {name!r} of module {module_name!r} has no "
                              f"input/output declaration")
        ports[name] = declared[name]
    return ports


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod,
              ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow}


def _evaluate(expression, values, module, where):
    """Integer value of a Verilog constant expression made of numbers, parameters and + - * / % << >> **."""
    text = re.sub(r"\d*'[sS]?[dD](\d+)", r"\1", expression.strip())
    text = text.replace("$clog2", "_clog2")
    try:
        tree = ast.parse(text.replace("/", "//"), mode="eval")  # Verilog / on integers truncates
    except SyntaxError:
        raise ConfigError(f"{module.origin}: module {module.name!r}, {where}: cannot evaluate "
                          f"{expression!r}") from None

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise ConfigError(f"{module.origin}: module {module.name!r}, {where}: unknown "
                                  f"parameter {node.id!r} in {expression!r}")
            return values[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_clog2" \
                and len(node.args) == 1:
            return max(0, (walk(node.args[0]) - 1).bit_length())
        raise ConfigError(f"{module.origin}: module {module.name!r}, {where}: cannot evaluate "
                          f"{expression!r}")

    return walk(tree)


# --- the ports a kernel must have ---------------------------------------------------------------

def _fields(layout):
    return [(name, field.shape.width) for name, field in layout]


def _port_map(kind, layouts, component):
    """``[(verilog port, direction, width, amaranth value)]`` of a ``kind`` kernel.

    ``component`` may be None (only names, directions and widths are then meaningful).
    """
    def get(path):
        if component is None:
            return None
        value = component
        for step in path.split("."):
            value = getattr(value, step)
        return value

    vid = layouts.vertexid_bits
    rnd = layouts.round_bits
    ports = []

    def add(name, direction, width, path):
        ports.append((name, direction, width, get(path)))

    def add_fields(prefix, direction, layout, path):
        for field, width in _fields(layout):
            add(f"{prefix}_{field}", direction, width, f"{path}.{field}")

    if kind == "gather":
        add("level_in", "input", rnd, "i.payload.level")
        add("nodeid_in", "input", vid, "i.payload.nodeid")
        add("sender_in", "input", vid, "i.payload.sender")
        add_fields("message_in", "input", layouts.message, "i.payload.message")
        add_fields("state_in", "input", layouts.vertex, "i.payload.state")
        add("valid_in", "input", 1, "i.valid")
        add("ready", "output", 1, "i.ready")
        add("nodeid_out", "output", vid, "o.payload.nodeid")
        add_fields("state_out", "output", layouts.vertex, "o.payload.state")
        add("state_valid", "output", 1, "o.valid")
        add("state_ack", "input", 1, "o.ready")
    elif kind == "apply":
        add("nodeid_in", "input", vid, "i.payload.nodeid")
        add_fields("state_in", "input", layouts.vertex, "i.payload.state")
        add("round_in", "input", rnd, "i.payload.round")
        add("barrier_in", "input", 1, "i.payload.barrier")
        add("valid_in", "input", 1, "i.valid")
        add("ready", "output", 1, "i.ready")
        add("nodeid_out", "output", vid, "state_o.payload.nodeid")
        add_fields("state_out", "output", layouts.vertex, "state_o.payload.state")
        add("state_barrier", "output", 1, "state_o.payload.barrier")
        add("state_valid", "output", 1, "state_o.valid")
        add_fields("update_out", "output", layouts.update, "update_o.payload.update")
        add("update_sender", "output", vid, "update_o.payload.sender")
        add("update_round", "output", rnd, "update_o.payload.round")
        add("barrier_out", "output", 1, "update_o.payload.barrier")
        add("update_valid", "output", 1, "update_o.valid")
        add("update_ack", "input", 1, "update_o.ready")
    elif kind == "scatter":
        add_fields("update_in", "input", layouts.update, "i.payload.update")
        add("sender_in", "input", vid, "i.payload.sender")
        add("round_in", "input", rnd, "i.payload.round")
        add("barrier_in", "input", 1, "i.payload.barrier")
        add("neighbor_in", "input", vid, "i.payload.neighbor")
        add("num_neighbors_in", "input", layouts.scatter_in["num_neighbors"].shape.width,
            "i.payload.num_neighbors")
        add_fields("edge_in", "input", layouts.edge, "i.payload.edge")
        add("valid_in", "input", 1, "i.valid")
        add("ready", "output", 1, "i.ready")
        add_fields("message_out", "output", layouts.message, "o.payload.message")
        add("neighbor_out", "output", vid, "o.payload.neighbor")
        add("sender_out", "output", vid, "o.payload.sender")
        add("round_out", "output", rnd, "o.payload.round")
        add("barrier_out", "output", 1, "o.payload.barrier")
        add("valid_out", "output", 1, "o.valid")
        add("message_ack", "input", 1, "o.ready")
    else:
        raise ConfigError(f"unknown kernel kind {kind!r} (known: {', '.join(KERNEL_PORTS)})")
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
        Text to compile beside the exported system (:attr:`gravfm.hw.System.verilog_sources`).
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
            self._MustUse__silence = True
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
