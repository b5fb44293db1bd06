// Waveform dumping of a traced build (gravfm run --trace; gravfm.sim.trace).
//
// Only a traced build includes this header (from its generated gravfm_ports.h, which then names
// gravfm_traced_top as TOP_CLASS), so an untraced build's sources and cache key are untouched.
// The wrapper dumps at every clock edge that the harness evaluates after `start`: cycle c of the
// run (c = 1 is the edge that samples start) at time 10 c (rising) and 10 c + 5 (falling), for
// the cycles of the window only. The harness creates its models in FPGA order; model k writes
// the file named by GRAVFM_TRACE_FILE<k>; GRAVFM_TRACE_WINDOW is "FIRST LAST" (LAST -1: no end).
// The file is closed when the harness deletes its models, which it does on every way out of a
// run (done, stalled, max_cycles, interrupted).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#if defined(VM_TRACE_FST) && VM_TRACE_FST
#include "verilated_fst_c.h"
using gravfm_trace_file = VerilatedFstC;
#else
#include "verilated_vcd_c.h"
using gravfm_trace_file = VerilatedVcdC;
#endif

class gravfm_traced_top : public TOP_CLASS {
public:
    explicit gravfm_traced_top(VerilatedContext* context) : TOP_CLASS{enable(context)}, index_(next_index()++) {
        const std::string name = "GRAVFM_TRACE_FILE" + std::to_string(index_);
        const char* path = std::getenv(name.c_str());
        const char* window = std::getenv("GRAVFM_TRACE_WINDOW");
        if (!path || !window || std::sscanf(window, "%lld %lld", &first_, &last_) != 2) {
            std::fprintf(stderr, "gravfm_sim: a traced build needs %s and GRAVFM_TRACE_WINDOW\n", name.c_str());
            std::exit(2);
        }
        this->trace(file_.get(), 99);
        file_->open(path);
        if (!file_->isOpen()) {
            std::fprintf(stderr, "gravfm_sim: cannot open the trace file %s\n", path);
            std::exit(2);
        }
    }
    ~gravfm_traced_top() { file_->close(); }

    // Hides (does not override) the model's eval: the harness calls it through TOP_CLASS.
    void eval() {
        TOP_CLASS::eval();
        if (this->clk == last_clk_) return;  // inputs settling between edges: dumped with the next edge
        last_clk_ = this->clk;
        if (this->clk) {
            if (this->start) started_ = true, cycle_ = 1;
            else if (started_) ++cycle_;
        }
        const long long cycle = static_cast<long long>(cycle_);
        if (!started_ || cycle < first_ || (last_ >= 0 && cycle > last_)) return;
        file_->dump(static_cast<uint64_t>(10 * cycle + (this->clk ? 0 : 5)));
    }

private:
    static VerilatedContext* enable(VerilatedContext* context) {
        context->traceEverOn(true);  // before the model is made, as Verilator asks
        return context;
    }
    static unsigned& next_index() {
        static unsigned index = 0;
        return index;
    }

    std::unique_ptr<gravfm_trace_file> file_{new gravfm_trace_file};
    unsigned index_;
    long long first_ = 0, last_ = -1;
    uint64_t cycle_ = 0;
    bool started_ = false;
    uint8_t last_clk_ = 0;
};
