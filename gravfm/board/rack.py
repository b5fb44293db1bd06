"""Several boards as one system: link bring-up, then load, start and read back, one transport per board.

The host reaches each board through its own :class:`~gravfm.board.driver.BoardDriver` (as on a
real rack: a UART, Etherbone or PCIe link per board). The order, each step named in its error:

1. **identity**: every board carries the run's design (``design_id``); the host tells each its
   FPGA index (``gravfm_fpga``) and each link end its role (the lower index leads);
2. **link bring-up**: the leading ends restart; every link must report ``ready`` (aligned both
   ways), then a ``HELLO`` from the FPGA its port is wired to, carrying the same design;
3. **load**: each board's edge image and its share of the host writes (PEs ``f p .. f p + p - 1``
   of FPGA ``f``, as local PEs ``0 .. p - 1``);
4. **start**: each board is armed; a board's top starts when every peer is armed (the barrier of
   :class:`~gravfm.board.core.GravfmCore`), then all are followed until every one is done;
5. **read back** through the board of each PE, with each link's counters (:meth:`Rack.link_rows`).
"""

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from ..hw.protocol import LINK_COUNTER_NAMES, LINK_END_COUNTER_NAMES, HostReadMem, link_counter_address, peers_of
from ..hw.link_check import decode_error
from .driver import BoardError, follow, read_back
from .window import LINK_STATUS, flag

__all__ = ["Rack", "HostWrites", "LINK_PORT_COUNTERS"]

#: Each link port's own counters (CSRs ``gravfm_link{k}_*``), in a link row beside the top's.
LINK_PORT_COUNTERS = ("frames_sent", "frames_received", "frames_dropped", "bad_packets")


@dataclass(frozen=True)
class HostWrites:
    """One board's host writes (local PE numbers)."""

    pe: np.ndarray
    mem: np.ndarray
    addr: np.ndarray
    data: np.ndarray

    def __len__(self):
        return len(self.pe)

    @classmethod
    def of_fpga(cls, load, fpga, pes_per_fpga):
        mine = load.pe // pes_per_fpga == fpga
        return cls(pe=load.pe[mine] % pes_per_fpga, mem=load.mem[mine], addr=load.addr[mine], data=load.data[mine])


class Rack:
    """The boards of one system (module docstring), ``drivers[f]`` driving FPGA ``f``.

    Parameters
    ----------
    drivers : list of gravfm.board.driver.BoardDriver
    pes_per_fpga : int
    bring_up_s : float
        Wall-clock limit of the link bring-up.
    """

    def __init__(self, drivers, *, pes_per_fpga, bring_up_s=60.0):
        self.drivers, self.pes_per_fpga, self.bring_up_s = drivers, pes_per_fpga, bring_up_s
        self.fpgas = len(drivers)

    def _link_reg(self, fpga, k, name):
        return getattr(self.drivers[fpga].registers, f"gravfm_link{k}_{name}")

    def links(self):
        return [(f, k, peer) for f in range(self.fpgas) for k, peer in enumerate(peers_of(f, self.fpgas))]

    # -- 1, 2. identity and links -----------------------------------------------------------------------------

    def bring_up(self):
        """Check the designs, give identities and roles, bring every link up. Returns seconds."""
        started = time.perf_counter()
        for f, driver in enumerate(self.drivers):
            driver.check_design()
            with driver.step("setting the FPGA index and link roles"):
                driver.registers.gravfm_fpga.write(f)
                for k, peer in enumerate(peers_of(f, self.fpgas)):
                    self._link_reg(f, k, "role").write(int(f < peer))
        for f, k, peer in self.links():
            if f < peer:
                with self.drivers[f].step(f"restarting link {k}"):
                    self._link_reg(f, k, "restart").write(1)
        self._wait_links("ready", "did not come up (no alignment: is the cable in, is FPGA {peer}'s board on "
                                  "and loaded?)")
        self._wait_links("hello", "came up but no HELLO arrived from FPGA {peer}")
        for f, k, peer in self.links():
            driver = self.drivers[f]
            with driver.step(f"reading link {k}'s peer"):
                found, design = self._link_reg(f, k, "peer_fpga").read(), self._link_reg(f, k, "peer_design").read()
            if found != peer:
                raise BoardError(f"{driver.board}: link {k} reaches FPGA {found}, not FPGA {peer} "
                                 f"(cables crossed: link k of FPGA f goes to the k-th other FPGA)")
            if design != driver.design["design_id"]:
                raise BoardError(f"{driver.board}: link {k} reaches a board with design {design:#010x}, "
                                 f"not this run's {driver.design['design_id']:#010x}")
        return time.perf_counter() - started

    def _wait_links(self, field, failure):
        """Until every link's status shows ``field`` (:data:`~gravfm.board.window.LINK_STATUS`)."""
        deadline = time.monotonic() + self.bring_up_s
        waiting = self.links()
        while waiting:
            still = []
            for f, k, peer in waiting:
                with self.drivers[f].step(f"reading link {k}'s status"):
                    status = self._link_reg(f, k, "status").read()
                if flag(status, LINK_STATUS, "error") and not flag(status, LINK_STATUS, "ready"):
                    raise BoardError(f"{self.drivers[f].board}: link {k} to FPGA {peer}: the bring-up found no "
                                     f"alignment (line errors or no signal)")
                if not flag(status, LINK_STATUS, field):
                    still.append((f, k, peer))
            waiting = still
            if waiting and time.monotonic() > deadline:
                f, k, peer = waiting[0]
                raise BoardError(f"{self.drivers[f].board}: link {k} to FPGA {peer} " + failure.format(peer=peer)
                                 + f" after {self.bring_up_s:.0f} s")
            time.sleep(0.05)

    # -- 3. load -------------------------------------------------------------------------------------

    def load(self, load, *, write_images):
        """Edge images (``write_images``: over the bus; else placed already, only checked) and host
        writes, board by board. Returns ``(seconds, image reports)``."""
        started = time.perf_counter()
        reports = []
        for f, driver in enumerate(self.drivers):
            if load.memory_images:
                reports.append(driver.load_image(load.memory_images[f], write=write_images))
            driver.load_writes(HostWrites.of_fpga(load, f, self.pes_per_fpga))
        return time.perf_counter() - started, reports

    # -- 4. start and follow ----------------------------------------------------------------------------

    def run(self, **limits):
        """Arm every board, follow them all (:func:`~gravfm.board.driver.follow`)."""
        for driver in self.drivers:
            driver.start()
        return follow(self.drivers, pes=self.pes_per_fpga, **limits)

    # -- 5. read back ---------------------------------------------------------------------------------

    def read(self, mem, pe, addr, count):
        """Host reads of global PE ``pe``, through its board."""
        return self.drivers[pe // self.pes_per_fpga].read(mem, pe % self.pes_per_fpga, addr, count)

    def readback(self, load, **run):
        readback = read_back(self.read, load, **run)
        rows = self.link_rows()
        diagnosis = tuple(f"FPGA {row['fpga']} link {row['link']} (from FPGA {row['peer']}): the link check "
                          f"latched {row['error']['kind']} (frame {row['error']['received']}, expected "
                          f"{row['error']['expected']})" for row in rows if row["error"]["kind"])
        return dataclasses.replace(readback, board_links=tuple(rows), diagnosis=diagnosis + tuple(readback.diagnosis))

    def link_rows(self):
        """Per FPGA and link: the link port's counters, the top's link-end counters (retransmissions,
        frames its receiver discarded, its error word, decoded) and, in the simulation, the bits the
        wire flipped."""
        end = len(LINK_COUNTER_NAMES) - len(LINK_END_COUNTER_NAMES)
        rows = []
        for f, k, peer in self.links():
            driver = self.drivers[f]
            row = {"fpga": f, "link": k, "peer": peer}
            with driver.step(f"reading link {k}'s counters"):
                row.update({name: self._link_reg(f, k, name).read() for name in LINK_PORT_COUNTERS})
                flipped = getattr(driver.registers, f"wire{k}_flipped", None)
                if flipped is not None:
                    row["wire_bits_flipped"] = flipped.read()
            ends = self.read(HostReadMem.LINK_COUNTERS, f * self.pes_per_fpga, link_counter_address(k, end),
                             len(LINK_END_COUNTER_NAMES))
            row.update(dict(zip(LINK_END_COUNTER_NAMES, (int(v) for v in ends))))
            row["error"] = decode_error(row["error_in"])
            rows.append(row)
        return rows
