"""One Verilog module for many identical ones: what keeps a 64-PE FPGA model quick to build.

Amaranth exports every instance of a component as a module of its own (``gravfm_top.pe0``,
``gravfm_top.pe1``, ...), each used once, so Verilator inlines all of them and the C++ compiler
sees the PE (and every switch of the message network) 64 times over. The modules of a design
are in fact identical but for their names: the names of their submodules' modules, the numbers
Yosys gives its helper registers (``$auto$...$<n>``, counted over the whole file), and the names
Amaranth gives a port that carries part of a value of the parent's (``port$<cell>$<bit>``, also
numbered over the design: the hybrid's PEs and scatter units have such ports). :func:`share_modules`
keeps one module of each such group and points every instance at it, its connections renamed to
the kept module's ports; a module used many times is then kept by Verilator as one C++ class (its
own inlining rule: instances x size above ``--inline-mult``), compiled once, and Yosys synthesises
it once on a hierarchical target. Nothing else changes: the modules left are as Yosys wrote them
but for the names of the modules they instantiate and of those modules' ports, so the simulated
cycles are the same (``scripts/cycle_signature.py``).

The text is Yosys ``write_verilog -norename`` output: one ``module`` ... ``endmodule`` per
module, each starting a line, escaped identifiers ending in a space. Anything else in the text
(a kernel written in Verilog) is left as it is.
"""

import re

__all__ = ["share_modules", "module_names", "NO_INLINE"]

# A module from its header line to its `endmodule` line; attribute lines before it stay outside.
_MODULE = re.compile(r"^module (\S+) ?\(.*?^endmodule\n", re.S | re.M)
# An escaped identifier (`\name ` up to white space): the modules' names (all but the top's, which
# no module instantiates) and Yosys's helper names are such.
_ESCAPED = re.compile(r"\\\S+(?=\s)")
# Yosys's helper names, numbered over the whole file: local to their module, so renumbered there.
_AUTO = re.compile(r"\\\$auto\$[^\s]*\$\d+$")
# Amaranth's names for a port carrying part of a parent's value, numbered over the whole design:
# renumbered in each module, and renamed where a copy's instance connects them.
_PORT = re.compile(r"\\port\$\d+\$\d+$")
# An instance's first line (``<module> <name> (``), its last, and a connection line's port.
_INSTANCE_START = re.compile(r"^  (\S+) +\S+ \(\n", re.M)
_INSTANCE_END = re.compile(r"^  \);\n", re.M)
_CONNECTED_PORT = re.compile(r"^(    \.)(\\\S+)(?= \()", re.M)
# A line of nothing but a source location, which says where a wire came from, not what it does
# (PE 0's superstep output is declared at the PE, the same wire of another PE at its apply).
_SOURCE_LINE = re.compile(r'^  \(\* src = "[^"\n]*" \*\)\n', re.M)
_CONNECTION_LINE = re.compile(r"^    \.\S+ ?\(.*\),?$")
# A declaration on one line of its own (a port, a wire, a register or memory).
_DECLARATION = re.compile(r"^  (?:input|output|inout|wire|reg)\b[^;\n]*;\n?$")
# A module's own name in the text it is compared by.
_SELF = "\\__gravfm_self__"
# The end of a module's header (its port list, which Yosys may wrap over several lines).
_HEADER_END = re.compile(r"\);\n")
# An output declaration (Yosys declares the port's wire on a line of its own), and its name.
_OUTPUT_LINE = re.compile(r"^  output [^;]*;\n", re.M)
_OUTPUT = re.compile(r"^  output (?:\[[^\]]*\] )?(\S+) ?;$", re.M)
# The attribute lines that end the text before a module: that module's own.
_ATTRIBUTES_AT_END = re.compile(r"(?:^\(\*[^\n]*\*\)\n)+\Z", re.M)
#: What keeps a module a C++ class of its own in Verilator's model.
NO_INLINE = "  /* verilator no_inline_module */\n"


def module_names(verilog_text):
    """Names of the modules defined in ``verilog_text``, in order (escaped ones with their ``\\``)."""
    return [match.group(1) for match in _MODULE.finditer(verilog_text)]


def share_modules(verilog_text):
    """``verilog_text`` with each group of modules identical but for names replaced by one.

    Returns ``(text, shared)``: the new Verilog and ``{kept module: number of modules it stands
    for}`` for the groups of more than one. A module's instances keep their instance names; only
    the module they instantiate changes. Children are compared before their parents, so two PEs
    are one module once their gathers, applies, ... are. Modules that differ only in which of
    their wires are also outputs are one group too, kept as the member with the most outputs
    when its outputs include every other member's (PE 0 also drives the top's superstep): the
    other instances leave those outputs unconnected. The outermost shared modules (those whose
    parents are not copies themselves: the PE, a switch of the message network) carry
    ``/* verilator no_inline_module */``: Verilator would otherwise still inline every instance
    (measured: an 8-PE top became one C++ class). Below them, Verilator inlines as it likes.
    """
    modules = {match.group(1): match for match in _MODULE.finditer(verilog_text)}
    children = {name: [token for token in _instantiated(match.group(0)) if token in modules and token != name]
                for name, match in modules.items()}
    ports = {name: _own_ports(match.group(0)) for name, match in modules.items()}
    kept = (_kept_modules(modules, children, ports, widen=True)
            or _kept_modules(modules, children, ports, widen=False))
    renamed_ports = {name: _port_renames(ports, name, kept[name]) for name in modules
                     if kept[name] != name and ports[name] != ports[kept[name]]}
    members = {}
    for name in modules:
        members[kept[name]] = members.get(kept[name], 0) + 1
    apart = _outermost_copies(children, kept, members)
    pieces, end = [], 0
    for name, match in modules.items():
        before = verilog_text[end:match.start()]
        end = match.end()
        if kept[name] != name:   # its attributes go with it (else they would stand before nothing)
            pieces.append(_ATTRIBUTES_AT_END.sub("", before))
            continue
        pieces.append(before)
        # As Yosys wrote it, but for the modules it instantiates and those modules' ports.
        text = _with_ports_renamed(match.group(0), renamed_ports)
        text = _ESCAPED.sub(lambda token: kept.get(token.group(0), token.group(0)), text)
        pieces.append(_HEADER_END.sub(r"\g<0>" + NO_INLINE, text, count=1) if name in apart else text)
    pieces.append(verilog_text[end:])
    return "".join(pieces), {name: count for name, count in members.items() if count > 1}


def _with_ports_renamed(module_text, renamed_ports):
    """``module_text`` with the connections of each instance of a module in ``renamed_ports``
    (``{module: {its port: the kept module's}}``) naming the kept module's ports."""
    return _instances_rewritten(module_text, renamed_ports,
                                lambda child, body: _connections_renamed(body, renamed_ports[child]))


def _instances_rewritten(module_text, children, rewrite):
    """``module_text`` with the connection lines of each instance of a module in ``children``
    replaced by ``rewrite(that module, those lines)``, or left as they are where that gives None."""
    pieces, end = [], 0
    for start in _INSTANCE_START.finditer(module_text):
        if start.group(1) not in children or start.start() < end:
            continue
        stop = _INSTANCE_END.search(module_text, start.end())
        body = rewrite(start.group(1), module_text[start.end():stop.start()])
        if body is None:
            continue
        pieces += [module_text[end:start.end()], body, stop.group(0)]
        end = stop.end()
    return "".join(pieces) + module_text[end:]


def _connections_renamed(text, renames):
    """``text`` with the ports its connection lines name renamed by ``renames`` (others kept)."""
    return _CONNECTED_PORT.sub(lambda port: port.group(1) + renames.get(port.group(2), port.group(2)), text)


def _kept_modules(modules, children, ports, *, widen):
    """``{module: the module kept for its group}``; ``ports``: each module's ``port$`` ports in
    header order; ``widen``: outputs do not tell modules apart (None when a group then has no
    member whose outputs hold every other's)."""
    group_of, groups = {}, {}
    for name in _children_first(children):
        text = _canonical(modules[name].group(0), name, group_of, ports, widen=widen)
        group_of[name] = groups.setdefault(text, f"\\__gravfm_group{len(groups)}__")
    kept, outputs = {}, {name: set(_OUTPUT.findall(match.group(0))) for name, match in modules.items()}
    for name in modules:   # in order: the first of the members with the most outputs
        first = kept.setdefault(group_of[name], name)
        if len(outputs[name]) > len(outputs[first]):
            kept[group_of[name]] = name
    kept = {name: kept[group_of[name]] for name in modules}
    for name in modules:
        renames = _port_renames(ports, name, kept[name])
        if not {renames.get(output, output) for output in outputs[name]} <= outputs[kept[name]]:
            return None
    return kept


def _port_renames(ports, name, kept):
    """``{port of name: the port of kept at its place}`` for the ``port$`` ports."""
    return dict(zip(ports[name], ports[kept]))


def _outermost_copies(children, kept, members):
    """The kept modules of groups of several whose every parent module is one of a kind."""
    parents = {}
    for parent, names in children.items():
        for child in names:
            parents.setdefault(kept[child], set()).add(kept[parent])
    return {name for name, above in parents.items()
            if members[name] > 1 and all(members[parent] == 1 for parent in above)}


def _children_first(children):
    """Module names, each after every module it instantiates (a post-order of the hierarchy)."""
    order, seen = [], set()
    for root in children:
        stack = [(root, iter(children[root]))]
        if root in seen:
            continue
        seen.add(root)
        while stack:
            name, pending = stack[-1]
            child = next((c for c in pending if c not in seen), None)
            if child is None:
                order.append(name)
                stack.pop()
            else:
                seen.add(child)
                stack.append((child, iter(children[child])))
    return order


def _instantiated(module_text):
    """The first token of each line that may instantiate a module (``<module> <instance> (``)."""
    return re.findall(r"^\s+(\\\S+|[A-Za-z_][A-Za-z0-9_$]*)\s+\S+\s*\($", module_text, re.M)


def _own_ports(module_text):
    """A module's ``port$`` ports in the order of its header (Amaranth's port order, the same in
    every copy; the declarations and an instance's connections are sorted by name instead)."""
    header = module_text[:_HEADER_END.search(module_text).end()]
    return list(dict.fromkeys(token for token in _ESCAPED.findall(header) if _PORT.match(token)))


def _canonical(module_text, name, group_of, ports, *, widen):
    """The text a module is compared by: its own name as :data:`_SELF`, its children's modules by
    their groups, its ``port$`` ports by their place in its header and a child's by their place in
    the child's, other ``port$`` wires and Yosys's helper names numbered in order of appearance;
    its one-line declarations and each instance's connections sorted, as the names no longer
    order them; without the lines that only give a source location; ``widen``: without its port
    list and output declarations (its wires stay, the outputs among them)."""
    own = {token: f"\\$port${number}" for number, token in enumerate(ports[name])}
    autos, wires = {}, {}

    def rename(match):
        token = match.group(0)
        if token == name:
            return _SELF
        if token in group_of:
            return group_of[token]
        if _AUTO.match(token):
            return autos.setdefault(token, f"\\$auto${len(autos)}")
        if _PORT.match(token):
            return own.get(token) or wires.setdefault(token, f"\\$wire${len(wires)}")
        return token

    if widen:
        module_text = _OUTPUT_LINE.sub("", module_text[_HEADER_END.search(module_text).end():])
    module_text = _instances_canonical(_SOURCE_LINE.sub("", module_text), ports)
    return _declarations_sorted(_ESCAPED.sub(rename, module_text))


def _instances_canonical(module_text, ports):
    """``module_text`` with each instance's ``port$`` connections named by their place in the
    child's header (``\\$child_port$<n>``) and its connection lines sorted."""
    def canonical(child, body):
        lines = body.splitlines()
        if not all(_CONNECTION_LINE.match(line) for line in lines):   # a connection over several lines
            return None
        places = {token: f"\\$child_port${number}" for number, token in enumerate(ports[child])}
        return "".join(sorted(_connections_renamed(line, places).rstrip(",") + "\n" for line in lines))
    return _instances_rewritten(module_text, ports, canonical)


def _declarations_sorted(module_text):
    """``module_text`` with its one-line declarations (each with the attribute lines before it)
    sorted, ahead of the rest, which keeps its order."""
    declarations, rest, attributes = [], [], []
    for line in module_text.splitlines(keepends=True):
        if line.startswith("  (*") and line.rstrip().endswith("*)"):
            attributes.append(line)
            continue
        unit = "".join(attributes) + line
        attributes = []
        (declarations if _DECLARATION.match(line) else rest).append(unit)
    return "".join(sorted(declarations)) + "".join(rest) + "".join(attributes)
