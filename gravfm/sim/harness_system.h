// gravfm compiled-simulation harness: the simulated system. The FPGA models (one, or one per FPGA
// of a system), the C++ link models between them, the memory models of their AXI ports, the
// cycle order that makes them equal to the monolithic model, and the threads that advance the
// FPGAs; harness_host.h adds the host's side. Includes what it uses (any include order compiles).
//
// Schedules (all give the cycles of the serial one; tests/test_sim_per_fpga.py):
// - serial: one thread, or links that cannot be split: every cycle in the phases of
//   link_model.h, with barriers between them when several threads share the FPGAs;
// - quantum (several threads, every link of latency >= 4, FIFO depth >= 2 and without faults,
//   a top without a link check): links are split (link_split.h) with a delay of Q = the smallest
//   latency - 2 cycles, and the threads meet once per quantum of up to Q cycles, in which each
//   runs its FPGAs on their own. A quantum is shortened to the fewest free entries of any link
//   FIFO's memory; with a full one, that cycle runs alone (two barriers). An FPGA whose `done` rises
//   stops there; the others catch up to the last one to finish, so the run ends at the cycle
//   where every `done` is high, as in the serial schedule (`done` is a sticky flag: checked).
#pragma once

#include "gravfm_ports.h"
#include "harness_support.h"
#include "memory_harness.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace gravfm::harness {

inline bool bit_of(const uint32_t* words, unsigned bit) { return (words[bit / 32] >> (bit % 32)) & 1u; }

// The link check's error output of an FPGA top (gravfm.hw.link_check), false for a top without it:
// a link error ends the run like `done`, and the host then reads the error words.
template <class T, class = void> struct HasLinkError : std::false_type {};
template <class T> struct HasLinkError<T, std::void_t<decltype(std::declval<T&>().link_error)>> : std::true_type {};
template <class T> bool link_error_of(const T* top) {
    if constexpr (HasLinkError<T>::value) return top->link_error;
    else return false;
}

// The quantum of a system's links (0: no quantum schedule; see the top of this file).
inline unsigned link_quantum(const std::vector<Link>& links, unsigned threads) {
    if (threads < 2 || links.empty() || HasLinkError<TOP_CLASS>::value) return 0;
    unsigned latency = ~0u;
    for (const Link& link : links) {
        const gravfm::LinkParams& p = link.params;
        if (p.fifo_depth < 2 || p.drop_threshold || p.duplicate_threshold || p.flip_threshold || p.dead) return 0;
        latency = std::min(latency, p.latency);
    }
    return latency >= 4 ? latency - 2 : 0;
}

class System {
public:
    // Each FPGA model has a context of its own: models in different threads share nothing.
    System(unsigned fpgas, std::vector<Link> links, std::vector<gravfm::Memory> memories, unsigned threads)
        : links_(std::move(links)), memories_(std::move(memories)), threads_(threads), barrier_(threads),
          ins_(fpgas), outs_(fpgas), mems_(fpgas), at_(fpgas, 0) {
        for (unsigned f = 0; f < fpgas; ++f) {
            contexts_.emplace_back(new VerilatedContext);
            // Uninitialized variables (memories exported without their all-zero contents) start at 0.
            contexts_.back()->randReset(0);
            tops_.emplace_back(new TOP_CLASS{contexts_.back().get()});
        }
        quantum_ = link_quantum(links_, threads_);
        for (Link& link : links_) {
            if (quantum_) link.split.reset(new gravfm::SplitLink(link.params, LINK_WORDS, quantum_));
            ins_[link.target].push_back(&link);
            outs_[link.source].push_back(&link);
        }
        for (gravfm::Memory& memory : memories_) mems_[memory.top].push_back(&memory);
        for (unsigned j = 1; j < threads_; ++j) workers_.emplace_back([this, j] { work(j); });
    }
    ~System() {
        if (!workers_.empty()) {
            job_ = Job::quit;
            barrier_.wait();  // releases the workers from their wait for the next job
            for (auto& worker : workers_) worker.join();
        }
        for (auto& top : tops_) top->final();
    }

    uint64_t cycle = 0;
    uint64_t done_cycle = 0;  // first cycle at which `done` was seen high (0: not yet)
    unsigned quantum() const { return quantum_; }
    uint64_t quanta = 0, quantum_cycles = 0;  // quanta run by advance(), and their cycles

    // Latching `done` here keeps the cycle count exact while the harness spends cycles on reads.
    void tick() {
        if (links_.empty() && memories_.empty()) {
            TOP_CLASS* top = tops_[0].get();
            top->clk = 1;
            top->eval();
            top->clk = 0;
            top->eval();
        } else {
            dispatch(quantum_ ? Job::split_cycle : Job::cycle);
        }
        ++cycle;
        if (!done_cycle && all_done()) latch_done();
    }

    // `cycles` cycles of the run, fewer if every `done` rises before.
    void advance(uint64_t cycles) {
        const uint64_t end = cycle + cycles;
        while (cycle < end && !done_cycle) {
            const uint64_t q = std::min<uint64_t>(room(), end - cycle);
            if (q) run_quantum(q);
            else tick();
        }
    }

    // Cycles of the link models alone, with nothing in flight: the FPGAs load side by side in
    // fewer cycles than one host bus would take, and the links' pseudo-random stalls must start
    // the run where the serial load (the monolithic model's) leaves them.
    // The cycle count advances alike: cycles from reset (the links' fault and counter times) and
    // the load's length read as they would after a serial load.
    // A link idles through them at once (LinkModel::idle: the same state as cycle by cycle).
    void idle_links(uint64_t cycles) {
        for (Link& link : links_) {
            if (!link.split) link.model->idle(cycles);
            else if (!link.split->idle()) fail("internal: an item in flight while the links idle");
            else link.split->idle_cycles(cycle, cycles);
        }
        cycle += cycles;
    }

protected:
    bool all_done() const {
        bool done = true;
        for (const auto& top : tops_) {
            if (link_error_of(top.get())) return true;
            done = done && top->done;
        }
        return done;
    }

    void latch_done() {
        done_cycle = cycle;
        for (Link& link : links_) {
            link.counters(link.held);
            link.held_at = cycle;
        }
    }

    std::vector<Link> links_;
    std::vector<gravfm::Memory> memories_;
    std::vector<std::unique_ptr<VerilatedContext>> contexts_;  // before tops_: they outlive the models
    std::vector<std::unique_ptr<TOP_CLASS>> tops_;
    bool resetting_ = false;

private:
    enum class Job { cycle, split_cycle, quantum, catch_up, quit };

    // Runs `job` in every thread: thread j takes the FPGAs f with f % threads == j, the links into
    // them (serial) or both halves' ends at them (split), and their memories.
    void dispatch(Job job) {
        job_ = job;
        if (threads_ > 1) barrier_.wait();  // the workers start the job
        run_job(0);
    }

    void work(unsigned j) {
        for (;;) {
            barrier_.wait();
            if (job_ == Job::quit) return;
            run_job(j);
        }
    }

    void run_job(unsigned j) {
        switch (job_) {
        case Job::cycle: cycle_phases(j); break;
        case Job::split_cycle:
            for (unsigned f = j; f < tops_.size(); f += threads_) drive(f, cycle, false);
            sync();  // every sender's ready is taken from the pops before this cycle's
            for (unsigned f = j; f < tops_.size(); f += threads_) clock(f, cycle);
            break;
        case Job::quantum:
        case Job::catch_up: {
            const bool stop = job_ == Job::quantum;  // a quantum stops an FPGA where `done` rises
            for (unsigned f = j; f < tops_.size(); f += threads_) {
                if (stop) stopped_[f] = tops_[f]->done;  // sticky: done before, stopped at once
                while (at_[f] < target_ && !(stop && stopped_[f])) {
                    drive(f, at_[f], true);
                    clock(f, at_[f]);
                    ++at_[f];
                    if (stop) stopped_[f] = tops_[f]->done;
                }
            }
            break;
        }
        case Job::quit: return;
        }
        sync();  // the job is over in every thread
    }

    void sync() {
        if (threads_ > 1) barrier_.wait();
    }

    // The longest quantum from this cycle: at most Q, and no longer than the free entries of any
    // link FIFO's memory (one item a cycle cannot fill it then; see link_split.h). 0: none.
    unsigned room() const {
        unsigned q = quantum_;
        for (const Link& link : links_)
            if (q) q = std::min(q, link.split->fifo_free(cycle));
        return q;
    }

    // Up to q cycles in which each thread runs its FPGAs alone; FPGAs whose `done` rises stop
    // there, and if all of them did, the others catch up to the last (the serial run's end).
    void run_quantum(uint64_t q) {
        std::fill(at_.begin(), at_.end(), cycle);
        stopped_.assign(tops_.size(), 0);
        target_ = cycle + q;
        dispatch(Job::quantum);
        ++quanta;
        const bool all = std::all_of(stopped_.begin(), stopped_.end(), [](char s) { return s != 0; });
        if (all) target_ = *std::max_element(at_.begin(), at_.end());
        if (std::any_of(at_.begin(), at_.end(), [this](uint64_t at) { return at != target_; }))
            dispatch(Job::catch_up);
        quantum_cycles += target_ - cycle;
        cycle = target_;
        if (!all) return;
        for (const auto& top : tops_)
            if (!top->done) fail("internal: an FPGA's done fell after it rose (the quantum schedule needs it sticky)");
        latch_done();
    }

    // FPGA f's inputs in cycle `at`: its link ends (split links) and its memory ports.
    void drive(unsigned f, uint64_t at, bool ahead) {
        TOP_CLASS* top = tops_[f].get();
#if LINK_PORTS > 0
        for (Link* link : ins_[f])
            gravfm_set_link_in(top, link->port_in, link->split->receiver().out_valid(),
                               link->split->receiver().out_payload());
        for (Link* link : outs_[f]) gravfm_set_link_out_ready(top, link->port_out, link->split->in_ready(at, ahead));
#endif
        drive_memories(f);
        (void)top, (void)at, (void)ahead;
    }

    // FPGA f's cycle `at` after drive(): its outputs settle, then the clock edge of its memories,
    // of both halves of its split links, and its own.
    void clock(unsigned f, uint64_t at) {
        TOP_CLASS* top = tops_[f].get();
        top->clk = 0;
        top->eval();
        clock_memories(f);
#if LINK_PORTS > 0
        uint32_t payload[LINK_WORDS];
        for (Link* link : outs_[f]) {
            const bool in_valid = gravfm_link_out_valid(top, link->port_out);
            gravfm_link_out_payload(top, link->port_out, payload);
            const bool take = link->split->clock_sender(at, in_valid, payload, resetting_);
            if (resetting_) link->barriers_sent = 0;
            else if (take && bit_of(payload, link->barrier_bit)) ++link->barriers_sent;
        }
        for (Link* link : ins_[f]) {
            const gravfm::LinkModel& receiver = link->split->receiver();
            const bool out_ready = gravfm_link_in_ready(top, link->port_in);
            if (resetting_) {
                link->delivered = link->barriers_delivered = 0;
            } else if (receiver.out_valid() && out_ready) {
                ++link->delivered;
                if (bit_of(receiver.out_payload(), link->barrier_bit)) ++link->barriers_delivered;
            }
            link->split->clock_receiver(at, out_ready, resetting_);
        }
#endif
        top->clk = 1;
        top->eval();
    }

    // The serial schedule's cycle in thread j (link_model.h's order; serial links): the barriers
    // between the phases make the result the single thread's.
    void cycle_phases(unsigned j) {
        for (unsigned f = j; f < tops_.size(); f += threads_) {
            drive_links(f);
            drive_memories(f);
            tops_[f]->clk = 0;
            tops_[f]->eval();
            clock_memories(f);  // a memory touches its own FPGA only: no barrier needed before it
        }
        sync();
        for (unsigned f = j; f < tops_.size(); f += threads_) clock_links(f);
        sync();
        for (unsigned f = j; f < tops_.size(); f += threads_) {
            tops_[f]->clk = 1;
            tops_[f]->eval();
        }
    }

    // FPGA f's link inputs from the link models' registered outputs (serial links).
    void drive_links(unsigned f) {
#if LINK_PORTS > 0
        TOP_CLASS* top = tops_[f].get();
        for (Link* link : ins_[f]) gravfm_set_link_in(top, link->port_in, link->model->out_valid(), link->model->out_payload());
        for (Link* link : outs_[f]) gravfm_set_link_out_ready(top, link->port_out, link->model->in_ready());
#endif
        (void)f;
    }

    // The clock edge of the links into FPGA f, from the FPGA models' settled outputs (serial links).
    void clock_links(unsigned f) {
#if LINK_PORTS > 0
        uint32_t payload[LINK_WORDS];
        for (Link* link : ins_[f]) {
            TOP_CLASS* sender = tops_[link->source].get();
            const bool in_valid = gravfm_link_out_valid(sender, link->port_out);
            gravfm_link_out_payload(sender, link->port_out, payload);
            const bool out_ready = gravfm_link_in_ready(tops_[f].get(), link->port_in);
            if (!resetting_) {
                if (in_valid && link->model->in_ready() && bit_of(payload, link->barrier_bit)) ++link->barriers_sent;
                if (link->model->out_valid() && out_ready) {
                    ++link->delivered;
                    if (bit_of(link->model->out_payload(), link->barrier_bit)) ++link->barriers_delivered;
                }
            } else {
                link->delivered = link->barriers_sent = link->barriers_delivered = 0;
            }
            link->model->clock(in_valid, payload, out_ready, resetting_);
        }
#endif
        (void)f;
    }

    // FPGA f's memory-port inputs from its memory models' registered outputs.
    void drive_memories(unsigned f) {
#if MEM_PORTS > 0
        for (gravfm::Memory* memory : mems_[f])
            for (unsigned i = 0; i < memory->model->ports(); ++i)
                gravfm_set_mem(tops_[f].get(), static_cast<int>(memory->first_port + i), *memory->model, i);
#endif
        (void)f;
    }

    // The clock edge of FPGA f's memory models, from its settled port outputs.
    void clock_memories(unsigned f) {
#if MEM_PORTS > 0
        for (gravfm::Memory* memory : mems_[f]) {
            for (unsigned i = 0; i < memory->model->ports(); ++i)
                gravfm_mem_inputs(tops_[f].get(), static_cast<int>(memory->first_port + i), memory->inputs[i]);
            memory->model->clock(memory->inputs.data());
        }
#endif
        (void)f;
    }

    unsigned threads_;
    unsigned quantum_ = 0;
    SpinBarrier barrier_;
    std::vector<std::vector<Link*>> ins_, outs_;  // by FPGA: the links into it, out of it
    std::vector<std::vector<gravfm::Memory*>> mems_;  // by FPGA: its memories
    std::vector<std::thread> workers_;
    std::atomic<Job> job_{Job::cycle};
    // The quantum schedule: each FPGA's cycle (at_), whether its `done` stopped it, the end.
    std::vector<uint64_t> at_;
    std::vector<char> stopped_;
    uint64_t target_ = 0;
};

}  // namespace gravfm::harness
