// splitmix64 (Steele, Lea and Flood, 2014): the pseudo-random stream of the simulated memory's
// jitter and reordering (memory_model.h) and of the C++ benches' random traffic.
#pragma once

#include <cstdint>

namespace gravfm {

// The next number of the stream whose state is `state` (advanced).
inline uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A bench's stream of draws.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() { return splitmix64(state); }
    uint64_t below(uint64_t n) { return next() % n; }
    bool chance(unsigned percent) { return below(100) < percent; }
};

}  // namespace gravfm
