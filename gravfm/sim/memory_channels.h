// The channels of one simulated memory (memory_model.h): each its own bandwidth credit, its own
// banks (each a queue of bank_depth beats) and its own service round-robin; the latency is the
// memory's. One channel is the paper's HMC; several are an HBM's pseudo-channels, a beat's channel
// chosen by its byte address (address / channel_bytes, the last channel beyond). The Python
// reference keeps the same state in gravfm.sim.memory_model._Channel.
//
// Beats are indices into the model's pool; the model learns of a serviced beat through the
// callback of service(), which draws its jitter: channels in order, then each one's banks in its
// round-robin order, so the random stream is the one memory's for one channel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gravfm_inputs.h"  // MemoryModelParams

namespace gravfm {

class MemoryChannels {
public:
    // `cost` is one word's credit (word_bytes << FRACTION_BITS).
    MemoryChannels(const MemoryModelParams& p, uint64_t cost)
        : p_(p), cost_(cost), cap_(p.rate_fixed + cost - 1), channels_(p.channels, Channel{cap_}),
          banks_(size_t{p.channels} * p.banks), ring_(banks_.size() * p.bank_depth, ~0u) {
        while ((1u << log2_word_) < p_.word_bytes) ++log2_word_;
    }

    // The bank (over all channels) of the beat at byte `address`.
    unsigned bank_of(uint64_t address) const {
        const uint64_t channel = p_.channels == 1 ? 0 : std::min<uint64_t>(address / p_.channel_bytes, p_.channels - 1);
        return static_cast<unsigned>(channel * p_.banks + (address >> log2_word_) % p_.banks);
    }

    // Whether bank `b` takes a beat in the dispatch step of cycle `now`: room, and no other port's yet.
    bool takes(unsigned b, uint64_t now) const { return banks_[b].taken_at != now && banks_[b].count < p_.bank_depth; }

    void push(unsigned b, uint32_t beat, uint64_t now) {
        Bank& bank = banks_[b];
        bank.taken_at = now;
        ring_[size_t{b} * p_.bank_depth + (bank.first + bank.count) % p_.bank_depth] = beat;
        ++bank.count;
        ++channels_[b / p_.banks].queued;
    }

    // Step b of memory_model.h in every channel; `serviced(beat)` for each beat taken, in order.
    template <class Serviced>
    void service(Serviced serviced) {
        for (unsigned c = 0; c < p_.channels; ++c) {
            Channel& channel = channels_[c];
            channel.credit = std::min(channel.credit + p_.rate_fixed, cap_);
            if (channel.queued) service(c, channel, serviced);
        }
    }

private:
    struct Channel {
        uint64_t credit;  // starts at the cap: an idle channel has its full allowance
        uint64_t queued = 0;
        unsigned service_next = 0;
    };
    struct Bank {  // its queue: a ring of bank_depth beats in ring_
        uint32_t first = 0, count = 0;
        uint64_t taken_at = ~0ull;  // the dispatch step (cycle) in which a port's beat entered it
    };

    template <class Serviced>
    void service(unsigned c, Channel& channel, Serviced& serviced) {
        const unsigned banks = p_.banks, base = c * banks;
        int first = -1;
        for (unsigned i = 0, b = channel.service_next; i < banks; ++i, b = b + 1 == banks ? 0 : b + 1) {
            Bank& bank = banks_[base + b];
            if (!bank.count) continue;
            if (channel.credit < cost_) break;
            channel.credit -= cost_;
            const uint32_t beat = ring_[size_t{base + b} * p_.bank_depth + bank.first];
            bank.first = bank.first + 1 == p_.bank_depth ? 0 : bank.first + 1;
            --bank.count;
            --channel.queued;
            serviced(beat);
            if (first < 0) first = static_cast<int>(b);
        }
        if (first >= 0) channel.service_next = (static_cast<unsigned>(first) + 1) % banks;
    }

    MemoryModelParams p_;
    uint64_t cost_, cap_;
    unsigned log2_word_ = 0;
    std::vector<Channel> channels_;
    std::vector<Bank> banks_;     // channel c's banks: c * banks ...
    std::vector<uint32_t> ring_;  // bank b's queue: entries b * bank_depth ...
};

}  // namespace gravfm
