"""The FPGA top inside a LiteX SoC: its host port behind a bus window, its edge ports on LiteDRAM.

:class:`GravfmCore` instantiates the unchanged top (Amaranth's Verilog, as LiteX instantiates
its Minerva CPU) in its own clock domain (``design``) and gives it

- a Wishbone window (:mod:`gravfm.board.window`): a write stream cut into host-write records
  (``start`` is a record too, so it follows the last write), and a read stream that a CSR
  request fills with host reads, ``HOST_READ_LATENCY`` cycles after each address;
- CSRs: ``design_id``, ``records`` (applied), ``status`` (done, link_error, running),
  ``superstep`` and ``cycles`` (from ``start`` to ``done``, the design's clock);
- with edges off chip, each PE's AXI4 read port on a LiteDRAM crossbar port of the top's word
  (:func:`add_edge_ports`), the image at ``image_base`` bytes into the DRAM;
- with several FPGAs, each link port on a :class:`~gravfm.board.link.LinkPort` (SERWB, or a
  transceiver lane: the PHY the board gives) and the
  start behind a barrier: the start record arms the board, the top starts when every peer is armed.

Every crossing between the SoC's ``sys`` domain and the design's goes through an asynchronous FIFO
(streams) or a bus synchroniser (status words).
"""

from litex.gen import LiteXModule
from litex.gen.genlib.cdc import BusSynchronizer
from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.axi import AXIInterface
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage
from litedram.frontend.axi import LiteDRAMAXI2NativeR
from migen import Cat, ClockDomainsRenamer, ClockSignal, If, Instance, Mux, ResetSignal, Signal
from migen.genlib.cdc import MultiReg

from ..hw.protocol import HOST_MEM_BITS, HOST_READ_LATENCY
from .link import LinkPort
from .window import CORE_STATUS, DESIGN_DOMAIN, READ_COUNT_BITS, STREAM_WORDS, WORD_BITS, RecordLayout

__all__ = ["GravfmCore", "add_edge_ports"]

#: Depth of the read-data FIFO in the design's domain (reads in flight are counted against it).
_READ_FIFO_DEPTH = 16


class GravfmCore(LiteXModule):
    """The top and its host window (module docstring).

    Parameters
    ----------
    top_name : str
        The Verilog module name of the top.
    geometry : gravfm.hw.host.HostGeometry
    pes : int
        PEs of the top (its ``mem`` ports with edges off chip).
    memory : dict or None
        Edges off chip: ``{"addr_bits", "word_bits", "id_bits"}`` of each PE's AXI4 read port.
    identity : int
        The 32-bit design id (:func:`gravfm.board.window.design_id`).
    image_base : int
        Byte offset of the edge image in the DRAM (added to every ``araddr``).
    links : dict, optional
        Several FPGAs: ``{"phys": [per peer, a factory of its PHY], "frame_bits", "checked"}``
        (``checked``: the top has the link check, so its ``link_error`` output).
    """

    def __init__(self, *, top_name, geometry, pes, memory, identity, image_base=0, links=None):
        self.layout = layout = RecordLayout.of(geometry)
        self.bus = wishbone.Interface(data_width=WORD_BITS, address_width=32, addressing="word")
        self.design_id = CSRStatus(32, reset=identity, description="Hash of the FPGA top's Verilog")
        self.records = CSRStatus(32, description="Host-write records the top has applied since reset")
        self.status = CSRStatus(fields=[CSRField(name, size=1, description=text) for name, text in CORE_STATUS.items()])
        self.superstep = CSRStatus(32, description="PE 0's superstep (progress)")
        self.cycles = CSRStatus(64, description="Design cycles from start to done")
        self.read_mem = CSRStorage(HOST_MEM_BITS, description="host_rd_mem of the next read request")
        self.read_pe = CSRStorage(max(1, geometry.pe_bits), description="host_rd_pe of the next read request")
        self.read_addr = CSRStorage(32, description="First host_rd_addr of the next read request")
        self.read_count = CSRStorage(READ_COUNT_BITS, description="Writing it starts that many host reads")
        # The same streams through CSRs, for a bridge that reaches the CSRs only (LitePCIe's BAR0).
        self.write_word = CSRStorage(WORD_BITS, description="Writing it appends the word to the write stream")
        self.read_word = CSRStatus(WORD_BITS, description="The read stream's next word (when read_ready)")
        self.read_ready = CSRStatus(1, description="1: read_word holds a word")
        self.read_pop = CSRStorage(1, description="Writing it drops read_word's word (the next one follows)")

        self.axi = [AXIInterface(data_width=memory["word_bits"], address_width=32, id_width=memory["id_bits"],
                                 clock_domain=DESIGN_DOMAIN) for _ in range(pes)] if memory else []
        self._top = dict(
            i_clk=ClockSignal(DESIGN_DOMAIN), i_rst=ResetSignal(DESIGN_DOMAIN),
        )
        self._memory = memory
        self._image_base = image_base
        self.link_ports, self._checked_links = [], False
        if links is not None:
            self._links(identity, **links)
        self._window(layout)
        self.specials += Instance(top_name, **self._top)

    def _window(self, layout):
        writes = self._write_path(layout)
        reads = self._read_path(layout)
        self._bus_slave(writes, reads)
        self._status()
        for i, axi in enumerate(self.axi):
            self._axi_port(i, axi)

    # -- write stream: bus words -> records -> the top's host_wr_* (or start) ------------------------------

    def _write_path(self, layout):
        to_records = stream.Converter(WORD_BITS, layout.words * WORD_BITS)
        crossing = stream.ClockDomainCrossing([("data", layout.words * WORD_BITS)], cd_from="sys",
                                              cd_to=DESIGN_DOMAIN, depth=16)
        self.submodules += to_records, crossing
        self.comb += [to_records.source.connect(crossing.sink), crossing.source.ready.eq(1)]
        fields = {name: crossing.source.data[offset:offset + width] for name, offset, width in layout.fields}
        take = crossing.source.valid
        sync = getattr(self.sync, DESIGN_DOMAIN)
        self.wr_en, start_record = Signal(), Signal()
        wr = {name: Signal(width, name=f"wr_{name}") for name, _, width in layout.fields if name != "start"}
        self.applied = Signal(32)
        # Registered: the record FIFO's read side and the top's host port are apart by one cycle.
        sync += [
            self.wr_en.eq(take & ~fields["start"]),
            start_record.eq(take & fields["start"]),
            *[wr[name].eq(fields[name]) for name in wr],
            If(take, self.applied.eq(self.applied + 1)),
        ]
        self.start = self._start_barrier(start_record) if self.link_ports else start_record
        self._top.update(i_host_wr_en=self.wr_en, i_host_wr_pe=wr["pe"], i_host_wr_mem=wr["mem"],
                         i_host_wr_addr=wr["addr"], i_host_wr_data=wr["data"], i_start=self.start)
        return to_records.sink

    # -- several FPGAs: the link ports and the start barrier -------------------------------------------------

    def _links(self, identity, *, phys, frame_bits, checked):
        """One :class:`~gravfm.board.link.LinkPort` per peer on the PHY ``phys[k]`` makes (its
        ``link{k}_*`` CSRs), joined to the top's link port ``k``."""
        self.fpga = CSRStorage(8, description="This board's FPGA index in the rack (sent in HELLO)")
        for k, make_phy in enumerate(phys):
            port = LinkPort(make_phy, frame_bits=frame_bits, identity=identity)
            setattr(self, f"link{k}", port)
            self.link_ports.append(port)
            self.comb += port.fpga.eq(self.fpga.storage)
            self._top.update({
                f"o_link_out__{k}__payload": port.frames_out.data, f"o_link_out__{k}__valid": port.frames_out.valid,
                f"i_link_out__{k}__ready": port.frames_out.ready,
                f"i_link_in__{k}__payload": port.frames_in.data, f"i_link_in__{k}__valid": port.frames_in.valid,
                f"o_link_in__{k}__ready": port.frames_in.ready,
            })
        self._checked_links = checked

    def _start_barrier(self, start_record):
        """The top starts once the start record came and every peer is armed too (their ARMED
        packets precede their first frames on each link): the boards start apart by a packet."""
        sync = getattr(self.sync, DESIGN_DOMAIN)
        armed, started, start, go = Signal(), Signal(), Signal(), Signal()
        peers = Signal(len(self.link_ports))
        for k, port in enumerate(self.link_ports):
            self.specials += [MultiReg(armed, port.armed, "sys"), MultiReg(port.peer_armed, peers[k], DESIGN_DOMAIN)]
        self.comb += go.eq(armed & (peers == (1 << len(peers)) - 1) & ~started)
        sync += [If(start_record, armed.eq(1)), start.eq(go), If(go, started.eq(1))]
        return start

    # -- read stream: a CSR request -> addresses -> host_rd_* -> data words ---------------------------------

    def _read_path(self, layout):
        geometry_pe = len(self.read_pe.storage)
        address = [("mem", HOST_MEM_BITS), ("pe", geometry_pe), ("addr", layout.addr_bits)]
        requests = stream.ClockDomainCrossing(address, cd_from="sys", cd_to=DESIGN_DOMAIN, depth=16)
        self.submodules += requests
        remaining, next_addr = Signal(READ_COUNT_BITS), Signal(32)
        self.comb += [
            requests.sink.valid.eq(remaining != 0),
            requests.sink.mem.eq(self.read_mem.storage),
            requests.sink.pe.eq(self.read_pe.storage),
            requests.sink.addr.eq(next_addr),
        ]
        self.sync += [
            If(self.read_count.re,
                remaining.eq(self.read_count.storage), next_addr.eq(self.read_addr.storage),
            ).Elif(requests.sink.valid & requests.sink.ready,
                remaining.eq(remaining - 1), next_addr.eq(next_addr + 1),
            ),
        ]

        # Design domain: issue an address when the data FIFO has room for it and those in flight.
        sync = getattr(self.sync, DESIGN_DOMAIN)
        data = ClockDomainsRenamer(DESIGN_DOMAIN)(stream.SyncFIFO([("data", layout.read_words * WORD_BITS)],
                                                                  _READ_FIFO_DEPTH))
        self.submodules += data
        in_flight = Signal(max=_READ_FIFO_DEPTH + 1)
        issue = Signal()
        pipe = Signal(HOST_READ_LATENCY + 1)
        rd_pe, rd_mem, rd_addr = Signal(geometry_pe), Signal(HOST_MEM_BITS), Signal(layout.addr_bits)
        rd_data = Signal(layout.rd_data_bits)
        arrives = pipe[HOST_READ_LATENCY]
        self.comb += [
            issue.eq(requests.source.valid & (data.level + in_flight < _READ_FIFO_DEPTH)),
            requests.source.ready.eq(issue),
            data.sink.valid.eq(arrives),
            data.sink.data.eq(rd_data),
        ]
        # The address goes out from a register; its word is on host_rd_data HOST_READ_LATENCY cycles later.
        sync += [
            If(issue, rd_pe.eq(requests.source.pe), rd_mem.eq(requests.source.mem),
               rd_addr.eq(requests.source.addr)),
            pipe.eq(Cat(issue, pipe[:-1])),
            in_flight.eq(in_flight + issue - arrives),
        ]
        self._top.update(i_host_rd_pe=rd_pe, i_host_rd_mem=rd_mem, i_host_rd_addr=rd_addr, o_host_rd_data=rd_data)

        back = stream.ClockDomainCrossing([("data", layout.read_words * WORD_BITS)], cd_from=DESIGN_DOMAIN,
                                          cd_to="sys", depth=16)
        to_words = stream.Converter(layout.read_words * WORD_BITS, WORD_BITS)
        self.submodules += back, to_words
        self.comb += [data.source.connect(back.sink), back.source.connect(to_words.sink)]
        return to_words.source

    # -- the bus window ----------------------------------------------------------------------------------------

    def _bus_slave(self, writes, reads):
        """Writes anywhere in the first region append, reads anywhere in the second pop; the other
        two combinations are acknowledged at once (a stray access never hangs the bridge). The CSRs
        ``write_word`` and ``read_word``/``read_ready``/``read_pop`` do the same a word at a time."""
        bus = self.bus
        in_reads = bus.adr[(STREAM_WORDS - 1).bit_length()]
        access = bus.cyc & bus.stb & ~bus.ack
        push = access & bus.we & ~in_reads
        pop = access & ~bus.we & in_reads
        stray = access & (bus.we == in_reads)
        word_in, word_out = self.write_word, self.read_pop   # the CSR path (never at once with the window's)
        self.comb += [
            writes.valid.eq(push | word_in.re), writes.data.eq(Mux(word_in.re, word_in.storage, bus.dat_w)),
            reads.ready.eq(pop | (word_out.re & reads.valid)),
            self.read_word.status.eq(reads.data), self.read_ready.status.eq(reads.valid),
        ]
        self.sync += [
            bus.ack.eq((push & writes.ready) | (pop & reads.valid) | stray),
            If(pop & reads.valid, bus.dat_r.eq(reads.data)).Elif(stray, bus.dat_r.eq(0)),
        ]

    # -- status ---------------------------------------------------------------------------------------------------

    def _status(self):
        sync = getattr(self.sync, DESIGN_DOMAIN)
        done, link_error, superstep = Signal(), Signal(), Signal(32)
        running, finished, cycles = Signal(), Signal(), Signal(64)
        self._top.update(o_done=done, o_superstep=superstep)
        if self.link_ports and self._checked_links:
            self._top.update(o_link_error=link_error)
        self.link_error = link_error
        # Cycles as the harness counts them: the edge that samples start is the first, the one
        # after which done is seen the last.
        sync += [
            If(self.start, running.eq(1), finished.eq(0), cycles.eq(1)).Elif(running,
                If(done, running.eq(0), finished.eq(1)).Else(cycles.eq(cycles + 1)),
            ),
        ]
        for width, source, target in ((32, superstep, self.superstep.status), (64, cycles, self.cycles.status),
                                      (32, self.applied, self.records.status)):
            synchroniser = BusSynchronizer(width, DESIGN_DOMAIN, "sys")
            self.submodules += synchroniser
            self.comb += [synchroniser.i.eq(source), target.eq(synchroniser.o)]
        self.specials += [
            MultiReg(finished, self.status.fields.done, "sys"),
            MultiReg(link_error, self.status.fields.link_error, "sys"),
            MultiReg(running, self.status.fields.running, "sys"),
        ]

    # -- edges off chip ------------------------------------------------------------------------------------------

    def _axi_port(self, i, axi):
        """PE ``i``'s read port: AR and R of the top on ``axi`` (AW, W, B stay idle)."""
        prefix = f"mem__{i}__"
        araddr = Signal(self._memory["addr_bits"])
        self.comb += [axi.ar.addr.eq(araddr + self._image_base), axi.ar.last.eq(1)]
        self._top.update({
            f"o_{prefix}araddr": araddr, f"o_{prefix}arid": axi.ar.id, f"o_{prefix}arlen": axi.ar.len,
            f"o_{prefix}arsize": axi.ar.size, f"o_{prefix}arburst": axi.ar.burst,
            f"o_{prefix}arvalid": axi.ar.valid, f"i_{prefix}arready": axi.ar.ready,
            f"i_{prefix}rdata": axi.r.data, f"i_{prefix}rid": axi.r.id, f"i_{prefix}rresp": axi.r.resp,
            f"i_{prefix}rlast": axi.r.last, f"i_{prefix}rvalid": axi.r.valid, f"o_{prefix}rready": axi.r.ready,
        })


def add_edge_ports(soc, core):
    """Each of ``core``'s AXI4 read ports on its own read-only LiteDRAM crossbar port (in the
    design's domain, crossing to the controller's)."""
    for axi in core.axi:
        port = soc.sdram.crossbar.get_port(mode="read", data_width=axi.data_width, clock_domain=DESIGN_DOMAIN)
        reader = ClockDomainsRenamer(DESIGN_DOMAIN)(LiteDRAMAXI2NativeR(axi, port, buffer_depth=16,
                                                                        base_address=0))
        soc.submodules += reader
        soc.comb += reader.cmd_grant.eq(1)
