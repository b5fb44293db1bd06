// Test bench of the C++ memory model (memory_model.h): random AXI read traffic on every port of
// one memory, checked here against the image and AXI's rules, and written as a trace that
// tests/test_memory_model_cpp.py replays through the Python model (gravfm.sim.memory_model),
// comparing every output of every cycle.
//
// Each port's master issues bursts (1..256 beats, a few IDs, some beyond the image, unaligned,
// of the wrong size or burst type) with idle gaps, holding a request until arready; while arvalid
// is low its other AR fields carry junk, which the model must ignore. rready alternates phases of
// always ready, random back-pressure and long stalls. Checked every cycle: a beat's rdata, rid,
// rresp and rlast are those of the oldest outstanding beat of its port and ID; a beat not taken
// stays unchanged in the next cycle; rdata, rid, rresp and rlast are 0 while rvalid is low.
//
// Usage: memory_model_tb SPEC CYCLES SEED IDS TRACE
//   SPEC   memory spec (memory_harness.h) of one memory: its parameters, ports and image
//   IDS    transaction IDs each master uses (0 .. IDS-1)
//   TRACE  binary output: per cycle, per port: u64 arvalid, araddr, arid, arlen, arsize, arburst,
//          rready (the inputs), u64 arready, rvalid, rid, rresp, rlast (the outputs), then
//          u32 rdata[ceil(word_bytes / 4)]
// Prints one JSON line per port (what the traffic exercised), one with the harness's RESULT
// entries of the memory (print_memories), then "OK PORTS ports, CYCLES cycles"; exit 1 at the
// first violation.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "memory_harness.h"

namespace {


struct Expected {  // a beat the master waits for
    uint64_t address, sequence;
    uint32_t resp;
    bool last;
};

[[noreturn]] void violation(uint64_t cycle, unsigned k, const std::string& what) {
    std::printf("VIOLATION cycle %" PRIu64 " port %u: %s\n", cycle, k, what.c_str());
    std::exit(1);
}

// One port's AXI read master and what it saw.
struct Master {
    unsigned k = 0, ids = 1;
    gravfm::SplitMix64 random{0};  // the traffic's own stream, not the model's
    gravfm::MemoryPortInputs in;
    unsigned gap = 0, ready_mode = 0, ready_left = 0;
    std::map<uint32_t, std::deque<Expected>> waiting;  // by ID, request order
    std::set<uint64_t> unanswered;                      // sequence numbers of the outstanding beats
    uint64_t requests = 0, delivered = 0, refused = 0, interleaved = 0, slverr = 0, decerr = 0;
    uint64_t max_outstanding = 0, outstanding = 0;

    // This cycle's inputs: a new request (or junk under arvalid = 0) and rready.
    void choose(uint64_t image_words, unsigned word_bytes, unsigned log2_word) {
        if (!in.arvalid) {
            if (gap) {
                --gap;
                in.araddr = random.next();  // junk: not valid
                in.arid = static_cast<uint32_t>(random.below(ids));
                in.arlen = static_cast<uint32_t>(random.below(256));
                in.arsize = static_cast<uint32_t>(random.below(8));
                in.arburst = static_cast<uint32_t>(random.below(4));
            } else {
                new_request(image_words, word_bytes, log2_word);
            }
        }
        if (!ready_left) {
            const unsigned roll = static_cast<unsigned>(random.below(100));
            ready_mode = roll < 40 ? 0 : roll < 85 ? 1 : 2;
            ready_left = ready_mode == 2 ? 10 + static_cast<unsigned>(random.below(random.chance(20) ? 2000 : 200))
                                         : 1 + static_cast<unsigned>(random.below(400));
        }
        --ready_left;
        in.rready = ready_mode == 0 || (ready_mode == 1 && random.chance(50));
    }

    void new_request(uint64_t image_words, unsigned word_bytes, unsigned log2_word) {
        const unsigned size_roll = static_cast<unsigned>(random.below(100));
        in.arlen = static_cast<uint32_t>(size_roll < 60 ? random.below(4) : size_roll < 92 ? random.below(16)
                                                                                         : random.below(256));
        const uint64_t beats = in.arlen + 1;
        const unsigned kind = static_cast<unsigned>(random.below(100));
        uint64_t word = random.below(image_words > beats ? image_words - beats + 1 : 1);
        if (kind < 6)  // beyond the image: DECERR
            word = image_words + random.below(1000);
        else if (kind < 10 && image_words)  // the burst crosses the image's end
            word = image_words - 1 - random.below(std::min<uint64_t>(image_words, 3));
        in.araddr = word * word_bytes;
        in.arsize = log2_word;
        in.arburst = 1;
        if (kind >= 10 && kind < 14) in.araddr += 1 + random.below(word_bytes > 1 ? word_bytes - 1 : 1);
        if (kind >= 14 && kind < 17) in.arsize = (log2_word + 1 + static_cast<unsigned>(random.below(7))) % 8;
        if (kind >= 17 && kind < 20) in.arburst = random.chance(50) ? 0 : 2;
        in.arid = static_cast<uint32_t>(random.below(ids));
        in.arvalid = true;
        if (word_bytes == 1 && kind >= 10 && kind < 14) in.arsize = 1;  // one-byte words cannot be misaligned
    }

    // The AR handshake happened: what the master now waits for.
    void accepted(uint64_t image_words, unsigned word_bytes, unsigned log2_word, uint64_t& sequence) {
        const bool bad = (in.araddr % word_bytes) || in.arsize != log2_word || in.arburst != 1;
        const uint64_t beats = in.arlen + 1;
        for (uint64_t b = 0; b < beats; ++b) {
            const uint64_t address = in.araddr + b * word_bytes;
            const uint32_t resp = bad ? 2 : (address / word_bytes >= image_words ? 3 : 0);
            waiting[in.arid].push_back({address, sequence, resp, b + 1 == beats});
            unanswered.insert(sequence++);
        }
        outstanding += beats;
        if (outstanding > max_outstanding) max_outstanding = outstanding;
        ++requests;
        in.arvalid = false;
        gap = random.chance(20) ? static_cast<unsigned>(random.below(300)) : static_cast<unsigned>(random.below(4));
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s SPEC CYCLES SEED IDS TRACE\n", argv[0]);
        return 2;
    }
    gravfm::MemorySpec spec;
    std::vector<gravfm::Memory> memories;
    try {  // the harness's way: one top instance whose ports are all this memory's
        spec = gravfm::read_memory_spec(argv[1]);
        memories = gravfm::open_memories(argv[1], 1, spec.ports_per_memory, 8 * spec.params.word_bytes);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "memory_model_tb: %s\n", error.what());
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[2], nullptr, 10);
    const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
    const unsigned ids = static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10));
    FILE* trace = std::fopen(argv[5], "wb");
    if (!trace || ids < 1) {
        std::fprintf(stderr, "memory_model_tb: bad IDS or cannot write %s\n", argv[5]);
        return 2;
    }
    gravfm::MemoryModel* model = memories[0].model.get();
    const gravfm::MappedImage* image = memories[0].image.get();
    const unsigned ports = spec.ports_per_memory, word_bytes = spec.params.word_bytes;
    const unsigned data_words = model->data_words();
    unsigned log2_word = 0;
    while ((1u << log2_word) < word_bytes) ++log2_word;
    const uint64_t image_words = image->size() / word_bytes;

    std::vector<Master> masters(ports);
    for (unsigned k = 0; k < ports; ++k) {
        masters[k].k = k;
        masters[k].ids = ids;
        masters[k].random.state = seed * 1000003u + k;
    }
    std::vector<gravfm::MemoryPortInputs> inputs(ports);
    std::vector<uint32_t> held(ports * (data_words + 3));  // a beat not taken: rid, rresp, rlast, rdata
    std::vector<uint8_t> holding(ports, 0);
    uint64_t sequence = 0;
    for (uint64_t cycle = 0; cycle < cycles; ++cycle) {
        for (unsigned k = 0; k < ports; ++k) {
            Master& master = masters[k];
            master.choose(image_words, word_bytes, log2_word);
            inputs[k] = master.in;
            const bool valid = model->r_valid(k);
            const uint32_t* data = model->r_data(k);
            const uint32_t now[3] = {model->r_id(k), model->r_resp(k), model->r_last(k)};
            uint32_t* last = &held[k * (data_words + 3)];
            if (holding[k] && (!valid || std::memcmp(last, now, sizeof now) ||
                               std::memcmp(last + 3, data, 4 * data_words)))
                violation(cycle, k, "a beat changed before it was taken");
            const bool data_zero = std::all_of(data, data + data_words, [](uint32_t w) { return w == 0; });
            if (!valid && (now[0] || now[1] || now[2] || !data_zero))
                violation(cycle, k, "rdata, rid, rresp or rlast not 0 while rvalid is low");
            holding[k] = valid && !master.in.rready;
            std::memcpy(last, now, sizeof now);
            std::memcpy(last + 3, data, 4 * data_words);
            const uint64_t record[12] = {master.in.arvalid, master.in.araddr, master.in.arid, master.in.arlen,
                                         master.in.arsize, master.in.arburst, master.in.rready, model->ar_ready(k),
                                         valid, now[0], now[1], now[2]};
            std::fwrite(record, 8, 12, trace);
            std::fwrite(data, 4, data_words, trace);
            if (valid && master.in.rready) {  // the R handshake: is it the beat the master waits for?
                auto entry = master.waiting.find(now[0]);
                if (entry == master.waiting.end()) violation(cycle, k, "a beat of an ID with nothing outstanding");
                const Expected expected = entry->second.front();
                entry->second.pop_front();
                if (entry->second.empty()) master.waiting.erase(entry);
                if (expected.resp != now[1] || expected.last != static_cast<bool>(now[2]))
                    violation(cycle, k, "rresp " + std::to_string(now[1]) + " rlast " + std::to_string(now[2]) +
                                            ", expected " + std::to_string(expected.resp) + " " +
                                            std::to_string(expected.last));
                uint32_t want[32] = {0};
                if (expected.resp == 0)
                    std::memcpy(want, image->data() + expected.address, word_bytes);
                if (std::memcmp(want, data, 4 * data_words))
                    violation(cycle, k, "rdata is not the image's word at " + std::to_string(expected.address));
                if (expected.sequence != *master.unanswered.begin()) ++master.interleaved;  // overtook
                master.unanswered.erase(expected.sequence);
                ++master.delivered;
                --master.outstanding;
                master.slverr += now[1] == 2;
                master.decerr += now[1] == 3;
            }
            if (master.in.arvalid && !model->ar_ready(k)) ++master.refused;
        }
        std::vector<uint8_t> ready(ports);
        for (unsigned k = 0; k < ports; ++k) ready[k] = model->ar_ready(k);
        model->clock(inputs.data());
        for (unsigned k = 0; k < ports; ++k)
            if (inputs[k].arvalid && ready[k]) masters[k].accepted(image_words, word_bytes, log2_word, sequence);
    }
    std::fclose(trace);
    for (const Master& m : masters) {
        std::printf("{\"port\": %u, \"requests\": %" PRIu64 ", \"delivered\": %" PRIu64 ", \"refused\": %" PRIu64
                    ", \"interleaved\": %" PRIu64 ", \"slverr\": %" PRIu64 ", \"decerr\": %" PRIu64
                    ", \"max_outstanding\": %" PRIu64 "}\n",
                    m.k, m.requests, m.delivered, m.refused, m.interleaved, m.slverr, m.decerr, m.max_outstanding);
    }
    std::printf("{\"cycles\": %" PRIu64, cycles);
    gravfm::print_memories(stdout, memories);
    std::printf("}\n");
    std::printf("OK %u ports, %" PRIu64 " cycles\n", ports, cycles);
    return 0;
}
