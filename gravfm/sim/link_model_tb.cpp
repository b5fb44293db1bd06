// Differential test bench: the C++ gravfm::LinkModel (link_model.h) against the Verilated
// Amaranth LinkModel, several links side by side in one top (tests/test_link_model_cpp.py
// exports the top and generates link_tb_links.h: LINKS, kParams, kPayloadBits, tb_drive, tb_sample).
//
// Every cycle each link gets pseudo-random stimulus (input bursts and idle gaps with random
// payloads, output ready with random back-pressure and long stalls, a reset pulse mid-run); the
// inputs are applied and the RTL evaluated before its outputs are read, so an output that
// depended combinationally on an input would show as a mismatch with the model's, which takes no
// inputs. Compared every cycle: i.ready, o.valid, o.payload (also while o.valid is low), items,
// link_bound and the fault counters (dropped, duplicated, flipped, first_fault).
//
// Usage: link_model_tb CYCLES SEED [INJECT_CYCLE]
//   INJECT_CYCLE: from this cycle on, hide the next item link 0 takes from the model only (a
//   deliberate fault, to show that the comparison fails).
// Prints one JSON line per link with what the stimulus exercised; exit 1 at the first mismatch.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "Vlink_tb.h"
#include "verilated.h"
#include "link_model.h"
#include "splitmix.h"

namespace {

// Port accessors for every width Verilator uses (CData..QData, VlWide<N>).
template <class T>
typename std::enable_if<std::is_integral<T>::value>::type
set_port(T& port, const uint32_t* w, unsigned words) {
    uint64_t value = w[0];
    if (sizeof(T) > 4 && words > 1) value |= uint64_t{w[1]} << 32;
    port = static_cast<T>(value);
}
template <std::size_t N>
void set_port(VlWide<N>& port, const uint32_t* w, unsigned) {
    for (std::size_t k = 0; k < N; ++k) port[k] = w[k];
}
template <class T>
typename std::enable_if<std::is_integral<T>::value>::type
get_port(const T& port, uint32_t* w, unsigned words) {
    const uint64_t value = port;
    w[0] = static_cast<uint32_t>(value);
    if (words > 1) w[1] = static_cast<uint32_t>(value >> 32);
}
template <std::size_t N>
void get_port(const VlWide<N>& port, uint32_t* w, unsigned) {
    for (std::size_t k = 0; k < N; ++k) w[k] = port[k];
}

struct Sample {
    bool in_ready, out_valid;
    uint64_t items, link_bound, dropped, duplicated, flipped, first_fault;
    std::vector<uint32_t> payload;
};

}  // namespace

#include "link_tb_links.h"

namespace {

unsigned words_of(unsigned bits) { return (bits + 31) / 32; }

// One link's stimulus and what it exercised.
struct Link {
    unsigned bits = 0, words = 0;
    std::unique_ptr<gravfm::LinkModel> model;
    gravfm::SplitMix64 random{0};
    std::vector<uint32_t> payload;
    bool valid = false;
    unsigned burst = 0, gap = 0;      // sender: items left in this burst, idle cycles left
    unsigned ready_mode = 0, ready_left = 0;
    std::vector<std::vector<uint32_t>> sent;  // taken and not yet delivered, in order
    uint64_t delivered = 0, refused = 0, out_of_order = 0, max_in_flight = 0;

    void new_payload() {
        for (unsigned k = 0; k < words; ++k) payload[k] = static_cast<uint32_t>(random.next());
        if (bits % 32) payload[words - 1] &= (1u << (bits % 32)) - 1;
    }

    // The sender offers items in bursts, keeping an offered item until it is taken (sometimes
    // withdrawing it, which the RTL allows as well); the receiver alternates phases of always
    // ready, random back-pressure and long stalls.
    void choose(bool& out_ready) {
        if (!valid) {
            if (gap) {
                --gap;
            } else {
                burst = 1 + random.below(random.chance(20) ? 400 : 40);
                valid = true;
            }
        } else if (random.chance(2)) {
            valid = false;
            gap = random.below(3);
        }
        if (!ready_left) {
            const unsigned roll = random.below(100);
            ready_mode = roll < 40 ? 0 : roll < 85 ? 1 : 2;
            ready_left = ready_mode == 2 ? 20 + random.below(random.chance(30) ? 3000 : 300)
                                         : 1 + random.below(500);
        }
        --ready_left;
        out_ready = ready_mode == 0 || (ready_mode == 1 && random.chance(50));
    }

    void taken() {
        sent.push_back(payload);
        new_payload();
        if (--burst == 0) {
            valid = false;
            gap = random.chance(25) ? random.below(1500) : random.below(30);
        }
    }

    void received(const uint32_t* out) {
        ++delivered;
        // Faults leave lost items behind: look near the front only, and forget the oldest.
        if (sent.size() > 4096) sent.erase(sent.begin(), sent.begin() + 1024);
        for (size_t k = 0; k < sent.size() && k < 64; ++k) {
            if (std::equal(sent[k].begin(), sent[k].end(), out)) {
                if (k) ++out_of_order;
                sent.erase(sent.begin() + static_cast<std::ptrdiff_t>(k));
                return;
            }
        }
    }
};

std::string hex(const uint32_t* w, unsigned words) {
    std::string text = "0x";
    char part[9];
    for (unsigned k = words; k-- > 0;) {
        std::snprintf(part, sizeof part, "%08x", w[k]);
        text += part;
    }
    return text;
}

// Exit 1 at the first output of the RTL that the model does not reproduce.
void compare(uint64_t cycle, unsigned k, const Sample& rtl, const Link& link) {
    const auto& model = *link.model;
    auto differ = [&](const char* what, const std::string& rtl_value, const std::string& model_value) {
        std::printf("MISMATCH cycle %" PRIu64 " link %u %s: rtl %s model %s\n", cycle, k, what,
                    rtl_value.c_str(), model_value.c_str());
        std::exit(1);
    };
    if (rtl.in_ready != model.in_ready())
        differ("i.ready", std::to_string(rtl.in_ready), std::to_string(model.in_ready()));
    if (rtl.out_valid != model.out_valid())
        differ("o.valid", std::to_string(rtl.out_valid), std::to_string(model.out_valid()));
    if (!std::equal(rtl.payload.begin(), rtl.payload.end(), model.out_payload()))
        differ("o.payload", hex(rtl.payload.data(), link.words), hex(model.out_payload(), link.words));
    if (rtl.items != model.items) differ("items", std::to_string(rtl.items), std::to_string(model.items));
    if (rtl.link_bound != model.link_bound)
        differ("link_bound", std::to_string(rtl.link_bound), std::to_string(model.link_bound));
    const uint64_t faults[][2] = {{rtl.dropped, model.dropped}, {rtl.duplicated, model.duplicated},
                                  {rtl.flipped, model.flipped}, {rtl.first_fault, model.first_fault}};
    const char* names[] = {"dropped", "duplicated", "flipped", "first_fault"};
    for (unsigned f = 0; f < 4; ++f)
        if (faults[f][0] != faults[f][1]) differ(names[f], std::to_string(faults[f][0]), std::to_string(faults[f][1]));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s CYCLES SEED [INJECT_CYCLE]\n", argv[0]);
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[1], nullptr, 10);
    const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
    const uint64_t inject = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : UINT64_MAX;
    const uint64_t reset_at = cycles * 3 / 5;  // a second reset pulse, two cycles long

    auto context = std::make_unique<VerilatedContext>();
    context->randReset(0);
    auto top = std::make_unique<Vlink_tb>(context.get());
    std::vector<Link> links(LINKS);
    for (unsigned k = 0; k < LINKS; ++k) {
        Link& link = links[k];
        link.bits = kPayloadBits[k];
        link.words = words_of(link.bits);
        link.model = std::make_unique<gravfm::LinkModel>(kParams[k], link.words);
        link.random.state = seed * 1000003u + k;
        link.payload.assign(link.words, 0);
        link.new_payload();
    }
    Sample rtl;
    bool injected = false;
    top->clk = 0;
    for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
        const bool reset = cycle < 2 || (cycle >= reset_at && cycle < reset_at + 2);
        top->rst = reset;
        std::vector<uint8_t> ready(LINKS);
        for (unsigned k = 0; k < LINKS; ++k) {
            bool out_ready;
            links[k].choose(out_ready);
            ready[k] = out_ready;
            tb_drive(top.get(), k, links[k].valid, links[k].payload.data(), out_ready);
        }
        top->eval();
        for (unsigned k = 0; k < LINKS; ++k) {
            Link& link = links[k];
            rtl.payload.assign(link.words, 0);
            tb_sample(top.get(), k, rtl);
            compare(cycle, k, rtl, link);
            const bool take = link.valid && rtl.in_ready;
            const bool give = rtl.out_valid && ready[k];
            bool model_valid = link.valid;
            if (k == 0 && take && cycle >= inject && !injected) {
                model_valid = false;
                injected = true;
            }
            link.model->clock(model_valid, link.payload.data(), ready[k], reset);
            if (give) link.received(rtl.payload.data());
            if (link.valid && !rtl.in_ready) ++link.refused;
            if (take) link.taken();
            if (reset) link.sent.clear();
            if (link.sent.size() > link.max_in_flight) link.max_in_flight = link.sent.size();
        }
        top->clk = 1;
        top->eval();
        top->clk = 0;
    }
    top->eval();  // the counters after the last edge
    for (unsigned k = 0; k < LINKS; ++k) {
        rtl.payload.assign(links[k].words, 0);
        tb_sample(top.get(), k, rtl);
        compare(cycles, k, rtl, links[k]);
    }
    top->final();
    for (unsigned k = 0; k < LINKS; ++k) {
        const Link& link = links[k];
        std::printf("{\"link\": %u, \"items\": %" PRIu64 ", \"link_bound\": %" PRIu64
                    ", \"delivered\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"out_of_order\": %" PRIu64
                    ", \"max_in_flight\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"duplicated\": %" PRIu64
                    ", \"flipped\": %" PRIu64 "}\n",
                    k, link.model->items, link.model->link_bound, link.delivered, link.refused,
                    link.out_of_order, link.max_in_flight, link.model->dropped, link.model->duplicated,
                    link.model->flipped);
    }
    std::printf("OK %u links, %" PRIu64 " cycles\n", static_cast<unsigned>(LINKS), cycles);
    return 0;
}
