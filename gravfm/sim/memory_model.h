// The simulated off-chip edge memory of one FPGA (the paper's HMC, or an HBM's pseudo-channels:
// memory_channels.h) in C++, cycle for cycle the
// Python reference gravfm.sim.memory_model.MemoryModel (tests/test_memory_model_cpp.py replays
// gravfm/sim/memory_model_tb.cpp's traces through it and compares every output of every cycle).
// It serves P AXI4 read ports (gravfm.hw.axi.axi_read_signature) from a read-only byte image.
//
// Outputs (arready, rvalid, rdata, rid, rresp, rlast of every port) are registered: functions of
// the state at the start of the cycle, never of the same cycle's inputs, so a memory never closes
// a combinational path through the design.
//
// One cycle, clock(inputs) (the inputs are sampled before the clock edge), in this order:
//   a. R handshake: a port whose presented beat sees rready delivers it.
//   b. Service, in every channel in channel order (one channel: the whole memory):
//      credit = min(credit + rate_fixed, rate_fixed + cost - 1), cost = word_bytes << 16
//      (the channel's bandwidth, 16 fraction bits). The cap is the most credit a busy memory
//      can hold after a refill (less than cost is left after a service), so a busy memory loses
//      none and an idle one banks less than one word. (A cap of max(rate, cost) would waste
//      credit whenever cost is not a multiple of the rate: 12 B/cycle would give 8.) The credit
//      starts at the cap. The channel's banks in round-robin order,
//      starting at its `service_next`: a bank with a queued beat takes its head while credit >=
//      word_bytes << 16 (credit -= that); the beat is due at now + latency + jitter draw. One beat
//      per bank per cycle; the first credit shortfall ends the channel's round. Afterwards its
//      service_next = one past the first bank that took a beat (unchanged if none did). `stuck`:
//      no service.
//   c. Dispatch: ports in round-robin order, starting at `dispatch_next_`: a port's staged
//      request pushes its next beat into the queue of the beat's bank (word address % banks of
//      the channel of its byte address: address / channel_bytes, the last channel beyond) if
//      that queue holds fewer than bank_depth beats (after step b) and the bank has not taken
//      another port's beat in this step; one beat per port. The slot empties with its last
//      beat. Afterwards dispatch_next_ = one past the first port that dispatched (unchanged if
//      none did).
//   d. AR handshake: a port whose slot was empty at the start of the cycle (arready) and sees
//      arvalid stages the request (arlen + 1 beats from araddr, its arid). A slot emptied in
//      step c is refilled in the next cycle at the earliest.
//   e. now += 1.
//   f. Presentation: every port (in port order) without a presented beat picks one of its ready
//      beats. A beat is ready when it has been serviced, its due time <= now, and every earlier
//      beat of the same port and ID has been delivered (AXI: one ID's beats in request order;
//      this is the brief's "due time raised to the previous beat's of the same ID"). Normal
//      mode picks the smallest (due, sequence); `reorder` mode, when there are k > 1 candidates
//      ordered by sequence, the one at index random() % k. The beat stays until delivered.
// Unloaded timing: an AR handshake in cycle c gives rvalid in cycle c + 2 + latency (jitter 0).
//
// A request whose araddr is not word-aligned, whose arsize is not log2(word_bytes) or whose
// arburst is not INCR answers every beat with rresp 2 (SLVERR); a beat of an aligned request whose
// word lies beyond the image answers rresp 3 (DECERR). Error beats carry zero data, travel like
// the others, and are counted when dispatched (errors, first_error_*). Beat k's byte address is
// araddr + k * word_bytes (wrapping at 2^64); its bank is (address / word_bytes) % banks of its
// channel. Every port reaches every channel (an HBM's switch): a burst may cross channels.
//
// Randomness: splitmix64, state = seed + index * 0xD1B54A32D192ED03 (mod 2^64) for memory
// `index` of the system (one stream for all its channels); one draw per serviced beat when
// jitter > 0 (random() % (jitter + 1)), in service order, and one per reorder pick with k > 1
// candidates, in port order.
//
// Speed (the model runs every cycle of every FPGA with off-chip edges): no allocation in a cycle
// once the pools have grown to the traffic (beats in one pool, linked per ID; bank queues are
// rings of bank_depth: memory_channels.h); a port's presentation looks only at its serviced heads of an ID
// (`armed`), and not before the earliest cycle at which one of them is due (`wake`). None of it
// changes an output: the Python model stays the reference (tests/test_memory_model_cpp.py).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gravfm_inputs.h"  // MemoryModelParams (gravfm.sim.memory_params), MEMORY_FRACTION_BITS
#include "memory_channels.h"
#include "splitmix.h"

namespace gravfm {

// One port's inputs, sampled before the clock edge.
struct MemoryPortInputs {
    bool arvalid = false;
    uint64_t araddr = 0;
    uint32_t arid = 0, arlen = 0, arsize = 0, arburst = 0;
    bool rready = false;
};

class MemoryModel {
public:
    static constexpr unsigned FRACTION_BITS = MEMORY_FRACTION_BITS;
    static constexpr uint32_t RESP_OKAY = 0, RESP_SLVERR = 2, RESP_DECERR = 3;

    MemoryModel(const MemoryModelParams& params, const uint8_t* image, uint64_t image_bytes, unsigned ports,
                unsigned index = 0)
        : p_(params), image_(image), ports_(ports), cost_(uint64_t{params.word_bytes} << FRACTION_BITS),
          channels_(check(params), cost_) {
        if (!ports) throw std::invalid_argument("MemoryModel: ports must be >= 1");
        if (image_bytes % p_.word_bytes)
            throw std::invalid_argument("MemoryModel: the image is not a whole number of words");
        while ((1u << log2_word_) < p_.word_bytes) ++log2_word_;
        image_words_ = image_bytes / p_.word_bytes;
        data_words_ = (p_.word_bytes + 3) / 4;
        random_ = p_.seed + uint64_t{index} * 0xD1B54A32D192ED03ull;
        slots_.resize(ports);
        ports_state_.resize(ports);
        for (Port& port : ports_state_) port.data.assign(data_words_, 0);
        ar_ready_now_.assign(ports, 0);
        outstanding.assign(ports, 0);
    }
    MemoryModel(const MemoryModel&) = delete;
    MemoryModel& operator=(const MemoryModel&) = delete;

    // Registered outputs of port k (valid between two clock() calls).
    bool ar_ready(unsigned k) const { return !slots_[k].busy; }
    bool r_valid(unsigned k) const { return ports_state_[k].shown != NONE; }
    // word_bytes of data in ceil(word_bytes / 4) words, LSB first; zero while rvalid is low.
    const uint32_t* r_data(unsigned k) const { return ports_state_[k].data.data(); }
    uint32_t r_id(unsigned k) const { return r_valid(k) ? shown(k).id : 0; }
    uint32_t r_resp(unsigned k) const { return r_valid(k) ? shown(k).resp : 0; }
    bool r_last(unsigned k) const { return r_valid(k) && shown(k).last; }
    unsigned data_words() const { return data_words_; }
    unsigned ports() const { return ports_; }
    uint64_t now() const { return now_; }

    // The clock edge; `in` holds one MemoryPortInputs per port.
    void clock(const MemoryPortInputs* in) {
        for (unsigned k = 0; k < ports_; ++k) ar_ready_now_[k] = !slots_[k].busy;
        for (unsigned k = 0; k < ports_; ++k)
            if (ports_state_[k].shown != NONE && in[k].rready) deliver(k);
        if (!p_.stuck) service();
        if (busy_) dispatch();
        for (unsigned k = 0; k < ports_; ++k)
            if (ar_ready_now_[k] && in[k].arvalid) accept(k, in[k]);
        ++now_;
        for (unsigned k = 0; k < ports_; ++k) {
            Port& port = ports_state_[k];
            if (port.shown == NONE && !port.armed.empty() && port.wake <= now_) present(k);
        }
    }

    // Statistics (diagnostics; the report's memory counters are the PEs').
    uint64_t requests = 0;               // AR handshakes
    uint64_t beats = 0;                  // R handshakes
    std::vector<uint64_t> outstanding;   // per port: beats requested and not yet delivered
    uint64_t errors = 0;                 // beats dispatched with rresp != OKAY
    uint64_t first_error_cycle = 0, first_error_address = 0;
    unsigned first_error_port = 0;

private:
    static constexpr uint32_t NONE = ~0u;
    static constexpr uint64_t NEVER = ~0ull;

    struct Beat {  // in pool_, linked to the next beat of its port and ID
        uint64_t address, seq, due;
        uint32_t id, resp, next;
        bool last, serviced, head;  // head: the oldest pending beat of its port and ID
    };
    struct Slot {  // the staged request
        bool busy = false;
        uint64_t address = 0;
        uint32_t beats_left = 0, id = 0, resp = RESP_OKAY;
    };
    struct IdQueue {  // one ID's beats of a port, in request order (head: the oldest)
        uint32_t id, head, tail;
    };
    struct Port {
        std::vector<IdQueue> ids;     // the IDs with beats pending (any order: picks do not depend on it)
        std::vector<uint32_t> armed;  // the heads that are serviced: the candidates once due (any order)
        uint32_t shown = NONE;        // the presented beat
        uint64_t wake = 0;            // no armed beat is due before this cycle
        std::vector<uint32_t> data;
    };

    const Beat& shown(unsigned k) const { return pool_[ports_state_[k].shown]; }

    // The parameters, refused before any member is built from them.
    static const MemoryModelParams& check(const MemoryModelParams& p) {
        if (!p.word_bytes || (p.word_bytes & (p.word_bytes - 1)) || p.word_bytes > 128)
            throw std::invalid_argument("MemoryModel: word_bytes must be a power of two up to 128");
        if (!p.rate_fixed) throw std::invalid_argument("MemoryModel: rate_fixed must be >= 1");
        if (!p.latency) throw std::invalid_argument("MemoryModel: latency must be >= 1");
        if (!p.banks || !p.bank_depth) throw std::invalid_argument("MemoryModel: banks and bank_depth must be >= 1");
        if (!p.channels || (p.channels > 1 && (!p.channel_bytes || p.channel_bytes % p.word_bytes)))
            throw std::invalid_argument("MemoryModel: channels >= 1, channel_bytes a multiple of word_bytes");
        return p;
    }

    uint64_t random() { return splitmix64(random_); }

    uint32_t new_beat(const Beat& beat) {
        if (free_.empty()) {
            pool_.push_back(beat);
            return static_cast<uint32_t>(pool_.size() - 1);
        }
        const uint32_t index = free_.back();
        free_.pop_back();
        pool_[index] = beat;
        return index;
    }

    IdQueue* find_id(Port& port, uint32_t id) {
        for (IdQueue& queue : port.ids)
            if (queue.id == id) return &queue;
        return nullptr;
    }

    void deliver(unsigned k) {
        Port& port = ports_state_[k];
        const uint32_t index = port.shown;
        IdQueue* queue = find_id(port, pool_[index].id);  // the shown beat is the head of its ID
        const uint32_t next = pool_[index].next;
        queue->head = next;
        if (next == NONE) {
            *queue = port.ids.back();
            port.ids.pop_back();
        } else {
            pool_[next].head = true;
            if (pool_[next].serviced) port.armed.push_back(next);
        }
        *std::find(port.armed.begin(), port.armed.end(), index) = port.armed.back();
        port.armed.pop_back();
        free_.push_back(index);
        port.shown = NONE;
        port.wake = 0;  // the beats passed over and the ID's next are candidates again
        std::fill(port.data.begin(), port.data.end(), 0);
        ++beats;
        --outstanding[k];
    }

    void service() {
        channels_.service([this](uint32_t index) {
            Beat& beat = pool_[index];
            beat.serviced = true;
            beat.due = now_ + p_.latency + (p_.jitter ? random() % (uint64_t{p_.jitter} + 1) : 0);
            if (beat.head) {  // others are armed when they become heads (deliver)
                Port& port = ports_state_[beat_port_[index]];
                port.armed.push_back(index);
                port.wake = std::min(port.wake, beat.due);
            }
        });
    }

    void dispatch() {
        int first = -1;
        for (unsigned i = 0, k = dispatch_next_; i < ports_; ++i, k = k + 1 == ports_ ? 0 : k + 1) {
            Slot& slot = slots_[k];
            if (!slot.busy) continue;
            const uint64_t word = slot.address >> log2_word_;
            const unsigned b = channels_.bank_of(slot.address);
            if (!channels_.takes(b, now_)) continue;
            uint32_t resp = slot.resp;
            if (resp == RESP_OKAY && word >= image_words_) resp = RESP_DECERR;
            if (resp != RESP_OKAY) note_error(k, slot.address);
            --slot.beats_left;
            const uint32_t index = new_beat(Beat{slot.address, seq_++, 0, slot.id, resp, NONE, slot.beats_left == 0,
                                                 false, false});
            if (beat_port_.size() < pool_.size()) beat_port_.resize(pool_.size());
            beat_port_[index] = k;
            Port& port = ports_state_[k];
            if (IdQueue* queue = find_id(port, slot.id)) {
                pool_[queue->tail].next = index;
                queue->tail = index;
            } else {
                port.ids.push_back(IdQueue{slot.id, index, index});
                pool_[index].head = true;
            }
            channels_.push(b, index, now_);
            slot.address += p_.word_bytes;
            if (!slot.beats_left) {
                slot.busy = false;
                --busy_;
            }
            if (first < 0) first = static_cast<int>(k);
        }
        if (first >= 0) dispatch_next_ = (static_cast<unsigned>(first) + 1) % ports_;
    }

    void note_error(unsigned k, uint64_t address) {
        if (!errors++) {
            first_error_cycle = now_;
            first_error_port = k;
            first_error_address = address;
        }
    }

    void accept(unsigned k, const MemoryPortInputs& in) {
        Slot& slot = slots_[k];
        const bool bad = (in.araddr & (p_.word_bytes - 1)) || in.arsize != log2_word_ || in.arburst != 1;
        slot.busy = true;
        ++busy_;
        slot.address = in.araddr;
        slot.beats_left = (in.arlen & 0xFFu) + 1;
        slot.id = in.arid;
        slot.resp = bad ? RESP_SLVERR : RESP_OKAY;
        ++requests;
        outstanding[k] += slot.beats_left;
    }

    // Picks the port's presented beat among its ready ones; with none, notes when the first can be.
    void present(unsigned k) {
        Port& port = ports_state_[k];
        candidates_.clear();
        uint64_t wake = NEVER;
        for (const uint32_t index : port.armed) {
            const uint64_t due = pool_[index].due;
            if (due <= now_) candidates_.push_back(index);
            else wake = std::min(wake, due);
        }
        if (candidates_.empty()) {
            port.wake = wake;
            return;
        }
        uint32_t pick = candidates_[0];
        if (p_.reorder) {
            if (candidates_.size() > 1) {
                std::sort(candidates_.begin(), candidates_.end(),
                          [this](uint32_t a, uint32_t b) { return pool_[a].seq < pool_[b].seq; });
                pick = candidates_[random() % candidates_.size()];
            }
        } else {
            for (const uint32_t index : candidates_) {
                const Beat &beat = pool_[index], &best = pool_[pick];
                if (beat.due < best.due || (beat.due == best.due && beat.seq < best.seq)) pick = index;
            }
        }
        port.shown = pick;
        const Beat& beat = pool_[pick];
        if (beat.resp == RESP_OKAY)
            std::memcpy(port.data.data(), image_ + (beat.address >> log2_word_) * p_.word_bytes, p_.word_bytes);
    }

    MemoryModelParams p_;
    const uint8_t* image_;
    unsigned ports_;
    uint64_t cost_;
    MemoryChannels channels_;
    unsigned log2_word_ = 0, data_words_ = 0;
    uint64_t image_words_ = 0;
    uint64_t random_ = 0, now_ = 0, seq_ = 0;
    unsigned dispatch_next_ = 0, busy_ = 0;
    std::vector<Slot> slots_;
    std::vector<Port> ports_state_;
    std::vector<Beat> pool_;            // every beat dispatched and not yet delivered, and free entries
    std::vector<uint32_t> free_;        // free entries of pool_
    std::vector<uint32_t> beat_port_;   // by pool entry: the port of its beat
    std::vector<uint8_t> ar_ready_now_;
    std::vector<uint32_t> candidates_;
};

}  // namespace gravfm
