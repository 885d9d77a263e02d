#include "engine/limits_gate.hpp"

#include "api/text.hpp"

#include "engine/config.hpp"
#include "engine/limits_rebuild.hpp"
#include "engine/outreach/errors.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <limits>

namespace orch::engine {

namespace cs = campaigns;

namespace {
// A RATE_LIMITED answer's scope: the account's action when its message names the account,
// else the whole key (outreach::limit_names_account).
limits::scope limit_scope(const call_outcome& outcome, const call_target& target) {
    return outreach::limit_names_account(outcome.error_message, target.account_id) ? limits::scope::account_action
                                                                                   : limits::scope::key;
}
}  // namespace

limits::settings limiter_settings(const settings& s) {
    limits::settings l;
    l.redis_url = s.redis_url;
    l.api_key = s.api_key;
    l.key_requests_per_s = static_cast<double>(s.key_requests_per_minute) / 60.0;
    l.key_burst = s.key_burst;
    l.backoff_base_ms = s.retry_base_ms;
    l.backoff_cap_ms = s.retry_cap_ms;
    auto set = [&](limits::action a, std::int64_t per_day, std::int64_t per_week) {
        auto& d = l.actions[static_cast<std::size_t>(a)];
        d.limit.per_day = per_day;
        d.limit.per_week = per_week;
        if (!s.ramp_up) {
            d.ramp = {};
        }
    };
    set(limits::action::invite, s.invite_per_day, s.invite_per_week);
    set(limits::action::send, s.send_per_day, s.send_per_week);
    set(limits::action::visit, s.visit_per_day, s.visit_per_week);
    set(limits::action::withdraw, s.withdraw_per_day, s.withdraw_per_week);
    set(limits::action::search, s.search_per_day, s.search_per_week);
    if (!s.database_url.empty()) {
        l.rebuild_state = [url = s.database_url](limits::limiter& lim) { return rebuild_limits_state(url, lim); };
    }
    if (!s.ramp_up) {
        for (auto& d : l.actions) {
            d.ramp = {};
        }
    }
    return l;
}

std::string limits_fingerprint(const settings& s) {
    const std::string text =
        fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {}", s.key_requests_per_minute, s.key_burst, s.invite_per_day,
                    s.invite_per_week, s.send_per_day, s.send_per_week, s.visit_per_day, s.visit_per_week,
                    s.withdraw_per_day, s.withdraw_per_week, s.search_per_day, s.search_per_week, s.ramp_up);
    std::uint32_t h = 2166136261u;  // FNV-1a: the same digits in every build and process
    for (const unsigned char c : text) {
        h = (h ^ c) * 16777619u;
    }
    return fmt::format("{:08x}", h);
}

std::string limits_differ_warning(std::string_view who, std::int64_t processes) {
    return fmt::format(
        "{}: {} other worker or serve process(es) on this database run with other rate-limit settings than this "
        "process (key_requests_per_minute, key_burst, the quotas <action>_per_day/_per_week, ramp_up): they share the "
        "API key's and the accounts' buckets, and each process gates its calls by its own values; give every worker "
        "and serve the same",
        who, processes);
}

limits_gate::limits_gate(limits::settings s, bool pacing, const clock_port& clock, std::unique_ptr<random_port> rng)
    : clock_(clock),
      defaults_(s.actions),
      limiter_(s),
      pacing_(pacing),
      jitter_window_(std::clamp(
          std::chrono::milliseconds(static_cast<std::int64_t>(
              s.key_requests_per_s > 0 ? 1000.0 * static_cast<double>(s.key_burst) / s.key_requests_per_s : 1000.0)),
          std::chrono::milliseconds(1000), std::chrono::milliseconds(30'000))),
      jitter_rng_(rng ? std::move(rng) : std::make_unique<seeded_random>()) {}

limits_gate::~limits_gate() {
    {
        std::lock_guard lock(mirror_mutex_);
        stopping_ = true;
    }
    mirror_wake_.notify_all();
    if (refresher_.joinable()) {
        refresher_.join();
    }
}

// What other processes wrote: the cooldown index, one round trip every mirror_refresh, on this
// thread, never on the call path. Ended cooldowns are dropped, so the mirror holds the scopes
// cooling down, not every scope ever limited.
void limits_gate::refresh_mirror() {
    std::unique_lock lock(mirror_mutex_);
    int refreshes = 0;
    while (!stopping_) {
        mirror_wake_.wait_for(lock, mirror_refresh);
        if (stopping_) {
            break;
        }
        lock.unlock();
        // About once a second: whether Redis still holds the limits' state. One that lost it
        // (restarted without persistence, or flushed) would count every quota from zero again;
        // its takes are refused until the counts are written back from the database, which the
        // first take or this look does (the limiter logs what it found and did).
        if (refreshes++ % 10 == 0) {
            limiter_.ensure_state();
        }
        // One round trip for every scope cooling down, whoever recorded it: the bound on how
        // late this process learns of another's 429 does not grow with the accounts it serves.
        auto active = limiter_.cooldowns();
        if (active) {
            std::lock_guard update(mirror_mutex_);
            for (const auto& c : *active) {
                auto& until = c.key_scope ? mirror_.key_until : mirror_.account_until[{c.account_id, c.what}];
                until = std::max(until, c.until);
            }
            const auto now = clock_.now();
            std::erase_if(mirror_.account_until, [now](const auto& e) { return e.second < now; });
        }
        {
            // A key cooldown another process's 429 wrote holds every call of this one: said once
            // when it starts (not again while it is extended). This process's own 429s are said
            // by the limiter when they are written (answered() marks them told).
            std::lock_guard update(mirror_mutex_);
            const auto now = clock_.now();
            if (mirror_.key_until > now && key_cooldown_told_ <= now) {
                spdlog::warn("limits: a RATE_LIMITED cooldown of the API key that another process recorded holds every "
                             "call of this one for {} ms",
                             std::chrono::duration_cast<std::chrono::milliseconds>(mirror_.key_until - now).count());
            }
            if (mirror_.key_until > now) {
                key_cooldown_told_ = mirror_.key_until;
            }
        }
        lock.lock();
    }
}

limits::action cooldown_action(const cs::api_call& call, const call_outcome& outcome) {
    return outcome.limited_request ? limits::action_of(*outcome.limited_request, false)
                                   : limits::action_of(call.kind, call.reconcile);
}

void limits_gate::start_refresher() {
    std::call_once(refresher_started_, [this] { refresher_ = std::thread([this] { refresh_mirror(); }); });
}

std::optional<cs::time_point> limits_gate::hold(const call_target& target, const cs::api_call& call,
                                                cs::time_point now) {
    start_refresher();
    const auto what = limits::action_of(call.kind, call.reconcile);
    std::lock_guard lock(mirror_mutex_);
    cs::time_point until{};
    until = std::max(until, mirror_.key_until);
    if (auto it = mirror_.account_until.find({target.account_id, what}); it != mirror_.account_until.end()) {
        until = std::max(until, it->second);
    }
    if (auto it = mirror_.unavailable.find(target.account_id); it != mirror_.unavailable.end()) {
        until = std::max(until, it->second);
    }
    if (until <= now) {
        return std::nullopt;
    }
    std::uniform_int_distribution<std::int64_t> jitter(0, jitter_window_.count());
    return until + std::chrono::milliseconds(jitter(*jitter_rng_));
}

std::string limits_gate::hold_reason(const call_target& target, const cs::api_call& call, cs::time_point now) {
    const auto what = limits::action_of(call.kind, call.reconcile);
    std::lock_guard lock(mirror_mutex_);
    // The scope that holds the longest, as hold() waits for it.
    std::string why = "held by a cooldown or an unavailable account";
    cs::time_point latest = now;
    if (auto it = mirror_.unavailable.find(target.account_id); it != mirror_.unavailable.end() && it->second > latest) {
        latest = it->second;
        why = "held while account " + orch::text::escaped(target.account_id) + " is unavailable";
    }
    if (mirror_.key_until > latest) {
        latest = mirror_.key_until;
        why = "held by the API key's RATE_LIMITED cooldown";
    }
    if (auto it = mirror_.account_until.find({target.account_id, what});
        it != mirror_.account_until.end() && it->second > latest) {
        why = std::string("held by the ") + limits::to_string(what) + " RATE_LIMITED cooldown of account " +
              orch::text::escaped(target.account_id);
    }
    return why;
}

void limits_gate::answered(const call_target& target, const cs::campaign& campaign, const cs::api_call& call,
                           const call_outcome& outcome) {
    auto now = clock_.now();
    if (outcome.consequence == call_consequence::pause_account) {
        // Held here until the settle pauses the account in Postgres (the claim then skips it);
        // unless the account logged in again after the call was claimed: the answer may be to a
        // request the re-login overtook, and the settle leaves the account connected then.
        std::lock_guard lock(mirror_mutex_);
        if (auto it = mirror_.logins.find(target.account_id);
            it != mirror_.logins.end() && it->second > target.account_login) {
            return;
        }
        mirror_.unavailable[target.account_id] = now + unavailable_hold;
        return;
    }
    if (outcome.error_code != "RATE_LIMITED") {
        return;
    }
    auto c = make_check(target, campaign, call, now);
    if (!c) {
        return;
    }
    c->what = cooldown_action(call, outcome);
    const auto where = limit_scope(outcome, target);
    // This process first (no further call of the scope leaves it from now on), then Redis.
    auto provisional = now + std::chrono::duration_cast<cs::time_point::duration>(
                                 outcome.retry_after.value_or(std::chrono::milliseconds(1000)));
    {
        std::lock_guard lock(mirror_mutex_);
        auto& until = where == limits::scope::key ? mirror_.key_until
                                                  : mirror_.account_until[{target.account_id, c->what}];
        until = std::max(until, provisional);
        if (where == limits::scope::key) {
            key_cooldown_told_ = std::max(key_cooldown_told_, provisional);  // said by the limiter's write below
        }
        if (target.gate_take != 0) {
            mirror_.cooled.insert(target.gate_take);
        }
    }
    if (auto d = limiter_.rate_limited(*c, where, outcome.retry_after)) {
        std::lock_guard lock(mirror_mutex_);
        auto& until = where == limits::scope::key ? mirror_.key_until
                                                  : mirror_.account_until[{target.account_id, c->what}];
        until = std::max(until, now + std::chrono::duration_cast<cs::time_point::duration>(*d));
        if (where == limits::scope::key) {
            key_cooldown_told_ = std::max(key_cooldown_told_, until);
        }
    }
}

void limits_gate::account_changed(const std::string& account_id, bool available, cs::time_point now,
                                  std::int64_t login) {
    std::lock_guard lock(mirror_mutex_);
    if (available) {
        mirror_.unavailable.erase(account_id);
        if (login != 0) {
            auto& latest = mirror_.logins[account_id];
            latest = std::max(latest, login);
        }
    } else {
        mirror_.unavailable[account_id] = now + unavailable_hold;
    }
}

std::shared_ptr<const effective_quotas> limits_gate::quotas_of(const std::string& account_id,
                                                               const std::string& text) const {
    if (text.empty()) {
        return nullptr;  // the common case: no override, no lock
    }
    std::lock_guard lock(quotas_mutex_);
    auto& entry = quotas_[account_id];
    if (entry.text != text) {
        entry.text = text;
        std::string error;
        auto parsed = parse_overrides(text, error);
        if (parsed) {
            entry.quotas = std::make_shared<const effective_quotas>(effective(*parsed, defaults_));
        } else {
            entry.quotas = nullptr;
            spdlog::error("limits: account={} quota overrides ignored (the defaults hold): {}",
                          orch::text::escaped(account_id), orch::text::escaped(error));
        }
    }
    return entry.quotas;
}

std::chrono::milliseconds window_left(const cs::schedule& schedule, std::chrono::milliseconds since_midnight) {
    const std::chrono::milliseconds start = std::chrono::minutes(schedule.start_minute);
    const std::chrono::milliseconds end = std::chrono::minutes(schedule.end_minute);
    if (since_midnight >= end) {
        return std::chrono::milliseconds{0};  // after the window: unknown (no call is due then)
    }
    return end - std::max(start, since_midnight);
}

std::optional<limits::check> limits_gate::make_check(const call_target& target, const cs::campaign& campaign,
                                                     const cs::api_call& call, cs::time_point now) const {
    limits::check c;
    c.account_id = target.account_id;
    c.what = limits::action_of(call.kind, call.reconcile);
    c.key_places = api_requests(call);  // a follow-up's read and send: two places in the key's rate
    c.campaign_id = target.campaign_id;
    // The account's day, whichever campaign calls: one account, one quota day. The working window
    // is the campaign's.
    const std::string& zone = quota_time_zone(target.account_time_zone);
    auto day = limits::day_in_zone(now, zone);
    if (!day) {
        return std::nullopt;  // `accounts limits` and the apply only store known zones; stay safe
    }
    c.day = *day;
    if (auto quotas = quotas_of(target.account_id, target.account_quotas); quotas) {
        c.account_quota = (*quotas)[static_cast<std::size_t>(c.what)];
    }
    if (auto it = campaign.limits.find(limits::to_string(c.what)); it != campaign.limits.end()) {
        c.campaign_cap = limits::quota{it->second.per_day.value_or(-1), it->second.per_week.value_or(-1)};
        if (call.reconcile) {
            // The check of a call whose outcome was lost is no step of the campaign's, and until
            // it is made nothing of the lead may go: the campaign's own cap on the action (its
            // pacing of its steps) counts it but does not hold it, so that a cap used up by the
            // steps' checks cannot keep it until the cap's day ends. The account's quotas (the
            // platform's limits) and the budgets still hold it.
            constexpr std::int64_t counted_only = std::numeric_limits<std::int32_t>::max();
            c.campaign_cap = limits::quota{counted_only, counted_only};
        }
    }
    if (pacing_) {
        // The time of day in the campaign's zone (the account's day already when they are one).
        auto local = zone == campaign.schedule.time_zone ? day : limits::day_in_zone(now, campaign.schedule.time_zone);
        if (!local) {
            return std::nullopt;  // the loader only accepts known zones; stay safe
        }
        c.working_window = std::chrono::minutes(campaign.schedule.end_minute - campaign.schedule.start_minute);
        c.window_left = window_left(campaign.schedule, local->since_midnight);
    }
    return c;
}

gate_decision limits_gate::before(const call_target& target, const cs::campaign& campaign,
                                  const cs::api_call& call, cs::time_point now) {
    const gate_request r{target, &campaign, &call};
    return before_many(std::span<const gate_request>(&r, 1), now).front();
}

std::vector<gate_decision> limits_gate::before_many(std::span<const gate_request> requests, cs::time_point now) {
    std::vector<gate_decision> out(requests.size());
    std::vector<limits::check> checks;
    std::vector<std::size_t> asked;  // index in `requests` of each check
    checks.reserve(requests.size());
    asked.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const gate_request& r = requests[i];
        auto c = make_check(r.target, *r.campaign, *r.call, now);
        if (!c) {
            out[i] = {false, now + std::chrono::minutes(5),
                      "unknown time zone " + orch::text::escaped(r.campaign->schedule.time_zone) + " or " +
                          orch::text::escaped(quota_time_zone(r.target.account_time_zone))};
            continue;
        }
        checks.push_back(std::move(*c));
        asked.push_back(i);
    }
    // While the key is busy, each take names its lead and whether it is queued, so that Redis keeps
    // the place of a queued lead's turn from first arrivals of every worker of the key.
    {
        std::lock_guard lock(mutex_);
        if (limiter_.key_interval().count() > 0 && now < key_busy_until_) {
            for (std::size_t k = 0; k < asked.size(); ++k) {
                const auto& target = requests[asked[k]].target;
                checks[k].lead = target.enrollment_id;
                checks[k].queue_role = target.key_queued || key_turns_.contains(target.enrollment_id)
                                           ? limits::key_queue_role::queued
                                           : limits::key_queue_role::first_arrival;
            }
        }
    }
    // A lead due for the first time waits here, without asking Redis, while the key's place of
    // this instant is owed to a queued lead this process gave its turn (key_places_owed).
    std::vector<std::pair<std::int64_t, bool>> leads(asked.size());
    for (std::size_t k = 0; k < asked.size(); ++k) {
        const auto& target = requests[asked[k]].target;
        leads[k] = {target.enrollment_id, target.key_queued};
    }
    const std::vector<bool> owed = key_places_owed(leads, now);
    std::vector<limits::verdict> verdicts;
    if (std::find(owed.begin(), owed.end(), true) == owed.end()) {
        verdicts = limiter_.take_many(checks);
    } else {
        std::vector<limits::check> asking;
        std::vector<std::size_t> asked_redis;
        for (std::size_t k = 0; k < checks.size(); ++k) {
            if (!owed[k]) {
                asking.push_back(checks[k]);
                asked_redis.push_back(k);
            }
        }
        std::vector<limits::verdict> answered = limiter_.take_many(asking);
        limits::verdict queued;
        queued.why = limits::reason::rate;
        queued.retry_after = std::chrono::ceil<std::chrono::milliseconds>(limiter_.key_interval());
        verdicts.assign(checks.size(), queued);
        for (std::size_t j = 0; j < asked_redis.size(); ++j) {
            verdicts[asked_redis[j]] = answered[j];
        }
    }
    std::map<std::pair<std::string, limits::action>, std::size_t> short_waits;
    std::vector<gate_decision*> queueing;  // denials that take a turn at the queue's end
    std::vector<std::int64_t> queueing_leads;
    for (std::size_t k = 0; k < checks.size(); ++k) {
        gate_decision& d = out[asked[k]];
        d = decision_of(checks[k], verdicts[k], now, &short_waits);
        const std::int64_t lead = requests[asked[k]].target.enrollment_id;
        if (verdicts[k].why == limits::reason::rate) {
            note_key_busy(verdicts[k].for_queued_lead, now);
            if (const auto turn = key_rate_turn(lead, d.until, now)) {
                d.until = *turn;
            } else {
                queueing.push_back(&d);
                queueing_leads.push_back(lead);
            }
        } else {
            leave_key_queue(lead);
        }
    }
    if (!queueing.empty()) {
        queue_at_end(queueing_leads, queueing, now);
    }
    return out;
}

// Leads the key's rate denies would all come back at the instant its next place frees, and all
// but one be denied again, a write each, every time. Counting the turns per batch was not enough:
// each batch's first denial met earlier batches' at the same instants (a trial saw 13 lead
// transitions per call behind a busy key; a test, 20). So the leads queue for the key's places:
// a lead denied for the first time takes the next turn nobody was given yet, one emission
// interval after the last, from one queue that every worker of the API key shares in Redis
// (queue_at_end; with a queue per process, two processes' leads would meet at every turn), or a
// turn a lead here gave up (waits_elsewhere). A lead back before its turn keeps it. A lead
// denied at or after its turn missed its place: a lane picks its due leads up to an idle poll
// late, and a place another call took (one not in the queue) moves every later place on. It
// takes a turn ahead of the queue, the next place that frees or a later one, each given once by
// this process, so that such leads do not all meet at one place (they can still meet leads of
// the shared queue: README, Limitations); at the end of the queue its place would stay unused.
// A turn whose lead never comes back delays the later ones, so the queue reaches at most
// key_queue_horizon, or key_queue_turns turns, ahead; the leads beyond it wait until its end,
// and queue then. Returns nullopt for a lead that takes a turn at the queue's end.
std::optional<cs::time_point> limits_gate::key_rate_turn(std::int64_t lead, cs::time_point free_at,
                                                         cs::time_point now) {
    std::lock_guard lock(mutex_);
    const auto interval = std::chrono::duration_cast<cs::time_point::duration>(limiter_.key_interval());
    if (const auto t = key_turns_.find(lead); t != key_turns_.end()) {
        cs::time_point turn;
        if (now < t->second) {
            turn = std::max(t->second, free_at);
        } else {
            turn = std::max(free_at, key_front_end_);
            key_front_end_ = turn + interval;
        }
        key_owed_.erase({t->second, lead});
        key_owed_.emplace(turn, lead);
        t->second = turn;
        return turn;
    }
    while (!key_turns_given_up_.empty() && *key_turns_given_up_.begin() < now) {
        key_turns_given_up_.erase(key_turns_given_up_.begin());
    }
    if (const auto given_up = key_turns_given_up_.lower_bound(free_at); given_up != key_turns_given_up_.end()) {
        const auto turn = *given_up;
        key_turns_given_up_.erase(given_up);
        key_turns_.emplace(lead, turn);
        key_owed_.emplace(turn, lead);
        return turn;
    }
    return std::nullopt;
}

void limits_gate::queue_at_end(std::span<const std::int64_t> leads, std::span<gate_decision* const> denied,
                               cs::time_point now) {
    const auto interval = std::chrono::duration_cast<cs::time_point::duration>(limiter_.key_interval());
    const auto reach = std::min<cs::time_point::duration>(key_queue_horizon, interval * key_queue_turns);
    cs::time_point free_at = cs::time_point::max();
    for (const gate_decision* d : denied) {
        free_at = std::min(free_at, d->until);
    }
    // Redis's clock counts the turns (every worker agrees on it); this process's `now` places them.
    const auto shared = limiter_.queue(leads,
                                       std::chrono::duration_cast<std::chrono::microseconds>(std::max(free_at - now, {})),
                                       std::chrono::duration_cast<std::chrono::microseconds>(reach));
    std::lock_guard lock(mutex_);
    if (key_turns_.size() >= key_turns_swept_ * 2 + 1024) {
        // Turns long past are of leads that went elsewhere (done, paused, parked for a quota).
        std::erase_if(key_turns_, [&](const auto& e) { return e.second + key_queue_horizon < now; });
        std::erase_if(key_owed_, [&](const auto& e) { return e.first + key_queue_horizon < now; });
        key_turns_swept_ = key_turns_.size();
    }
    for (std::size_t i = 0; i < leads.size(); ++i) {
        cs::time_point turn;
        if (shared) {
            if (i >= shared->given) {
                // Past the queue's reach: no turn. The lead looks again at the reach's end and
                // queues then (with a turn it would come back at once with all the others past it).
                denied[i]->until = now + reach;
                continue;
            }
            turn = now + std::chrono::duration_cast<cs::time_point::duration>(shared->first) +
                   interval * static_cast<std::int64_t>(i);
        } else {
            // Redis did not answer: this process's own queue, until it does.
            turn = std::max(denied[i]->until, key_queue_end_);
            if (turn > now + reach) {
                denied[i]->until = now + reach;
                continue;
            }
            key_queue_end_ = turn + interval;
        }
        key_turns_[leads[i]] = turn;
        key_owed_.emplace(turn, leads[i]);
        denied[i]->until = turn;
    }
}

// A queued lead comes back at its turn only once a lane picks it up, up to an idle poll late; a
// lead due for the first time in that moment would take its place from Redis, and the queued
// lead, denied, a turn ahead of the queue, where it can meet the next queued lead, and so on. So
// while a turn has passed whose lead has not come back yet (for key_owed_grace), the place is
// its: a lead not in the queue is denied, and takes a turn at the queue's end. A turn whose
// lead never comes (its campaign paused, the lead ended elsewhere) would leave that place and
// the first arrivals idle: once more than key_owed_misses of the last 8 turns that passed were
// missed, first arrivals take places again, until leads come back at their turns. Redis keeps
// this for every worker of the key (the take's key_queue_role, buckets.lua), once this process
// has seen the key busy; this is the same for the turns this process gave, without asking Redis.
// A lead of its turns that another process claims is a miss here, and a lead whose row waited
// for the key's rate (call_target::key_queued) is never taken for a first arrival.
std::vector<bool> limits_gate::key_places_owed(std::span<const std::pair<std::int64_t, bool>> leads, cs::time_point now) {
    std::vector<bool> owed(leads.size(), false);
    std::lock_guard lock(mutex_);
    if (key_owed_.empty()) {
        return owed;
    }
    while (!key_owed_.empty() && key_owed_.begin()->first + key_owed_grace < now) {
        key_turn_misses_ = static_cast<std::uint8_t>((key_turn_misses_ << 1) | 1);
        ++key_turns_missed_;
        key_owed_.erase(key_owed_.begin());
    }
    const bool due_owed = !key_owed_.empty() && key_owed_.begin()->first <= now &&
                          std::popcount(key_turn_misses_) <= key_owed_misses;
    for (std::size_t i = 0; i < leads.size(); ++i) {
        const auto [lead, queued] = leads[i];
        if (const auto t = key_turns_.find(lead); t != key_turns_.end()) {
            if (t->second <= now && key_owed_.contains({t->second, lead})) {
                key_turn_misses_ = static_cast<std::uint8_t>(key_turn_misses_ << 1);  // it came back
            }
        } else if (!queued) {  // a lead another process queued (or this one before a restart) is no first arrival
            owed[i] = due_owed;
            key_places_kept_ += due_owed ? 1 : 0;
        }
    }
    return owed;
}

void limits_gate::note_key_busy(bool for_queued_lead, cs::time_point now) {
    std::lock_guard lock(mutex_);
    key_busy_until_ = now + 2 * key_queue_horizon;  // past the last turn this denial can give
    key_places_kept_ += for_queued_lead ? 1 : 0;
}

void limits_gate::leave_key_queue(std::int64_t lead) {
    std::lock_guard lock(mutex_);
    if (!key_turns_.empty()) {
        if (const auto t = key_turns_.find(lead); t != key_turns_.end()) {
            key_owed_.erase({t->second, lead});
            key_turns_.erase(t);
        }
    }
}

void limits_gate::waits_elsewhere(const call_target& target, cs::time_point now) {
    std::lock_guard lock(mutex_);
    if (const auto t = key_turns_.find(target.enrollment_id); t != key_turns_.end()) {
        if (t->second > now) {
            key_turns_given_up_.insert(t->second);
        }
        key_owed_.erase({t->second, target.enrollment_id});
        key_turns_.erase(t);
    }
}

std::size_t limits_gate::held_places(const limits::check& c, limits::reason why, cs::time_point now) const {
    const auto h = held_.find({c.account_id, c.what});
    if (h == held_.end()) {
        return 0;
    }
    std::size_t n = 0;
    for (const auto take : h->second) {
        const auto t = taken_.find(take);
        if (t == taken_.end() || now - t->second.at >= held_for) {
            continue;
        }
        const bool counts = why == limits::reason::week_quota         ? true
                            : why == limits::reason::campaign_quota ? t->second.campaign_id == c.campaign_id &&
                                                                          t->second.day.day == c.day.day
                                                                    : t->second.day.day == c.day.day;
        n += counts ? 1 : 0;
    }
    return n;
}

gate_decision limits_gate::decision_of(const limits::check& c, const limits::verdict& v, cs::time_point now,
                                       std::map<std::pair<std::string, limits::action>, std::size_t>* short_waits) {
    if (v.allowed) {
        std::lock_guard lock(mutex_);
        gate_decision d;
        d.take = ++last_take_;
        taken_.emplace(d.take, taken_call{v, c.day, c.account_id, c.what, c.campaign_id, now, c.working_window.count() > 0});
        // Only a take under some quota can be a place a denial waits for (a check_invitation
        // has none by default): the others stay off the held index, on every call's path.
        const auto limited = [](const std::optional<limits::quota>& q) {
            return q && (q->per_day >= 0 || q->per_week >= 0);
        };
        if (limited(defaults_[static_cast<std::size_t>(c.what)].limit) || limited(c.account_quota) ||
            limited(c.campaign_cap)) {
            held_[{c.account_id, c.what}].insert(d.take);
        }
        return d;
    }
    std::string why;
    cs::wait_code code = cs::wait_code::none;
    switch (v.why) {
    case limits::reason::rate:
        // One wording while the rate is cut (not its share, which changes each minute): `campaign
        // watch` groups leads by reason, and says why the key sends below key_requests_per_minute.
        why = limiter_.key_share() < 1.0
                  ? "the API key's request rate, slowed after the API answered RATE_LIMITED without Retry-After"
                  : "the API key's request rate";
        code = cs::wait_code::key_rate;
        break;
    case limits::reason::cooldown_key:
        why = "the API key's RATE_LIMITED cooldown";
        code = cs::wait_code::key_cooldown;
        break;
    case limits::reason::cooldown_account:
        why = std::string("the ") + limits::to_string(c.what) + " RATE_LIMITED cooldown of account " + c.account_id;
        code = cs::wait_code::account_cooldown;
        break;
    case limits::reason::day_quota:
        why = std::string("the ") + limits::to_string(c.what) + " day quota of account " + c.account_id;
        code = cs::wait_code::day_quota;
        break;
    case limits::reason::week_quota:
        why = std::string("the ") + limits::to_string(c.what) + " week quota of account " + c.account_id;
        code = cs::wait_code::week_quota;
        break;
    case limits::reason::campaign_quota:
        why = std::string("the campaign's ") + limits::to_string(c.what) + " cap on account " + c.account_id;
        code = cs::wait_code::campaign_quota;
        break;
    case limits::reason::pacing:
        why = std::string("the ") + limits::to_string(c.what) + " pacing of account " + c.account_id;
        code = cs::wait_code::pacing;
        break;
    case limits::reason::unavailable:
        why = "the rate-limit store (Redis) to come back";
        code = cs::wait_code::limits_unavailable;
        break;
    case limits::reason::bad_input:
    case limits::reason::none:
        why = std::string("the rate limits (") + limits::to_string(v.why) + ")";
        code = cs::wait_code::limits_error;
        break;
    }
    auto wait = std::max(v.retry_after, std::chrono::milliseconds(1));
    if (v.why == limits::reason::day_quota || v.why == limits::reason::week_quota ||
        v.why == limits::reason::campaign_quota) {
        // Some of the quota's places are held by this process's calls that have not ended (or
        // that the ledger is about to refuse in this very cycle): one that fails without effect
        // gives its place back, and a lead parked until the quota's next day would leave it
        // unused. As many leads as places are held look again in 3-8 s, once the calls have
        // mostly settled; the others, and all once nothing of it is held here, wait as the
        // quota says (a whole backlog claimed again every few seconds would cost a cycle each).
        bool held = false;
        {
            std::lock_guard lock(mutex_);
            const std::size_t places = held_places(c, v.why, now);
            if (places > 0) {
                std::size_t ignored = 0;
                std::size_t& told = short_waits != nullptr ? (*short_waits)[{c.account_id, c.what}] : ignored;
                held = told < places;
                told += held ? 1 : 0;
            }
        }
        if (held) {
            std::lock_guard lock(mirror_mutex_);
            const auto soon = std::chrono::milliseconds(
                std::uniform_int_distribution<std::int64_t>(3'000, 8'000)(*jitter_rng_));
            if (soon < wait) {
                wait = soon;
                why += " (calls in flight hold its last places and may give them back)";
            }
        }
    }
    if (v.why == limits::reason::cooldown_key || v.why == limits::reason::cooldown_account) {
        // Every lead parked on a cooldown would otherwise wake at its last millisecond and burst
        // into the next window: full jitter over the key bucket's burst at its rate.
        std::lock_guard lock(mirror_mutex_);
        wait += std::chrono::milliseconds(
            std::uniform_int_distribution<std::int64_t>(0, jitter_window_.count())(*jitter_rng_));
    }
    return {false, now + std::chrono::duration_cast<cs::time_point::duration>(wait), "waiting for " + why, code};
}

std::optional<cs::time_point> limits_gate::after(const call_target& target, const cs::campaign& campaign,
                                                const cs::api_call& call, const call_outcome& outcome) {
    std::optional<taken_call> taken = forget(target.gate_take);
    auto now = clock_.now();
    auto c = make_check(target, campaign, call, now);
    if (!c) {
        return std::nullopt;
    }
    if (taken) {
        c->day = taken->day;  // the day the take counted in, not today
    }
    if (outcome.error_code == "RATE_LIMITED") {
        // The platform refused: nothing happened, so the quota is given back, and the whole
        // scope cools down. An answer naming the account is the account's action limit; any
        // other is the key's request rate. The quota given back is the call's (once: only a
        // take this gate still holds); the scope that cools down is the refused request's action.
        if (taken) {
            limiter_.refund(*c);
        }
        c->what = cooldown_action(call, outcome);
        bool recorded = false;
        {
            std::lock_guard lock(mirror_mutex_);
            recorded = target.gate_take != 0 && mirror_.cooled.erase(target.gate_take) > 0;
        }
        if (recorded) {
            // answered() wrote the cooldown when the answer came: a second write would count
            // the hit twice in the backoff streak.
            std::lock_guard lock(mirror_mutex_);
            return limit_scope(outcome, target) == limits::scope::account_action
                       ? mirror_.account_until[{target.account_id, c->what}]
                       : mirror_.key_until;
        }
        const auto where = limit_scope(outcome, target);
        auto d = limiter_.rate_limited(*c, where, outcome.retry_after);
        if (!d) {
            return std::nullopt;
        }
        const auto end = now + std::chrono::duration_cast<cs::time_point::duration>(*d);
        if (where == limits::scope::key) {
            std::lock_guard lock(mirror_mutex_);
            key_cooldown_told_ = std::max(key_cooldown_told_, end);  // said by the limiter's write
        }
        return end;
    }
    if (took_effect(outcome.attempt_outcome)) {
        limiter_.succeeded(*c, taken ? taken->verdict : limits::verdict{});
    } else if (known_without_effect(outcome.attempt_outcome) && taken) {
        if (outcome.nothing_sent) {
            // Not sent at all (held or stopped before its first request): its place in the key's
            // rate is given back too. Its pacing gap is kept: time has passed since the take, and
            // once the gap has ended another call's may be the account's last.
            limiter_.unsend(*c, false);
        } else {
            limiter_.refund(*c);  // without effect
        }
    } else if (outcome.attempt_outcome == attempt_outcome::uncertain && taken && !call.reconcile &&
               (call.kind == cs::call_kind::invite || call.kind == cs::call_kind::send ||
                call.kind == cs::call_kind::withdraw)) {
        // A write the platform may have counted: its place is kept until the lead's check finds
        // out, which may run in another process, after a restart, on another day. (A read whose
        // answer was lost is asked again, never checked.)
        limiter_.remember_uncertain(target.enrollment_id, *c);
    }
    if (call.reconcile && (outcome.attempt_outcome == attempt_outcome::reconciled_absent ||
                           outcome.attempt_outcome == attempt_outcome::reconciled_present)) {
        // The check of an uncertain call: found without effect, the call's place in its quota day
        // (the account's, and the campaign's when it counted) is given back, once; found done, it
        // stays spent. The call sent again takes a place of its own.
        const auto looked_for = call.reconciles.value_or(call.kind == cs::call_kind::get_conversation
                                                             ? cs::call_kind::send
                                                             : cs::call_kind::invite);
        auto kept = limiter_.forget_uncertain(target.enrollment_id, limits::action_of(looked_for, false));
        if (kept && outcome.attempt_outcome == attempt_outcome::reconciled_absent && limiter_.refund(*kept)) {
            spdlog::debug("limits: lead {}'s uncertain {} call was found without effect: its place in {}'s quota "
                          "of {} is given back",
                          target.enrollment_id, limits::to_string(kept->what), orch::text::escaped(kept->account_id),
                          limits::iso_date(kept->day.day));
        }
    }
    return std::nullopt;
}

void limits_gate::released(const call_target& target, const cs::campaign& campaign, const cs::api_call& call) {
    std::optional<taken_call> taken = forget(target.gate_take);
    if (!taken) {
        return;  // given back already, or never taken here
    }
    if (auto c = make_check(target, campaign, call, clock_.now()); c) {
        c->day = taken->day;
        // No request leaves: its place in the key's rate and its pacing gap are given back too,
        // or a lead the ledger refuses would spend them for nothing (a campaign out of budget
        // slowed every campaign sharing the key and its accounts).
        limiter_.unsend(*c, taken->paced);
    }
}

std::optional<limits_gate::taken_call> limits_gate::forget(std::uint64_t take) {
    std::lock_guard lock(mutex_);
    auto it = taken_.find(take);
    if (it == taken_.end()) {
        return std::nullopt;
    }
    taken_call t = it->second;
    taken_.erase(it);
    if (auto h = held_.find({t.account_id, t.what}); h != held_.end()) {
        h->second.erase(take);
        if (h->second.empty()) {
            held_.erase(h);
        }
    }
    return t;
}

}  // namespace orch::engine
