// orch::engine lru_map: a map that keeps at most `capacity` entries, dropping the one used least
// recently when a new one would pass it. For caches of things that never change once stored
// (campaign versions) in processes that run for weeks: the working set stays, what no claim has
// read for long goes. Not thread-safe (callers hold their own lock). Eviction scans the entries:
// meant for small capacities (hundreds), where a scan on insert costs less than keeping an order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace orch::engine {

template <typename K, typename V>
class lru_map {
public:
    explicit lru_map(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

    // The value under `key`, marked as just used; nullptr when absent.
    V* find(const K& key) {
        auto it = entries_.find(key);
        if (it == entries_.end()) {
            return nullptr;
        }
        it->second.used = ++clock_;
        return &it->second.value;
    }

    // Stores `value` under `key` (replacing one there), dropping the least recently used entry
    // first when the map is full.
    V& put(const K& key, V value) {
        if (auto it = entries_.find(key); it != entries_.end()) {
            it->second = {std::move(value), ++clock_};
            return it->second.value;
        }
        if (entries_.size() >= capacity_) {
            auto oldest = entries_.begin();
            for (auto it = entries_.begin(); it != entries_.end(); ++it) {
                if (it->second.used < oldest->second.used) {
                    oldest = it;
                }
            }
            entries_.erase(oldest);
        }
        return entries_.emplace(key, entry{std::move(value), ++clock_}).first->second.value;
    }

    std::size_t size() const { return entries_.size(); }
    std::size_t capacity() const { return capacity_; }

private:
    struct entry {
        V value;
        std::uint64_t used = 0;
    };
    std::size_t capacity_;
    std::uint64_t clock_ = 0;
    std::map<K, entry> entries_;
};

}  // namespace orch::engine
