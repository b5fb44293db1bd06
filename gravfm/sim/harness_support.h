// gravfm compiled-simulation harness: what it reads (the PLAN and SYSTEM files) and the small
// pieces it is built from. Includes what it uses (any include order compiles).
#pragma once

#include "gravfm_ports.h"
#include "link_model.h"
#include "link_split.h"
#include "named_fields.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gravfm::harness {

struct ReadRequest {
    uint32_t pe, mem, addr;
};

[[noreturn]] inline void fail(const std::string& message) {
    std::fprintf(stderr, "gravfm_sim: %s\n", message.c_str());
    std::exit(2);
}

// One link of a system of several FPGAs: the model, where it connects, and the counters the
// monolithic system keeps beside it (gravfm.hw.multi.MultiFpgaSystem._count_link_ends).
struct Link : LinkEnds {  // where it connects: source, target, port_out, port_in, item_bits, barrier_bit
    gravfm::LinkParams params;
    std::unique_ptr<gravfm::LinkModel> model;
    std::unique_ptr<gravfm::SplitLink> split;  // the quantum schedule's halves, in place of model
    uint64_t delivered = 0, barriers_sent = 0, barriers_delivered = 0;
    // The counters as they were when the run ended (at cycle held_at): the link check's control
    // frames keep flowing while the host reads (MultiFpgaSystem holds them the same way).
    uint64_t held[LINK_MODEL_COUNTER_COUNT] = {};
    uint64_t held_at = 0;

    void counters(uint64_t* values) const {  // in gravfm.hw.protocol.LINK_MODEL_COUNTER_NAMES order
        const uint64_t items = split ? split->items : model->items;
        const uint64_t all[] = {items, items * item_bits, split ? split->link_bound : model->link_bound, delivered,
                                barriers_sent, barriers_delivered, model->dropped, model->duplicated,
                                model->flipped, model->first_fault};
        static_assert(sizeof all / sizeof all[0] == LINK_MODEL_COUNTER_COUNT, "link counters");
        std::copy_n(all, LINK_MODEL_COUNTER_COUNT, values);
    }
};

// A reusable barrier for the harness's threads: spins briefly (a cycle of an FPGA model takes
// microseconds), then yields so that more threads than free cores still make progress.
class SpinBarrier {
public:
    explicit SpinBarrier(unsigned parties) : parties_(parties) {}
    void wait() {
        const unsigned generation = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_acq_rel);
            return;
        }
        for (unsigned spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins)
            if (spins > 2000) std::this_thread::yield();
    }

private:
    const unsigned parties_;
    std::atomic<unsigned> arrived_{0}, generation_{0};
};

inline uint64_t parse_count(const char* text, const char* option) {
    char* end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0') fail(std::string("bad value for ") + option + ": " + text);
    return value;
}

// The text files (PLAN, SYSTEM): items "KEYWORD NUMBERS...", one per line. on_item(kind, where)
// reads the item's numbers from `file` itself; `where` names the file and item for messages.
template <typename OnItem>
inline void read_items(const char* path, const char* what, OnItem on_item) {
    FILE* file = std::fopen(path, "r");
    if (!file) fail(std::string("cannot open ") + what + " file " + path);
    char kind[16];
    int line = 0;
    while (std::fscanf(file, "%15s", kind) == 1)
        on_item(file, kind, std::string(path) + ": line " + std::to_string(++line));
    std::fclose(file);
}

// The PLAN file: "watch" and "read" lines with the fields of WatchItem and ReadRegion by name
// (gravfm_inputs.h, generated from gravfm.sim.plan_file).
inline void read_plan(const char* path, std::vector<WatchItem>& watch, std::vector<ReadRegion>& reads) {
    read_items(path, "plan", [&](FILE* file, const char* kind, const std::string& where) {
        try {
            if (std::strcmp(kind, "watch") == 0) {
                WatchItem item{};
                read_fields(rest_of_line(file), item);
                watch.push_back(item);
            } else if (std::strcmp(kind, "read") == 0) {
                ReadRegion region{};
                read_fields(rest_of_line(file), region);
                reads.push_back(region);
            } else {
                fail(where + ": unknown " + kind);
            }
        } catch (const std::runtime_error& error) {
            fail(where + ": " + error.what());
        }
    });
}

inline void print_values(FILE* file, const std::vector<uint64_t>& values) {
    std::fputc('[', file);
    for (size_t i = 0; i < values.size(); ++i)
        std::fprintf(file, "%s%llu", i ? ", " : "", static_cast<unsigned long long>(values[i]));
    std::fputc(']', file);
}

// The SYSTEM file (see the top of this file): FPGAs, PEs per FPGA and the links.
inline void read_system(const char* path, unsigned& fpgas, unsigned& pes, std::vector<Link>& links) {
    read_items(path, "system", [&](FILE* file, const char* kind, const std::string& where) {
        if (!std::strcmp(kind, "fpgas") || !std::strcmp(kind, "pes")) {
            unsigned value = 0;
            if (std::fscanf(file, "%u", &value) != 1 || value == 0) fail(where + ": needs a positive number");
            (kind[0] == 'f' ? fpgas : pes) = value;
        } else if (!std::strcmp(kind, "link")) {
            Link link;
            gravfm::LinkParams p{};
            try {
                read_fields(rest_of_line(file), static_cast<LinkEnds&>(link), p);
            } catch (const std::exception& error) {
                fail(where + ": " + error.what());
            }
            if (link.source >= fpgas || link.target >= fpgas || link.port_out >= LINK_PORTS ||
                link.port_in >= LINK_PORTS || link.barrier_bit >= 32 * LINK_WORDS)
                fail(where + ": link outside the system of this build");
            try {
                link.model.reset(new gravfm::LinkModel(p, LINK_WORDS));
                link.params = p;
            } catch (const std::exception& error) {
                fail(where + ": " + error.what());
            }
            links.push_back(std::move(link));
        } else {
            fail(where + ": unknown " + kind);
        }
    });
    if (fpgas != LINK_PORTS + 1)
        fail(std::string(path) + ": " + std::to_string(fpgas) + " FPGAs, but this build's top has " +
             std::to_string(LINK_PORTS) + " link ports");
    if (links.size() != static_cast<size_t>(fpgas) * (fpgas - 1))
        fail(std::string(path) + ": " + std::to_string(links.size()) + " links for " + std::to_string(fpgas) + " FPGAs");
}

}  // namespace gravfm::harness
