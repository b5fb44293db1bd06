// Bench: a link idling through k cycles at once (LinkModel::idle, SplitLink::idle_cycles) against
// k single clock edges with nothing offered and o.ready high, on random links (faults, dead links,
// reordering, stalls, credit, depth 1, narrow time counters) and random traffic
// (tests/test_link_model_cpp.py).
//
// Per case: random traffic for a while, an idle stretch of k cycles (drained first or not: a link
// with items in flight idles cycle by cycle), taken at once by one copy and cycle by cycle by the
// other, then the same random traffic into both, comparing i.ready, o.valid, o.payload and every
// counter in every cycle; k from a few cycles to past the LFSR's period and the time counter's
// wrap. Jumps beyond what single clocks can reach are checked by composition: idle(a + b) equals
// idle(a) then idle(b) (the xorshift generator's period is 2^32 - 1). Split links likewise, with
// idle_cycles against the harness's former cycle-by-cycle loop.
//
// Usage: link_idle_tb SEED CASES [off_by_one]; prints "ok LINKS links, IDLE idle cycles, JUMPS
// jumps" or the first difference, exit status 1. `off_by_one` idles one cycle too many at once:
// the bench must then find differences.
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
uint64_t g_extra = 0;  // off_by_one

gravfm::LinkParams random_params(std::mt19937_64& random, bool faults) {
    auto below = [&](uint64_t n) { return static_cast<uint32_t>(random() % n); };
    gravfm::LinkParams p{};
    const unsigned item_bits = 16 + below(40);
    if (below(3)) {
        p.rate_fixed = 32 + below(item_bits << 8);
        p.cost = item_bits << 8;
        p.credit_bits = 24;
    }
    p.latency = 4 + below(60);
    p.fifo_depth = below(4) ? 2 + below(40) : 1;
    p.reorder_window = 1 + below(4);
    p.stall_threshold = below(2) ? below(200) : 0;
    p.lfsr_seed = 1 + below(0xFFFE);
    p.time_bits = 7 + below(10);
    p.fault_seed = 1 + below(0xFFFFFFFE);
    p.payload_bits = item_bits;
    if (faults) {
        p.drop_threshold = below(2) ? below(3000) : 0;
        p.duplicate_threshold = below(2) ? below(3000) : 0;
        p.flip_threshold = below(2) ? below(3000) : 0;
        if (!below(3)) {
            p.dead = 1;
            p.dead_after = below(3000);
        }
    }
    return p;
}

bool differ(const char* what, uint64_t t) {
    std::printf("%s differs %llu cycles after the idle stretch\n", what, static_cast<unsigned long long>(t));
    return true;
}

// Whether the two links differ in any output or counter over `cycles` cycles of random traffic.
bool traffic_differs(gravfm::LinkModel& a, gravfm::LinkModel& b, uint64_t cycles, std::mt19937_64& random) {
    for (uint64_t t = 0; t < cycles; ++t) {
        const uint32_t payload[WORDS] = {static_cast<uint32_t>(random()), static_cast<uint32_t>(random()) & 0xFFFFFFu};
        const bool in_valid = random() % 100 < 50, out_ready = random() % 100 < 70;
        if (a.in_ready() != b.in_ready()) return differ("i.ready", t);
        if (a.out_valid() != b.out_valid()) return differ("o.valid", t);
        if (!std::equal(a.out_payload(), a.out_payload() + WORDS, b.out_payload())) return differ("o.payload", t);
        a.clock(in_valid, payload, out_ready);
        b.clock(in_valid, payload, out_ready);
        if (a.items != b.items || a.link_bound != b.link_bound || a.popped != b.popped) return differ("counters", t);
        if (a.dropped != b.dropped || a.duplicated != b.duplicated || a.flipped != b.flipped ||
            a.first_fault != b.first_fault)
            return differ("fault counters", t);
    }
    return false;
}

void drain(gravfm::LinkModel& link, std::mt19937_64& random) {
    const unsigned cycles = static_cast<unsigned>(random() % 2000);
    for (unsigned t = 0; t < cycles; ++t) link.clock(false, nullptr, true);
}

// One link: traffic, an idle stretch of k cycles both ways, traffic compared.
bool whole_link(std::mt19937_64& random, uint64_t& idled, uint64_t& jumps) {
    const gravfm::LinkParams p = random_params(random, random() % 2);
    gravfm::LinkModel link(p, WORDS);
    for (int k = 0; k < 2; ++k) link.clock(false, nullptr, true, true);  // the harness's reset cycles
    const uint64_t busy = random() % 3000;
    for (uint64_t t = 0; t < busy; ++t) {
        const uint32_t payload[WORDS] = {static_cast<uint32_t>(random()), 7};
        link.clock(random() % 2, payload, random() % 4 != 0);
    }
    if (random() % 4) drain(link, random);  // else maybe still in flight: idle() must fall back
    const uint64_t scale[] = {10, 1000, 70000, 300000};
    const uint64_t k = random() % scale[random() % 4];
    gravfm::LinkModel at_once = link, one_by_one = link;
    at_once.idle(k + g_extra);
    for (uint64_t t = 0; t < k; ++t) one_by_one.clock(false, nullptr, true);
    idled += k;
    std::mt19937_64 traffic(random());
    if (traffic_differs(at_once, one_by_one, 3000, traffic)) {
        std::printf("  (link: depth %u reorder %u stall %u rate %u time_bits %u dead %u idle %llu)\n", p.fifo_depth,
                    p.reorder_window, p.stall_threshold, p.rate_fixed, p.time_bits, p.dead,
                    static_cast<unsigned long long>(k));
        return false;
    }
    // Far jumps: idle(a + b) == idle(a); idle(b), from the drained link (else they are cycle by cycle).
    while (!link.empty()) link.clock(false, nullptr, true);
    const uint64_t a = random() >> (random() % 64), b = random() >> (random() % 64);
    gravfm::LinkModel joined = link, parts = link;
    joined.idle(a + b);
    parts.idle(a);
    parts.idle(b);
    ++jumps;
    std::mt19937_64 again(random());
    if (traffic_differs(joined, parts, 500, again)) {
        std::printf("  (composed jump of %llu + %llu cycles)\n", static_cast<unsigned long long>(a),
                    static_cast<unsigned long long>(b));
        return false;
    }
    return true;
}

// One split link: the same traffic into two, then idle_cycles against the former loop.
bool split_link(std::mt19937_64& random, uint64_t& idled) {
    gravfm::LinkParams p = random_params(random, false);
    p.fifo_depth = std::max(p.fifo_depth, 2u);
    const unsigned delay = 1 + static_cast<unsigned>(random() % (p.latency - 2));
    gravfm::SplitLink at_once(p, WORDS, delay), one_by_one(p, WORDS, delay);
    const uint32_t zero[WORDS] = {};
    uint64_t cycle = 0;
    auto step = [&](bool in_valid, const uint32_t* payload, bool out_ready, bool reset, bool& differs) {
        for (gravfm::SplitLink* link : {&at_once, &one_by_one}) {
            link->in_ready(cycle, false);
            link->clock_sender(cycle, in_valid, payload, reset);
            link->clock_receiver(cycle, out_ready, reset);
        }
        differs = differs || at_once.receiver().out_valid() != one_by_one.receiver().out_valid() ||
                  at_once.items != one_by_one.items || at_once.link_bound != one_by_one.link_bound ||
                  at_once.in_ready(cycle + 1, false) != one_by_one.in_ready(cycle + 1, false);
        ++cycle;
    };
    bool differs = false;
    for (int k = 0; k < 2; ++k) step(false, zero, true, true, differs);
    const uint64_t busy = random() % 2000;
    for (uint64_t t = 0; t < busy; ++t) {
        const uint32_t payload[WORDS] = {static_cast<uint32_t>(random()), 7};
        step(random() % 2, payload, random() % 4 != 0, false, differs);
    }
    while (!at_once.idle()) step(false, zero, true, false, differs);  // items may stay in the receiver's FIFO
    const uint64_t k = random() % (random() % 2 ? 100 : 100000);
    at_once.idle_cycles(cycle, k + g_extra);
    for (uint64_t t = 0; t < k; ++t) {  // the harness's loop before idle_cycles
        one_by_one.in_ready(cycle + t, false);
        one_by_one.clock_sender(cycle + t, false, zero, false);
        one_by_one.clock_receiver(cycle + t, true, false);
    }
    cycle += k;
    idled += k;
    for (uint64_t t = 0; t < 3000 && !differs; ++t) {
        const uint32_t payload[WORDS] = {static_cast<uint32_t>(random()), 7};
        const bool in_valid = random() % 2, out_ready = random() % 4 != 0;
        const bool ready = at_once.in_ready(cycle, false);
        differs = ready != one_by_one.in_ready(cycle, false);
        for (gravfm::SplitLink* link : {&at_once, &one_by_one}) {
            link->clock_sender(cycle, in_valid, payload, false);
            link->clock_receiver(cycle, out_ready, false);
        }
        const gravfm::LinkModel &x = at_once.receiver(), &y = one_by_one.receiver();
        differs = differs || x.out_valid() != y.out_valid() || at_once.items != one_by_one.items ||
                  at_once.link_bound != one_by_one.link_bound ||
                  (x.out_valid() && !std::equal(x.out_payload(), x.out_payload() + WORDS, y.out_payload()));
        ++cycle;
    }
    if (differs)
        std::printf("split link differs: depth %u reorder %u stall %u rate %u delay %u idle %llu\n", p.fifo_depth,
                    p.reorder_window, p.stall_threshold, p.rate_fixed, delay, static_cast<unsigned long long>(k));
    return !differs;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: link_idle_tb SEED CASES [off_by_one]\n");
        return 2;
    }
    g_extra = argc > 3 && !std::strcmp(argv[3], "off_by_one");
    std::mt19937_64 random(std::strtoull(argv[1], nullptr, 10));
    const unsigned cases = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
    uint64_t idled = 0, jumps = 0;
    for (unsigned k = 0; k < cases; ++k) {
        if (!whole_link(random, idled, jumps)) return 1;
        if (!split_link(random, idled)) return 1;
    }
    std::printf("ok %u links, %llu idle cycles, %llu jumps\n", 2 * cases, static_cast<unsigned long long>(idled),
                static_cast<unsigned long long>(jumps));
    return 0;
}
