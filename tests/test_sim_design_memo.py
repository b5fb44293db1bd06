"""The build key remembered by configuration (gravfm.sim.design_memo): a changed configuration or
changed RTL code gives another memo key, the same configuration finds its build without exporting."""

import pytest

from gravfm.algorithms import get_algorithm
from gravfm.hw import SystemConfig
from gravfm.hw.fpga import FpgaTop
from gravfm.hw.link import LinkConfig
from gravfm.hw.multi.system import MultiFpgaSystem
from gravfm.sim import design_memo, verilator_build
from gravfm.sim.design_memo import design_memo_key

OTHERS = {"header": "h", "protocol": "p", "flags": "f", "verilator": "v"}


def config(algorithm="wcc", **fields):
    values = {"local_bits": 5, "edges_per_pe": 256, **fields}
    return SystemConfig.of(get_algorithm(algorithm), **values)


def key_of(top, others=OTHERS):
    top._MustUse__silence = True  # built to be described, not elaborated
    return design_memo_key(top, others)


def test_same_configuration_same_key_in_two_tops():
    assert key_of(FpgaTop(config())) == key_of(FpgaTop(config())) is not None


@pytest.mark.parametrize("change", [{"local_bits": 6}, {"edges_per_pe": 512}, {"max_rounds": 128},
                                    {"hazard_slots": 6}, {"pes_per_fpga": 2}, {"arch": "gravf"},
                                    {"network_fifo_depth": 8}])
def test_changed_configuration_changes_the_key(change):
    assert key_of(FpgaTop(config(**change))) != key_of(FpgaTop(config()))


def test_algorithm_and_its_kernel_parameters_enter_the_key():
    keys = {key_of(FpgaTop(config(name))) for name in ("wcc", "bfs", "pagerank")}
    assert len(keys) == 3


def test_links_and_filter_enter_the_key_of_a_system():
    system = config(fpgas=2)
    base = key_of(MultiFpgaSystem(system, link=LinkConfig()))
    assert base == key_of(MultiFpgaSystem(system, link=LinkConfig()))
    assert base != key_of(MultiFpgaSystem(system, link=LinkConfig(latency_cycles=8)))
    assert base != key_of(MultiFpgaSystem(system, link=LinkConfig(), use_filter=False))
    assert key_of(FpgaTop(system, use_filter=False)) != key_of(FpgaTop(system))


def test_code_and_other_key_parts_enter_the_key(monkeypatch):
    top = FpgaTop(config())
    base = key_of(top)
    assert base != key_of(top, {**OTHERS, "flags": "g"})
    monkeypatch.setattr(design_memo, "source_hash", lambda: "another revision of gravfm/hw")
    assert key_of(top) != base


def test_source_hash_covers_the_hardware_folder():
    hashed = list((design_memo._PACKAGE / "hw").rglob("*.py"))
    assert hashed and all(design_memo._in_hashed_folders(p) for p in hashed)
    assert not design_memo._in_hashed_folders(design_memo._PACKAGE / "reproduce" / "plan.py")


def test_kernel_closing_over_an_object_without_stable_text_has_no_key():
    class Opaque:
        pass

    opaque = Opaque()
    algorithm = get_algorithm("wcc")
    gather = algorithm.gather

    def odd_gather(layouts):
        assert opaque is not None  # closes over it
        return gather(layouts)

    from dataclasses import replace
    odd = replace(algorithm, gather=odd_gather)
    top = FpgaTop(SystemConfig.of(odd, local_bits=5, edges_per_pe=256))
    top._MustUse__silence = True
    assert design_memo.design_identity(top) is None


def test_kernel_factory_object_has_no_key():
    # A Verilog kernel's factory is an object naming its file: its text is not in the identity.
    from dataclasses import replace

    class Factory:
        def __call__(self, layouts):
            return get_algorithm("wcc").gather(layouts)

    top = FpgaTop(SystemConfig.of(replace(get_algorithm("wcc"), gather=Factory()), local_bits=5, edges_per_pe=256))
    top._MustUse__silence = True
    assert design_memo.design_identity(top) is None


def test_cached_build_is_found_by_configuration_without_export(build_cache, monkeypatch):
    first = FpgaTop(config(local_bits=4, edges_per_pe=64))
    built = verilator_build.build_simulator(first, cache_dir=build_cache)
    exported = []
    real_export = verilator_build.export_verilog

    def counting_export(top, **options):
        exported.append(top)
        return real_export(top, **options)

    monkeypatch.setattr(verilator_build, "export_verilog", counting_export)
    again = verilator_build.build_simulator(FpgaTop(config(local_bits=4, edges_per_pe=64)), cache_dir=build_cache)
    assert (again.cached, again.key, again.executable) == (True, built.key, built.executable)
    assert exported == []
    # The remembered key is the real one: exporting the same configuration gives it.
    assert verilator_build.simulator_sources(FpgaTop(config(local_bits=4, edges_per_pe=64))).key == built.key
    assert len(exported) == 1
