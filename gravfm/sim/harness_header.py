"""The generated part of the C++ harness: the widths of a top's ports and their accessors.

A build's ``gravfm_ports.h`` adapts the static harness (``harness.cpp``) to one top: the host
interface's data widths, for the top of one FPGA of several its link ports (``link_out__K__*``,
``link_in__K__*``: one stream pair per peer FPGA), its AXI read ports to the edge memory
(``mem__K__*``, :func:`gravfm.hw.axi.axi_read_signature`), which the harness serves from C++
memory models (``memory_model.h``), and the PEs' own write ports of a parallel load (``load__K__*``).
"""

from dataclasses import dataclass
from functools import partial

from ..errors import SimulatorError

__all__ = ["HOST_PORTS", "HostInterface", "port_header", "verilator_name", "words"]

HOST_PORTS = ("host_wr_en", "host_wr_pe", "host_wr_mem", "host_wr_addr", "host_wr_data",
              "host_rd_pe", "host_rd_mem", "host_rd_addr", "host_rd_data", "start", "done", "superstep")


def verilator_name(name):
    """The C++ name Verilator gives the Verilog identifier ``name`` (its ``AstNode::encodeName``).

    Letters, digits and single underscores stay (a digit not first); a double underscore becomes
    ``___05F`` (one ``_`` kept, the second escaped as ``__05F``: ``"__"`` is reserved in C++);
    any other character, or a leading digit, becomes ``__0`` and its two hex digits.
    """
    out, i = [], 0
    while i < len(name):
        char = name[i]
        if char.isascii() and (char.isalpha() or (i and char.isdigit())):
            out.append(char)
        elif char == "_" and name[i + 1:i + 2] == "_":
            out.append("___05F")
            i += 1
        elif char == "_":
            out.append(char)
        else:
            out.append(f"__0{ord(char):02X}")
        i += 1
    return "".join(out)


def _port(array, k, member):
    """C++ name of ``member`` of element ``k`` of the port array ``array`` (``array__k__member``)."""
    return verilator_name(f"{array}__{k}__{member}")


def words(bits):
    """32-bit words that carry ``bits`` (at least one): the harness's unit for every port."""
    return max(1, -(-bits // 32))


@dataclass(frozen=True)
class HostInterface:
    """Widths of the host-interface ports of a top (docs/interfaces.md §5), and its link ports.

    Attributes
    ----------
    pe_bits, mem_bits, addr_bits, data_bits, rd_data_bits : int
    link_ports : int
        Stream pairs to peer FPGAs (0 for a whole system).
    link_bits : int
        Payload width of a link stream (0 without link ports).
    mem_ports : int
        AXI read ports of the member ``mem`` (0 without).
    mem_addr_bits, mem_word_bits, mem_id_bits : int
        Widths of their ``araddr``, ``rdata`` and ``arid`` (0 without memory ports).
    load_ports : int
        PE write ports of the member ``load`` (the parallel load of ``FpgaTop(load_ports=True)``; 0 without).
    """

    pe_bits: int
    mem_bits: int
    addr_bits: int
    data_bits: int
    rd_data_bits: int
    link_ports: int = 0
    link_bits: int = 0
    mem_ports: int = 0
    mem_addr_bits: int = 0
    mem_word_bits: int = 0
    mem_id_bits: int = 0
    load_ports: int = 0

    @classmethod
    def from_component(cls, top):
        """Read the widths from an Amaranth component's signature; fail on a missing port."""
        from amaranth.hdl import Shape, Value  # deferred: Amaranth (heavy)

        members = top.signature.members
        missing = [name for name in HOST_PORTS if name not in members]
        if missing:
            raise SimulatorError(f"system top lacks host-interface ports: {', '.join(missing)}")

        def width(name):
            return Shape.cast(members[name].shape).width

        links = list(getattr(top, "link_out", ())) if "link_out" in members else []
        return cls(pe_bits=width("host_wr_pe"), mem_bits=width("host_wr_mem"),
                   addr_bits=width("host_wr_addr"), data_bits=width("host_wr_data"),
                   rd_data_bits=width("host_rd_data"), link_ports=len(links),
                   link_bits=len(Value.cast(links[0].payload)) if links else 0,
                   load_ports=members["load"].dimensions[0] if "load" in members else 0,
                   **_memory_widths(members))


#: Members of an AXI read port (gravfm.hw.axi.axi_read_signature).
AXI_READ_MEMBERS = ("araddr", "arid", "arlen", "arsize", "arburst", "arvalid", "arready",
                    "rdata", "rid", "rresp", "rlast", "rvalid", "rready")


def _memory_widths(members):
    """``mem_*`` fields of :class:`HostInterface` from a top's ``mem`` member (an array of AXI read ports)."""
    from amaranth.hdl import Shape  # deferred: Amaranth (heavy)

    if "mem" not in members:
        return {}
    mem = members["mem"]
    if not mem.is_signature or len(mem.dimensions) != 1:
        raise SimulatorError("a top's 'mem' must be a one-dimensional array of AXI read ports")
    ports = mem.signature.members
    missing = [name for name in AXI_READ_MEMBERS if name not in ports]
    if missing:
        raise SimulatorError(f"the top's memory ports lack AXI members: {', '.join(missing)}")
    widths = {name: Shape.cast(ports[name].shape).width for name in ("araddr", "rdata", "arid")}
    if widths["araddr"] > 64 or widths["arid"] > 32:
        raise SimulatorError(f"memory ports: araddr of {widths['araddr']} bits (at most 64) or arid of "
                             f"{widths['arid']} bits (at most 32)")
    return {"mem_ports": mem.dimensions[0], "mem_addr_bits": widths["araddr"], "mem_word_bits": widths["rdata"],
            "mem_id_bits": widths["arid"]}


def _setter(port, bits, source="w"):
    if bits <= 32:
        return f"top->{port} = {source}[0];"
    if bits <= 64:
        return f"top->{port} = (static_cast<uint64_t>({source}[1]) << 32) | {source}[0];"
    return " ".join(f"top->{port}[{k}] = {source}[{k}];" for k in range(words(bits)))


def _getter(port, bits, target="w"):
    if bits <= 32:
        return f"{target}[0] = static_cast<uint32_t>(top->{port});"
    if bits <= 64:
        return (f"{target}[0] = static_cast<uint32_t>(top->{port}); "
                f"{target}[1] = static_cast<uint32_t>(top->{port} >> 32);")
    return " ".join(f"{target}[{k}] = top->{port}[{k}];" for k in range(words(bits)))


def _per_port(count, body):
    """A ``switch (k)`` running ``body(k)`` for port ``k`` of ``count``."""
    cases = "\n".join(f"        case {k}: {body(k)} break;" for k in range(count))
    return f"    switch (k) {{\n{cases}\n        default: break;\n    }}"


def _per_link(interface, body):
    """A ``switch (k)`` running ``body(k)`` for link port ``k``."""
    return _per_port(interface.link_ports, body)


def _link_accessors(interface):
    if not interface.link_ports:
        return ""
    bits = interface.link_bits
    out, into = (lambda k, m: _port("link_out", k, m)), (lambda k, m: _port("link_in", k, m))
    return f"""
// Link port k (to the k-th other FPGA in increasing order): this FPGA's output stream...
static inline bool gravfm_link_out_valid(TOP_CLASS* top, int k) {{
    bool v = false;
{_per_link(interface, lambda k: f"v = top->{out(k, 'valid')};")}
    return v;
}}
static inline void gravfm_link_out_payload(TOP_CLASS* top, int k, uint32_t* w) {{
{_per_link(interface, lambda k: _getter(out(k, "payload"), bits))}
}}
static inline void gravfm_set_link_out_ready(TOP_CLASS* top, int k, bool ready) {{
{_per_link(interface, lambda k: f"top->{out(k, 'ready')} = ready;")}
}}
// ... and its input stream.
static inline void gravfm_set_link_in(TOP_CLASS* top, int k, bool valid, const uint32_t* w) {{
{_per_link(interface, lambda k: f"top->{into(k, 'valid')} = valid; " + _setter(into(k, "payload"), bits))}
}}
static inline bool gravfm_link_in_ready(TOP_CLASS* top, int k) {{
    bool r = false;
{_per_link(interface, lambda k: f"r = top->{into(k, 'ready')};")}
    return r;
}}
"""


def _memory_accessors(interface):
    if not interface.mem_ports:
        return ""
    def sample(k):
        p = partial(_port, "mem", k)
        return (f"in.arvalid = top->{p('arvalid')}; in.araddr = top->{p('araddr')}; in.arid = top->{p('arid')}; "
                f"in.arlen = top->{p('arlen')}; in.arsize = top->{p('arsize')}; in.arburst = top->{p('arburst')}; "
                f"in.rready = top->{p('rready')};")

    def drive(k):
        p = partial(_port, "mem", k)
        return (f"top->{p('arready')} = model.ar_ready(j); top->{p('rvalid')} = model.r_valid(j); "
                + _setter(p("rdata"), interface.mem_word_bits, source="d")
                + f" top->{p('rid')} = model.r_id(j); top->{p('rresp')} = model.r_resp(j); "
                  f"top->{p('rlast')} = model.r_last(j);")

    return f"""
// AXI read port k of the top: its request and rready (sampled before the clock edge)...
static inline void gravfm_mem_inputs(TOP_CLASS* top, int k, gravfm::MemoryPortInputs& in) {{
{_per_port(interface.mem_ports, sample)}
}}
// ... and its inputs from port j of a memory model (registered outputs).
static inline void gravfm_set_mem(TOP_CLASS* top, int k, const gravfm::MemoryModel& model, unsigned j) {{
    const uint32_t* d = model.r_data(j);
{_per_port(interface.mem_ports, drive)}
}}
"""


def _load_accessors(interface):
    count = interface.load_ports
    def drive(k):
        p = partial(_port, "load", k)
        return (f"top->{p('en')} = 1; top->{p('mem')} = mem; top->{p('addr')} = addr; "
                + _setter(p("data"), interface.data_bits))

    clear = "".join(f"\n    top->{_port('load', k, 'en')} = 0;" for k in range(count))
    return f"""
// Local PE k's own write port (a parallel load, LOAD_PORTS > 0), written in the next cycle...
static inline void gravfm_set_load(TOP_CLASS* top, int k, uint32_t mem, uint32_t addr, const uint32_t* w) {{
{_per_port(count, drive) if count else "    (void)top; (void)k; (void)mem; (void)addr; (void)w;"}
}}
// ... and no PE's port written.
static inline void gravfm_clear_load(TOP_CLASS* top) {{{clear if count else " (void)top;"}
}}
"""


#: A traced build's addition to its header (untraced builds' headers are unchanged): the model
#: class wrapped so that it dumps the waveform (harness_trace.h, gravfm.sim.trace).
TRACED_TOP = """
#include "harness_trace.h"
#undef TOP_CLASS
#define TOP_CLASS gravfm_traced_top
"""


def port_header(interface, *, name="gravfm_top", traced=False):
    """The generated C++ header that adapts the harness to this top's port widths (``traced``:
    its model class dumps waveforms, :data:`TRACED_TOP`)."""
    return _port_header(interface, name) + (TRACED_TOP if traced else "")


def _port_header(interface, name):
    return f"""// Generated by gravfm.sim.verilator: port accessors of this build's top.
#pragma once
#include <cstdint>
#include "V{name}.h"
#include "verilated.h"
#include "gravfm_protocol.h"
#include "memory_model.h"

#define TOP_CLASS V{name}
#define DATA_WORDS {words(interface.data_bits)}
#define RD_WORDS {words(interface.rd_data_bits)}
#define LINK_PORTS {interface.link_ports}
#define LINK_WORDS {words(interface.link_bits)}
#define MEM_PORTS {interface.mem_ports}
#define MEM_WORDS {words(interface.mem_word_bits)}
#define MEM_WORD_BITS {interface.mem_word_bits}
#define LOAD_PORTS {interface.load_ports}

static inline void gravfm_set_wr_data(TOP_CLASS* top, const uint32_t* w) {{
    {_setter("host_wr_data", interface.data_bits)}
}}

static inline void gravfm_get_rd_data(TOP_CLASS* top, uint32_t* w) {{
    {_getter("host_rd_data", interface.rd_data_bits)}
}}
{_link_accessors(interface)}{_memory_accessors(interface)}{_load_accessors(interface)}"""
