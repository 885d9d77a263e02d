// orch::limits: the rate-limit buckets in Redis, shared by every worker process on every host.
//
// One check = one round trip (and a batch of checks = one round trip: take_many pipelines them): the Lua script schema/redis/buckets.lua (operation "take"; loaded
// once, called by SHA, reloaded on NOSCRIPT) checks and takes, atomically, everything one API call
// needs:
//   - the API key's request rate (GCRA bucket) and the key's cooldown after RATE_LIMITED;
//   - the cooldown of (account, action);
//   - the account's quota for the action per local day and per rolling week (that day and the
//     6 before), with a ramp-up for new accounts; shared by every campaign using the account;
//   - an optional per-campaign cap on that account (day / week);
//   - pacing: after each call the account waits window / day quota * U(0.5, 1.5) before the next
//     call of that action, so the day's quota spreads over the working hours with human gaps.
// All or nothing: when anything denies, nothing is taken and the verdict says the earliest time
// a retry can succeed (the longest of the waits) and why, so the scheduler sets next_run_at to it.
//
// Times (rate, cooldowns, pacing) come from Redis TIME, so all hosts agree; waits are returned
// relative ("retry after N ms"), so the caller's clock skew does not matter. The quota counters are
// keyed by the caller's local day number (days since 1970-01-01 in the account's time zone, its
// quota day; see day_in_zone), so "today" follows the account's calendar, whichever campaign calls.
// The next day's counter counts as today's too: it holds calls only after the account's zone moved
// west to an earlier date (buckets.lua).
//
// Keys (Redis Cluster ready): every key of one API key starts with orch:{<tag>}: where tag is the
// first 16 hex digits of SHA-256(api key) - never the key itself. All buckets of one API key then
// live in one hash slot, so one script can touch the key scope and the account scope at once.
//   orch:{tag}:key                      key scope: GCRA state, cooldown, hit streak
//   orch:{tag}:acct:<account>:<action>  account+action scope: 8 day slots (the rolling week),
//                                       pacing, first day (ramp-up), cooldown, hit streak, and
//                                       the day slots of each campaign using the account
// (account ids are percent-encoded: ':' '%' '{' '}' and bytes outside 0x21..0x7e). Each value is
// a fixed binary record (see buckets.lua; status() is the readable view), so a take costs 4 Redis
// calls (TIME, MGET, 2 SET with their TTL) and no field names. Idle keys expire: the key scope
// idle_ttl_ms after its last take, the account records counters_ttl_ms (8 days) after.
//
// Redis unavailable: fail closed. take() answers reason::unavailable with a retry a few seconds
// ahead (no API call that needs a bucket goes out), the outage is logged once when it starts and
// once when it ends, and the limiter reconnects by itself (at most one attempt a second). Nothing
// is lost: a denied call is simply asked again later.
//
// Thread-safety: a limiter is used by many threads at once (lane threads); it holds a small pool
// of synchronous hiredis connections. Every call blocks for at most the command timeout.
#pragma once

#include "campaigns/machine.hpp"
#include "engine/limits/redis_url.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch::limits {

// What a quota counts. The names are those of a campaign file's `limits` map.
enum class action : std::uint8_t {
    invite,
    send,              // a message
    visit,             // a profile visit
    withdraw,          // an invitation withdrawn
    search,            // a people search
    check_invitation,  // read-only checks (key rate and cooldowns only, by default)
    get_conversation,  // read-only reconciliation of a send
};
inline constexpr std::size_t action_count = 7;
const char* to_string(action a);
std::optional<action> parse_action(std::string_view name);
// The action a step's API call is counted as. A reconciliation is the read-only check the
// executor makes (check_invitation for invite/withdraw, get_conversation for send).
action action_of(campaigns::call_kind kind, bool reconcile);

// -1 = no limit.
struct quota {
    std::int64_t per_day = -1;
    std::int64_t per_week = -1;
};

// New accounts: the day quota on the first day is start_per_day, then grows by step_per_day each
// day up to the quota. start_per_day 0 = no ramp-up.
struct ramp_up {
    std::int64_t start_per_day = 0;
    std::int64_t step_per_day = 0;
};

struct action_defaults {
    quota limit;
    ramp_up ramp;
};

// Defaults from common practice for a paid account (all configurable):
//   invite            80/day, 200/week; new accounts start at 20/day, +10/day
//   send (messages)   150/day;          new accounts start at 50/day, +20/day
//   visit             100/day;          new accounts start at 40/day, +15/day
//   search            300/day
//   withdraw          50/day
//   check_invitation, get_conversation: no quota (the key's request rate still applies)
std::array<action_defaults, action_count> default_actions();

class limiter;

// What Postgres records of one (account, action)'s calls, for a Redis that lost the limits' state
// (limiter::ensure_state): the calls of each quota day that took effect or may have, the
// campaigns' among them, and the day of the account's first such call (its ramp-up's start).
struct seed_counts {
    std::string account_id;
    action what = action::invite;
    std::int64_t first_day = -1;                           // -1: unknown
    std::vector<std::pair<std::int64_t, std::int64_t>> days;  // (day, calls)
    struct campaign_day {
        std::int64_t campaign_id = 0;
        std::int64_t day = 0;
        std::int64_t calls = 0;
    };
    std::vector<campaign_day> campaigns;
};

struct settings {
    std::string redis_url;   // redis://[[user]:password@]host[:port][/db]
    std::string api_key;     // only its hash is used (the key tag)
    // The API key's request rate (GCRA): sustained rate and burst. 0 = no rate bucket.
    // Default: 300 per minute, the one documented number (V1).
    double key_requests_per_s = 5.0;
    std::int64_t key_burst = 10;
    std::array<action_defaults, action_count> actions = default_actions();
    // Cooldown after RATE_LIMITED without Retry-After: full-jitter exponential backoff.
    std::int64_t backoff_base_ms = 2'000;
    std::int64_t backoff_cap_ms = 600'000;
    std::int64_t backoff_min_ms = 1'000;
    // A larger Retry-After is clamped (the client believes up to 8 days: a week's quota and margin).
    std::int64_t retry_after_max_ms = 8LL * 86'400'000;
    // Pacing: gap = working window / day quota * uniform(pacing_factor_min, pacing_factor_max).
    double pacing_factor_min = 0.5;
    double pacing_factor_max = 1.5;
    std::int64_t idle_ttl_ms = 3'600'000;           // key scope expiry; memory of a hit streak
    std::int64_t counters_ttl_ms = 8LL * 86'400'000;  // day counters (> 7 days: the rolling week)
    std::int64_t connect_timeout_ms = 500;
    std::int64_t command_timeout_ms = 500;
    std::int64_t unavailable_retry_ms = 3'000;      // retry_after of a fail-closed verdict
    std::int64_t reconnect_interval_ms = 1'000;     // at most one connection attempt per interval
    std::size_t pool_size = 8;                      // idle connections kept
    // Writes the quota counts back into a Redis that holds no limits' state (a first start, a
    // flush, a restart without persistence) from what the database records, through
    // limiter::seed; the number of (account, action) records written; nullopt, or an exception
    // saying what failed, when it could not (the takes stay refused, fail closed, and it is tried
    // again a second later). Unset (the
    // tests of the limiter alone, the benches): a missing state is marked without counts.
    std::function<std::optional<std::size_t>(limiter&)> rebuild_state;
};
// Every problem of `s`, empty when valid.
std::vector<std::string> validate(const settings& s);

// The local calendar day of the quota counters.
struct local_day {
    std::int64_t day = 0;                 // days since 1970-01-01 in the time zone
    std::chrono::milliseconds left{0};    // until that day ends (> 0)
    std::chrono::milliseconds since_midnight{0};  // local time of day (wall clock)
};
// nullopt when the time zone is unknown.
std::optional<local_day> day_in_zone(std::chrono::system_clock::time_point now, const std::string& time_zone);
// "2026-11-22" of a day number (local_day::day).
std::string iso_date(std::int64_t day);

// One API call to check and take.
// A call's lead in the API key's queue of turns for its places (engine/limits_gate), which every
// worker of the key shares in Redis: a lead due for the first time waits while a queued lead's
// turn has come and that lead has not come back for it (for key_owed_grace, unless more than
// key_owed_misses of the last 8 turns that passed were missed); a queued lead's take is done with
// its turn. none: the take looks at neither (no queue in use).
enum class key_queue_role : std::uint8_t { none, first_arrival, queued };
inline constexpr std::chrono::milliseconds key_owed_grace{1000};
inline constexpr int key_owed_misses = 2;

struct check {
    std::string account_id;                // required
    action what = action::check_invitation;
    // 0 = none. A campaign's calls on the account are counted only while the check carries a
    // campaign cap (a cap added mid-day starts counting then).
    std::int64_t campaign_id = 0;
    std::optional<quota> account_quota;    // this account's quota for the action (else the default)
    std::optional<quota> campaign_cap;     // this campaign's cap on the account (-1 fields = none)
    local_day day;
    // Length of the campaign's working window today; 0 = no pacing.
    std::chrono::milliseconds working_window{0};
    // What is left of today's working window (0 = unknown): the gap after a take is then at most
    // that time over the calls the day quota still allows, so the quota fits inside the window
    // (an account that fell behind, e.g. started late in the day, gets shorter gaps).
    std::chrono::milliseconds window_left{0};
    // The account's first day (ramp-up); nullopt = the day Redis first saw it take this action
    // (the record expires with the counters, so an account idle for 8 days ramps up again).
    // Ramp-up is per (account, action).
    std::optional<std::int64_t> first_day;
    // The lead the call is for, and its role in the key's queue of turns (key_queue_role).
    std::int64_t lead = 0;
    key_queue_role queue_role = key_queue_role::none;
    // Requests the call makes in the key's rate (a follow-up's conversation read and its send,
    // a withdraw's look-up and the withdrawal: 2). A take needs that many places free, counted
    // against the key's burst, and takes them all; an unsend gives them all back. With a burst
    // of 1 the two requests still leave back to back.
    int key_places = 1;
};

enum class reason : std::uint8_t {
    none,
    rate,              // the API key's request rate
    cooldown_key,      // the API key's cooldown after RATE_LIMITED
    cooldown_account,  // the (account, action) cooldown after RATE_LIMITED
    day_quota,         // the account's quota for today (frees when the local day ends)
    week_quota,        // the account's rolling-week quota
    campaign_quota,    // the campaign's cap on this account (day or week)
    pacing,            // the gap since the account's last call of this action
    unavailable,       // Redis did not answer: fail closed
    bad_input,         // the check itself is invalid (empty account, bad day); retry will not help
};
const char* to_string(reason r);

struct verdict {
    bool allowed = false;
    reason why = reason::none;
    std::chrono::milliseconds retry_after{0};  // when !allowed: the earliest a retry can succeed
    bool key_streak = false;      // a RATE_LIMITED streak exists: report success to reset it
    bool account_streak = false;
    std::int64_t used_today = 0;  // the account's count for the action (after the take)
    std::int64_t used_week = 0;
    // why == rate: the rate had a place, but a queued lead's turn has come for it
    // (key_queue_role::first_arrival).
    bool for_queued_lead = false;
};

enum class scope : std::uint8_t { key, account_action };

struct action_status {
    action what = action::invite;
    std::int64_t used_today = 0;
    std::int64_t used_week = 0;
    std::int64_t limit_today = -1;   // effective day quota (ramp-up applied), -1 = none
    std::int64_t limit_week = -1;
    std::int64_t left_today = -1;    // -1 = no limit
    std::int64_t left_week = -1;
    std::optional<std::int64_t> first_day;
    std::optional<std::chrono::system_clock::time_point> cooldown_until;
    std::optional<std::chrono::system_clock::time_point> pace_until;
    std::int64_t streak = 0;
};

struct account_status {
    std::optional<std::chrono::system_clock::time_point> key_cooldown_until;
    std::vector<action_status> actions;  // one per action, in enum order
};

// A scope cooling down after RATE_LIMITED, as the cooldown index lists it.
struct active_cooldown {
    bool key_scope = false;   // the API key's; else (account_id, what)
    std::string account_id;
    action what = action::check_invitation;
    std::chrono::system_clock::time_point until;
};

// The share of key_requests_per_s that the key's rate bucket runs at, learned from the API's
// RATE_LIMITED answers of the key's scope that carry no Retry-After. The V2 rate is not published and
// no Retry-After was seen on the real service (api-facts section 4), whose guidance is "slow down":
// a key set above the API's rate met a 429 on a third of its requests for as long as it ran, each
// cooldown's end sending at the full rate again. Each such answer cuts the share by a quarter, once
// per second at most (the calls in flight of one burst answer together), down to 5 %, and the
// key's burst with it; a minute
// without one gives back 10 points. A 429 with Retry-After says when to come back, not how fast,
// and cuts nothing. Each process learns from the 429s its own calls meet (a key over its rate
// refuses every process's requests, so each meets them); none keeps the share across a restart
// (it learns again from the first 429s). Lock-free to read: every take reads it.
class key_rate_share {
public:
    using clock = std::chrono::steady_clock;
    static constexpr double floor = 0.05;
    static constexpr double cut_to = 0.75;
    static constexpr double recovery_per_minute = 0.10;
    static constexpr std::chrono::milliseconds episode{1000};

    // The share at `now`, in [floor, 1].
    double at(clock::time_point now) const;
    // A RATE_LIMITED of the key's scope without Retry-After at `now`: the share after the cut, or
    // nullopt when the last cut is less than an episode old (the same burst).
    std::optional<double> cut(clock::time_point now);

private:
    mutable std::atomic<double> after_cut_{1.0};  // at() sets it back to 1 once grown back
    std::atomic<std::int64_t> cut_at_ns_{0};  // steady clock; 0: never cut
    std::mutex cut_mutex_;
};

class limiter {
public:
    // No connection is made yet. Preconditions: validate(s) is empty (asserted).
    explicit limiter(settings s);
    ~limiter();
    limiter(const limiter&) = delete;
    limiter& operator=(const limiter&) = delete;

    // Checks and, when allowed, takes. One EVALSHA round trip (two more after a NOSCRIPT).
    // Denied with bad_input (and logged) when the account is empty, the day number is outside
    // [7, 1000000) or day.left outside (0, 26 h].
    // Concurrent take() calls on one limiter share round trips: while one caller's round trip is
    // under way, the checks of the callers that arrive meanwhile queue, and the next of them
    // sends them all as one take_many (in arrival order). Each check still rides in exactly one
    // round trip; Redis runs the batch's scripts back to back instead of waiting for a reply
    // between them, which is what keeps the latency flat with many callers.
    verdict take(const check& c);

    // take() for every check of a batch in ONE round trip: the EVALSHAs are pipelined on one
    // connection and Redis runs them in the order given, so checks of the same account and action
    // in one batch are counted one after the other exactly as sequential take() calls would be
    // (quota 5, 8 checks: the first 5 allowed, the last 3 denied). Returns one verdict per check,
    // in order. A bad check gets bad_input (and is not sent); an empty batch makes no round
    // trip. After a NOSCRIPT (a flushed or restarted Redis) the script is loaded and the checks
    // that got NOSCRIPT are sent again, in their order (one or two more round trips). Fail closed
    // as take(): Redis down or a connection failing before a check's reply was read -> that
    // check (every check when nothing was sent) is `unavailable`; the checks whose replies were
    // read keep their verdicts (they were taken).
    std::vector<verdict> take_many(std::span<const check> checks);

    // After a call that took: the API answered RATE_LIMITED. Sets the cooldown of `where`
    // (Retry-After when given, else backoff on the streak) and returns its length, or nullopt
    // when Redis is unavailable.
    std::optional<std::chrono::milliseconds> rate_limited(const check& c, scope where,
                                                          std::optional<std::chrono::milliseconds> retry_after);
    // The key's rate bucket's emission interval now: key_emission_interval() over the learned
    // share (key_rate_share); 0 when the key has no rate.
    std::chrono::microseconds key_interval() const;
    // The same for a share already read (one take reads it once).
    std::chrono::microseconds key_interval_at(double share) const;
    // The learned share of the key's rate now (1 until a RATE_LIMITED without Retry-After).
    double key_share() const;
    // A RATE_LIMITED of the key's scope without Retry-After met by this process's call (called
    // by rate_limited()): cuts the share (logged) unless the last cut is under a second old. The
    // requests a minute the key is sent at after the cut, or nullopt when it cut nothing.
    std::optional<double> slow_down();
    // After a successful call: resets the streaks `taken` saw (no round trip when it saw none).
    void succeeded(const check& c, const verdict& taken);
    // The call surely had no effect: gives back its place in today's counters (account and
    // campaign). False when Redis is unavailable.
    bool refund(const check& c);
    // A taken call whose outcome is unknown (its answer lost, a 5xx to a write): its place is kept,
    // as the platform may have counted it, and remembered in Redis for 8 days under its lead and
    // action, so that the check that later finds it without effect gives the place back, in
    // whichever process makes that check (forget_uncertain). A second one of the same lead and
    // action replaces the first. False when Redis is unavailable or `lead` is not positive.
    bool remember_uncertain(std::int64_t lead, const check& c);
    // The remembered take of `lead`'s `what` call, forgotten (so given back once): the account,
    // action, quota day and campaign of the take, for refund(); nullopt when none is remembered or
    // Redis is unavailable.
    std::optional<check> forget_uncertain(std::int64_t lead, action what);
    // The taken call will not be sent after all (the ledger refused it, or its cycle rolled back):
    // gives back its place in today's counters, its place in the key's request rate, and, when
    // the take was paced (it set a pacing gap), that gap. False when Redis is unavailable.
    bool unsend(const check& c, bool paced);
    // Turns for the key's places, one per lead of `leads` in order, from the queue every worker of
    // the API key shares: one emission interval apart, from the later of `free_in` from now (when
    // the rate frees its next place) and the queue's end, as many as fit within `reach` from now.
    // Each turn given is kept for its lead (key_queue_role). nullopt when Redis is unavailable.
    struct queue_turns {
        std::chrono::microseconds first{0};  // from now (Redis's clock) to the first turn given
        std::size_t given = 0;
    };
    std::optional<queue_turns> queue(std::span<const std::int64_t> leads, std::chrono::microseconds free_in,
                                     std::chrono::microseconds reach);

    // The line of operators' commands (the CLI) waiting for the key's places, shared in Redis by
    // every process of the API key, so that commands waiting at once are served in the order
    // they asked rather than racing for each place that frees. ticket 0 joins at the end; a
    // ticket is refreshed by each call and stays in line for `alive` without one; `leave`
    // leaves. nullopt when Redis is unavailable.
    struct line_place {
        std::int64_t ticket = 0;
        std::int64_t ahead = 0;  // tickets before this one still in line
    };
    std::optional<line_place> line(std::int64_t ticket, std::chrono::milliseconds alive, bool leave = false);
    // How the operators' waits use the line (the CLI's calls and an apply's audience search): a
    // ticket stays `line_alive` without word, so a command killed while it waits holds the others
    // up that long at most; a waiting command speaks at least every `line_refresh`, and one with
    // others ahead looks again every `line_look_again`.
    static constexpr std::chrono::milliseconds line_alive{15'000};
    static constexpr std::chrono::milliseconds line_refresh{5'000};
    static constexpr std::chrono::milliseconds line_look_again{100};

    // Per action: used and left today and this week, ramp-up, cooldown and pacing ends.
    // `quotas` overrides the defaults per action (index = action), as in check::account_quota.
    // nullopt when Redis is unavailable or the account id is empty.
    std::optional<account_status> status(const std::string& account_id, const local_day& day,
                                          const std::array<std::optional<quota>, action_count>& quotas = {},
                                          std::optional<std::int64_t> first_day = std::nullopt);
    // Whether Redis keeps counters of `account_id` under another API key than this limiter's (the
    // limits are kept per key): an `accounts list` run with another key than the workers' reads
    // every quota unused. A bounded SCAN (at most `max_keys` keys looked at): false when none was
    // found within it, nullopt when Redis is unavailable.
    std::optional<bool> counted_under_another_key(const std::string& account_id, int max_keys = 200'000);

    // Every scope cooling down now, whoever recorded it, in one round trip (rate_limited() keeps
    // an index of the cooldowns it sets). nullopt when Redis is unavailable.
    std::optional<std::vector<active_cooldown>> cooldowns();

    // Whether Redis still holds what the limiters of this key wrote, and the state written back
    // when it does not. A marker holds the id of the process's look that last wrote the state; a
    // take finds it in the same read as its records, and is refused (fail closed) while it is
    // missing, so that no call counts from zero. When it is missing, one process (a lock in
    // Redis) runs settings::rebuild_state, then sets the marker; the others' takes wait.
    //   kept        the marker this process saw before (or the first it saw, set by another)
    //   first       this process's first look found none, and it wrote the state: a first start,
    //               or Redis lost its data before this process started
    //   lost        the marker went, or changed, since this process's last look: Redis was
    //               flushed or restarted without persistence (this process or another wrote the
    //               state back)
    //   rebuilding  missing, and another process holds the lock
    //   failed      missing, and the rebuild failed (logged)
    // Each outcome but kept is logged here. nullopt when Redis is unavailable.
    enum class state_mark { kept, first, lost, rebuilding, failed };
    std::optional<state_mark> ensure_state();
    // Writes one (account, action)'s counts: each day's count becomes the larger of Redis's and
    // the record's, the campaigns' alike, and the first day the earlier. False when Redis is
    // unavailable.
    bool seed(const seed_counts& counts);

private:
    // One round trip of take_many; the indexes of the checks refused for want of the state's
    // marker go to `missing` (their verdicts fail closed).
    std::vector<verdict> take_round(std::span<const check> checks, std::vector<std::size_t>& missing);

public:

    // True while the limiter believes Redis is down (between the failure and the next success).
    bool unavailable() const;
    // The key tag of this limiter's API key (for tests and the bench).
    const std::string& tag() const;
    // The EVALSHA command take(c) sends (the bench replays it with redis-benchmark). `c` must be
    // valid (a non-empty account, 0 < day.left <= 26 h).
    std::vector<std::string> take_command(const check& c) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// Pure helpers (unit-tested).

// The hash tag of an API key: the first 16 hex digits of its SHA-256.
std::string key_tag(std::string_view api_key);
// Account ids percent-encoded for use inside a key (see above).
std::string encode_key_part(std::string_view part);
std::string key_scope_key(const std::string& tag);
std::string account_key(const std::string& tag, std::string_view account_id, action a);
// Where limiter::remember_uncertain keeps a lead's uncertain take of an action.
std::string uncertain_key(const std::string& tag, std::int64_t lead, action a);

// Full-jitter backoff as cooldown.lua computes it: max(min, floor(jitter * min(cap, base * 2^streak))).
std::int64_t backoff_ms(std::int64_t base_ms, std::int64_t cap_ms, std::int64_t min_ms, int streak, double jitter);
// The key's request-rate bucket's emission interval (1 / key_requests_per_s); 0 when the key has
// no rate.
std::chrono::microseconds key_emission_interval(const settings& s);

// Effective day quota on `day` for an account first seen on `first_day` (ramp-up applied).
std::int64_t ramped_day_quota(const quota& q, const ramp_up& r, std::int64_t first_day, std::int64_t day);

}  // namespace orch::limits
