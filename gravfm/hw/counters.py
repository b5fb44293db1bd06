"""Names and meaning of the per-PE performance counters (64-bit, read with ``host_rd_mem = 3``).

The address of a counter is its index in :data:`COUNTER_NAMES`. All count cycles or events
between ``start`` and the cycle this PE detects termination.
"""

__all__ = ["COUNTER_NAMES", "COUNTER_DESCRIPTIONS", "COUNTER_BITS"]

COUNTER_BITS = 64

COUNTER_DESCRIPTIONS = {
    "cycles": "cycles from start until this PE detected termination",
    "busy": "cycles in which scatter, gather or apply held work",
    "messages": "edges scattered by this PE (messages = traversed edges)",
    "updates": "updates emitted by this PE's apply",
    "supersteps": "apply passes executed (rounds, the silent last one included)",
    "stall_hazard": "cycles gather issued nothing because its messages waited for their vertices "
                    "to be written back (or for a free hazard slot)",
    "stall_backpressure": "cycles the scatter address generator had an edge but the pipeline was full",
    "wait_barrier": "cycles the PE was idle and its endpoint waited for other PEs' updates or barriers",
    "apply_cycles": "cycles spent in the apply pass",
}

#: Counter order = read address.
COUNTER_NAMES = tuple(COUNTER_DESCRIPTIONS)
