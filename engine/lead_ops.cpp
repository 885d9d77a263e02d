#include "engine/lead_ops.hpp"
#include "api/text.hpp"
#include "engine/admin_input.hpp"
#include "engine/sql_array.hpp"

#include "campaigns/campaigns.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <thread>

namespace orch::engine::lead_ops {

namespace {

std::string q(std::string_view name) { return std::string(schema::query(name)); }

constexpr std::size_t refused_listed_max = 100;

std::int64_t epoch_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

bool terminal(const std::string& status) {
    return status == "done" || status == "replied" || status == "failed" || status == "cancelled";
}

// Why a row leads/lock did not return cannot change (status as leads/match read it; `to_check`: a
// call whose outcome was lost, whose check waits, leads/status_now).
std::string why_not(const std::string& status, bool to_check = false) {
    if (status == "calling" && to_check) {
        // Nothing is in flight, but until the check is made nobody knows whether the call took
        // effect: an operator's change now could contact the person twice or lose the contact.
        return "it waits to check whether a call whose outcome was lost took effect (its `waiting` says what the check "
               "waits for); a worker makes that check before anything else of the lead: try again once it is made";
    }
    if (status == "calling") {
        // In flight, an uncertain call to be checked, or one whose worker stopped: a worker settles
        // each (`waiting` says which), and only then may an operator's change follow.
        return "it is calling the API: a call in flight, or one a worker is to settle (its `waiting` says which); "
               "try again once it has settled";
    }
    if (terminal(status)) {
        return "it has finished (" + status + ")";
    }
    return "it changed while this ran (" + status + "); try again";
}

struct locked_row {
    std::int64_t enrollment_id = 0, lead_id = 0;
    std::string status, step, account_id, reason;
    int version = 0, attempt = 0;
    bool accepted_seen = false, parked = false, contacted = false;
    bool listed = false;  // failed, and the person is on the do-not-contact list
    bool effect_unknown = false;  // the step's last telling attempt may have taken effect
    std::string wait_code;        // what it waits for (enrollments.wait_code; "" none)
};

// A wait that belongs to the lead's sender (its quotas, pacing, cooldowns, its share of the
// campaign's budget): a lead moved to another sender does not wait for it.
bool senders_wait(std::string_view code) {
    using cs_wait = campaigns::wait_code;
    for (auto w : {cs_wait::account_cooldown, cs_wait::day_quota, cs_wait::week_quota, cs_wait::campaign_quota,
                   cs_wait::pacing, cs_wait::throttled, cs_wait::account_budget}) {
        if (code == campaigns::to_string(w)) {
            return true;
        }
    }
    return false;
}

outcome run_once(pqxx::connection& conn, const request& r) {
    outcome out;
    pqxx::work tx(conn);
    auto c = tx.exec_params(q("leads/campaign"), r.campaign);
    if (c.empty()) {
        out.result = outcome::kind::no_campaign;
        out.message = "no campaign named '" + orch::text::escaped_clipped(r.campaign, 200) + "'";
        return out;
    }
    const auto campaign_id = c[0][0].as<std::int64_t>();
    const bool active = c[0][1].as<std::string>() == "active";
    const bool cancelled = c[0][1].as<std::string>() == "cancelled";

    // move: the new sender, resolved once.
    std::string new_account;
    bool new_connected = false;
    if (r.what == verb::move) {
        auto a = tx.exec_params(q("accounts/resolve"), r.account);
        if (a.empty()) {
            out.result = outcome::kind::bad_request;
            out.message = "no account '" + orch::text::escaped_clipped(r.account, 200) + "' (by id or label; `orchestrator accounts list` shows them); nothing changed";
            return out;
        }
        new_account = a[0][0].as<std::string>();
        new_connected = a[0][1].as<bool>();
    }

    json ids = json::array();
    for (auto id : r.lead_ids) {
        ids.push_back(id);
    }
    auto matched = tx.exec_params(q("leads/match"), campaign_id, ids.dump(), r.state);
    out.matched = static_cast<std::int64_t>(matched.size());
    if (!r.lead_ids.empty() && matched.size() < r.lead_ids.size()) {
        std::vector<std::int64_t> missing;
        for (auto id : r.lead_ids) {
            bool found = std::any_of(matched.begin(), matched.end(), [id](const auto& row) { return row[1].template as<std::int64_t>() == id; });
            if (!found) {
                missing.push_back(id);
            }
        }
        if (!missing.empty() && (r.lead_ids.size() == 1 || r.state.empty())) {
            out.result = outcome::kind::no_lead;
            // The first five missing ids by name, the rest counted.
            std::string named;
            for (std::size_t i = 0; i < missing.size() && i < 5; ++i) {
                named += (i == 0 ? "" : ", ") + std::to_string(missing[i]);
            }
            out.message = "campaign '" + orch::text::escaped_clipped(r.campaign, 200) + "' has no lead" +
                          (missing.size() == 1 ? " " : "s ") + named +
                          (missing.size() > 5 ? " (and " + std::to_string(missing.size() - 5) + " more missing)" : "") +
                          "; nothing changed";
            return out;
        }
    }
    std::map<std::int64_t, std::pair<std::int64_t, std::string>> status_of;  // enrollment -> (lead, status)
    sql_array id_list;
    for (const auto& m : matched) {
        status_of[m[0].as<std::int64_t>()] = {m[1].as<std::int64_t>(), m[2].as<std::string>()};
        id_list.add(m[0].as<std::int64_t>());
    }

    std::vector<locked_row> rows;
    for (const auto& l : tx.exec_params(q("leads/lock"), id_list.str())) {
        locked_row row;
        row.enrollment_id = l[0].as<std::int64_t>();
        row.lead_id = l[1].as<std::int64_t>();
        row.status = l[2].as<std::string>();
        row.step = l[3].as<std::string>();
        row.version = l[4].as<int>();
        row.account_id = l[5].as<std::string>();
        row.accepted_seen = l[6].as<bool>();
        row.parked = l[7].as<bool>();
        row.contacted = l[8].as<bool>();
        row.attempt = l[9].as<int>();
        row.reason = l[10].as<std::string>();
        row.listed = l[11].as<bool>();
        row.effect_unknown = l[12].as<bool>();
        row.wait_code = l[13].as<std::string>();
        rows.push_back(std::move(row));
        status_of.erase(rows.back().enrollment_id);
    }
    auto refuse = [&out](std::int64_t lead, const std::string& state, const std::string& why) {
        ++out.refused_count;
        ++out.refused_by_why[why];
        if (out.refused.size() < refused_listed_max) {
            out.refused.push_back({lead, state, why});
        }
    };
    std::set<std::int64_t> to_check;  // of status_of: calls to check, not in flight
    if (!status_of.empty()) {
        // Passed over by the lock: read what they are now (leads/match read them before a claim
        // or a settle changed them), so the refusal says "calling the API", not "it changed".
        sql_array passed_over;
        for (const auto& [enrollment, lead_status] : status_of) {
            passed_over.add(enrollment);
        }
        for (const auto& n : tx.exec_params(q("leads/status_now"), passed_over.str())) {
            if (auto it = status_of.find(n[0].as<std::int64_t>()); it != status_of.end()) {
                it->second.second = n[1].as<std::string>();
                if (n[2].as<bool>()) {
                    to_check.insert(it->first);
                }
            }
        }
    }
    for (const auto& [enrollment, lead_status] : status_of) {
        if (r.what == verb::stop && lead_status.second == "cancelled") {
            ++out.already_count;  // stopped already: what the operator asked for
            continue;
        }
        refuse(lead_status.first, lead_status.second, why_not(lead_status.second, to_check.contains(enrollment)));
    }

    std::map<int, std::shared_ptr<campaigns::campaign>> versions;
    auto version = [&](int v) -> const campaigns::campaign& {
        auto& slot = versions[v];
        if (!slot) {
            auto d = tx.exec_params1(q("leads/definition"), campaign_id, v);
            slot = std::make_shared<campaigns::campaign>(campaigns::campaign_from_json(json::parse(d[0].as<std::string>())));
        }
        return *slot;
    };

    if (r.what == verb::skip) {
        // A step that no version of the matched leads has, nor the campaign's current one, is the
        // request's error, refused as a whole, whether or not a lead matched (a skip to a misspelt
        // step answered 200 with every lead refused, or with nobody matched).
        std::set<int> looked = {c[0][2].as<int>()};
        for (const auto& row : rows) {
            looked.insert(row.version);
        }
        const bool somewhere = std::any_of(looked.begin(), looked.end(), [&](int v) {
            return campaigns::find_step(version(v), r.to_step) != nullptr;
        });
        if (!somewhere) {
            const auto current = c[0][2].as<int>();
            std::string known;
            for (const auto& st : version(current).steps) {
                known += (known.empty() ? "" : ", ") + st.id;
            }
            out.result = outcome::kind::bad_request;
            out.message = "campaign '" + orch::text::escaped_clipped(r.campaign, 200) + "' (version " +
                           std::to_string(current) + ") has no step '" + orch::text::escaped_clipped(r.to_step, 100) +
                           "' (steps: " + known + "); nothing changed";
            return out;
        }
    }

    const auto now = std::chrono::system_clock::now();
    json writes = json::array();
    std::set<std::int64_t> unconnected;  // skip: moved to a message step with no acceptance seen
    for (const auto& row : rows) {
        json w = {{"enrollment_id", row.enrollment_id}, {"expected", row.status}, {"step", row.step},
                  {"status", row.status}, {"next_run_at_ms", nullptr}, {"run_now", false},
                  {"due", row.parked ? "park" : "next"}, {"attempt", row.attempt}, {"reason", row.reason},
                  {"account_id", row.account_id}};
        // A failed lead takes up its campaign again by retry or skip (the person invited the sender,
        // who accepted on the platform; a refusal an operator has settled): stop and move leave it.
        if (row.status == "failed" && r.what != verb::retry && r.what != verb::skip) {
            refuse(row.lead_id, row.status, why_not(row.status));
            continue;
        }
        if (row.status == "failed" && cancelled) {
            refuse(row.lead_id, row.status, "its campaign is cancelled");
            continue;
        }
        // A failed lead on the do-not-contact list stays failed: made live, it would make its
        // step's read (a retried contact first checks its effect) before the send-time check
        // stopped it. (A live lead on the list was stopped when it was added.)
        if (row.listed) {
            refuse(row.lead_id, row.status, "the person is on the do-not-contact list");
            continue;
        }
        switch (r.what) {
        case verb::stop:
            w["status"] = "cancelled";
            w["reason"] = "stopped by an operator";
            break;
        case verb::retry:
            if (row.status == "waiting") {
                refuse(row.lead_id, row.status,
                       "it is waiting for an acceptance until its wait times out: making it due now would end the "
                       "wait as a timeout (use skip --to STEP to move it on)");
                continue;
            }
            if (const auto* step = campaigns::find_step(version(row.version), row.step);
                row.status == "ready" && step != nullptr && step->kind == campaigns::step_kind::delay) {
                refuse(row.lead_id, row.status,
                       "it is in step " + row.step + ", a delay: making it due now would cut the delay short "
                       "(use skip --to STEP to move it on)");
                continue;
            }
            if (row.status == "failed") {
                // Its step again from a fresh count of attempts. A step that contacts the person
                // (invite, send, withdraw) first checks whether its call took effect, as after an
                // uncertain answer, when its last telling attempt may have: a failure may have
                // followed a request that went out. One that was refused is sent afresh (a
                // reconciliation would take an invitation the person sent, which the operator
                // accepted, for the invite's effect, and count the lead invited).
                const auto* step = campaigns::find_step(version(row.version), row.step);
                const bool contacts = step != nullptr && (step->kind == campaigns::step_kind::invite ||
                                                          step->kind == campaigns::step_kind::send ||
                                                          step->kind == campaigns::step_kind::withdraw);
                const bool reconcile = contacts && row.effect_unknown;
                w["status"] = reconcile ? "calling" : "ready";
                w["reconcile"] = reconcile;
                w["attempt"] = 0;
            }
            // Due now (parked: when it wakes); the gate decides whether it may run.
            w["run_now"] = true;
            w["reason"] = "retried by an operator";
            break;
        case verb::skip: {
            const auto& def = version(row.version);
            if (campaigns::find_step(def, r.to_step) == nullptr) {
                std::string known;
                for (const auto& s : def.steps) {
                    known += (known.empty() ? "" : ", ") + s.id;
                }
                refuse(row.lead_id, row.status,
                       "version " + std::to_string(row.version) + " of the campaign has no step '" + r.to_step +
                           "' (steps: " + known + ")");
                continue;
            }
            if (campaigns::find_step(def, r.to_step)->kind == campaigns::step_kind::send && !row.accepted_seen) {
                unconnected.insert(row.enrollment_id);
            }
            auto next = campaigns::enter_step(def, r.to_step, now, row.accepted_seen);
            w["step"] = next.step;
            w["status"] = campaigns::to_string(next.st);
            w["next_run_at_ms"] = epoch_ms(next.next_run_at);
            w["attempt"] = 0;
            w["reason"] = "moved to step " + r.to_step + " by an operator";
            break;
        }
        case verb::move:
            if (row.account_id == new_account) {
                refuse(row.lead_id, row.status, "its sender is " + new_account + " already");
                continue;
            }
            if (row.contacted) {
                refuse(row.lead_id, row.status,
                       "its sender " + row.account_id + " has contacted it already (an invitation or message went "
                       "out or may have): its answer can only arrive there");
                continue;
            }
            // It keeps its own time (a delay, the working hours); due now so the claim re-reads
            // it with its new sender (as a reassignment does), or parked until its campaign
            // resumes or the account connects. A wait of the old sender's (a used-up quota, a
            // cooldown) ends: the new sender's own limits decide at the claim.
            w["account_id"] = new_account;
            w["due"] = active && new_connected ? "now" : "park";
            if (row.status == "ready" && senders_wait(row.wait_code)) {
                w["run_now"] = true;
                w["reason"] = "moved from sender " + row.account_id + " by an operator";
            }
            break;
        }
        writes.push_back(std::move(w));
    }
    if (r.what == verb::move && !writes.empty()) {
        // A sender the campaign does not list is taken (the operator may mean it), and said: the
        // file's next apply does not know it, and a lead reassigned later goes among the listed.
        // The file names its senders by id or label, as written.
        const auto& senders = version(c[0][2].as<int>()).accounts;
        const bool listed_sender = std::any_of(senders.begin(), senders.end(), [&](const std::string& s) {
            const auto a = tx.exec_params(q("accounts/resolve"), s);
            return !a.empty() && a[0][0].as<std::string>() == new_account;
        });
        if (!listed_sender) {
            std::string listed;
            for (const auto& s : senders) {
                listed += (listed.empty() ? "" : ", ") + s;
            }
            const std::string named = r.account == new_account ? new_account : r.account + " (" + new_account + ")";
            out.sender_not_listed = named + " is not one of the campaign's senders (" + listed +
                                    "): its quotas and caps apply to these leads; add it to the file's accounts if "
                                    "it is meant to be one";
        }
    }
    if (!writes.empty()) {
        std::map<std::int64_t, std::string> from;
        std::map<std::int64_t, std::int64_t> lead_of;
        for (const auto& row : rows) {
            from[row.enrollment_id] = row.status;
            lead_of[row.enrollment_id] = row.lead_id;
        }
        for (const auto& u : tx.exec_params(q("leads/write"), writes.dump())) {
            auto id = u[0].as<std::int64_t>();
            out.changed.push_back({lead_of[id], id, from[id], u[1].as<std::string>(), u[2].as<std::string>(),
                                   u[3].as<std::string>(), u[4].as<std::string>()});
            out.not_known_connected += unconnected.contains(id) ? 1 : 0;
        }
        if (!out.changed.empty() && r.what != verb::stop) {
            tx.exec(q("engine/notify_wake"));
        }
    }
    // One lead named and refused: a conflict, and nothing changed.
    if (r.lead_ids.size() == 1 && r.state.empty() && out.changed.empty() && !out.refused.empty()) {
        out.result = outcome::kind::conflict;
        out.message = std::string("cannot ") + to_string(r.what) + " lead " + std::to_string(r.lead_ids.front()) +
                      " (" + out.refused.front().state + "): " + out.refused.front().why + "; nothing changed";
        return out;
    }
    tx.commit();
    if (!out.changed.empty()) {
        spdlog::info("leads {}: campaign '{}': {} changed, {} refused", to_string(r.what), r.campaign,
                     out.changed.size(), out.refused_count);
    }
    return out;
}

}  // namespace

std::optional<verb> verb_from_string(const std::string& s) {
    if (s == "stop") return verb::stop;
    if (s == "retry") return verb::retry;
    if (s == "skip") return verb::skip;
    if (s == "move") return verb::move;
    return std::nullopt;
}

const char* to_string(verb v) {
    switch (v) {
    case verb::stop: return "stop";
    case verb::retry: return "retry";
    case verb::skip: return "skip";
    case verb::move: return "move";
    }
    return "?";
}

namespace {

std::string state_names() {
    std::string names;
    for (const auto& s : states) {
        names += (names.empty() ? "" : ", ") + s;
    }
    return names;
}

}  // namespace

std::string check_selection(const request& r) {
    admin_input::problems all;
    if (r.ids_listed && r.lead_ids.empty()) {
        // An empty list is not "no list": read so beside a state, it acted on every lead in it.
        all.add("lead_ids is empty: name at least one lead, or leave lead_ids out and give a state");
    } else if (r.state_given && r.state.empty() && r.lead_ids.empty()) {
        all.add("state is empty: give one of " + state_names() + ", or lead ids instead");
    } else if (r.lead_ids.empty() && r.state.empty()) {
        all.add("name a lead (its id) or a filter (state): nothing was chosen");
    }
    if ((r.ids_listed || !r.lead_ids.empty()) && !r.state.empty()) {
        // Which would win is not obvious (the ids within the state, or either): neither is guessed.
        all.add("give lead ids or a state, not both");
    }
    if (!r.state.empty() && std::find(states.begin(), states.end(), r.state) == states.end()) {
        all.add("state must be one of " + state_names() + ", got '" + orch::text::escaped_clipped(r.state, 100) + "'");
    }
    for (auto id : r.lead_ids) {
        if (id < 1) {
            all.add("a lead id must be a positive integer, got " + std::to_string(id));
            break;
        }
    }
    if (r.lead_ids.size() > 10'000) {
        all.add("at most 10000 lead ids at once (use a state filter for more)");
    }
    return all.joined();
}

std::string check_arguments(const request& r, bool to_given, bool account_given) {
    admin_input::problems all;
    if (r.what == verb::skip && r.to_step.empty() && !to_given) {
        all.add("skip needs the step to move to (to / --to STEP)");
    }
    if (r.what != verb::skip && (!r.to_step.empty() || to_given)) {
        all.add(std::string("'to' is for skip, not ") + to_string(r.what));
    }
    if (r.what == verb::move && r.account.empty() && !account_given) {
        all.add("move needs the new sender (account / --account ACCOUNT)");
    }
    if (r.what != verb::move && (!r.account.empty() || account_given)) {
        all.add(std::string("'account' is for move, not ") + to_string(r.what));
    }
    return all.joined();
}

std::string check(const request& r) {
    admin_input::problems all;
    all.add(check_selection(r));
    all.add(check_arguments(r));
    return all.joined();
}

outcome run(pqxx::connection& conn, const request& asked) {
    // A lead named twice is one lead: the counts below compare the leads found with the ids named.
    request r = asked;
    std::set<std::int64_t> seen;
    std::erase_if(r.lead_ids, [&seen](std::int64_t id) { return !seen.insert(id).second; });
    return again_after_deadlock(std::string("leads ") + to_string(r.what), [&] {
        try {
            return run_once(conn, r);
        } catch (const pqxx::failure&) {
            rethrow_as_store_error(std::string("leads ") + to_string(r.what));
        }
    });
}

json to_json(const request& r, const outcome& o) {
    json changed = json::array();
    for (const auto& c : o.changed) {
        changed.push_back({{"lead_id", c.lead_id}, {"enrollment_id", c.enrollment_id}, {"from", c.from},
                           {"state", c.state}, {"step", c.step}, {"account_id", c.account_id},
                           {"next_run_at", c.next_run_at}});
    }
    json refused = json::array();
    for (const auto& f : o.refused) {
        refused.push_back({{"lead_id", f.lead_id}, {"state", f.state}, {"why", f.why}});
    }
    json by_why = json::object();
    for (const auto& [why, n] : o.refused_by_why) {
        by_why[why] = n;
    }
    return {{"campaign", r.campaign},
            {"action", to_string(r.what)},
            {"matched", o.matched},
            {"changed_count", o.changed.size()},
            {"changed", changed},
            {"refused_count", o.refused_count},
            {"refused", refused},
            {"refused_by_why", by_why},
            {"already_count", o.already_count},
            {"not_known_connected", o.not_known_connected},
            {"warning", o.sender_not_listed.empty() ? json(nullptr) : json(o.sender_not_listed)}};
}

std::string call_kind(const call_hold& call) {
    if (call.leased) {
        return call.reconcile ? "checking" : "in_flight";
    }
    if (!call.lease_owner.empty()) {
        return "outcome_lost";
    }
    return call.reconcile ? "to_check" : "in_flight";
}

std::string waiting_sentence(const json& lead, const std::string& campaign_state, const std::string& pause_reason,
                             bool account_connected, bool later, const call_hold& call) {
    const auto state = lead["state"].get<std::string>();
    const auto reason = lead["reason"].get<std::string>();
    // "2026-11-27T10:49:41Z" -> "2026-11-27 10:49:41 UTC": the json's next_run_at keeps the ISO form.
    const auto shown = [](const std::string& iso) {
        return iso.size() >= 19 && iso[10] == 'T' ? iso.substr(0, 10) + " " + iso.substr(11, 8) + " UTC" : iso;
    };
    const auto hhmm = shown(lead["next_run_at"].get<std::string>());
    if (state == "cancelled" && reason.rfind("stopped", 0) == 0) {
        return reason;  // "stopped: do-not-contact", "stopped by an operator"
    }
    if (state == "done" || state == "replied" || state == "failed" || state == "cancelled") {
        return "finished: " + state + (reason.empty() ? "" : " (" + reason + ")");
    }
    // What holds every lead of the campaign or the sender: a paused campaign, one not active, a
    // disconnected sender. It outranks the lead's own wait.
    std::string outer;
    std::string resumes;  // when a call to be checked is taken up again
    if (campaign_state == "paused") {
        outer = pause_reason.empty()                 ? std::string("paused by an operator")
                : pause_reason.rfind("paused", 0) == 0 ? pause_reason
                                                       : "paused: " + pause_reason;
        resumes = "when the campaign resumes";
    } else if (campaign_state != "active") {
        outer = "campaign " + campaign_state;
    } else if (!account_connected) {
        outer = "waiting for account " + lead["account_id"].get<std::string>() + " to be connected again";
        resumes = "once it is";
    }
    if (state == "calling") {
        // A call in flight, an uncertain one waiting to be checked, or one whose worker stopped
        // before writing its outcome: all "calling" in the table, told apart for the operator,
        // and still when the campaign is paused or the sender disconnected (a call that may have
        // taken effect is worth knowing of then most).
        const auto step = lead["step"].get<std::string>();
        const auto kind = call_kind(call);
        const std::string before = outer.empty() ? std::string() : outer + "; ";
        if (call.leased) {
            return before +
                   (kind == "checking" ? "checking whether an uncertain call took effect" : "calling the API") +
                   " (step " + step + ", worker " + call.lease_owner + ", its lease until " + shown(call.lease_until) +
                   ")";
        }
        if (kind == "outcome_lost") {
            if (!outer.empty()) {
                return before + "worker " + call.lease_owner + "'s lease ended at " + shown(call.lease_until) +
                       " before the call's outcome was written (step " + step +
                       "): whether it took effect is checked" + (resumes.empty() ? "" : " " + resumes);
            }
            return "due now: worker " + call.lease_owner + "'s lease ended at " + shown(call.lease_until) +
                   " before the call's outcome was written (step " + step +
                   "); the next worker takes it up (a call that may have taken effect is checked first)";
        }
        if (kind == "to_check") {
            const std::string why = reason.empty() ? std::string() : ": " + reason;
            if (!outer.empty()) {
                return before + "an uncertain call (step " + step + why + ") waits to be checked" +
                       (resumes.empty() ? "" : " " + resumes);
            }
            if (later && lead.value("wait_code", json()) == "account_budget") {
                // The per-account cap covers the campaign's whole life: nothing frees it at that time.
                return "waiting to check whether an uncertain call took effect (step " + step + why +
                       "; the cap covers the campaign's whole life; raising it wakes the lead; looked at again " + hhmm +
                       ")";
            }
            return later ? "waiting to check whether an uncertain call took effect (step " + step + why + ") until " + hhmm
                         : "due now: to check whether an uncertain call took effect (step " + step + why + ")";
        }
        return before + "calling the API (step " + step + ")";
    }
    if (!outer.empty()) {
        return outer;
    }
    if (!later) {
        return "due now: waiting for a worker (step " + lead["step"].get<std::string>() + ")";
    }
    if (!reason.empty()) {
        auto text = reason.rfind("waiting", 0) == 0 || reason.rfind("paused", 0) == 0 ? reason : "waiting: " + reason;
        if (lead.value("wait_code", json()) == "account_budget") {
            // The per-account cap covers the campaign's whole life: nothing frees it at that time.
            return text + " (the cap covers the campaign's whole life; raising it wakes the lead; looked at again " +
                   hhmm + ")";
        }
        return text + " until " + hhmm;
    }
    return "waiting in step " + lead["step"].get<std::string>() + " until " + hhmm;
}

json lead_item(const pqxx::row& r) {
    auto fields = json::parse(r[3].as<std::string>(), nullptr, false);
    json item = {{"enrollment_id", r[0].as<std::int64_t>()}, {"lead_id", r[1].as<std::int64_t>()},
                 {"profile_url", r[2].as<std::string>()},
                 {"fields", fields.is_discarded() ? json(r[3].as<std::string>()) : fields},
                 {"account_id", r[4].as<std::string>()},      {"step", r[5].as<std::string>()},
                 {"state", r[6].as<std::string>()},           {"reason", r[7].as<std::string>()},
                 {"version", r[8].as<int>()},                 {"variant", r[9].as<std::string>()},
                 {"next_run_at", r[10].as<std::string>()},    {"updated_at", r[11].as<std::string>()},
                 {"finished_at", r[12].is_null() || r[12].as<std::string>().empty() ? json(nullptr)
                                                                                    : json(r[12].as<std::string>())},
                 // A finished lead's due time is never too: it is over, not parked.
                 {"parked", r[13].as<bool>() && (r[12].is_null() || r[12].as<std::string>().empty())},
                 // why it waits, for programs (migration 0018); `reason` is the sentence for people
                 {"wait_code", r["wait_code"].is_null() ? json(nullptr) : json(r["wait_code"].as<std::string>())}};
    // admin/leads and admin/lead end alike: later, campaign state, pause reason, connected.
    const call_hold call{r["reconcile"].as<bool>(), r["lease_owner"].as<std::string>(),
                         r["lease_until"].as<std::string>(), r["leased"].as<bool>()};
    item["waiting"] = waiting_sentence(item, r[16].as<std::string>(), r[17].as<std::string>(), r[18].as<bool>(),
                                       r[15].as<bool>(), call);
    item["call"] = item["state"] == "calling" ? json(call_kind(call)) : json(nullptr);
    // A call on the wire, or one whose outcome went unwritten, waits for nothing: the row's reason
    // and code are of the wait before it (a checked call's are why it is checked, and stay).
    if (item["call"] == "in_flight" || item["call"] == "outcome_lost") {
        item["reason"] = "";
        item["wait_code"] = nullptr;
    }
    // A finished lead has no next run (the row keeps its last next_run_at).
    if (!item["finished_at"].is_null()) {
        item["next_run_at"] = nullptr;
    }
    return item;
}

std::optional<json> lead_detail(pqxx::transaction_base& tx, std::int64_t campaign_id, const std::string& campaign_name,
                                std::int64_t lead_id) {
    auto r = tx.exec_params(q("admin/lead"), campaign_id, lead_id);
    if (r.empty()) {
        return std::nullopt;
    }
    json l = lead_item(r[0]);
    l["attempt"] = r[0]["attempt"].as<int>();
    json timeline = json::array();
    for (const auto& a : tx.exec_params(q("admin/timeline"), l["enrollment_id"].get<std::int64_t>())) {
        timeline.push_back({{"attempt_id", a[0].as<std::int64_t>()},
                            {"step", a[1].as<std::string>()},
                            {"call", a[2].as<std::string>()},
                            {"reconcile", a[3].as<bool>()},
                            {"attempt", a[4].as<int>()},
                            {"variant", a[5].as<std::string>()},
                            {"outcome", a[6].as<std::string>()},
                            {"error", a[7].as<std::string>()},
                            {"credits", a[8].as<std::int64_t>()},
                            {"started_at", a[9].as<std::string>()},
                            {"finished_at", a[10].as<std::string>().empty() ? json(nullptr) : json(a[10].as<std::string>())},
                            {"text", a[11].as<std::string>()}});
    }
    json events = json::array();
    for (const auto& e : tx.exec_params(q("admin/lead_events"), lead_id, l["account_id"].get<std::string>())) {
        events.push_back({{"event_id", e[0].as<std::int64_t>()}, {"kind", e[1].as<std::string>()},
                          {"received_at", e[2].as<std::string>()}});
    }
    // A call whose worker's lease ended before it wrote the outcome stays in_flight in the intent
    // log until the next worker closes it; the timeline says so rather than show it on the wire.
    if (l["call"] == "outcome_lost") {
        const auto& row = r[0];
        for (auto& a : timeline) {
            if (a["outcome"] == "in_flight" && a["error"].get<std::string>().empty()) {
                a["error"] = "outcome not written: worker " + row["lease_owner"].as<std::string>() +
                             "'s lease ended before it was; the next worker checks whether the call took effect";
            }
        }
    }
    l["timeline"] = std::move(timeline);
    l["events"] = std::move(events);
    l["campaign"] = campaign_name;
    return l;
}

}  // namespace orch::engine::lead_ops
