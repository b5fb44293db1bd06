// Bench: a link split for the harness's quantum schedule (link_split.h) against the whole link
// (link_model.h), on random links and random traffic (tests/test_link_model_cpp.py).
//
// Every cycle both get the same i.valid, i.payload and o.ready; the bench compares i.ready,
// o.valid, o.payload while o.valid is high, and the items and link_bound counters. Time runs in
// quanta as in the harness: from each cycle, q = min(delay, free FIFO entries) cycles with the
// sender half ahead (its ready from the credit alone), or one cycle by the FIFO's fullness when
// q is 0. With `unchecked`, quanta ignore the FIFO's room: the bench must then find differences.
//
// Usage: link_split_tb SEED CASES [unchecked]; prints "ok CASES links, CYCLES cycles (QUANTA
// quanta, ALONE cycles alone)" or the first difference, exit status 1.
#include "link_model.h"
#include "link_split.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr unsigned WORDS = 2;

struct Case {
    gravfm::LinkParams params;
    unsigned delay, valid_percent, ready_percent;
};

Case random_case(std::mt19937_64& random) {
    auto below = [&](unsigned n) { return static_cast<unsigned>(random() % n); };
    gravfm::LinkParams p{};
    const unsigned item_bits = 16 + below(40);
    if (below(2)) {
        p.rate_fixed = 32 + below(item_bits << 8);  // fewer bits a cycle than an item has
        p.cost = item_bits << 8;
        p.credit_bits = 24;
    }
    p.latency = 4 + below(60);
    p.fifo_depth = 2 + below(40);
    p.reorder_window = 1 + below(4);
    p.stall_threshold = below(2) ? below(200) : 0;
    p.lfsr_seed = 1 + below(0xFFFE);
    p.time_bits = 14;
    p.fault_seed = 1;
    p.payload_bits = item_bits;
    return {p, 1 + below(p.latency - 2), 10 + below(91), 10 + below(91)};
}

// One link's run; false (with a message) at the first difference.
bool run(const Case& c, uint64_t cycles, bool unchecked, std::mt19937_64& random, uint64_t& quanta, uint64_t& alone) {
    gravfm::LinkModel whole(c.params, WORDS);
    gravfm::SplitLink split(c.params, WORDS, c.delay);
    const uint32_t zero[WORDS] = {};
    for (int k = 0; k < 2; ++k) {  // the harness's reset cycles
        whole.clock(false, zero, true, true);
        split.in_ready(k, false);
        split.clock_sender(k, false, zero, true);
        split.clock_receiver(k, true, true);
    }
    auto fail = [&](uint64_t t, const char* what) {
        std::printf("link latency %u depth %u reorder %u stall %u rate %u delay %u: %s differs at cycle %llu\n",
                    c.params.latency, c.params.fifo_depth, c.params.reorder_window, c.params.stall_threshold,
                    c.params.rate_fixed, c.delay, what, static_cast<unsigned long long>(t));
        return false;
    };
    uint64_t t = 2, end = 2 + cycles;
    while (t < end) {
        uint64_t q = unchecked ? c.delay : std::min<uint64_t>(c.delay, split.fifo_free(t));
        const bool ahead = q != 0;
        q = std::min<uint64_t>(std::max<uint64_t>(q, 1), end - t);
        quanta += ahead;
        alone += !ahead;
        for (uint64_t stop = t + q; t < stop; ++t) {
            uint32_t payload[WORDS] = {static_cast<uint32_t>(random()), static_cast<uint32_t>(random()) & 0xFFFFFFu};
            const bool in_valid = random() % 100 < c.valid_percent, out_ready = random() % 100 < c.ready_percent;
            if (whole.in_ready() != split.in_ready(t, ahead)) return fail(t, "i.ready");
            const gravfm::LinkModel& receiver = split.receiver();
            if (whole.out_valid() != receiver.out_valid()) return fail(t, "o.valid");
            if (whole.out_valid() && !std::equal(whole.out_payload(), whole.out_payload() + WORDS, receiver.out_payload()))
                return fail(t, "o.payload");
            whole.clock(in_valid, payload, out_ready);
            split.clock_sender(t, in_valid, payload, false);
            split.clock_receiver(t, out_ready, false);
            if (whole.items != split.items) return fail(t, "items");
            if (whole.link_bound != split.link_bound) return fail(t, "link_bound");
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: link_split_tb SEED CASES [unchecked]\n");
        return 2;
    }
    std::mt19937_64 random(std::strtoull(argv[1], nullptr, 10));
    const unsigned cases = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
    const bool unchecked = argc > 3 && !std::strcmp(argv[3], "unchecked");
    const uint64_t cycles = 4000;
    uint64_t quanta = 0, alone = 0;
    for (unsigned k = 0; k < cases; ++k)
        if (!run(random_case(random), cycles, unchecked, random, quanta, alone)) return 1;
    std::printf("ok %u links, %llu cycles (%llu quanta, %llu cycles alone)\n", cases,
                static_cast<unsigned long long>(cases * cycles), static_cast<unsigned long long>(quanta),
                static_cast<unsigned long long>(alone));
    return 0;
}
