// Small deterministic helpers: stable hashing (FNV-1a + splitmix64), so the same seed gives the
// same world, ids and draws on every run and every machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace orch::sandbox {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr std::uint64_t hash64(std::string_view text, std::uint64_t seed = 0) {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ splitmix64(seed);
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return splitmix64(h);
}

// A number in [0, 1) from a hash, for deterministic yes/no draws.
constexpr double unit_from_hash(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

inline std::string hex(std::uint64_t v, int digits = 16) {
    static constexpr char chars[] = "0123456789abcdef";
    std::string out(static_cast<std::size_t>(digits), '0');
    for (int i = digits - 1; i >= 0; --i) {
        out[static_cast<std::size_t>(i)] = chars[v & 0xf];
        v >>= 4;
    }
    return out;
}

// A small, fast generator for the world and the simulation (splitmix64 stream).
class rng64 {
public:
    explicit rng64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        return splitmix64(state_);
    }
    // Uniform integer in [lo, hi] (inclusive). Modulo bias is negligible for small ranges.
    std::int64_t between(std::int64_t lo, std::int64_t hi) {
        if (hi <= lo) {
            return lo;
        }
        auto span = static_cast<std::uint64_t>(hi - lo) + 1;
        return lo + static_cast<std::int64_t>(next() % span);
    }
    double unit() { return unit_from_hash(next()); }
    bool chance(double p) { return unit() < p; }
    template <typename T>
    const T& pick(const T* items, std::size_t count) {
        return items[next() % count];
    }

private:
    std::uint64_t state_;
};

} // namespace orch::sandbox
