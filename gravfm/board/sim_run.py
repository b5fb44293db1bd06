"""One running copy of a built SoC simulation (:mod:`gravfm.board.sim`), in a folder of its own.

The simulator serves each board's serial line on a TCP port; a ``litex_server`` per board stands in
front of it and hands out a :class:`~litex.tools.litex_client.RemoteClient`: the host's real path.
"""

import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import ConfigError, SimulatorError
from ..sim.verilator_build import end_process_group, start_guarded

__all__ = ["SocSimulation"]


def free_ports(count):
    """``count`` distinct TCP ports on the loopback interface that nothing listens on now.

    Another process may still take one before our listener binds it: starts that fail on a port
    are retried with fresh ones (:data:`PORT_ATTEMPTS`).
    """
    with contextlib.ExitStack() as held:   # held together, so the kernel never hands one out twice
        probes = [held.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]


#: Starts of a listener (the simulator's serial lines, a ``litex_server``) before a port race is an error.
PORT_ATTEMPTS = 3


class _EndedEarly(SimulatorError):
    """A process ended before it listened on its port (perhaps another process took the port)."""


def _wait_for_port(port, process, what, *, timeout_s=60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise _EndedEarly(f"{what} ended (exit {process.returncode}) before it listened on port {port}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SimulatorError(f"{what} did not listen on port {port} within {timeout_s:.0f} s")


class SocSimulation:
    """One running copy of a built SoC simulation, one board or a rack (a context manager).

    Parameters
    ----------
    build : SocSimBuild
    images : list of (numpy.ndarray of uint8 or None), optional
        Per board, bytes to place at DRAM address 0 through the backdoor before the simulation starts.

    Attributes
    ----------
    clients : list of litex.tools.litex_client.RemoteClient
        Per board, connected to a ``litex_server`` of its own, which talks to the board's
        simulated UART (one transport per board, as on a real rack); ``client`` is the first.
    folder : pathlib.Path
        The run's folder (simulator and server logs).
    """

    def __init__(self, build, *, images=None):
        self.build = build
        self._images = list(images or [None] * build.boards)
        self._processes, self._logs = [], []
        self.clients = []

    @property
    def client(self):
        return self.clients[0]

    def __enter__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gravfm-soc-")
        self.folder = run = Path(self._tmp.name)
        try:
            self._prepare(run)
            uart_ports = self._start_simulator(run)
            for board, uart_port in enumerate(uart_ports):
                self.clients.append(self._connect_board(run, board, uart_port))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_simulator(self, run):
        """Start the simulation with a serial line per board on a free port; return the ports."""
        from .soc import sim_config  # deferred: the board extra (LiteX)

        for attempt in range(PORT_ATTEMPTS):
            uart_ports = free_ports(self.build.boards)
            (run / "sim_config.js").write_text(sim_config(tcp_ports=uart_ports).get_json())
            simulator = start_guarded([str(self.build.gateware / "obj_dir" / "Vsim")], cwd=run,
                                      stdout=self._log("sim.log"), stderr=subprocess.STDOUT)
            self._processes.append(simulator)
            try:
                for uart_port in uart_ports:
                    _wait_for_port(uart_port, simulator, "the SoC simulation")
                return uart_ports
            except _EndedEarly:
                if attempt == PORT_ATTEMPTS - 1:
                    raise

    def _connect_board(self, run, board, uart_port):
        """A ``litex_server`` of its own on board ``board``'s serial line, and a client connected to it."""
        from litex.tools.litex_client import RemoteClient  # deferred: the board extra (LiteX)

        for attempt in range(PORT_ATTEMPTS):
            [server_port] = free_ports(1)
            server = start_guarded([sys.executable, "-m", "litex.tools.litex_server", "--uart", "--uart-port",
                                    f"socket://127.0.0.1:{uart_port}", "--bind-ip", "127.0.0.1",
                                    "--bind-port", str(server_port)], cwd=run,
                                   stdout=self._log(f"server{board}.log"), stderr=subprocess.STDOUT)
            self._processes.append(server)
            try:
                _wait_for_port(server_port, server, "litex_server")
                break
            except _EndedEarly:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
        client = RemoteClient(host="127.0.0.1", port=server_port)
        client.open()
        return client

    def _log(self, name):
        log = open(self.folder / name, "w")
        self._logs.append(log)
        return log

    def _prepare(self, run):
        gateware = self.build.gateware
        for path in gateware.glob("*.init"):
            shutil.copy(path, run / path.name)
        for banks, image in zip(self.build.bank_files, self._images):
            if image is None:
                continue
            if image.size > self.build.dram.size_bytes:
                raise ConfigError(f"the edge image ({image.size:,} bytes) does not fit the simulated "
                                  f"DRAM ({self.build.dram.size_bytes:,} bytes)")
            for name, text in zip(banks, self.build.dram.bank_lines(image)):
                (run / name).write_text(text)
        (run / "modules").symlink_to(gateware / "modules")

    def __exit__(self, *exc):
        for client in self.clients:
            with contextlib.suppress(OSError):
                client.close()
        self.clients.clear()
        for process in reversed(self._processes):
            end_process_group(process, grace=2.0)
        self._processes.clear()
        for log in self._logs:
            log.close()
        self._tmp.cleanup()
        return False
