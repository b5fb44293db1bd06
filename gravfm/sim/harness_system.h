// gravfm compiled-simulation harness: the simulated system (harness.cpp's `Harness`): the FPGA
// models (one, or one per FPGA of a system), the C++ link models between them, the memory models
// of their AXI ports, the cycle order that makes them equal to the monolithic model, and the
// threads that advance the FPGAs. Included by harness.cpp after gravfm_ports.h, link_model.h,
// memory_harness.h and harness_support.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {
bool bit_of(const uint32_t* words, unsigned bit) { return (words[bit / 32] >> (bit % 32)) & 1u; }

// The link check's error output of an FPGA top (gravfm.hw.link_check), false for a top without it:
// a link error ends the run like `done`, and the host then reads the error words.
template <class T, class = void> struct HasLinkError : std::false_type {};
template <class T> struct HasLinkError<T, std::void_t<decltype(std::declval<T&>().link_error)>> : std::true_type {};
template <class T> bool link_error_of(const T* top) {
    if constexpr (HasLinkError<T>::value) return top->link_error;
    else return false;
}

class Harness {
public:
    // Each FPGA model has a context of its own: models in different threads share nothing.
    Harness(unsigned fpgas, unsigned pes_per_fpga, std::vector<Link> links, std::vector<gravfm::Memory> memories,
            unsigned threads)
        : pes_per_fpga_(pes_per_fpga), links_(std::move(links)), memories_(std::move(memories)), threads_(threads),
          barrier_(threads) {
        for (unsigned f = 0; f < fpgas; ++f) {
            contexts_.emplace_back(new VerilatedContext);
            // Uninitialized variables (memories exported without their all-zero contents) start at 0.
            contexts_.back()->randReset(0);
            tops_.emplace_back(new TOP_CLASS{contexts_.back().get()});
        }
        for (unsigned j = 1; j < threads_; ++j) workers_.emplace_back([this, j] { work(j); });
    }
    ~Harness() {
        if (!workers_.empty()) {
            quit_ = true;
            barrier_.wait();  // releases the workers from their wait for the next cycle
            for (auto& worker : workers_) worker.join();
        }
        for (auto& top : tops_) top->final();
    }

    uint64_t cycle = 0;
    uint64_t done_cycle = 0;  // first cycle at which `done` was seen high (0: not yet)

    // Latching `done` here keeps the cycle count exact while the harness spends cycles on reads.
    void tick() {
        if (links_.empty() && memories_.empty()) {
            TOP_CLASS* top = tops_[0].get();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->eval();
        } else {
            tick_system();
        }
        ++cycle;
        if (!done_cycle && all_done()) {
            done_cycle = cycle;
            for (Link& link : links_) {
                link.counters(link.held);
                link.held_at = cycle;
            }
        }
    }

    void reset() {
        for (auto& top : tops_) {
            top->rst = 1;
            top->clk = 0;
            top->host_wr_en = 0;
            top->start = 0;
            top->eval();
        }
        resetting_ = true;
        tick();
        tick();
        resetting_ = false;
        for (auto& top : tops_) {
            top->rst = 0;
            top->eval();
        }
    }

    // A host write lands in the cycle it is offered. Each FPGA of a system has a host link of its
    // own, so one cycle carries a write to every FPGA that has one (see load_file).
    void offer_write(uint32_t pe, uint32_t mem, uint32_t addr, const uint32_t* data) {
        TOP_CLASS* top = fpga_of(pe);
        top->host_wr_en = 1;
        top->host_wr_pe = pe % pes_per_fpga_;
        top->host_wr_mem = mem;
        top->host_wr_addr = addr;
        gravfm_set_wr_data(top, data);
    }

    void write_cycle() {
        tick();
        for (auto& top : tops_) top->host_wr_en = 0;
    }

    // Cycles of the link models alone, with nothing in flight: the FPGAs load side by side in
    // fewer cycles than one host bus would take, and the links' pseudo-random stalls must start
    // the run where the serial load (the monolithic model's) leaves them.
    // The cycle count advances alike: cycles from reset (the links' fault and counter times) and
    // the load's length read as they would after a serial load.
    void idle_links(uint64_t cycles) {
        const uint32_t zero[LINK_WORDS] = {};
        for (Link& link : links_)
            for (uint64_t k = 0; k < cycles; ++k) link.model->clock(false, zero, true, false);
        cycle += cycles;
    }

    unsigned fpga_count() const { return static_cast<unsigned>(tops_.size()); }
    unsigned fpga_index(uint32_t pe) const { return tops_.size() == 1 ? 0 : pe / pes_per_fpga_; }

    // The read data is valid HOST_READ_LATENCY cycles after the address (registered read path),
    // so a read costs that many clock cycles; the design keeps running meanwhile (reads never
    // disturb it). Link counters of a system of FPGA models come from the link models.
    void read(uint32_t pe, uint32_t mem, uint32_t addr, uint32_t* data) {
        TOP_CLASS* top = fpga_of(pe);
        top->host_rd_pe = pe % pes_per_fpga_;
        top->host_rd_mem = mem;
        top->host_rd_addr = addr;
        for (int k = 0; k < HOST_READ_LATENCY; ++k) tick();
        if (!links_.empty() && mem == HOST_READ_LINK_COUNTERS) link_counter(top, pe / pes_per_fpga_, addr, data);
        else gravfm_get_rd_data(top, data);
    }

    void pulse_start() {
        for (auto& top : tops_) top->start = 1;
        tick();
        for (auto& top : tops_) top->start = 0;
    }

    bool done() const { return done_cycle != 0; }
    uint32_t superstep() const { return tops_[0]->superstep; }
    const std::vector<gravfm::Memory>& memories() const { return memories_; }

private:
    bool all_done() const {
        bool done = true;
        for (const auto& top : tops_) {
            if (link_error_of(top.get())) return true;
            done = done && top->done;
        }
        return done;
    }

    TOP_CLASS* fpga_of(uint32_t pe) {
        const unsigned f = pe / pes_per_fpga_;
        if (f >= tops_.size()) fail("host access to PE " + std::to_string(pe) + ", beyond the system's FPGAs");
        return tops_[f].get();
    }

    // One cycle of several FPGA models joined by link models, in the order link_model.h gives
    // (also one top with memory ports: its memories are driven and clocked like links).
    // With several threads, thread j owns FPGAs f with f % threads == j, the links into them and
    // their memories; the barriers between the phases make the result the serial schedule's.
    void tick_system() {
        if (threads_ > 1) barrier_.wait();  // the workers start this cycle
        cycle_phases(0);
    }

    void cycle_phases(unsigned j) {
        drive_links(j);
        drive_memories(j);
        for (unsigned f = j; f < tops_.size(); f += threads_) {
            tops_[f]->clk = 0;
            tops_[f]->eval();
        }
        clock_memories(j);  // a memory touches its own FPGA only: no barrier needed before it
        if (threads_ > 1) barrier_.wait();
        clock_links(j);
        if (threads_ > 1) barrier_.wait();
        for (unsigned f = j; f < tops_.size(); f += threads_) {
            tops_[f]->clk = 1;
            tops_[f]->eval();
        }
        if (threads_ > 1) barrier_.wait();  // the cycle is over in every thread
    }

    void work(unsigned j) {
        for (;;) {
            barrier_.wait();
            if (quit_) return;
            cycle_phases(j);
        }
    }

    bool owns(unsigned j, unsigned fpga) const { return fpga % threads_ == j; }

    // The FPGA models' link inputs from the link models' registered outputs.
    void drive_links(unsigned j) {
#if LINK_PORTS > 0
        for (Link& link : links_) {
            if (owns(j, link.to))
                gravfm_set_link_in(tops_[link.to].get(), link.port_in, link.model->out_valid(), link.model->out_payload());
            if (owns(j, link.from))
                gravfm_set_link_out_ready(tops_[link.from].get(), link.port_out, link.model->in_ready());
        }
#endif
    }

    // The link models' clock edge, from the FPGA models' settled outputs (each link by the thread
    // of the FPGA it feeds).
    void clock_links(unsigned j) {
#if LINK_PORTS > 0
        uint32_t payload[LINK_WORDS];
        for (Link& link : links_) {
            if (!owns(j, link.to)) continue;
            TOP_CLASS* sender = tops_[link.from].get();
            const bool in_valid = gravfm_link_out_valid(sender, link.port_out);
            gravfm_link_out_payload(sender, link.port_out, payload);
            const bool out_ready = gravfm_link_in_ready(tops_[link.to].get(), link.port_in);
            if (!resetting_) {
                if (in_valid && link.model->in_ready() && bit_of(payload, link.barrier_bit)) ++link.barriers_sent;
                if (link.model->out_valid() && out_ready) {
                    ++link.delivered;
                    if (bit_of(link.model->out_payload(), link.barrier_bit)) ++link.barriers_delivered;
                }
            } else {
                link.delivered = link.barriers_sent = link.barriers_delivered = 0;
            }
            link.model->clock(in_valid, payload, out_ready, resetting_);
        }
#endif
    }

    // The FPGA models' memory-port inputs from the memory models' registered outputs.
    void drive_memories(unsigned j) {
#if MEM_PORTS > 0
        for (gravfm::Memory& memory : memories_) {
            if (!owns(j, memory.top)) continue;
            TOP_CLASS* top = tops_[memory.top].get();
            for (unsigned i = 0; i < memory.model->ports(); ++i)
                gravfm_set_mem(top, static_cast<int>(memory.first_port + i), *memory.model, i);
        }
#endif
    }

    // The memory models' clock edge, from their FPGA model's settled port outputs.
    void clock_memories(unsigned j) {
#if MEM_PORTS > 0
        for (gravfm::Memory& memory : memories_) {
            if (!owns(j, memory.top)) continue;
            TOP_CLASS* top = tops_[memory.top].get();
            for (unsigned i = 0; i < memory.model->ports(); ++i)
                gravfm_mem_inputs(top, static_cast<int>(memory.first_port + i), memory.inputs[i]);
            memory.model->clock(memory.inputs.data());
        }
#endif
    }

    // Counter c of FPGA f's link k at address LINK_COUNTER_COUNT k + c
    // (gravfm.hw.protocol.link_counter_address): the link model's, or the FPGA's own link ends'.
    void link_counter(TOP_CLASS* top, unsigned fpga, uint32_t addr, uint32_t* data) {
        const unsigned k = addr / LINK_COUNTER_COUNT, c = addr % LINK_COUNTER_COUNT;
        uint64_t value = 0;
        if (c >= LINK_MODEL_COUNTER_COUNT && HasLinkError<TOP_CLASS>::value) return gravfm_get_rd_data(top, data);
        for (const Link& link : links_) {
            if (link.from != fpga || link.port_out != k || c >= LINK_MODEL_COUNTER_COUNT) continue;
            uint64_t values[LINK_MODEL_COUNTER_COUNT];
            link.counters(values);
            value = done_cycle && link.held_at == done_cycle ? link.held[c] : values[c];
        }
        for (int w = 0; w < RD_WORDS; ++w) data[w] = w < 2 ? static_cast<uint32_t>(value >> (32 * w)) : 0;
    }

    unsigned pes_per_fpga_;
    std::vector<Link> links_;
    std::vector<gravfm::Memory> memories_;
    unsigned threads_;
    SpinBarrier barrier_;
    std::vector<std::unique_ptr<VerilatedContext>> contexts_;
    std::vector<std::unique_ptr<TOP_CLASS>> tops_;
    std::vector<std::thread> workers_;
    std::atomic<bool> quit_{false};
    bool resetting_ = false;
};

}  // namespace
