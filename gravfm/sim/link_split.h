// One link split into a sender half and a receiver half, for the harness's quantum schedule
// (harness_system.h): the FPGA at each end advances it in its own thread, and the two meet only
// through a queue of the items taken, each with the cycle it was taken in.
//
// Receiver half: a LinkModel that takes each item `delay` cycles after the sender gave it, with
// the latency shortened by as much (so every item is due at its original cycle), no bandwidth
// limit (the sender half applies it) and one more FIFO entry (it must never refuse an item).
// For delay <= latency - 2 its outputs are the link's wherever they matter: item j reaches the
// head of the link's FIFO (BufferedFIFO, depth >= 2) at max(t_j + 2, l_{j-1} + 1), taken at t_j
// and the one before leaving at l_{j-1}, and is due at t_j + latency; so it shows on the output
// at max(t_j + latency, l_{j-1} + 1) either way, and then the reorder stage, the stalls and the
// receiver's ready see the same items in the same cycles. What differs is o.payload while
// o.valid is low (an item that is in the head register but not due yet), and o.ready while it
// is low, which the link ignores; the FPGA's link receiver takes nothing without o.valid.
//
// Sender half: the credit (LinkCredit) and the link FIFO's `w_rdy`, computed from the items taken
// and the number that have left (`popped`): with O in flight, the oldest taken at t, the FIFO's
// memory holds O - 1 while that one sits in the output register (from t + 2 on), else O. When the
// memory has at least `delay` free entries at the start of a quantum of at most `delay` cycles,
// the sender may run the whole quantum ahead (`ahead`): one item a cycle cannot fill it, and the
// receiver's pops only free entries, so its ready is the credit's alone.
#pragma once

#include "link_model.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace gravfm {

class SplitLink {
public:
    SplitLink(const LinkParams& params, unsigned payload_words, unsigned delay)
        : p_(params), words_(payload_words), delay_(delay), credit_(params),
          receiver_(receiver_params(params, delay), payload_words) {
        if (params.fifo_depth < 2 || delay + 2 > params.latency)
            throw std::invalid_argument("SplitLink: needs fifo_depth >= 2 and delay <= latency - 2");
        size_t capacity = 1;  // in flight: the FIFO's depth, a quantum ahead, `delay` in the queue
        while (capacity < size_t{params.fifo_depth} + 3 * size_t{delay} + 4) capacity <<= 1;
        cycles_.assign(capacity, 0);
        payloads_.assign(capacity * words_, 0);
    }

    // Free entries of the link FIFO's memory at `cycle` (from what the receiver has popped so far).
    unsigned fifo_free(uint64_t cycle) const {
        const uint64_t popped = popped_.load(std::memory_order_acquire), in_flight = pushed_ - popped;
        const bool in_head = in_flight && cycles_[popped & mask()] + 2 <= cycle;
        const uint64_t stored = in_flight - (in_head ? 1 : 0);
        if (stored > p_.fifo_depth - 1) throw std::logic_error("SplitLink: more items stored than the FIFO holds");
        return p_.fifo_depth - 1 - static_cast<unsigned>(stored);
    }

    // Sender half, cycle `cycle`: i.ready (call once before clock_sender; `ahead`: in a quantum).
    bool in_ready(uint64_t cycle, bool ahead) {
        ready_ = (ahead || fifo_free(cycle) != 0) && credit_.allowed();
        return ready_;
    }

    // Sender half's clock edge; true if the item was taken.
    bool clock_sender(uint64_t cycle, bool in_valid, const uint32_t* payload, bool reset) {
        const bool take = in_valid && ready_;
        if (in_valid && !credit_.allowed()) ++link_bound;
        credit_.clock(take);
        if (take) {
            if (reset) throw std::logic_error("SplitLink: an item offered during reset");
            if (pushed_ - popped_.load(std::memory_order_acquire) >= cycles_.size())
                throw std::logic_error("SplitLink: queue overflow");
            const size_t slot = pushed_ & mask();
            cycles_[slot] = cycle;
            std::copy_n(payload, words_, payloads_.begin() + static_cast<ptrdiff_t>(slot * words_));
            ++items;
            pushed_.fetch_add(1, std::memory_order_release);  // visible to the receiver
        }
        if (reset) {
            credit_.reset();
            items = link_bound = 0;
        }
        return take;
    }

    // Receiver half: the link's outputs in this cycle, then its clock edge.
    const LinkModel& receiver() const { return receiver_; }
    void clock_receiver(uint64_t cycle, bool out_ready, bool reset) {
        const uint32_t* item = nullptr;
        if (written_ < pushed_.load(std::memory_order_acquire)) {
            const size_t slot = written_ & mask();
            if (cycles_[slot] + delay_ < cycle) throw std::logic_error("SplitLink: an item was not delivered in time");
            if (cycles_[slot] + delay_ == cycle) item = &payloads_[slot * words_];
        }
        if (item && !receiver_.in_ready()) throw std::logic_error("SplitLink: receiver FIFO overflow");
        receiver_.clock(item != nullptr, item, out_ready, reset);
        written_ += item != nullptr;
        popped_.store(receiver_.popped, std::memory_order_release);
    }

    bool idle() const { return written_ == pushed_.load(std::memory_order_acquire); }

    // Cycles `cycle` .. cycle + cycles - 1 with nothing offered and o.ready high, nothing in
    // flight (idle()): both halves idle at once (LinkModel::idle), the last cycle as usual.
    void idle_cycles(uint64_t cycle, uint64_t cycles) {
        if (!cycles) return;
        if (!idle()) throw std::logic_error("SplitLink: an item in flight while the link idles");
        credit_.idle(cycles - 1);
        receiver_.idle(cycles - 1);
        const uint64_t last = cycle + cycles - 1;
        in_ready(last, false);
        clock_sender(last, false, nullptr, false);
        clock_receiver(last, true, false);
    }

    uint64_t items = 0, link_bound = 0;  // the link's counters of its input (sender half)

private:
    static LinkParams receiver_params(LinkParams p, unsigned delay) {
        p.rate_fixed = p.cost = p.credit_bits = 0;
        p.latency -= delay;
        p.fifo_depth += 1;
        return p;
    }
    size_t mask() const { return cycles_.size() - 1; }

    LinkParams p_;
    unsigned words_, delay_;
    LinkCredit credit_;
    LinkModel receiver_;
    bool ready_ = false;
    std::vector<uint64_t> cycles_;    // ring: the cycle each item was taken in
    std::vector<uint32_t> payloads_;  // ring: its payload
    std::atomic<uint64_t> pushed_{0}, popped_{0};
    uint64_t written_ = 0;  // items given to the receiver model (receiver's thread only)
};

}  // namespace gravfm
