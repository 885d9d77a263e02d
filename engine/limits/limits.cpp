#include "engine/limits/limits.hpp"

#include "engine/limits/detail/redis_pool.hpp"
#include "schema/schema.hpp"

#include <date/tz.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <utility>

#include <unistd.h>

namespace orch::limits {

namespace {

constexpr std::array<const char*, action_count> action_names{
    "invite", "send", "visit", "withdraw", "search", "check_invitation", "get_conversation"};

std::string hex_digest(const EVP_MD* md, std::string_view text) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(text.data(), text.size(), out, &len, md, nullptr) != 1) {
        std::fprintf(stderr, "orch::limits: EVP_Digest failed\n");
        std::abort();
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < len; ++i) {
        hex += digits[out[i] >> 4];
        hex += digits[out[i] & 0xf];
    }
    return hex;
}

std::mt19937_64& thread_rng() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return rng;
}

std::chrono::system_clock::time_point wall_in(std::chrono::milliseconds ms) {
    return std::chrono::system_clock::now() + ms;
}

}  // namespace

const char* to_string(action a) { return action_names.at(static_cast<std::size_t>(a)); }

std::optional<action> parse_action(std::string_view name) {
    for (std::size_t i = 0; i < action_count; ++i) {
        if (name == action_names[i]) {
            return static_cast<action>(i);
        }
    }
    return std::nullopt;
}

action action_of(campaigns::call_kind kind, bool reconcile) {
    using k = campaigns::call_kind;
    switch (kind) {
        case k::invite:
        case k::withdraw:
            if (reconcile) {
                return action::check_invitation;
            }
            return kind == k::invite ? action::invite : action::withdraw;
        case k::send:
            return reconcile ? action::get_conversation : action::send;
        case k::visit:
            return action::visit;
        case k::get_conversation:
            return action::get_conversation;
        case k::check_invitation:
            return action::check_invitation;
    }
    return action::check_invitation;
}

std::array<action_defaults, action_count> default_actions() {
    std::array<action_defaults, action_count> d{};
    d[static_cast<std::size_t>(action::invite)] = {{80, 200}, {20, 10}};
    d[static_cast<std::size_t>(action::send)] = {{150, -1}, {50, 20}};
    d[static_cast<std::size_t>(action::visit)] = {{100, -1}, {40, 15}};
    d[static_cast<std::size_t>(action::search)] = {{300, -1}, {}};
    d[static_cast<std::size_t>(action::withdraw)] = {{50, -1}, {}};
    return d;
}

const char* to_string(reason r) {
    switch (r) {
        case reason::none: return "none";
        case reason::rate: return "rate";
        case reason::cooldown_key: return "cooldown_key";
        case reason::cooldown_account: return "cooldown_account";
        case reason::day_quota: return "day_quota";
        case reason::week_quota: return "week_quota";
        case reason::campaign_quota: return "campaign_quota";
        case reason::pacing: return "pacing";
        case reason::unavailable: return "unavailable";
        case reason::bad_input: return "bad_input";
    }
    return "?";
}

std::vector<std::string> validate(const settings& s) {
    std::vector<std::string> bad;
    std::string error;
    if (!parse_redis_url(s.redis_url, error)) {
        bad.push_back("limits: redis_url: " + error);
    }
    if (s.api_key.empty()) {
        bad.push_back("limits: api_key is empty");
    }
    // The bounds below keep every number of a take inside the width buckets.lua unpacks it with.
    if (!(s.key_requests_per_s == 0 || (s.key_requests_per_s >= 0.001 && s.key_requests_per_s <= 1e6))) {
        bad.push_back("limits: key_requests_per_s must be 0 (no rate bucket) or in [0.001, 1000000]");
    }
    if (s.key_burst < 1 || s.key_burst > std::numeric_limits<std::int32_t>::max()) {
        bad.push_back("limits: key_burst must be in [1, 2147483647]");
    }
    for (std::size_t i = 0; i < action_count; ++i) {
        const auto& a = s.actions[i];
        if (a.limit.per_day < -1 || a.limit.per_week < -1 || a.ramp.start_per_day < 0 || a.ramp.step_per_day < 0) {
            bad.push_back(std::string("limits: ") + action_names[i] + ": quotas are -1 (none) or >= 0, ramp-up >= 0");
        }
        if (a.limit.per_day >= 0 && a.limit.per_week >= 0 && a.limit.per_week < a.limit.per_day) {
            bad.push_back(std::string("limits: ") + action_names[i] + ": a week of " + std::to_string(a.limit.per_week) +
                          " is below a day of " + std::to_string(a.limit.per_day) +
                          ", whose quota could then never be reached");
        }
    }
    if (s.backoff_base_ms < 1 || s.backoff_cap_ms < s.backoff_base_ms || s.backoff_min_ms < 0) {
        bad.push_back("limits: backoff needs 1 <= base_ms <= cap_ms and min_ms >= 0");
    }
    if (s.retry_after_max_ms < 1 || s.retry_after_max_ms > s.counters_ttl_ms) {
        bad.push_back("limits: retry_after_max_ms must be in [1, counters_ttl_ms]");
    }
    if (!(s.pacing_factor_min >= 0) || !(s.pacing_factor_max >= s.pacing_factor_min) || s.pacing_factor_max > 8) {
        bad.push_back("limits: pacing factors need 0 <= min <= max <= 8");
    }
    if (s.idle_ttl_ms < 1000 || s.idle_ttl_ms > std::numeric_limits<std::int32_t>::max()) {
        bad.push_back("limits: idle_ttl_ms must be in [1000, 2147483647]");
    }
    if (s.counters_ttl_ms < 8LL * 86'400'000 || s.counters_ttl_ms > std::numeric_limits<std::int32_t>::max()) {
        bad.push_back("limits: counters_ttl_ms must be in [8 days (the rolling week reads 7), 2147483647 ms]");
    }
    if (s.connect_timeout_ms < 1 || s.command_timeout_ms < 1 || s.unavailable_retry_ms < 1 ||
        s.reconnect_interval_ms < 1) {
        bad.push_back("limits: timeouts and intervals must be >= 1 ms");
    }
    if (s.pool_size < 1 || s.pool_size > 1024) {
        bad.push_back("limits: pool_size must be in [1, 1024]");
    }
    return bad;
}

std::string iso_date(std::int64_t day) {
    const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day}}};
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()));
    return buf;
}

std::optional<local_day> day_in_zone(std::chrono::system_clock::time_point now, const std::string& time_zone) {
    const date::time_zone* zone = nullptr;
    try {
        zone = date::locate_zone(time_zone);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    using std::chrono::milliseconds;
    auto local = zone->to_local(date::floor<milliseconds>(now));
    auto day = date::floor<date::days>(local);
    // The next local midnight; where it does not exist (a DST jump at 00:00), the transition.
    auto next = zone->to_sys(day + date::days{1}, date::choose::earliest);
    local_day out;
    out.day = day.time_since_epoch().count();
    out.left = std::max(milliseconds{1}, date::floor<milliseconds>(next - date::floor<milliseconds>(now)));
    out.since_midnight = date::floor<milliseconds>(local - day);
    return out;
}

std::string key_tag(std::string_view api_key) { return hex_digest(EVP_sha256(), api_key).substr(0, 16); }

std::string encode_key_part(std::string_view part) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(part.size());
    for (char ch : part) {
        auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c >= 0x7f || c == ':' || c == '%' || c == '{' || c == '}') {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 0xf];
        } else {
            out += ch;
        }
    }
    return out;
}

std::string key_scope_key(const std::string& tag) { return "orch:{" + tag + "}:key"; }

std::string cooldown_index_key(const std::string& tag) { return "orch:{" + tag + "}:cooldowns"; }

// A scope's member in the cooldown index: "key", or the account id and the action's number.
std::string cooldown_member(bool key, std::string_view account_id, action a) {
    if (key) {
        return "key";
    }
    return "a" + std::to_string(static_cast<int>(a)) + ":" + std::string(account_id);
}

std::string account_key(const std::string& tag, std::string_view account_id, action a) {
    return "orch:{" + tag + "}:acct:" + encode_key_part(account_id) + ":" + to_string(a);
}

// An uncertain call's take (limiter::remember_uncertain), by lead and action.
std::string uncertain_key(const std::string& tag, std::int64_t lead, action a) {
    return "orch:{" + tag + "}:uncertain:" + std::to_string(lead) + ":" + to_string(a);
}

std::int64_t backoff_ms(std::int64_t base_ms, std::int64_t cap_ms, std::int64_t min_ms, int streak, double jitter) {
    double ceiling = static_cast<double>(cap_ms);
    if (streak < 40) {
        ceiling = std::min(ceiling, static_cast<double>(base_ms) * std::pow(2.0, streak));
    }
    return std::max(min_ms, static_cast<std::int64_t>(std::floor(jitter * ceiling)));
}

std::int64_t ramped_day_quota(const quota& q, const ramp_up& r, std::int64_t first_day, std::int64_t day) {
    if (q.per_day < 0 || r.start_per_day <= 0) {
        return q.per_day;
    }
    return std::min(q.per_day, r.start_per_day + r.step_per_day * std::max<std::int64_t>(0, day - first_day));
}

// ---------------------------------------------------------------------------------------------

struct limiter::impl {
    struct script {
        std::string name;
        std::string_view text;
        std::string sha;
    };

    settings cfg;
    key_rate_share share;  // the learned share of the key's rate
    std::string tag;
    std::string key_key;
    std::string cooldowns_key;
    std::string state_key;  // the marker of limiter::ensure_state
    std::timed_mutex state_m;  // one ensure_state at a time; guards what follows
    std::chrono::steady_clock::time_point state_tried{};  // the last rebuild that failed or waited
    std::chrono::steady_clock::time_point state_refreshed{};  // the marker's TTL last set
    int state_failures = 0;  // rebuilds failed in a row
    bool state_waiting_told = false;  // "another process is writing the counts back", said this loss
    std::chrono::steady_clock::time_point state_failure_told{};
    std::string state_seen;  // the marker ensure_state() found or wrote last ("" before its first look)
    detail::redis_pool pool;
    script buckets{"buckets", schema::redis_script("buckets"), {}};

    // take()'s combining queue: callers whose check waits for a round trip, and how many round
    // trips are under way (up to two, so that Redis has the next batch while a reply is read).
    // Each waiter sleeps on its own condition variable: a leader wakes the callers of its batch
    // and the first queued one (the next leader), not every waiter.
    struct waiting_take {
        const check* c = nullptr;
        verdict v;
        bool sent = false;  // in a leader's batch
        bool done = false;
        std::condition_variable wake;
    };
    static constexpr int max_takes_in_flight = 2;
    std::mutex take_mutex;

    // The last RATE_LIMITED cooldown line logged: the calls in flight when a 429 comes often get
    // the same one, and record the same cooldown in the same millisecond; those repeats within
    // a second are counted, and said once: with the next line, or by the first take after that
    // second (a burst before a quiet spell), or when the limiter goes.
    std::mutex cooldown_log_mutex;
    std::string cooldown_line;
    std::chrono::steady_clock::time_point cooldown_logged{};
    int cooldown_alike = 0;
    std::atomic<bool> cooldown_unsaid{false};  // cooldown_alike > 0: read without the mutex by takes
    void say_alike() {  // under cooldown_log_mutex
        if (cooldown_alike > 0) {
            spdlog::warn("limits: the RATE_LIMITED line before came {} more time{} within a second (calls in flight "
                         "that got the same answer)",
                         cooldown_alike, cooldown_alike == 1 ? "" : "s");
        }
        cooldown_alike = 0;
        cooldown_unsaid.store(false, std::memory_order_relaxed);
    }
    void log_cooldown(std::string line) {
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard lock(cooldown_log_mutex);
        if (line == cooldown_line && now - cooldown_logged < std::chrono::seconds(1)) {
            ++cooldown_alike;
            cooldown_unsaid.store(true, std::memory_order_relaxed);
            return;
        }
        say_alike();
        spdlog::warn("{}", line);
        cooldown_line = std::move(line);
        cooldown_logged = now;
    }
    // The repeats counted, once their second is over (every take asks: one relaxed load when
    // there are none).
    void say_alike_when_due() {
        if (!cooldown_unsaid.load(std::memory_order_relaxed)) {
            return;
        }
        std::lock_guard lock(cooldown_log_mutex);
        if (std::chrono::steady_clock::now() - cooldown_logged >= std::chrono::seconds(1)) {
            say_alike();
        }
    }
    ~impl() {
        std::lock_guard lock(cooldown_log_mutex);
        say_alike();
    }
    std::vector<waiting_take*> take_queue;
    int takes_in_flight = 0;

    static redis_endpoint endpoint_of(const settings& s) {
        std::string error;
        auto ep = parse_redis_url(s.redis_url, error);
        return ep ? *ep : redis_endpoint{};
    }

    explicit impl(settings s)
        : cfg(std::move(s)), tag(key_tag(cfg.api_key)), key_key(key_scope_key(tag)),
          cooldowns_key(cooldown_index_key(tag)), state_key("orch:{" + tag + "}:state"), pool(endpoint_of(cfg), cfg) {
        buckets.sha = hex_digest(EVP_sha1(), buckets.text);
    }

    // hiredis's argv form of a command: pointers and lengths into `args` (which must outlive it).
    struct argv_view {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        explicit argv_view(const std::vector<std::string>& args) {
            argv.reserve(args.size());
            lens.reserve(args.size());
            for (const auto& a : args) {
                argv.push_back(a.data());
                lens.push_back(a.size());
            }
        }
        int count() const { return static_cast<int>(argv.size()); }
    };

    static detail::reply_ptr command(redisContext* c, const std::vector<std::string>& args) {
        argv_view v(args);
        return detail::reply_ptr(static_cast<redisReply*>(redisCommandArgv(c, v.count(), v.argv.data(), v.lens.data())));
    }

    // One plain command: nullptr when Redis is unavailable or answered an error (the outage
    // starts, as in eval()).
    detail::reply_ptr plain(const std::vector<std::string>& args) {
        std::string error;
        detail::context_ptr c = pool.acquire(error);
        if (!c) {
            return nullptr;
        }
        detail::reply_ptr r = command(c.get(), args);
        return settled(std::move(c), std::move(r), args.front());
    }

    // The end of one command on `c`: the connection back to the pool, and `r` unless it is missing
    // (the connection failed: dropped) or an error reply (the outage starts, named by `what`).
    detail::reply_ptr settled(detail::context_ptr c, detail::reply_ptr r, const std::string& what) {
        if (!r) {
            std::string why = c->errstr[0] != '\0' ? c->errstr : "no reply";
            pool.failed(std::move(c), why);
            return nullptr;
        }
        if (r->type == REDIS_REPLY_ERROR) {
            pool.outage(what + ": " + std::string(r->str, r->len));
            pool.release(std::move(c));
            return nullptr;
        }
        pool.release(std::move(c));
        pool.succeeded();
        return r;
    }

    // SCRIPT LOAD of `sc` on `c`: nullptr when the connection failed, else the reply (an error
    // reply when Redis refused). Aborts when Redis names another SHA (the build embedded a script
    // whose digest we computed wrongly: a bug).
    detail::reply_ptr load_script(redisContext* c, const script& sc) {
        detail::reply_ptr load = command(c, {"SCRIPT", "LOAD", std::string(sc.text)});
        if (load && load->type == REDIS_REPLY_STRING) {
            if (std::string_view(load->str, load->len) != sc.sha) {
                spdlog::critical("limits: Redis gave script {} the SHA {}, expected {}", sc.name,
                                 std::string_view(load->str, load->len), sc.sha);
                std::abort();
            }
            spdlog::debug("limits: script {} loaded into Redis (sha {})", sc.name, sc.sha);
        }
        return load;
    }

    // EVALSHA of `sc` with `args` (numkeys, keys..., argv...). On NOSCRIPT (a restarted or
    // flushed Redis), SCRIPT LOAD and retry once. nullptr when Redis is unavailable (logged once
    // per outage by the pool).
    detail::reply_ptr eval(const script& sc, std::vector<std::string> args) {
        std::string error;
        detail::context_ptr c = pool.acquire(error);
        if (!c) {
            return nullptr;
        }
        args.insert(args.begin(), {"EVALSHA", sc.sha});
        detail::reply_ptr r = command(c.get(), args);
        if (r && r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).starts_with("NOSCRIPT")) {
            detail::reply_ptr load = load_script(c.get(), sc);
            if (load && load->type == REDIS_REPLY_STRING) {
                r = command(c.get(), args);
            } else {
                r = std::move(load);
            }
        }
        return settled(std::move(c), std::move(r), "script " + sc.name);
    }

    // One command appended to `c`'s output buffer (sent by the next redisGetReply).
    static bool append(redisContext* c, const std::vector<std::string>& args) {
        argv_view v(args);
        return redisAppendCommandArgv(c, v.count(), v.argv.data(), v.lens.data()) == REDIS_OK;
    }

    // The EVALSHAs `commands` (each complete: EVALSHA, sha of `sc`, numkeys, ...) pipelined on one
    // connection: all appended, then every reply read, so the batch costs one round trip and
    // Redis runs them in order. Commands that got NOSCRIPT are sent again, in order, after a
    // SCRIPT LOAD (once). replies[i] is nullptr when command i has no usable reply: Redis
    // unavailable (every one), the connection failed before its reply was read, or Redis answered
    // with an error (then the outage starts, as in eval()).
    std::vector<detail::reply_ptr> eval_many(const script& sc, const std::vector<std::vector<std::string>>& commands) {
        std::vector<detail::reply_ptr> replies(commands.size());
        if (commands.empty()) {
            return replies;
        }
        std::string error;
        detail::context_ptr c = pool.acquire(error);
        if (!c) {
            return replies;
        }
        std::vector<std::size_t> to_send(commands.size());
        for (std::size_t i = 0; i < to_send.size(); ++i) {
            to_send[i] = i;
        }
        bool loaded = false;
        bool broken = false;
        std::string refused;  // the first error reply
        while (!to_send.empty()) {
            for (std::size_t i : to_send) {
                if (!append(c.get(), commands[i])) {
                    broken = true;
                    break;
                }
            }
            std::vector<std::size_t> noscript;
            for (std::size_t k = 0; !broken && k < to_send.size(); ++k) {
                void* raw = nullptr;
                if (redisGetReply(c.get(), &raw) != REDIS_OK || raw == nullptr) {
                    broken = true;
                    break;
                }
                detail::reply_ptr r(static_cast<redisReply*>(raw));
                if (r->type == REDIS_REPLY_ERROR) {
                    std::string_view text(r->str, r->len);
                    if (!loaded && text.starts_with("NOSCRIPT")) {
                        noscript.push_back(to_send[k]);
                    } else if (refused.empty()) {
                        refused = text;
                    }
                    continue;
                }
                replies[to_send[k]] = std::move(r);
            }
            to_send.clear();
            if (broken || noscript.empty()) {
                break;
            }
            detail::reply_ptr load = load_script(c.get(), sc);
            if (!load) {
                broken = true;
                break;
            }
            if (load->type != REDIS_REPLY_STRING) {
                if (refused.empty()) {
                    refused = load->type == REDIS_REPLY_ERROR ? std::string(load->str, load->len)
                                                              : std::string("unexpected SCRIPT LOAD reply");
                }
                break;
            }
            loaded = true;
            to_send = std::move(noscript);
        }
        if (broken) {
            std::string what = c->errstr[0] != '\0' ? c->errstr : "no reply";
            pool.failed(std::move(c), what);
            return replies;
        }
        if (!refused.empty()) {
            pool.outage("script " + sc.name + ": " + refused);
            pool.release(std::move(c));
            return replies;
        }
        pool.release(std::move(c));
        pool.succeeded();
        return replies;
    }

    verdict unavailable_verdict() const {
        verdict v;
        v.why = reason::unavailable;
        v.retry_after = std::chrono::milliseconds(cfg.unavailable_retry_ms);
        return v;
    }

    quota quota_of(const check& c) const {
        return c.account_quota.value_or(cfg.actions[static_cast<std::size_t>(c.what)].limit);
    }
};

limiter::limiter(settings s) {
    auto problems = validate(s);
    if (!problems.empty()) {
        std::fprintf(stderr, "orch::limits: invalid settings: %s\n", problems.front().c_str());
        std::abort();
    }
    impl_ = std::make_unique<impl>(std::move(s));
}

limiter::~limiter() = default;

bool limiter::unavailable() const { return impl_->pool.down(); }
const std::string& limiter::tag() const { return impl_->tag; }

namespace {
bool valid_check(const check& c, std::string& why) {
    if (c.account_id.empty()) {
        why = "no account id";
    } else if (c.day.day < 7 || c.day.day >= 1'000'000) {
        why = "the day number is outside [7, 1000000)";
    } else if (c.day.left.count() <= 0 || c.day.left > std::chrono::hours(26)) {
        why = "the day's remaining time is outside (0, 26 h]";
    } else if (c.working_window.count() < 0 || c.window_left.count() < 0) {
        why = "negative working window";
    } else if (c.campaign_id >= (std::int64_t{1} << 47) || (c.first_day && *c.first_day >= 8'388'608)) {
        why = "the campaign id or first day is too large";
    } else if (c.key_places < 1 || c.key_places > 8) {
        why = "the key places are outside [1, 8]";
    } else {
        return true;
    }
    return false;
}

std::int64_t int_at(const redisReply* r, std::size_t i) {
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || i >= r->elements || r->element[i]->type != REDIS_REPLY_INTEGER) {
        return 0;
    }
    return r->element[i]->integer;
}

std::string fixed(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", x);
    return buf;
}

// The take's numbers, packed as buckets.lua's TAKE_ARGS reads them: little-endian two's-complement
// integers of `width` bytes (Lua struct's '<iN'), each clamped to what its width holds.
class take_args {
public:
    take_args& put(std::int64_t v, int width) {
        const std::int64_t hi = (std::int64_t{1} << (8 * width - 1)) - 1;
        auto u = static_cast<std::uint64_t>(std::clamp(v, -hi - 1, hi));
        for (int i = 0; i < width; ++i, u >>= 8) {
            bytes_.push_back(static_cast<char>(u & 0xff));
        }
        return *this;
    }
    std::string done() { return std::move(bytes_); }

private:
    std::string bytes_;
};
constexpr std::size_t take_args_size = 63;  // buckets.lua's TAKE_ARGS_SIZE
}  // namespace

std::chrono::microseconds key_emission_interval(const settings& s) {
    return std::chrono::microseconds(
        s.key_requests_per_s > 0 ? std::max<std::int64_t>(1, std::llround(1e6 / s.key_requests_per_s)) : 0);
}

double key_rate_share::at(clock::time_point now) const {
    double after = after_cut_.load(std::memory_order_acquire);
    if (after >= 1.0) {
        return 1.0;  // never cut, or grown back: no clock arithmetic on the common path
    }
    const auto since = now.time_since_epoch() - std::chrono::nanoseconds(cut_at_ns_.load(std::memory_order_relaxed));
    const double minutes = std::max(0.0, std::chrono::duration<double, std::ratio<60>>(since).count());
    const double share = after + recovery_per_minute * minutes;
    if (share < 1.0) {
        return share;
    }
    // Grown back: later reads take the common path again. Only while no cut came in between (a
    // cut stores its share after its time, and this exchange fails once it has).
    after_cut_.compare_exchange_strong(after, 1.0, std::memory_order_acq_rel);
    return 1.0;
}

std::optional<double> key_rate_share::cut(clock::time_point now) {
    std::lock_guard lock(cut_mutex_);
    const std::int64_t at_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const std::int64_t last = cut_at_ns_.load(std::memory_order_relaxed);
    if (last != 0 && at_ns - last < std::chrono::duration_cast<std::chrono::nanoseconds>(episode).count()) {
        return std::nullopt;
    }
    const double share = std::max(floor, at(now) * cut_to);
    cut_at_ns_.store(at_ns, std::memory_order_relaxed);
    after_cut_.store(share, std::memory_order_release);
    return share;
}

double limiter::key_share() const { return impl_->share.at(key_rate_share::clock::now()); }

std::chrono::microseconds limiter::key_interval() const { return key_interval_at(key_share()); }

std::chrono::microseconds limiter::key_interval_at(double share) const {
    const auto base = key_emission_interval(impl_->cfg);
    if (base.count() <= 0) {
        return base;
    }
    return share >= 1.0 ? base
                        : std::chrono::microseconds(std::llround(static_cast<double>(base.count()) / share));
}

std::optional<double> limiter::slow_down() {
    if (impl_->cfg.key_requests_per_s <= 0) {
        return std::nullopt;
    }
    auto share = impl_->share.cut(key_rate_share::clock::now());
    if (!share) {
        return std::nullopt;
    }
    const double configured = impl_->cfg.key_requests_per_s * 60.0;
    spdlog::warn("limits: the API answered RATE_LIMITED without Retry-After: the key's requests go out at {:.0f} a "
                 "minute from now ({:.0f} % of key_requests_per_minute {:.0f}), {:.0f} points more for each minute "
                 "without another",
                 configured * *share, *share * 100.0, configured, key_rate_share::recovery_per_minute * 100.0);
    return configured * *share;
}

std::vector<std::string> limiter::take_command(const check& c) const {
    const settings& s = impl_->cfg;
    const quota q = impl_->quota_of(c);
    const ramp_up r = s.actions[static_cast<std::size_t>(c.what)].ramp;
    const quota cap = c.campaign_cap.value_or(quota{});
    std::uniform_real_distribution<double> factor(s.pacing_factor_min, s.pacing_factor_max);
    // A call of n requests takes n places: n emission intervals at once, conforming while the
    // key's debt leaves room for all of them (a burst of b places is b / n such takes, at least
    // one; b odd rounds that down, which only makes the take stricter).
    const std::int64_t places = std::max(1, c.key_places);
    const double share = key_share();  // once: the interval and the burst of one take agree
    const std::int64_t emission_us = key_interval_at(share).count() * places;
    // The burst shrinks with the learned share too: a key the API refuses at its configured rate
    // most likely refuses its configured burst (each cooldown's end let a full burst go, and met a
    // 429 again).
    const std::int64_t burst = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(s.key_burst) * share) / places);
    // Quotas, caps and windows above what 4 bytes hold (2^31 - 1) are clamped to it: no count
    // reaches that in a day; valid_check and validate() keep the rest inside their widths.
    std::string packed = take_args{}
                             .put(c.day.day, 3)
                             .put(c.day.left.count(), 4)
                             .put(q.per_day, 4)
                             .put(q.per_week, 4)
                             .put(r.start_per_day, 4)
                             .put(r.step_per_day, 4)
                             .put(c.first_day.value_or(-1), 3)
                             .put(std::max<std::int64_t>(0, c.campaign_id), 6)
                             .put(c.campaign_id > 0 ? cap.per_day : -1, 4)
                             .put(c.campaign_id > 0 ? cap.per_week : -1, 4)
                             .put(c.working_window.count(), 4)
                             .put(std::llround(factor(thread_rng()) * 1e6), 3)
                             .put(emission_us, 4)
                             .put(burst, 4)
                             .put(s.idle_ttl_ms, 4)
                             .put(c.window_left.count(), 4)
                             .done();
    assert(packed.size() == take_args_size);
    if (c.queue_role == key_queue_role::none || emission_us <= 0) {
        return {"EVALSHA",
                impl_->buckets.sha,
                "3",
                impl_->key_key,
                account_key(impl_->tag, c.account_id, c.what),
                impl_->state_key,
                "take",
                std::to_string(s.idle_ttl_ms),
                std::to_string(s.counters_ttl_ms),
                std::move(packed)};
    }
    return {"EVALSHA",
            impl_->buckets.sha,
            "5",
            impl_->key_key,
            account_key(impl_->tag, c.account_id, c.what),
            impl_->state_key,
            impl_->key_key + ":owed",
            impl_->key_key + ":owed:misses",
            "take",
            std::to_string(s.idle_ttl_ms),
            std::to_string(s.counters_ttl_ms),
            std::move(packed),
            std::to_string(c.lead),
            c.queue_role == key_queue_role::queued ? "2" : "1",
            std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(key_owed_grace).count()),
            std::to_string(key_owed_misses)};
}

verdict limiter::take(const check& c) {
    impl_->say_alike_when_due();
    impl::waiting_take me;
    me.c = &c;
    std::unique_lock lock(impl_->take_mutex);
    impl_->take_queue.push_back(&me);
    while (!me.done) {
        if (me.sent || impl_->takes_in_flight >= impl::max_takes_in_flight) {
            me.wake.wait(lock);
            continue;
        }
        // Lead one round trip for everything queued (this caller's check among them).
        ++impl_->takes_in_flight;
        std::vector<impl::waiting_take*> batch;
        batch.swap(impl_->take_queue);
        for (auto* w : batch) {
            w->sent = true;
        }
        lock.unlock();
        std::vector<check> checks;
        checks.reserve(batch.size());
        for (const auto* w : batch) {
            checks.push_back(*w->c);
        }
        std::vector<verdict> verdicts;
        try {
            verdicts = take_many(checks);
        } catch (...) {
            verdicts.assign(checks.size(), impl_->unavailable_verdict());
            spdlog::error("limits: a combined take failed with an exception: the batch fails closed");
        }
        lock.lock();
        for (std::size_t i = 0; i < batch.size(); ++i) {
            batch[i]->v = verdicts[i];
            batch[i]->done = true;
            if (batch[i] != &me) {
                batch[i]->wake.notify_one();
            }
        }
        --impl_->takes_in_flight;
        if (!impl_->take_queue.empty()) {
            impl_->take_queue.front()->wake.notify_one();
        }
    }
    return me.v;
}

std::vector<verdict> limiter::take_many(std::span<const check> checks) {
    impl_->say_alike_when_due();
    std::vector<std::size_t> missing;  // checks refused for want of the state's marker
    std::vector<verdict> out = take_round(checks, missing);
    if (missing.empty()) {
        return out;
    }
    // Redis holds no limits' state: written back (or found written back by another process), the
    // takes are asked once more; otherwise they stay refused, fail closed, as when Redis is down.
    const auto mark = ensure_state();
    if (mark && (*mark == state_mark::kept || *mark == state_mark::first || *mark == state_mark::lost)) {
        std::vector<check> again;
        again.reserve(missing.size());
        for (std::size_t i : missing) {
            again.push_back(checks[i]);
        }
        std::vector<std::size_t> still;
        std::vector<verdict> second = take_round(again, still);
        for (std::size_t k = 0; k < missing.size(); ++k) {
            out[missing[k]] = second[k];
        }
    }
    return out;
}

std::vector<verdict> limiter::take_round(std::span<const check> checks, std::vector<std::size_t>& missing) {
    std::vector<verdict> out(checks.size());
    std::vector<std::vector<std::string>> commands;
    std::vector<std::size_t> sent;  // index in `checks` of each command
    commands.reserve(checks.size());
    sent.reserve(checks.size());
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const check& c = checks[i];
        std::string why;
        if (!valid_check(c, why)) {
            spdlog::error("limits: bad check for account '{}' action={}: {}", c.account_id, to_string(c.what), why);
            out[i].why = reason::bad_input;
            out[i].retry_after = std::chrono::milliseconds(impl_->cfg.unavailable_retry_ms);
            continue;
        }
        commands.push_back(take_command(c));
        sent.push_back(i);
    }
    std::vector<detail::reply_ptr> replies = impl_->eval_many(impl_->buckets, commands);
    for (std::size_t k = 0; k < sent.size(); ++k) {
        const redisReply* rep = replies[k].get();
        verdict& v = out[sent[k]];
        if (rep == nullptr) {
            v = impl_->unavailable_verdict();
            continue;
        }
        if (rep->type == REDIS_REPLY_INTEGER && rep->integer >= 0) {
            // Allowed, packed as streaks + 4 * used_today + 2^27 * used_week (see buckets.lua).
            const auto x = static_cast<std::uint64_t>(rep->integer);
            v.allowed = true;
            v.why = reason::none;
            v.retry_after = std::chrono::milliseconds(0);
            v.key_streak = (x & 1) != 0;
            v.account_streak = (x & 2) != 0;
            v.used_today = static_cast<std::int64_t>((x >> 2) & ((std::uint64_t{1} << 25) - 1));
            v.used_week = static_cast<std::int64_t>(x >> 27);
            continue;
        }
        if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6) {
            impl_->pool.outage("script buckets take: unexpected reply shape");
            v = impl_->unavailable_verdict();
            continue;
        }
        v.allowed = int_at(rep, 0) == 1;
        std::int64_t code = int_at(rep, 1);
        if (code == 9) {
            v = impl_->unavailable_verdict();
            v.retry_after = std::chrono::milliseconds(std::min<std::int64_t>(impl_->cfg.unavailable_retry_ms, 1'000));
            missing.push_back(sent[k]);
            continue;
        }
        v.for_queued_lead = code == 8;
        v.why = v.for_queued_lead ? reason::rate : (code >= 0 && code <= 7) ? static_cast<reason>(code) : reason::unavailable;
        v.retry_after = std::chrono::milliseconds(int_at(rep, 2));
        std::int64_t streaks = int_at(rep, 3);
        v.key_streak = (streaks & 1) != 0;
        v.account_streak = (streaks & 2) != 0;
        v.used_today = int_at(rep, 4);
        v.used_week = int_at(rep, 5);
    }
    return out;
}

std::optional<std::chrono::milliseconds> limiter::rate_limited(const check& c, scope where,
                                                               std::optional<std::chrono::milliseconds> retry_after) {
    if (c.account_id.empty() && where == scope::account_action) {
        spdlog::error("limits: RATE_LIMITED reported for an account scope without an account id");
        return std::nullopt;
    }
    const settings& s = impl_->cfg;
    std::int64_t ra = -1;
    if (retry_after) {
        ra = std::clamp<std::int64_t>(retry_after->count(), 0, s.retry_after_max_ms);
    }
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    const bool key = where == scope::key;
    std::vector<std::string> args{
        "2",
        key ? impl_->key_key : account_key(impl_->tag, c.account_id, c.what),
        impl_->cooldowns_key,
        "cooldown",
        key ? "key" : "account",
        std::to_string(ra),
        std::to_string(s.backoff_base_ms),
        std::to_string(s.backoff_cap_ms),
        std::to_string(s.backoff_min_ms),
        fixed(jitter(thread_rng())),
        std::to_string(s.idle_ttl_ms),
        std::to_string(key ? s.idle_ttl_ms : s.counters_ttl_ms),
        cooldown_member(key, c.account_id, c.what),
    };
    detail::reply_ptr rep = impl_->eval(impl_->buckets, std::move(args));
    if (!rep) {
        return std::nullopt;
    }
    auto ms = std::chrono::milliseconds(int_at(rep.get(), 0));
    impl_->log_cooldown(fmt::format("limits: RATE_LIMITED: {} cooldown {} ms (streak {}){}",
                                    where == scope::key ? std::string("API key")
                                                        : "account=" + c.account_id + " action=" + to_string(c.what),
                                    ms.count(), int_at(rep.get(), 1), retry_after ? " from Retry-After" : ""));
    if (key && !retry_after) {
        slow_down();
    }
    return ms;
}

void limiter::succeeded(const check& c, const verdict& taken) {
    if (!taken.key_streak && !taken.account_streak) {
        return;  // the common case: no round trip
    }
    if (c.account_id.empty()) {
        return;
    }
    std::vector<std::string> args{
        "2",
        impl_->key_key,
        account_key(impl_->tag, c.account_id, c.what),
        "reset",
        taken.key_streak ? "1" : "0",
        taken.account_streak ? "1" : "0",
    };
    // When Redis is unavailable the streak is forgotten idle_ttl_ms after its cooldown anyway.
    (void)impl_->eval(impl_->buckets, std::move(args));
}

bool limiter::refund(const check& c) {
    if (c.account_id.empty()) {
        return false;
    }
    std::vector<std::string> args{
        "1",
        account_key(impl_->tag, c.account_id, c.what),
        "refund",
        std::to_string(c.day.day),
        std::to_string(std::max<std::int64_t>(0, c.campaign_id)),
    };
    return impl_->eval(impl_->buckets, std::move(args)) != nullptr;
}

bool limiter::remember_uncertain(std::int64_t lead, const check& c) {
    if (c.account_id.empty() || lead <= 0) {
        return false;
    }
    // "day campaign account": the account last, as it may hold spaces. The campaign's counters
    // only when the take counted them (it carried the campaign's cap).
    const std::int64_t campaign = c.campaign_cap ? std::max<std::int64_t>(0, c.campaign_id) : 0;
    constexpr std::int64_t week_and_a_day_s = 8 * 86'400;
    return impl_->plain({"SET", uncertain_key(impl_->tag, lead, c.what),
                         std::to_string(c.day.day) + " " + std::to_string(campaign) + " " + c.account_id, "EX",
                         std::to_string(week_and_a_day_s)}) != nullptr;
}

std::optional<check> limiter::forget_uncertain(std::int64_t lead, action what) {
    if (lead <= 0) {
        return std::nullopt;
    }
    auto r = impl_->plain({"GETDEL", uncertain_key(impl_->tag, lead, what)});
    if (!r || r->type != REDIS_REPLY_STRING) {
        return std::nullopt;  // none remembered (nil), or Redis unavailable
    }
    const std::string_view text(r->str, r->len);
    const auto first = text.find(' ');
    const auto second = first == std::string_view::npos ? first : text.find(' ', first + 1);
    check c;
    c.what = what;
    std::int64_t campaign = 0;
    const auto number = [](std::string_view t, std::int64_t& out) {
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
        return ec == std::errc() && end == t.data() + t.size();
    };
    if (second == std::string_view::npos || !number(text.substr(0, first), c.day.day) ||
        !number(text.substr(first + 1, second - first - 1), campaign) || second + 1 >= text.size()) {
        spdlog::warn("limits: an uncertain call's record of lead {} is not readable ({} bytes)", lead, text.size());
        return std::nullopt;
    }
    c.campaign_id = campaign;
    c.account_id = std::string(text.substr(second + 1));
    return c;
}

bool limiter::unsend(const check& c, bool paced) {
    if (c.account_id.empty()) {
        return false;
    }
    const settings& s = impl_->cfg;
    std::vector<std::string> args{
        "2",
        account_key(impl_->tag, c.account_id, c.what),
        impl_->key_key,
        "unsend",
        std::to_string(c.day.day),
        std::to_string(std::max<std::int64_t>(0, c.campaign_id)),
        std::to_string(key_interval().count() * std::max(1, c.key_places)),
        paced ? "1" : "0",
        std::to_string(s.idle_ttl_ms),
    };
    return impl_->eval(impl_->buckets, std::move(args)) != nullptr;
}

std::optional<limiter::queue_turns> limiter::queue(std::span<const std::int64_t> leads,
                                                   std::chrono::microseconds free_in, std::chrono::microseconds reach) {
    const auto interval = key_interval();
    const std::size_t n = leads.size();
    if (n == 0 || interval.count() <= 0) {
        return std::nullopt;
    }
    std::vector<std::string> args{
        "2",
        impl_->key_key + ":queue",
        impl_->key_key + ":owed",
        "queue",
        std::to_string(n),
        std::to_string(std::max<std::int64_t>(0, free_in.count())),
        std::to_string(interval.count()),
        std::to_string(reach.count()),
    };
    for (const std::int64_t lead : leads) {
        args.push_back(std::to_string(lead));
    }
    const detail::reply_ptr r = impl_->eval(impl_->buckets, std::move(args));
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->type != REDIS_REPLY_INTEGER || r->element[1]->integer < 0) {
        return std::nullopt;
    }
    return queue_turns{std::chrono::microseconds(r->element[0]->integer),
                       std::min(n, static_cast<std::size_t>(r->element[1]->integer))};
}

std::optional<limiter::line_place> limiter::line(std::int64_t ticket, std::chrono::milliseconds alive, bool leave) {
    const detail::reply_ptr r = impl_->eval(impl_->buckets, {"3", impl_->key_key + ":line", impl_->key_key + ":line:seen",
                                                             impl_->key_key + ":line:last", "line",
                                                             std::to_string(std::max<std::int64_t>(0, ticket)),
                                                             std::to_string(std::max<std::int64_t>(1, alive.count())),
                                                             leave ? "1" : "0"});
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER ||
        r->element[1]->type != REDIS_REPLY_INTEGER) {
        return std::nullopt;
    }
    return line_place{r->element[0]->integer, r->element[1]->integer};
}

std::optional<limiter::state_mark> limiter::ensure_state() {
    // The marker holds the id of the look that wrote the state: each process compares what it
    // finds with what it found before, so every process notices a loss, not only the one that
    // writes the state back.
    // A rebuild under way in another thread of this process: a take waits for it a little (it
    // usually takes milliseconds), then is refused rather than queued behind it (a database that
    // does not answer would hold every lane).
    std::unique_lock lock(impl_->state_m, std::defer_lock);
    if (!lock.try_lock_for(std::chrono::milliseconds(500))) {
        return state_mark::rebuilding;
    }
    detail::reply_ptr got = impl_->plain({"GET", impl_->state_key});
    if (!got || (got->type != REDIS_REPLY_NIL && got->type != REDIS_REPLY_STRING)) {
        return std::nullopt;
    }
    if (got->type == REDIS_REPLY_STRING) {
        impl_->state_waiting_told = false;
        std::string found(got->str, got->len);
        const std::string seen = std::exchange(impl_->state_seen, std::move(found));
        if (seen.empty() || seen == impl_->state_seen) {
            // The marker expires as the counters do, when the key is idle for their TTL (a rebuild
            // then finds nothing left to count); a process that looks keeps it alive, a minute
            // at a time.
            const auto now = std::chrono::steady_clock::now();
            if (now - impl_->state_refreshed >= std::chrono::minutes(1)) {
                impl_->plain({"PEXPIRE", impl_->state_key, std::to_string(impl_->cfg.counters_ttl_ms)});
                impl_->state_refreshed = now;
            }
            return state_mark::kept;
        }
        spdlog::error("limits: Redis lost the rate-limit state (restarted without persistence, or flushed): another "
                      "process wrote the quota counts back from the calls the database records; cooldowns, the API "
                      "key's request rate and the day's searches start again from zero; run Redis with appendonly "
                      "yes (README, Operations)");
        return state_mark::lost;
    }
    // Missing: every take of this key is refused until it is written back. One process does it
    // (the lock), at most once a second from this one; the lock's expiry frees it from one that
    // died on the way.
    const auto now = std::chrono::steady_clock::now();
    if (impl_->state_tried != std::chrono::steady_clock::time_point{} &&
        now - impl_->state_tried < std::chrono::seconds(1)) {
        return state_mark::rebuilding;
    }
    impl_->state_tried = now;
    const std::string mine = std::to_string(::getpid()) + "-" + std::to_string(now.time_since_epoch().count());
    const std::string lock_key = impl_->state_key + ":lock";
    detail::reply_ptr locked = impl_->plain({"SET", lock_key, mine, "NX", "PX", "60000"});
    if (!locked) {
        return std::nullopt;
    }
    if (locked->type != REDIS_REPLY_STATUS) {
        // Said once a loss: a process whose takes wait for another's write-back said nothing.
        if (!impl_->state_waiting_told) {
            impl_->state_waiting_told = true;
            spdlog::warn("limits: Redis holds no rate-limit state of this API key, and another process is writing "
                         "the quota counts back: no call that a quota counts is made until it has");
        }
        return state_mark::rebuilding;
    }
    std::optional<std::size_t> written = std::size_t{0};
    std::string failure;
    if (impl_->cfg.rebuild_state) {
        try {
            written = impl_->cfg.rebuild_state(*this);
            if (!written) {
                failure = "the rebuild gave up";
            }
        } catch (const std::exception& e) {
            failure = e.what();
            written.reset();
        }
    }
    auto unlock = [&] {
        detail::reply_ptr holder = impl_->plain({"GET", lock_key});
        if (holder && holder->type == REDIS_REPLY_STRING && std::string_view(holder->str, holder->len) == mine) {
            impl_->plain({"DEL", lock_key});
        }
    };
    if (!written) {
        unlock();
        // Said when it starts, then once a minute with the tries since (it is tried every second).
        ++impl_->state_failures;
        if (impl_->state_failures == 1 || now - impl_->state_failure_told >= std::chrono::minutes(1)) {
            spdlog::error("limits: Redis holds no rate-limit state of this API key, and the quota counts could not be "
                          "written back from the database ({}{}): no call that a quota counts is made until they "
                          "are (tried again a second after each try ends; a database that does not answer holds a "
                          "try up to 5 s to connect and 10 s a statement)",
                          failure,
                          impl_->state_failures == 1 ? std::string()
                                                     : "; " + std::to_string(impl_->state_failures) + " tries so far");
            impl_->state_failure_told = now;
        }
        return state_mark::failed;
    }
    if (impl_->state_failures > 1) {
        spdlog::info("limits: the quota counts were written back after {} failed tries", impl_->state_failures);
    }
    impl_->state_failures = 0;
    detail::reply_ptr set =
        impl_->plain({"SET", impl_->state_key, mine, "PX", std::to_string(impl_->cfg.counters_ttl_ms)});
    impl_->state_refreshed = std::chrono::steady_clock::now();
    unlock();
    if (!set) {
        return std::nullopt;
    }
    impl_->state_tried = {};
    impl_->state_waiting_told = false;
    const std::string seen = std::exchange(impl_->state_seen, mine);
    const std::string what =
        impl_->cfg.rebuild_state
            ? fmt::format("the quota counts of {} account action{} were written back from the calls the database "
                          "records",
                          *written, *written == 1 ? "" : "s")
            : std::string("this limiter has no database to write the counts back from: they start from zero");
    if (seen.empty()) {
        spdlog::info("limits: Redis held no rate-limit state of this API key (a first start, or Redis lost its data "
                     "before this process started): {}",
                     what);
        return state_mark::first;
    }
    spdlog::error("limits: Redis lost the rate-limit state (restarted without persistence, or flushed): {}; "
                  "cooldowns, the API key's request rate and the day's searches start again from zero; run Redis "
                  "with appendonly yes (README, Operations)",
                  what);
    return state_mark::lost;
}

bool limiter::seed(const seed_counts& counts) {
    std::vector<std::string> args = {"1",
                                     account_key(impl_->tag, counts.account_id, counts.what),
                                     "seed",
                                     std::to_string(impl_->cfg.counters_ttl_ms),
                                     std::to_string(counts.first_day),
                                     std::to_string(counts.days.size())};
    args.reserve(args.size() + 2 * counts.days.size() + 3 * counts.campaigns.size());
    for (const auto& [day, calls] : counts.days) {
        args.push_back(std::to_string(day));
        args.push_back(std::to_string(calls));
    }
    for (const auto& c : counts.campaigns) {
        args.push_back(std::to_string(c.campaign_id));
        args.push_back(std::to_string(c.day));
        args.push_back(std::to_string(c.calls));
    }
    detail::reply_ptr rep = impl_->eval(impl_->buckets, std::move(args));
    return rep && rep->type == REDIS_REPLY_INTEGER;
}

std::optional<std::vector<active_cooldown>> limiter::cooldowns() {
    detail::reply_ptr rep = impl_->eval(impl_->buckets, {"1", impl_->cooldowns_key, "cooldowns"});
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        return std::nullopt;
    }
    std::vector<active_cooldown> out;
    for (std::size_t i = 0; i + 1 < rep->elements; i += 2) {
        const redisReply* m = rep->element[i];
        if (m->type != REDIS_REPLY_STRING) {
            continue;
        }
        const std::string_view member(m->str, m->len);
        active_cooldown a;
        a.until = wall_in(std::chrono::milliseconds(int_at(rep.get(), i + 1)));
        if (member == "key") {
            a.key_scope = true;
        } else {
            // "a<action number>:<account id>"; anything else was not written by this version.
            const auto colon = member.find(':');
            if (member.size() < 3 || member[0] != 'a' || colon == std::string_view::npos || colon < 2) {
                continue;
            }
            int n = -1;
            for (char ch : member.substr(1, colon - 1)) {
                n = ch >= '0' && ch <= '9' ? (n < 0 ? 0 : n) * 10 + (ch - '0') : 1'000;
            }
            if (n < 0 || n >= static_cast<int>(action_count)) {
                continue;
            }
            a.what = static_cast<action>(n);
            a.account_id = std::string(member.substr(colon + 1));
        }
        out.push_back(std::move(a));
    }
    return out;
}

std::optional<bool> limiter::counted_under_another_key(const std::string& account_id, int max_keys) {
    // The account's key part as a glob: SCAN's MATCH treats * ? [ ] and \ as special.
    std::string part;
    for (char ch : encode_key_part(account_id)) {
        if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') {
            part += '\\';
        }
        part += ch;
    }
    const std::string ours = "orch:{" + impl_->tag + "}:";
    std::string cursor = "0";
    for (int looked = 0; looked < max_keys; looked += 1'000) {
        detail::reply_ptr r = impl_->plain({"SCAN", cursor, "MATCH", "orch:{*}:acct:" + part + ":*", "COUNT", "1000"});
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            return std::nullopt;
        }
        for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
            const redisReply* k = r->element[1]->element[i];
            if (k->type == REDIS_REPLY_STRING && std::string_view(k->str, k->len).substr(0, ours.size()) != ours) {
                return true;
            }
        }
        cursor.assign(r->element[0]->str, r->element[0]->len);
        if (cursor == "0") {
            break;
        }
    }
    return false;
}

std::optional<account_status> limiter::status(const std::string& account_id, const local_day& day,
                                              const std::array<std::optional<quota>, action_count>& quotas,
                                              std::optional<std::int64_t> first_day) {
    if (account_id.empty()) {
        return std::nullopt;
    }
    std::vector<std::string> args{std::to_string(1 + action_count), impl_->key_key};
    for (std::size_t i = 0; i < action_count; ++i) {
        args.push_back(account_key(impl_->tag, account_id, static_cast<action>(i)));
    }
    args.push_back("status");
    args.push_back(std::to_string(day.day));
    detail::reply_ptr rep = impl_->eval(impl_->buckets, std::move(args));
    if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 + action_count) {
        return std::nullopt;
    }
    using std::chrono::milliseconds;
    account_status out;
    if (auto ms = int_at(rep.get(), 0); ms > 0) {
        out.key_cooldown_until = wall_in(milliseconds(ms));
    }
    for (std::size_t i = 0; i < action_count; ++i) {
        const redisReply* a = rep->element[2 + i];
        action_status st;
        st.what = static_cast<action>(i);
        st.used_today = int_at(a, 0);
        st.used_week = int_at(a, 1);
        std::int64_t recorded_first = int_at(a, 2);
        if (first_day) {
            st.first_day = first_day;
        } else if (recorded_first >= 0) {
            st.first_day = recorded_first;
        }
        const quota q = quotas[i].value_or(impl_->cfg.actions[i].limit);
        st.limit_today = ramped_day_quota(q, impl_->cfg.actions[i].ramp, st.first_day.value_or(day.day), day.day);
        st.limit_week = q.per_week;
        st.left_today = st.limit_today < 0 ? -1 : std::max<std::int64_t>(0, st.limit_today - st.used_today);
        st.left_week = st.limit_week < 0 ? -1 : std::max<std::int64_t>(0, st.limit_week - st.used_week);
        if (auto ms = int_at(a, 3); ms > 0) {
            st.cooldown_until = wall_in(milliseconds(ms));
        }
        if (auto ms = int_at(a, 4); ms > 0) {
            st.pace_until = wall_in(milliseconds(ms));
        }
        st.streak = int_at(a, 5);
        out.actions.push_back(st);
    }
    return out;
}

}  // namespace orch::limits
