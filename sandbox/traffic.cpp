#include "sandbox/traffic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace orch::sandbox {

namespace {

constexpr double z99 = 2.3263478740408408; // the standard normal's 99th percentile
constexpr std::size_t examples_kept = 10;

std::int64_t unix_ms(time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

} // namespace

double lognormal_sigma(double median_ms, double p99_ms) { return std::log(p99_ms / median_ms) / z99; }

std::int64_t draw_latency_ms(const settings& cfg, rng64& rng) {
    if (cfg.latency_distribution == "lognormal") {
        // Box-Muller: u1 in (0, 1] keeps the logarithm finite.
        double u1 = 1.0 - rng.unit();
        double u2 = rng.unit();
        double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
        double sigma = lognormal_sigma(static_cast<double>(cfg.latency_median_ms),
                                       static_cast<double>(cfg.latency_p99_ms));
        double ms = static_cast<double>(cfg.latency_median_ms) * std::exp(sigma * z);
        // An hour bounds the far tail (validate() keeps p99 within 10 minutes) so the
        // conversion cannot overflow; no draw comes near it at realistic settings.
        return static_cast<std::int64_t>(std::llround(std::min(ms, 3'600'000.0)));
    }
    if (cfg.latency_ms_max > 0) {
        return rng.between(cfg.latency_ms_min, cfg.latency_ms_max);
    }
    return 0;
}

const char* to_string(limit_scope s) { return s == limit_scope::key ? "key" : "account_action"; }

void traffic_monitor::opened(limit_scope scope, const std::string& scope_id, time_point start, time_point end,
                             bool enforced) {
    ++windows_opened_[static_cast<std::size_t>(scope)];
    auto& w = windows_[static_cast<std::size_t>(scope)][scope_id];
    if (w.end > start) {
        w.end = std::max(w.end, end); // still live: the client was told to wait until the later end
    } else {
        w = {start, end, start};
    }
    if (enforced) {
        w.enforced_end = std::max(w.enforced_end, end);
    }
}

const traffic_monitor::window* traffic_monitor::inside(limit_scope scope, const std::string& scope_id,
                                                       time_point arrived) const {
    const auto& m = windows_[static_cast<std::size_t>(scope)];
    auto it = m.find(scope_id);
    if (it == m.end() || arrived < it->second.start || arrived >= it->second.end) {
        return nullptr;
    }
    return &it->second;
}

void traffic_monitor::violation(limit_scope scope, json example) {
    auto i = static_cast<std::size_t>(scope);
    ++violations_[i];
    if (examples_[i].size() < examples_kept) {
        examples_[i].push_back(std::move(example));
    }
}

void traffic_monitor::answered(time_point at, std::int64_t latency_ms, std::size_t keep_max) {
    ++answered_total_;
    if (keep_max == 0) {
        return;
    }
    while (samples_.size() >= keep_max) {
        samples_.pop_front();
    }
    samples_.push_back({unix_ms(at), latency_ms});
}

json traffic_monitor::stats(std::int64_t since_ms, std::int64_t until_ms) const {
    std::vector<std::int64_t> lat;
    double sum = 0;
    for (const auto& s : samples_) {
        if (s.at_ms >= since_ms && (until_ms == 0 || s.at_ms < until_ms)) {
            lat.push_back(s.latency_ms);
            sum += static_cast<double>(s.latency_ms);
        }
    }
    std::sort(lat.begin(), lat.end());
    auto pct = [&](double p) -> json {
        if (lat.empty()) {
            return nullptr;
        }
        // Nearest rank.
        auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(lat.size())));
        return lat[std::clamp<std::size_t>(rank, 1, lat.size()) - 1];
    };
    json latency = {{"answered", lat.size()},
                    {"mean_ms", lat.empty() ? json(nullptr) : json(sum / static_cast<double>(lat.size()))},
                    {"p50_ms", pct(0.50)},
                    {"p90_ms", pct(0.90)},
                    {"p99_ms", pct(0.99)},
                    {"max_ms", lat.empty() ? json(nullptr) : json(lat.back())}};
    json windows = json::object();
    json violations = json::object();
    json in_flight = json::object();
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < limit_scope_count; ++i) {
        const char* name = to_string(static_cast<limit_scope>(i));
        windows[name] = windows_opened_[i];
        violations[name] = violations_[i];
        in_flight[name] = in_flight_[i];
        total += violations_[i];
    }
    json examples = json::array();
    for (const auto& per_scope : examples_) {
        for (const auto& e : per_scope) {
            examples.push_back(e);
        }
    }
    violations["total"] = total;
    violations["examples"] = examples;
    return json{{"requests_total", requests_total_},
                {"answered_total", answered_total_},
                {"samples_kept", samples_.size()},
                {"oldest_sample_ms", samples_.empty() ? json(nullptr) : json(samples_.front().at_ms)},
                {"latency", latency},
                {"rate_limited_injected", injected_},
                {"retry_after_windows", windows},
                {"retry_after_violations", violations},
                {"retry_after_in_flight", in_flight}};
}

} // namespace orch::sandbox
