"""One Verilog module for many identical ones: what keeps a 64-PE FPGA model quick to build.

Amaranth exports every instance of a component as a module of its own (``gravfm_top.pe0``,
``gravfm_top.pe1``, ...), each used once, so Verilator inlines all of them and the C++ compiler
sees the PE (and every switch of the message network) 64 times over. The modules of a design
are in fact identical but for their names: the names of their submodules' modules, and the
numbers Yosys gives its helper registers (``$auto$...$<n>``, counted over the whole file).
:func:`share_modules` keeps one module of each such group and points every instance at it; a
module used many times is then kept by Verilator as one C++ class (its own inlining rule:
instances x size above ``--inline-mult``), compiled once. Nothing else changes: the modules
left are as Yosys wrote them but for the names of the modules they instantiate, so the
simulated cycles are the same (``scripts/cycle_signature.py``).

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
    kept = _kept_modules(modules, children, widen=True) or _kept_modules(modules, children, widen=False)
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
        # As Yosys wrote it, but for the modules it instantiates.
        text = _ESCAPED.sub(lambda token: kept.get(token.group(0), token.group(0)), match.group(0))
        pieces.append(_HEADER_END.sub(r"\g<0>" + NO_INLINE, text, count=1) if name in apart else text)
    pieces.append(verilog_text[end:])
    return "".join(pieces), {name: count for name, count in members.items() if count > 1}


def _kept_modules(modules, children, *, widen):
    """``{module: the module kept for its group}``; ``widen``: outputs do not tell modules apart
    (None when a group then has no member whose outputs hold every other's)."""
    group_of, groups = {}, {}
    for name in _children_first(children):
        text = _canonical(modules[name].group(0), name, group_of, widen=widen)
        group_of[name] = groups.setdefault(text, f"\\__gravfm_group{len(groups)}__")
    kept, outputs = {}, {name: set(_OUTPUT.findall(match.group(0))) for name, match in modules.items()}
    for name in modules:   # in order: the first of the members with the most outputs
        first = kept.setdefault(group_of[name], name)
        if len(outputs[name]) > len(outputs[first]):
            kept[group_of[name]] = name
    if any(not outputs[name] <= outputs[kept[group_of[name]]] for name in modules):
        return None
    return {name: kept[group_of[name]] for name in modules}


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


def _canonical(module_text, name, group_of, *, widen):
    """The text a module is compared by: its own name as :data:`_SELF`, its children's modules by
    their groups, Yosys's helper names numbered in order of appearance; ``widen``: without its
    port list and output declarations (its wires stay, the outputs among them)."""
    autos = {}

    def rename(match):
        token = match.group(0)
        if token == name:
            return _SELF
        if token in group_of:
            return group_of[token]
        if _AUTO.match(token):
            return autos.setdefault(token, f"\\$auto${len(autos)}")
        return token

    if widen:
        module_text = _OUTPUT_LINE.sub("", module_text[_HEADER_END.search(module_text).end():])
    return _ESCAPED.sub(rename, module_text)
