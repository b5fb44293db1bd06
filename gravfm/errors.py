"""Errors that gravfm reports to users as one clear line (the CLI prints them without a traceback)."""


class GravfmError(Exception):
    """Base class of every error caused by user input: a file, a spec string, a configuration."""


class GraphFormatError(GravfmError):
    """A graph file that cannot be parsed; the message names the file and line."""


class SpecError(GravfmError):
    """A spec string (graph, partition, platform) with an unknown key or a bad value."""


class ConfigError(GravfmError):
    """A configuration that cannot be built: a layout that does not fit, a missing field, a bad width."""


class CacheError(ConfigError):
    """A build cache folder that cannot be used: not a folder, not writable."""


class UserCodeError(GravfmError):
    """A user's Python code (an algorithm file, a kernel) raised; the message starts ``FILE:LINE:``."""


class SimulatorError(RuntimeError):
    """The Verilator build or the compiled simulator failed (not a problem of the user's input)."""
