#include "engine/outage_log.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
#include <utility>

namespace orch::engine {

namespace {

double seconds_between(outage_log::clock::time_point from, outage_log::clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
}

}  // namespace

outage_log::outage_log(std::string who, std::string what, std::chrono::seconds summary_every)
    : who_(std::move(who)), what_(std::move(what)), summary_every_(summary_every) {}

void outage_log::failed(int caller, const std::string& error, clock::time_point now) {
    attempts_total_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(m_);
    // libpq's messages end in a newline (the log's formatter escapes the ones inside).
    std::string_view trimmed = error;
    while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) {
        trimmed.remove_suffix(1);
    }
    std::string line(trimmed);
    if (failing_.empty()) {
        failing_.insert(caller);
        failing_any_.store(true, std::memory_order_relaxed);
        outages_.fetch_add(1, std::memory_order_relaxed);
        since_ = now;
        last_told_ = now;
        attempts_ = 1;
        attempts_told_ = 1;
        last_error_ = line;
        spdlog::warn("{}: {} unavailable ({}); reconnecting with backoff, a summary every {} s until it answers",
                     who_, what_, line, summary_every_.count());
        return;
    }
    failing_.insert(caller);
    ++attempts_;
    last_error_ = std::move(line);
    if (now - last_told_ >= summary_every_) {
        spdlog::warn("{}: {} still unavailable after {:.0f} s ({} failed attempts, {} since the last line; last "
                     "error: {})",
                     who_, what_, seconds_between(since_, now), attempts_, attempts_ - attempts_told_, last_error_);
        last_told_ = now;
        attempts_told_ = attempts_;
    }
}

void outage_log::succeeded(int caller, clock::time_point now) {
    if (!failing_any_.load(std::memory_order_relaxed)) {
        return;
    }
    std::lock_guard lock(m_);
    if (failing_.erase(caller) == 0 || !failing_.empty()) {
        return;
    }
    failing_any_.store(false, std::memory_order_relaxed);
    spdlog::info("{}: {} available again after {:.1f} s ({} failed attempts)", who_, what_, seconds_between(since_, now),
                 attempts_);
}

reconnect_backoff::reconnect_backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap,
                                     std::uint_fast32_t seed)
    : base_(base), cap_(std::max(base, cap)), rng_(seed) {}

std::chrono::milliseconds reconnect_backoff::next() {
    const int doublings = std::min(failures_, 16);
    ++failures_;
    const auto ceiling = std::min<std::int64_t>(cap_.count(), base_.count() << doublings);
    std::uniform_int_distribution<std::int64_t> upper_half(ceiling / 2, ceiling);
    return std::chrono::milliseconds(upper_half(rng_));
}

}  // namespace orch::engine
