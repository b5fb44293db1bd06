// One direction of a simulated inter-FPGA link in C++, cycle for cycle the Amaranth
// gravfm.hw.link.LinkModel (gravfm/hw/link/model.py), including its in-flight FIFO
// (gravfm.hw.stream_fifo.StreamFIFO: BufferedFIFO for depth >= 2, Amaranth's
// SyncFIFOBuffered(depth=1) for depth 1). Proven against the exported RTL by
// gravfm/sim/link_model_tb.cpp (tests/test_link_model_cpp.py). The parameters come from
// gravfm.sim.link_params.link_params, which derives them from a LinkConfig.
//
// Combinational structure of the RTL (read from the Amaranth source, checked every cycle by the
// test bench, which presents random inputs before reading the outputs):
//   i.ready  = (FIFO not full) & (credit >= 0)            -- registered state only
//   o.valid  = (head due, or reorder block draining) & ~(LFSR draw < stall threshold)
//              & ~(drop draw | dead)                      -- registered state only
//   o.payload                                             -- registered state only
// Neither output depends on i.valid, i.payload or o.ready in the same cycle, so a link never
// closes a combinational path between two FPGAs.
//
// Evaluation order per cycle (harness):
//   1. For every link: drive the receiving FPGA's input stream with out_valid() / out_payload()
//      and the sending FPGA's ready with in_ready(). (They are valid at any time between two
//      clock() calls.)
//   2. Evaluate every FPGA model (clock low), so that its link outputs (valid, payload towards
//      the link; ready from the link's receiver) settle for this cycle.
//   3. For every link: clock(sender's valid, sender's payload, receiver's ready). This is the
//      link's clock edge; afterwards in_ready()/out_valid()/out_payload()/items/link_bound are
//      the next cycle's values, so do not feed them to the FPGAs before their own edge.
//   4. Clock edge of every FPGA model. The FPGA inputs set in step 1 stay in place for it.
// In a cycle whose edge has the synchronous reset high, call clock(..., true): as in the RTL the
// FIFO's storage and output register are not reset and keep taking items in that edge (it only
// shows on out_payload() while out_valid() is low).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gravfm_inputs.h"  // LinkParams, generated from gravfm.sim.link_params.LinkParams (its fields' meaning)

namespace gravfm {

// k steps of a generator whose step is linear over GF(2) on BITS-bit states (an LFSR, xorshift)
// in O(BITS * log k): the step's matrix squared up to 2^63, applied by the bits of k. Lets a link
// idle through millions of cycles at once (LinkModel::idle).
template <unsigned BITS> class Gf2Jump {
public:
    template <class Step> explicit Gf2Jump(Step step) {
        for (unsigned i = 0; i < BITS; ++i) powers_[0][i] = step(uint32_t{1} << i);
        for (unsigned p = 1; p < 64; ++p)
            for (unsigned i = 0; i < BITS; ++i) powers_[p][i] = apply(powers_[p - 1], powers_[p - 1][i]);
    }
    uint32_t operator()(uint32_t state, uint64_t steps) const {
        for (unsigned p = 0; steps; ++p, steps >>= 1)
            if (steps & 1) state = apply(powers_[p], state);
        return state;
    }

private:
    using Matrix = std::array<uint32_t, BITS>;  // column i: the image of bit i
    static uint32_t apply(const Matrix& matrix, uint32_t state) {
        uint32_t image = 0;
        for (unsigned i = 0; i < BITS; ++i)
            if (state >> i & 1u) image ^= matrix[i];
        return image;
    }
    std::array<Matrix, 64> powers_{};
};

// The link's bandwidth limit (`credit`): a signed register gaining rate_fixed per cycle up to
// rate_fixed, losing `cost` per item taken; the input is ready while it is not negative. One
// place for LinkModel and for the sender half of a link in the harness's quantum schedule.
class LinkCredit {
public:
    explicit LinkCredit(const LinkParams& params) : p_(params) {}
    bool allowed() const { return !p_.rate_fixed || credit_ >= 0; }
    void clock(bool take) {
        if (!p_.rate_fixed) return;
        const int64_t refilled = wrap_signed(credit_ + p_.rate_fixed - (take ? int64_t{p_.cost} : 0), p_.credit_bits);
        credit_ = refilled > int64_t{p_.rate_fixed} ? int64_t{p_.rate_fixed} : refilled;
    }
    void reset() { credit_ = 0; }
    // `cycles` clock(false): the credit refills to its fixed point (the cap) and stays there.
    void idle(uint64_t cycles) {
        if (!p_.rate_fixed) return;
        for (; cycles; --cycles) {
            const int64_t before = credit_;
            clock(false);
            if (credit_ == before) return;
        }
    }

private:
    static int64_t wrap_signed(int64_t value, unsigned bits) {
        const uint64_t mask = (uint64_t{1} << bits) - 1;
        const uint64_t raw = static_cast<uint64_t>(value) & mask;
        return raw >> (bits - 1) & 1u ? static_cast<int64_t>(raw | ~mask) : static_cast<int64_t>(raw);
    }

    LinkParams p_;
    int64_t credit_ = 0;
};

class LinkModel {
public:
    LinkModel(const LinkParams& params, unsigned payload_words)
        : p_(params), credit_(params), words_(payload_words), entry_words_(payload_words + 1) {
        if (payload_words < 1) throw std::invalid_argument("LinkModel: payload_words must be >= 1");
        if (p_.fifo_depth < 1) throw std::invalid_argument("LinkModel: fifo_depth must be >= 1");
        if (p_.reorder_window < 1) throw std::invalid_argument("LinkModel: reorder_window must be >= 1");
        if (p_.time_bits < 1 || p_.time_bits > 32)
            throw std::invalid_argument("LinkModel: time_bits must be in 1..32");
        if (p_.rate_fixed && (p_.credit_bits < 2 || p_.credit_bits > 62))
            throw std::invalid_argument("LinkModel: credit_bits must be in 2..62");
        if (p_.lfsr_seed == 0 || p_.lfsr_seed > 0xFFFF)
            throw std::invalid_argument("LinkModel: lfsr_seed must be a non-zero 16-bit value");
        if (p_.fault_seed == 0) throw std::invalid_argument("LinkModel: fault_seed must be non-zero");
        if (p_.payload_bits < 1 || p_.payload_bits > 32 * payload_words)
            throw std::invalid_argument("LinkModel: payload_bits must fit the payload words");
        if (uint64_t{p_.drop_threshold} + p_.duplicate_threshold + p_.flip_threshold > 0x10000)
            throw std::invalid_argument("LinkModel: the fault thresholds add up to more than 65536");
        faulty_ = p_.drop_threshold || p_.duplicate_threshold || p_.flip_threshold || p_.dead;
        position_bits_ = 0;
        while ((1u << position_bits_) < p_.payload_bits) ++position_bits_;
        time_mask_ = p_.time_bits == 32 ? 0xFFFFFFFFu : (1u << p_.time_bits) - 1;
        stored_ = p_.fifo_depth - 1;
        memory_.assign(static_cast<size_t>(stored_) * entry_words_, 0);
        head_.assign(entry_words_, 0);
        unsigned index_bits = 1;
        while ((1u << index_bits) < p_.reorder_window) ++index_bits;
        index_mask_ = (1u << index_bits) - 1;
        slots_.assign(static_cast<size_t>(p_.reorder_window) * words_, 0);
        zeros_.assign(words_, 0);
        flipped_.assign(words_, 0);
        reset_registers();
    }

    bool in_ready() const { return fifo_w_rdy() && allowed(); }

    bool out_valid() const { return head_valid() && !stalled() && !lose(); }

    // The payload on o: payload_words words, LSB word first. Equal to the RTL's in every cycle,
    // also while o.valid is low (then 0 or an earlier item, with a bit flipped in a flip draw).
    const uint32_t* out_payload() const {
        const uint32_t* head = head_payload();
        if (!flip_now()) return head;
        std::copy_n(head, words_, flipped_.begin());
        const unsigned raw = position_bits_ ? (random_faults_ >> 16) & ((1u << position_bits_) - 1) : 0;
        const unsigned position = raw >= p_.payload_bits ? raw - p_.payload_bits : raw;
        flipped_[position / 32] ^= 1u << (position % 32);
        return flipped_.data();
    }

    // The clock edge, given this cycle's handshake inputs and synchronous reset. `in_payload` is
    // read only when the item is taken (in_valid && in_ready()), so it may be null otherwise.
    void clock(bool in_valid, const uint32_t* in_payload, bool out_ready, bool reset = false) {
        const bool take = in_valid && in_ready();
        const bool is_allowed = allowed();
        const bool arrived = arrived_valid();
        const bool lost = lose(), repeated = duplicate_now(), flipped = flip_now();
        const bool delivered = out_valid() && out_ready;
        const bool dropped_now = head_valid() && !stalled() && lost;
        // `reordered.ready`: a lost item leaves unseen, a repeated one stays for another delivery.
        const bool out_ready_now = !stalled() && (lost || (out_ready && !repeated));
        bool arrived_ready;                                  // `arrived.ready`
        if (p_.reorder_window > 1) {
            arrived_ready = !draining_ && block_count_ < p_.reorder_window;
            clock_reorder(arrived, out_ready_now);
        } else {
            arrived_ready = out_ready_now;
        }
        clock_fifo(take, in_payload, arrived_ready && head_due());
        credit_.clock(take);
        if (take) ++items;
        if (in_valid && !is_allowed) ++link_bound;
        if (faulty_) clock_faults(take, dropped_now, delivered && repeated, delivered && flipped);
        now_ = (now_ + 1) & time_mask_;
        random_ = static_cast<uint16_t>(lfsr_step(random_));
        if (reset) reset_registers();
    }

    // Nothing in flight: the FIFO and the reorder stage are empty.
    bool empty() const { return !head_valid_ && !count_ && !draining_ && !block_count_; }

    // `cycles` clock edges with nothing offered, o.ready high and no reset: the same state as
    // many clock(false, nullptr, true) calls (link_idle_tb.cpp). With nothing in flight only the
    // time, the generators, the credit and a dead link's age move, so it takes O(log cycles); the
    // harness idles every link through the load's cycles (harness_system.h).
    void idle(uint64_t cycles) {
        if (!empty()) {  // cycle by cycle
            for (; cycles; --cycles) clock(false, nullptr, true);
            return;
        }
        credit_.idle(cycles);
        if (faulty_) {
            if (p_.dead && carried_) age_ = static_cast<uint32_t>(std::min<uint64_t>(p_.dead_after, age_ + cycles));
            static const Gf2Jump<32> xorshift(xorshift_step);
            random_faults_ = xorshift(random_faults_, cycles);
        }
        now_ = static_cast<uint32_t>((now_ + cycles) & time_mask_);
        static const Gf2Jump<16> lfsr(lfsr_step);
        random_ = static_cast<uint16_t>(lfsr(random_, cycles));
    }

    uint64_t items = 0;       // items taken at the input
    uint64_t link_bound = 0;  // cycles with an item offered at the input and no credit
    uint64_t dropped = 0, duplicated = 0, flipped = 0;  // faults: items lost, repeated, bit-flipped
    uint32_t first_fault = 0;                           // `now` at the first of those (0 before)
    uint64_t popped = 0;  // items that have left the FIFO's output register (never reset)

private:
    // The registers with a reset value (all but the FIFO's storage and output register, which
    // are reset-less in BufferedFIFO and SyncFIFOBuffered alike).
    void reset_registers() {
        now_ = 0;
        random_ = static_cast<uint16_t>(p_.lfsr_seed);
        credit_.reset();
        items = 0;
        link_bound = 0;
        dropped = duplicated = flipped = 0;
        first_fault = 0;
        faulted_ = carried_ = false;
        age_ = 0;
        random_faults_ = p_.fault_seed;
        produce_ = consume_ = count_ = 0;
        head_valid_ = false;
        block_count_ = index_ = left_ = 0;
        backwards_ = draining_ = false;
        std::fill(slots_.begin(), slots_.end(), 0);
    }

    bool allowed() const { return credit_.allowed(); }

    bool stalled() const { return p_.stall_threshold && (random_ & 0xFFu) < p_.stall_threshold; }

    // `reordered.valid`, `reordered.payload`: the item about to leave (before stalls and faults).
    bool head_valid() const { return p_.reorder_window > 1 ? draining_ : arrived_valid(); }
    const uint32_t* head_payload() const {
        if (p_.reorder_window == 1) return head_.data();
        return draining_ ? &slots_[static_cast<size_t>(index_) * words_] : zeros_.data();
    }

    // The fault draws of this cycle: the low 16 bits of the xorshift state against each share.
    bool in_share(uint32_t low, uint32_t share) const {
        const uint32_t draw = random_faults_ & 0xFFFFu;
        return share && draw >= low && draw < low + share;
    }
    bool drop_now() const { return in_share(0, p_.drop_threshold); }
    bool duplicate_now() const { return in_share(p_.drop_threshold, p_.duplicate_threshold); }
    bool flip_now() const { return in_share(p_.drop_threshold + p_.duplicate_threshold, p_.flip_threshold); }
    bool dead_now() const { return p_.dead && age_ == p_.dead_after; }
    bool lose() const { return drop_now() || dead_now(); }

    // LinkModel._faults and _dead: counters, the first fault's cycle, the generator, the link's age.
    void clock_faults(bool take, bool lost, bool repeated, bool flipped_now) {
        dropped += lost;
        duplicated += repeated;
        flipped += flipped_now;
        if (!faulted_ && (lost || repeated || flipped_now)) {
            faulted_ = true;
            first_fault = now_;
        }
        if (p_.dead && (carried_ || take) && age_ != p_.dead_after) ++age_;
        if (take) carried_ = true;
        random_faults_ = xorshift_step(random_faults_);
    }

    // The stall LFSR (16-bit Galois, taps 0xB400) and the fault generator (xorshift32 13/17/5).
    static uint32_t lfsr_step(uint32_t x) { return (x >> 1) ^ ((x & 1) ? 0xB400u : 0u); }
    static uint32_t xorshift_step(uint32_t x) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return x;
    }

    // `w_rdy`: BufferedFIFO full when its memory is; SyncFIFOBuffered(depth=1) when its register is.
    bool fifo_w_rdy() const { return stored_ ? count_ != stored_ : !head_valid_; }

    // `late >= 0`: the head's due time has come (signed compare of the wrapped difference).
    bool head_due() const {
        uint32_t late = (now_ - head_[words_]) & time_mask_;
        return !(late >> (p_.time_bits - 1) & 1u);
    }

    bool arrived_valid() const { return head_valid_ && head_due(); }

    // head_valid_ is BufferedFIFO's `r_rdy` (or `level == 1` at depth 1), head_ its output register
    // (`r_data`: the payload words, then the due time), read_enable its `r_en`.
    void clock_fifo(bool write, const uint32_t* payload, bool read_enable) {
        if (head_valid_ && read_enable) ++popped;
        if (stored_ == 0) {  // SyncFIFOBuffered(depth=1): one register, full or empty
            if (write) {
                std::copy_n(payload, words_, head_.begin());
                head_[words_] = due();
                head_valid_ = true;
            } else if (head_valid_ && read_enable) {
                head_valid_ = false;
            }
            return;
        }
        const bool read = count_ != 0 && (!head_valid_ || read_enable);  // `do_read`
        if (read) {  // one-cycle read latency: the memory's output register
            std::copy_n(memory_.begin() + static_cast<ptrdiff_t>(consume_) * entry_words_, entry_words_,
                        head_.begin());
            consume_ = consume_ + 1 == stored_ ? 0 : consume_ + 1;
            head_valid_ = true;
        } else if (read_enable) {
            head_valid_ = false;
        }
        if (write) {  // never the entry read in the same cycle: a write takes a free one
            auto entry = memory_.begin() + static_cast<ptrdiff_t>(produce_) * entry_words_;
            std::copy_n(payload, words_, entry);
            entry[words_] = due();
            produce_ = produce_ + 1 == stored_ ? 0 : produce_ + 1;
        }
        count_ = count_ + (write ? 1 : 0) - (read ? 1 : 0);
    }

    // LinkModel._reorder: collect up to W arrived items, then drain them forwards or backwards.
    void clock_reorder(bool arrived, bool out_ready) {
        if (!draining_) {
            const unsigned count = block_count_;
            if (arrived && count < p_.reorder_window) {
                std::copy_n(head_.begin(), words_, slots_.begin() + static_cast<ptrdiff_t>(count) * words_);
                block_count_ = count + 1;
            }
            if (count == p_.reorder_window || (count != 0 && !arrived)) {
                const bool coin = random_ >> 8 & 1u;
                draining_ = true;
                left_ = count;
                backwards_ = coin;
                index_ = coin ? (count - 1) & index_mask_ : 0;
            }
        } else if (out_ready) {
            index_ = (index_ + (backwards_ ? index_mask_ : 1u)) & index_mask_;  // -1 or +1, wrapping
            if (left_ == 1) {
                draining_ = false;
                block_count_ = 0;
            }
            --left_;
        }
    }

    uint32_t due() const { return (now_ + p_.latency) & time_mask_; }

    LinkParams p_;
    LinkCredit credit_;
    unsigned words_, entry_words_;
    uint32_t time_mask_ = 0;
    unsigned stored_ = 0;      // entries in BufferedFIFO's memory (0: the depth-1 register FIFO)
    unsigned index_mask_ = 0;  // `index` is Signal(range(W)): arithmetic wraps at its width

    uint32_t now_ = 0;
    uint16_t random_ = 1;
    std::vector<uint32_t> memory_;
    unsigned produce_ = 0, consume_ = 0, count_ = 0;
    bool head_valid_ = false;
    std::vector<uint32_t> head_;
    std::vector<uint32_t> slots_;
    std::vector<uint32_t> zeros_;  // o.payload of the reorder stage while it is not draining
    mutable std::vector<uint32_t> flipped_;  // o.payload in a cycle with a flip draw
    bool faulty_ = false;
    unsigned position_bits_ = 0;   // bits of the flip position draw (ceil(log2(payload_bits)))
    uint32_t random_faults_ = 1;
    bool faulted_ = false, carried_ = false;
    uint32_t age_ = 0;
    unsigned block_count_ = 0, index_ = 0, left_ = 0;
    bool backwards_ = false, draining_ = false;
};

}  // namespace gravfm
