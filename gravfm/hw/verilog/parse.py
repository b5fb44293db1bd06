"""Parsing a Verilog module's header: its parameters and its ports with their widths.

ANSI or Verilog-1995 port declarations; ranges with integer arithmetic on parameters are
evaluated with the parameter values the instance will get.
"""

import ast
import dataclasses
import operator
import re
from dataclasses import dataclass

from ...errors import ConfigError

__all__ = ["VerilogModule", "parse_verilog_module"]


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


