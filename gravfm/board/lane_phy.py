"""What every serial-transceiver link PHY does the same way, behind the interface of
:class:`~gravfm.board.link.SerwbPhy`: :class:`LanePhy`, the base of the Xilinx lane
(:class:`gravfm.board.transceiver.TransceiverPhy`) and the ECP5 one
(:class:`gravfm.board.ecp5_serdes.EcpSerdesPhy`).

A subclass makes its transceiver and hands :meth:`LanePhy._join` a word port each way in the lane's
own clocks: a 32-bit word of four 8b10b symbols with a K flag each (``data``, ``ctrl``).

- **Words**: a data word is four data symbols. With nothing to send (and until the link is up)
  the lane sends an idle word: :data:`IDLE` (K28.5, the comma the receiver aligns on) in the first
  symbol, then a status byte (bit 0: this end's receiver is aligned). ``ready`` = this end
  transmits (TX initialised), receives (aligned) and hears the peer say it receives; ``error``
  once :data:`BRING_UP_TIMEOUT_CYCLES` ``sys`` cycles passed without ``ready`` since the last
  ``restart`` (or since the link was lost). A lane needs no leader: ``master`` is there for the
  PHYs' common interface; ``restart`` is the subclass's (its transceiver starts over).
- **Crossings**: an asynchronous FIFO from ``sys`` into the TX clock, one from the RX clock into
  ``sys``; a word that finds the second full is dropped, and the link check replays its frame.
"""

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.cores.code_8b10b import K
from litex.soc.interconnect import stream
from migen import Cat, ClockDomainsRenamer, Constant, If, Signal
from migen.genlib.cdc import MultiReg

from ..errors import ConfigError
from .lanes import WORD_BITS

__all__ = ["LanePhy", "IDLE", "BRING_UP_TIMEOUT_CYCLES", "FIFO_DEPTH", "word_description", "subsignal_pins"]

#: The idle word's first symbol: the comma the receivers align on.
IDLE = K(28, 5)
#: ``sys`` cycles the bring-up may take before ``error`` (7 to 14 s at 150 to 75 MHz): LiteICLink's
#: GTH/GTY clock aligner tries a reset every 6 ms and finds the comma's place in one try of 40 on
#: average; the ECP5 DCU locks in well under a second.
BRING_UP_TIMEOUT_CYCLES = 1 << 30
#: Words each crossing holds.
FIFO_DEPTH = 16
#: Symbols of a word.
SYMBOLS = WORD_BITS // 8


def word_description():
    """A lane word: four symbols' data and their K flags."""
    return [("data", WORD_BITS), ("ctrl", SYMBOLS)]


class LanePhy(LiteXModule):
    """A serial lane with the interface of :class:`~gravfm.board.link.SerwbPhy` (module docstring).

    ``sink``/``source``: 32-bit words in ``sys`` (the source never waits); ``master``, ``restart``
    (a pulse), ``ready``, ``error``. Subclasses call :meth:`_lane_clocks` and :meth:`_join`.
    """

    def __init__(self):
        self.sink = stream.Endpoint([("data", WORD_BITS)])
        self.source = stream.Endpoint([("data", WORD_BITS)])
        self.master, self.restart = Signal(), Signal()
        self.ready, self.error = Signal(), Signal()

    def _lane_clocks(self, serdes, *, name, platform, sys_clk):
        """Adopt ``serdes`` (a LiteICLink transceiver with ``tx``/``rx`` clock domains) with its
        domains renamed ``{name}_tx``, ``{name}_rx``; constrain both clocks, asynchronous to
        ``sys`` as in LiteICLink's examples. Returns the two domains' names."""
        tx, rx = f"{name}_tx", f"{name}_rx"
        self.serdes = ClockDomainsRenamer({"tx": tx, "rx": rx})(serdes)
        platform.add_period_constraint(serdes.cd_tx.clk, 1e9 / serdes.tx_clk_freq)
        platform.add_period_constraint(serdes.cd_rx.clk, 1e9 / serdes.rx_clk_freq)
        platform.add_false_path_constraints(sys_clk, serdes.cd_tx.clk, serdes.cd_rx.clk)
        return tx, rx

    def _join(self, *, tx_word, rx_word, tx, rx, transmitting, aligned, aligned_domain, timeout):
        """Words between ``sys`` and the lane; ``ready`` and ``error``.

        ``tx_word``: in domain ``tx``, takes a word when ``ready`` (one is always offered);
        ``rx_word``: in domain ``rx``, ``valid`` with each whole word; ``transmitting``: the TX is
        initialised (``sys``); ``aligned``: this end's receiver is aligned (in ``aligned_domain``).
        """
        peer_aligned = self._receive(rx_word, rx, self._in_domain(aligned, aligned_domain, rx))
        self._transmit(tx_word, tx, self._in_domain(aligned, aligned_domain, tx))
        local, peer = Signal(), Signal()
        self.specials += [MultiReg(aligned, local), MultiReg(peer_aligned, peer)]
        waited = Signal(max=timeout + 1)
        self.comb += [
            self.ready.eq(transmitting & local & peer),
            self.error.eq(waited == timeout),
        ]
        self.sync += If(self.restart | self.ready, waited.eq(0)).Elif(waited != timeout, waited.eq(waited + 1))

    def _in_domain(self, signal, domain, target):
        """``signal`` (of ``domain``) as seen in ``target``."""
        if domain == target:
            return signal
        synced = Signal()
        self.specials += MultiReg(signal, synced, target)
        return synced

    def _transmit(self, word, tx, aligned):
        """Words from ``sink`` (taken once ``ready``) into the TX clock; idle words between them."""
        out = stream.ClockDomainCrossing([("data", WORD_BITS)], cd_from="sys", cd_to=tx, depth=FIFO_DEPTH)
        self.submodules += out
        self.comb += [
            out.sink.valid.eq(self.sink.valid & self.ready), out.sink.data.eq(self.sink.data),
            self.sink.ready.eq(out.sink.ready & self.ready),
            out.source.ready.eq(word.ready),
            word.valid.eq(1),
            If(out.source.valid, word.ctrl.eq(0), word.data.eq(out.source.data)).Else(
                word.ctrl.eq(0b0001), word.data.eq(Cat(Constant(IDLE, 8), aligned))),
        ]

    def _receive(self, word, rx, aligned):
        """Data words into ``sys`` (to ``source``); the peer's status from its idle words, which
        :meth:`_join` reads (returned, in the RX clock's domain)."""
        back = stream.ClockDomainCrossing([("data", WORD_BITS)], cd_from=rx, cd_to="sys", depth=FIFO_DEPTH)
        self.submodules += back
        peer_aligned = Signal()
        idle = word.valid & (word.ctrl == 0b0001) & (word.data[:8] == IDLE)
        sync = getattr(self.sync, rx)
        sync += If(~aligned, peer_aligned.eq(0)).Elif(idle, peer_aligned.eq(word.data[8]))
        self.comb += [
            word.ready.eq(1),
            back.sink.valid.eq(aligned & word.valid & (word.ctrl == 0)), back.sink.data.eq(word.data),
            back.source.ready.eq(1),
            self.source.valid.eq(self.ready & back.source.valid), self.source.data.eq(back.source.data),
        ]
        return peer_aligned


def subsignal_pins(io, key):
    """``{subsignal: [pin, ...]}`` of the record ``key`` (name, number) in a platform's IO list."""
    for resource in io:
        if (resource[0], resource[1]) == key:
            return {sub.name: next(c for c in sub.constraints if isinstance(c, Pins)).identifiers
                    for sub in resource[2:] if isinstance(sub, Subsignal)}
    raise ConfigError(f"the platform has no {key[0]}:{key[1]}")
