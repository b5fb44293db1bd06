// gravfm compiled-simulation harness: the host's side of the simulated system (harness_system.h):
// reset, host writes and reads, start, `done`, and the link counters the host reads from the
// link models. Includes what it uses (any include order compiles).
#pragma once

#include "gravfm_ports.h"
#include "harness_system.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gravfm::harness {

class Harness : public System {
public:
    Harness(unsigned fpgas, unsigned pes_per_fpga, std::vector<Link> links, std::vector<gravfm::Memory> memories,
            unsigned threads)
        : System(fpgas, std::move(links), std::move(memories), threads), pes_per_fpga_(pes_per_fpga) {}

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

    // A write on PE `pe`'s own port (a top with LOAD_PORTS: the parallel load), in the same cycle
    // as the host bus's and every other PE's. The caller has checked that the PE has one
    // (harness.cpp's load() queues a write by its port).
    void offer_load(uint32_t pe, uint32_t mem, uint32_t addr, const uint32_t* data) {
        gravfm_set_load(fpga_of(pe), static_cast<int>(local_pe(pe)), mem, addr, data);
    }

    void write_cycle() {
        tick();
        for (auto& top : tops_) {
            top->host_wr_en = 0;
            gravfm_clear_load(top.get());
        }
    }

    unsigned fpga_count() const { return static_cast<unsigned>(tops_.size()); }
    unsigned fpga_index(uint32_t pe) const { return tops_.size() == 1 ? 0 : pe / pes_per_fpga_; }
    uint32_t local_pe(uint32_t pe) const { return pe % pes_per_fpga_; }

    // The read data is valid HOST_READ_LATENCY cycles after the address (registered read path),
    // so a read costs that many clock cycles; the design keeps running meanwhile (reads never
    // disturb it).
    void read(uint32_t pe, uint32_t mem, uint32_t addr, uint32_t* data) {
        offer_read({pe, mem, addr});
        for (int k = 0; k < HOST_READ_LATENCY; ++k) tick();
        fetch(pe, mem, addr, data);
    }

    // Many reads as one stream: every FPGA takes a new address each cycle (its read path is a
    // pipeline of registers, gravfm/hw/host_read.py), and the FPGAs read side by side, so n
    // reads of the busiest FPGA cost n + HOST_READ_LATENCY - 1 cycles instead of n times the
    // latency. A design that has stopped (`done`) no longer moves its memories and counters, so
    // each word is the one a lone read gives; a run stopped early is sampled as it goes on, as
    // lone reads sample it too (at other cycles).
    void read_stream(const std::vector<ReadRequest>& requests, uint32_t* data) {
        std::vector<std::vector<size_t>> per_fpga(tops_.size());
        for (size_t i = 0; i < requests.size(); ++i) per_fpga[fpga_index(requests[i].pe)].push_back(i);
        size_t longest = 0;
        for (const auto& queue : per_fpga) longest = std::max(longest, queue.size());
        for (size_t t = 0; t + 1 < longest + HOST_READ_LATENCY; ++t) {
            for (size_t f = 0; f < per_fpga.size(); ++f) {
                if (t < per_fpga[f].size()) offer_read(requests[per_fpga[f][t]]);
            }
            tick();
            if (t + 1 < HOST_READ_LATENCY) continue;
            const size_t k = t + 1 - HOST_READ_LATENCY;   // the request whose word arrived now
            for (const auto& queue : per_fpga) {
                if (k >= queue.size()) continue;
                const ReadRequest& request = requests[queue[k]];
                fetch(request.pe, request.mem, request.addr, data + queue[k] * RD_WORDS);
            }
        }
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
    // The address of a read, on the host read port of the request's FPGA.
    void offer_read(const ReadRequest& request) {
        TOP_CLASS* top = fpga_of(request.pe);
        top->host_rd_pe = request.pe % pes_per_fpga_;
        top->host_rd_mem = request.mem;
        top->host_rd_addr = request.addr;
    }

    // The word of a read whose address went in HOST_READ_LATENCY cycles ago. Link counters of a
    // system of FPGA models come from the link models.
    void fetch(uint32_t pe, uint32_t mem, uint32_t addr, uint32_t* data) {
        TOP_CLASS* top = fpga_of(pe);
        if (!links_.empty() && mem == HOST_READ_LINK_COUNTERS) link_counter(top, pe / pes_per_fpga_, addr, data);
        else gravfm_get_rd_data(top, data);
    }

    TOP_CLASS* fpga_of(uint32_t pe) {
        const unsigned f = pe / pes_per_fpga_;
        if (f >= tops_.size()) fail("host access to PE " + std::to_string(pe) + ", beyond the system's FPGAs");
        return tops_[f].get();
    }

    // Counter c of FPGA f's link k at address LINK_COUNTER_COUNT k + c
    // (gravfm.hw.protocol.link_counter_address): the link model's, or the FPGA's own link ends'.
    void link_counter(TOP_CLASS* top, unsigned fpga, uint32_t addr, uint32_t* data) {
        const unsigned k = addr / LINK_COUNTER_COUNT, c = addr % LINK_COUNTER_COUNT;
        uint64_t value = 0;
        if (c >= LINK_MODEL_COUNTER_COUNT && HasLinkError<TOP_CLASS>::value) return gravfm_get_rd_data(top, data);
        for (const Link& link : links_) {
            if (link.source != fpga || link.port_out != k || c >= LINK_MODEL_COUNTER_COUNT) continue;
            uint64_t values[LINK_MODEL_COUNTER_COUNT];
            link.counters(values);
            value = done_cycle && link.held_at == done_cycle ? link.held[c] : values[c];
        }
        for (int w = 0; w < RD_WORDS; ++w) data[w] = w < 2 ? static_cast<uint32_t>(value >> (32 * w)) : 0;
    }

    unsigned pes_per_fpga_;
};

}  // namespace gravfm::harness
