// orch::engine limits_gate: the call gate (call_gate.hpp) backed by the Redis rate-limit
// buckets of engine/limits. Before each call of a step it takes (one round trip for a whole
// batch of calls: before_many pipelines them), the API key's request rate, the (account, action) quota of the local day and rolling week, the
// campaign's cap on that account, the pacing gap and any RATE_LIMITED cooldown; a denial parks
// the lead until the moment a token frees, with the reason in its timeline ("invite day quota
// of account X"), or for 3-8 s when this process's calls in flight hold places of the quota that
// denied it and may give them back (held_). After the call it records RATE_LIMITED cooldowns for the whole scope (the key,
// or the account and action), resets hit streaks on success, and gives the quota back for a
// call that surely had no effect.
//
// The quotas: defaults per action from the settings (common practice, see limits.hpp), replaced
// per account by the account's overrides (engine/account_quotas.hpp, which the claim reads with
// each enrollment: call_target::account_quotas), tightened per campaign by the campaign file's
// `limits` (action -> per_day / per_week), and shared by every campaign that uses the account.
// The day is the account's (call_target::account_time_zone: accounts.time_zone, UTC when not
// chosen), whichever campaign calls, so campaigns in two time zones share one day quota; pacing
// spreads the day quota over the calling campaign's working window.
#pragma once

#include "engine/account_quotas.hpp"
#include "engine/call_gate.hpp"
#include "engine/clock.hpp"
#include "engine/limits/limits.hpp"
#include "engine/random.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <optional>
#include <random>
#include <thread>
#include <set>
#include <unordered_map>

namespace orch::engine {

class limits_gate final : public call_gate {
public:
    // `pacing`: spread each day quota over the campaign's working window (else calls go as fast
    // as the quotas and the key rate allow).
    // `rng` draws the wake-ups' jitter (null: seeded from std::random_device).
    limits_gate(limits::settings s, bool pacing, const clock_port& clock = system_clock(),
                std::unique_ptr<random_port> rng = nullptr);
    ~limits_gate() override;
    limits_gate(const limits_gate&) = delete;
    limits_gate& operator=(const limits_gate&) = delete;

    gate_decision before(const call_target& target, const campaigns::campaign& campaign,
                         const campaigns::api_call& call, campaigns::time_point now) override;
    // The whole batch in one Redis round trip (limiter::take_many).
    std::vector<gate_decision> before_many(std::span<const gate_request> requests,
                                           campaigns::time_point now) override;
    std::optional<campaigns::time_point> after(const call_target& target, const campaigns::campaign& campaign,
                                              const campaigns::api_call& call, const call_outcome& outcome) override;
    void released(const call_target& target, const campaigns::campaign& campaign,
                  const campaigns::api_call& call) override;
    // The send-time check: this process's mirror of the cooldowns and unavailable accounts,
    // updated the instant an answer reports one (answered()) and refreshed from Redis every
    // mirror_refresh by a thread of its own, which reads the index of every scope cooling down
    // in one round trip (what other processes wrote): no Redis round trip on the call path. A held call is looked at again at the scope's end plus full jitter over a window of
    // the key bucket's burst at its rate (1 to 30 s), so parked leads do not all wake at once.
    std::optional<campaigns::time_point> hold(const call_target& target, const campaigns::api_call& call,
                                              campaigns::time_point now) override;
    // Starts the mirror's refresher now (else at the first hold()): a process looks for the
    // limits' state in Redis from its start, and so tells a loss before its first call.
    void start_refresher();
    void answered(const call_target& target, const campaigns::campaign& campaign, const campaigns::api_call& call,
                  const call_outcome& outcome) override;
    std::string hold_reason(const call_target& target, const campaigns::api_call& call,
                            campaigns::time_point now) override;
    void account_changed(const std::string& account_id, bool available, campaigns::time_point now,
                         std::int64_t login = 0) override;
    // The lead gives up its turn for the key's rate (key_rate_turn): a later denial may take it.
    void waits_elsewhere(const call_target& target, campaigns::time_point now) override;
    static constexpr std::chrono::milliseconds mirror_refresh{100};
    // How long an account is held after it was reported unavailable, unless it is reported
    // available before: its rows are parked in the database meanwhile, so this covers only the
    // calls already queued, and a missed notification of its return costs at most this long.
    static constexpr std::chrono::minutes unavailable_hold{10};

    limits::limiter& limiter() { return limiter_; }

    // How long the key's place of a queued lead's turn is kept for it (key_places_owed): a lane
    // picks its due leads up to an idle poll (200 ms by default) late.
    static constexpr std::chrono::milliseconds key_owed_grace = limits::key_owed_grace;
    struct key_queue_counts {
        std::uint64_t places_kept = 0;   // first arrivals denied because a queued lead's turn had come
        std::uint64_t turns_missed = 0;  // turns whose lead did not come back within the grace
    };
    key_queue_counts key_queue() {
        std::lock_guard lock(mutex_);
        return {key_places_kept_, key_turns_missed_};
    }

    // The quotas the account's overrides give (`text`: accounts.quotas as the claim read it, ""
    // for none), nullptr when there are none. Parsed once per distinct (account, text), since the
    // claim reads the text with every enrollment; an unreadable text is logged once and ignored
    // (the defaults hold). Thread-safe.
    std::shared_ptr<const effective_quotas> quotas_of(const std::string& account_id, const std::string& text) const;

private:
    // `short_waits`: per (account, action), the denials of this batch already told to look again
    // soon for held places (none beyond the places held).
    gate_decision decision_of(const limits::check& c, const limits::verdict& v, campaigns::time_point now,
                              std::map<std::pair<std::string, limits::action>, std::size_t>* short_waits = nullptr);
    // When `lead`, which the key's rate denied (free_at: when the rate's next place frees), comes
    // back: its turn for the key's places (the one it has, one ahead of the queue, or one a lead
    // here gave up), or nullopt when it takes a turn at the queue's end (queue_at_end).
    std::optional<campaigns::time_point> key_rate_turn(std::int64_t lead, campaigns::time_point free_at,
                                                       campaigns::time_point now);
    // Turns at the end of the queue every worker of the API key shares, for `leads`, denied by
    // `denied` (until: when the rate frees its next place; set to each lead's turn).
    void queue_at_end(std::span<const std::int64_t> leads, std::span<gate_decision* const> denied,
                      campaigns::time_point now);
    // Per (lead, call_target::key_queued): whether it is denied here because the key's place of
    // `now` is owed to a queued lead.
    std::vector<bool> key_places_owed(std::span<const std::pair<std::int64_t, bool>> leads, campaigns::time_point now);
    // `lead` was allowed, or held back for another reason: it has no turn any more.
    void leave_key_queue(std::int64_t lead);
    // A take the key's rate denied: the key is busy, and its takes name their leads
    // (key_queue_role), until past the last turn the queue can give from `now`; counts a place
    // Redis kept for a queued lead.
    void note_key_busy(bool for_queued_lead, campaigns::time_point now);
    std::optional<limits::check> make_check(const call_target& target, const campaigns::campaign& campaign,
                                            const campaigns::api_call& call, campaigns::time_point now) const;

    const clock_port& clock_;
    std::array<limits::action_defaults, limits::action_count> defaults_;  // before limiter_ (built from the same settings)
    limits::limiter limiter_;
    bool pacing_ = true;
    std::mutex mutex_;
    // Per take (gate_decision::take): what the call's take used, and the local day it counted in
    // (a refund gives back that day's place, also when the call ends after midnight). Keyed by
    // the take, not the enrollment: a row claimed again while its first call still waited (its
    // lease ended) has two takes, and each call's end gives back its own.
    struct taken_call {
        limits::verdict verdict;
        limits::local_day day;
        std::string account_id;
        limits::action what = limits::action::check_invitation;
        std::int64_t campaign_id = 0;
        campaigns::time_point at{};  // when it was taken
        bool paced = false;          // it set a pacing gap (a working window was given)
    };
    std::unordered_map<std::uint64_t, taken_call> taken_;
    std::uint64_t last_take_ = 0;  // under mutex_
    // The takes of taken_ per (account, action). A quota that denies while some of its places are
    // held here may get them back (a call that fails without effect, or that the ledger refuses
    // in the same cycle), so as many of its denials as it has such places are a short wait, not
    // one until the quota's next day (held_places). A take counts for the quota when it is in
    // the denied check's day (the account's quota day), for a campaign cap when it is the same
    // campaign's, and only while it is younger than held_for: older, it is no call in flight but
    // a take whose end went unheard.
    std::map<std::pair<std::string, limits::action>, std::set<std::uint64_t>> held_;  // under mutex_
    static constexpr std::chrono::minutes held_for{10};
    // Under mutex_: the takes held here that the denial of `c` for `why` may get back.
    std::size_t held_places(const limits::check& c, limits::reason why, campaigns::time_point now) const;
    // Removes and returns a take, if this gate made it and has not forgotten it yet.
    std::optional<taken_call> forget(std::uint64_t take);
    struct parsed_quotas {
        std::string text;
        std::shared_ptr<const effective_quotas> quotas;
    };
    // The send-time mirror (hold/answered).
    struct mirror_state {
        campaigns::time_point key_until{};
        std::map<std::pair<std::string, limits::action>, campaigns::time_point> account_until;
        std::map<std::string, campaigns::time_point> unavailable;
        // The latest login each account was reported available under (account_changed): an
        // ACCOUNT_INACTIVE answer to a call claimed under another, earlier one holds nothing.
        std::map<std::string, std::int64_t> logins;
        std::set<std::uint64_t> cooled;  // takes whose RATE_LIMITED answered() recorded
    };
    void refresh_mirror();  // the refresher thread
    std::mutex mirror_mutex_;
    std::condition_variable mirror_wake_;
    bool stopping_ = false;  // under mirror_mutex_
    mirror_state mirror_;
    campaigns::time_point key_cooldown_told_{};  // the key cooldown's end the log has been told of
    std::once_flag refresher_started_;
    std::thread refresher_;
    std::chrono::milliseconds jitter_window_{1000};
    campaigns::time_point key_queue_end_{};  // under mutex_: the local queue's end, while Redis does not answer
    std::unordered_map<std::int64_t, campaigns::time_point> key_turns_;  // under mutex_: lead -> its turn
    campaigns::time_point key_busy_until_{};  // under mutex_: note_key_busy
    campaigns::time_point key_front_end_{};  // under mutex_: the first turn ahead of the queue not given yet
    std::multiset<campaigns::time_point> key_turns_given_up_;  // under mutex_: turns ahead whose leads wait elsewhere
    std::size_t key_turns_swept_ = 0;  // under mutex_: key_turns_'s size after its last sweep
    // Under mutex_: the turns of key_turns_ as (turn, lead), until their lead comes back or
    // key_owed_grace after the turn (key_places_owed).
    std::set<std::pair<campaigns::time_point, std::int64_t>> key_owed_;
    std::uint8_t key_turn_misses_ = 0;  // under mutex_: the last 8 turns that passed, 1 = its lead did not come
    std::uint64_t key_turns_missed_ = 0;  // under mutex_: turns whose lead did not come within the grace
    std::uint64_t key_places_kept_ = 0;   // under mutex_: first arrivals denied for a queued lead's place
    static constexpr int key_owed_misses = limits::key_owed_misses;
    static constexpr std::chrono::minutes key_queue_horizon{10};
    static constexpr int key_queue_turns = 10'000;
    std::unique_ptr<random_port> jitter_rng_;  // under mirror_mutex_
    mutable std::mutex quotas_mutex_;
    mutable std::unordered_map<std::string, parsed_quotas> quotas_;  // per account: the last text seen
};

// The action whose scope a RATE_LIMITED outcome cools down: the refused request's
// (call_outcome::limited_request), else the call's.
limits::action cooldown_action(const campaigns::api_call& call, const call_outcome& outcome);

// What is left of a campaign's working window at a local time of day: the whole window before
// it starts, 0 once it has ended (the limiter then paces over the whole window, as without it).
std::chrono::milliseconds window_left(const campaigns::schedule& schedule, std::chrono::milliseconds since_midnight);

// The limiter settings the orchestrator's settings describe.
limits::settings limiter_settings(const struct settings& s);

// Eight hex digits naming the settings every process sharing the buckets must agree on: the
// key's rate and burst, each action's quotas and whether new accounts ramp up (pacing is each
// process's own). Processes put it in their session names (engine/name_lane_session) so that one
// started with other values is told.
std::string limits_fingerprint(const struct settings& s);
// The warning a process (`who`: "worker", "serve: inbox sender") gives when `processes` other
// worker or serve processes on the database run with another limits fingerprint.
std::string limits_differ_warning(std::string_view who, std::int64_t processes);

}  // namespace orch::engine
