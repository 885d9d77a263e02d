#include "engine/campaign_apply.hpp"
#include "api/text.hpp"
#include "engine/ledger.hpp"
#include "engine/limits/line_ticket.hpp"

#include "engine/outreach/cost_model.hpp"
#include "schema/schema.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <memory>
#include <set>

namespace orch::engine {

campaigns::load_result check_definition(std::string_view text, const std::string& file_name, store* db,
                                        audience_reader read_file) {
    campaigns::load_options o;
    o.file_name = file_name;
    if (read_file) {
        o.read_file = std::move(read_file);
    } else {
        o.read_file = [](const std::string&) { return campaigns::file_read(std::nullopt, "no files are read here"); };
    }
    if (db != nullptr) {
        o.account_lookup = [db](const std::string& id) {
            auto a = db->resolve_account(id);
            if (!a) {
                return campaigns::account_found{};
            }
            return campaigns::account_found{
                a->connected ? campaigns::account_status::connected : campaigns::account_status::disconnected,
                a->account_id};
        };
    }
    return campaigns::load_campaign(text, o);
}

std::vector<std::string> sender_ids(store& db, const campaigns::campaign& c) {
    std::vector<std::string> senders;
    for (const auto& a : c.accounts) {
        auto found = db.resolve_account(a);
        if (!found) {
            throw store_error("account '" + a + "' is not known (it was removed after validation)");
        }
        senders.push_back(found->account_id);
    }
    return senders;
}

outreach::search_people_params audience_search(const campaigns::campaign& c) {
    outreach::search_people_params p;
    p.extra = c.who.search;
    p.total_results = c.who.total_results;
    return p;
}

namespace {
constexpr std::int64_t people_per_page = 50;  // V1's page size (api-facts 2.1)
constexpr int search_calls_max = 1'000;       // 50,000 people (the spec's maximum) at 50 a call
constexpr int limited_through_gate_max = 8;
}  // namespace

boost::asio::awaitable<outreach::result<audience_found>> search_audience(outreach::client& api,
                                                                         const std::string& sender,
                                                                         const campaigns::campaign& c,
                                                                         page_gate before_page,
                                                                         std::chrono::milliseconds page_wait_max,
                                                                         std::optional<search_budget> room) {
    audience_found out;
    auto base = audience_search(c);
    out.asked = base.total_results.value_or(10);
    std::set<std::string> seen;
    std::int64_t next_page = 1;
    std::chrono::milliseconds waited{0};
    bool bounded = false;  // a page asked for fewer people than wanted: the room's credits cover no more
    // The people per call of a server that caps its pages (a call gave fewer than asked, with more
    // to come); 0: not seen. Such a server may fill a page past a smaller ask (and bill it).
    std::int64_t server_page = 0;
    std::int64_t received = 0;  // people the calls gave, repeats included (the server billed them)
    // 429s of this page waited out through the gate's cooldown. Past a few (a cooldown that
    // ends at once, a Retry-After of 0), the page's own wait counts them, a second each.
    int limited_in_page = 0;
    int page_429s = 0;             // the API's 429s to this page (said when the page is held after them)
    std::int64_t held_told = -1;   // the last credits told to before_page.billed
    while (static_cast<std::int64_t>(out.people.size()) < out.asked && out.calls < search_calls_max) {
        auto p = base;
        if (out.calls > 0) {
            p.start_page = next_page;
            p.total_results = out.asked - static_cast<std::int64_t>(out.people.size());
        }
        // A page of n people's price: the cost model's, or what the server billed so far per
        // person it gave when that is more (the model prices a later page as page mode's 10
        // people); a server that caps its pages fills one past a smaller ask, so a page costs at
        // least a full one.
        const auto costs = [&](std::int64_t n) {
            auto q = p;
            q.total_results = n;
            std::int64_t c = outreach::estimate(q).credits;
            if (received > 0) {
                const std::int64_t people = std::max(n, server_page);
                c = std::max(c, (people * out.credits + received - 1) / received);
            }
            return c;
        };
        if (room) {
            // The most people the room's credits left cover: the page asks for no more.
            const std::int64_t left = room->credits - out.credits;
            std::int64_t lo = 0;
            std::int64_t hi = p.total_results.value_or(out.asked);
            if (costs(hi) > left) {
                while (lo < hi) {  // the largest n in [lo, hi] with costs(n) <= left
                    const std::int64_t mid = lo + (hi - lo + 1) / 2;
                    if (costs(mid) <= left) {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                hi = lo;
            }
            if (hi <= 0) {
                const std::string why = room->what + " has " +
                                        orch::text::counted(std::max<std::int64_t>(left, 0), "credit", "credits") +
                                        " left, too few for a page of the search";
                if (out.calls == 0) {
                    outreach::error e;
                    e.kind = outreach::error_kind::cancelled;
                    e.what_to_do = outreach::disposition::give_up;
                    e.code = "OVER_BUDGET";  // search_refusal says it first, from the same numbers
                    e.message = "the audience search was not sent: " + why;
                    co_return e;
                }
                out.held = true;  // the budget or a cap held it, not a page that failed
                out.stopped = why + ": " + std::to_string(out.people.size()) + " of the " + std::to_string(out.asked) +
                              " people asked for were found, for " +
                              orch::text::counted(out.credits, "credit", "credits");
                break;
            }
            bounded = bounded || hi < p.total_results.value_or(out.asked);
            p.total_results = hi;
        }
        // Told before the page takes its place, so that nothing slower than the request itself
        // lies between the two: another process's request at the same instant can reopen the
        // API's Retry-After window, and this page must not leave long after (a database write
        // here put 13-62 ms between them, inside the new window). Told again only when it changes
        // (a page waits for its place in steps).
        if (before_page.billed) {
            const std::int64_t at_most = out.credits + costs(p.total_results.value_or(out.asked));
            if (at_most != held_told) {
                before_page.billed(at_most);
                held_told = at_most;
            }
        }
        if (before_page) {
            if (auto refused = before_page.ask()) {
                // A bucket that refills soon (the key's rate while workers run) is waited for, in
                // steps short enough to keep the page's place in the operators' line.
                if (refused->passing && waited + refused->retry_after <= page_wait_max) {
                    const auto step = std::min(refused->retry_after, limits::limiter::line_refresh);
                    waited += step;
                    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, step);
                    co_await t.async_wait(boost::asio::use_awaitable);
                    continue;
                }
                // What holds the page, and for how long, in words.
                const auto next_s = std::to_string((refused->retry_after.count() + 999) / 1000);
                std::string held = refused->why;
                if (refused->queued) {
                    held += " were still waiting after " + std::to_string((waited.count() + 999) / 1000) + " s";
                } else if (refused->passing) {
                    held += " has no place for it within " + std::to_string((page_wait_max.count() + 999) / 1000) +
                            " s (the next is " + next_s + " s away" +
                            (waited.count() > 0 ? "; it waited " + std::to_string((waited.count() + 999) / 1000) + " s"
                                                : std::string()) +
                            ")";
                }
                if (page_429s > 0) {
                    // The wait was for the API's own answers, not only for our limits.
                    held += "; the API had answered the page RATE_LIMITED " +
                            (page_429s == 1 ? std::string("once") : std::to_string(page_429s) + " times");
                }
                if (out.calls == 0) {
                    outreach::error e;
                    e.kind = outreach::error_kind::cancelled;
                    e.what_to_do = outreach::disposition::retry_later;
                    e.code = refused->unavailable ? "LIMITS_UNAVAILABLE" : "NOT_SENT";
                    e.retry_after_s = (refused->retry_after.count() + 999) / 1000;
                    e.message = "the audience search was not sent: " + held;
                    co_return e;
                }
                out.stopped = "page " + std::to_string(out.calls + 1) + " was not sent: " + held;
                break;
            }
        }
        auto page = co_await api.search_people(sender, p);
        if (!page && page.error().what_to_do == outreach::disposition::back_off) {
            ++page_429s;
        }
        if (before_page.answered) {
            const bool recorded = before_page.answered(page ? nullptr : &page.error());
            if (!page && recorded && page.error().what_to_do == outreach::disposition::back_off &&
                ++limited_in_page <= limited_through_gate_max) {
                // The API's 429, written as the scope's cooldown for every process: the gate's
                // next ask waits for it, within the page's wait, as for the key's rate (an error
                // bills nothing, so the page is asked again as it was).
                continue;
            }
        }
        if (!page && page.error().what_to_do == outreach::disposition::back_off) {
            // The API's 429 with no gate to record it: its Retry-After (else a second) is waited
            // out here, within the page's wait, and the page asked again.
            const std::chrono::milliseconds wait =
                std::chrono::seconds(std::max<std::int64_t>(1, page.error().retry_after_s.value_or(1)));
            if (waited + wait <= page_wait_max) {
                waited += wait;
                boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, wait);
                co_await t.async_wait(boost::asio::use_awaitable);
                continue;
            }
        }
        if (!page) {
            if (out.calls == 0) {
                co_return page.error();
            }
            out.stopped = "page " + std::to_string(out.calls + 1) + " failed: " + outreach::describe(page.error());
            if (page.error().may_have_been_charged) {
                // Its answer was lost after it was sent: most likely billed, so booked at its most
                // (its price as the room counts it) with the pages before it, as every lost read is.
                const std::int64_t most = costs(p.total_results.value_or(out.asked));
                out.credits += most;
                if (before_page.billed) {
                    before_page.billed(out.credits);
                }
                out.stopped += " (its answer was lost after the request was sent: booked at its most, " +
                               orch::text::counted(most, "credit", "credits") + ")";
            }
            break;
        }
        ++out.calls;
        waited = std::chrono::milliseconds{0};  // the next page has its own wait
        limited_in_page = 0;
        page_429s = 0;
        out.credits += page->meta.credits_consumed ? *page->meta.credits_consumed : outreach::estimate(p).credits;
        if (before_page.billed) {
            before_page.billed(out.credits);
        }
        if (page->total_available_results) {
            out.available = page->total_available_results;
        }
        std::size_t fresh = 0;
        for (auto& hit : page->results) {
            if (seen.insert(hit.profile_url.empty() ? hit.public_id : hit.profile_url).second) {
                out.people.push_back(std::move(hit));
                ++fresh;
            }
        }
        bool more = page->has_more.value_or(false) || page->next_start_page.has_value();
        received += static_cast<std::int64_t>(page->results.size());
        if (more && static_cast<std::int64_t>(page->results.size()) < p.total_results.value_or(out.asked)) {
            server_page = std::max(server_page, static_cast<std::int64_t>(page->results.size()));
        }
        if (!more || fresh == 0) {
            break;  // everything at once, the end, or a server that repeats itself
        }
        next_page = page->next_start_page.value_or(
            1 + static_cast<std::int64_t>(out.people.size()) / people_per_page);
    }
    if (static_cast<std::int64_t>(out.people.size()) > out.asked) {
        out.people.resize(static_cast<std::size_t>(out.asked));
    }
    if (bounded && out.stopped.empty() && static_cast<std::int64_t>(out.people.size()) < out.asked) {
        out.held = true;
        out.stopped = "the search asked for no more people than " + room->what + " pays for (" +
                      orch::text::counted(room->credits, "credit", "credits") + " left before it)";
    }
    co_return out;
}

page_gate search_gate(limits::limiter& limiter, const std::string& sender, const campaigns::campaign& c,
                      const sender_search_limits& own) {
    const std::optional<limits::quota> account_quota = own.quota;
    // The campaign's own cap on its searches: the smaller of its day and week numbers (-1: none).
    std::int64_t cap = -1;
    if (auto it = c.limits.find(limits::to_string(limits::action::search)); it != c.limits.end()) {
        for (const auto& n : {it->second.per_day, it->second.per_week}) {
            if (n && (cap < 0 || *n < cap)) {
                cap = *n;
            }
        }
    }
    // The page's ticket in the operators' line while it waits; left when it takes its place, and
    // when the search ends however it ends (the gate's last copy goes).
    auto in_line = std::make_shared<limits::line_ticket>(limiter);
    // The last page's take, for its answer; and the pages taken, for the campaign's cap.
    struct taken_page {
        limits::check check;
        limits::verdict verdict;
        bool open = false;  // taken, its answer not heard yet
        std::int64_t pages = 0;
    };
    auto last = std::make_shared<taken_page>();
    page_gate gate;
    // The account's quota day, as the workers' gate counts the same quota (limits_gate).
    gate.ask = [&limiter, in_line, last, sender, zone = own.time_zone.empty() ? c.schedule.time_zone : own.time_zone,
                account_quota, cap]() -> std::optional<page_refusal> {
        if (cap >= 0 && last->pages >= cap) {
            return page_refusal{"the campaign's search cap (limits.search: " + std::to_string(cap) + " calls) is used up",
                                std::chrono::hours(24), false, false, false};
        }
        const auto place = in_line->ask();
        if (!place) {
            return page_refusal{"Redis did not answer, so the search could not take its place in the rate limits",
                                std::chrono::milliseconds(50), false, true, false};
        }
        if (place->ahead > 0) {
            return page_refusal{std::to_string(place->ahead) +
                                    " operator command(s) that asked for the API key's places before it",
                                limits::limiter::line_look_again, true, false, true};
        }
        limits::check c;
        c.account_id = sender;
        c.what = limits::action::search;
        c.account_quota = account_quota;
        c.day = limits::day_in_zone(std::chrono::system_clock::now(), zone).value_or(limits::local_day{});
        auto v = limiter.take(c);
        if (v.allowed) {
            ++last->pages;
            *last = taken_page{c, v, true, last->pages};
            in_line->leave();
            return std::nullopt;
        }
        const bool passing = v.why == limits::reason::rate || v.why == limits::reason::cooldown_key ||
                             v.why == limits::reason::cooldown_account || v.why == limits::reason::pacing;
        if (!passing) {
            in_line->leave();  // the search does not wait for this one: it stops here
        }
        // Which limit, in words (search_audience adds how long a passing one holds the page); for
        // a quota, the sender's own override or the default.
        const auto in_s = std::to_string((v.retry_after.count() + 999) / 1000);
        std::string which;
        switch (v.why) {
            case limits::reason::rate: which = "the API key's request rate (key_requests_per_minute)"; break;
            case limits::reason::cooldown_key: which = "the API key's cooldown after a RATE_LIMITED answer"; break;
            case limits::reason::cooldown_account:
                which = "account " + sender + "'s search cooldown after a RATE_LIMITED answer";
                break;
            case limits::reason::pacing: which = "account " + sender + "'s pacing of its searches"; break;
            case limits::reason::day_quota:
            case limits::reason::week_quota: {
                const bool day = v.why == limits::reason::day_quota;
                const auto n = account_quota ? (day ? account_quota->per_day : account_quota->per_week) : -1;
                which = std::string("the search ") + (day ? "day" : "week") + " quota of account " + sender +
                        (account_quota ? " (its override: " + std::to_string(n) + ")" : std::string(" (the default)")) +
                        " is used up; it frees in " + in_s + " s";
                break;
            }
            case limits::reason::unavailable:
                which = "Redis did not answer, so the search could not take its place in the rate limits";
                break;
            default: which = std::string("the rate-limit check refused it (") + limits::to_string(v.why) + ")"; break;
        }
        return page_refusal{which, std::max(v.retry_after, std::chrono::milliseconds(50)), passing,
                            v.why == limits::reason::unavailable, false};
    };
    // As the workers' gate hears a call's answer (limits_gate::settled): a 429 did nothing, so
    // the page's place in the quota (and the campaign's cap) is given back, and its scope cools
    // down for every process, the account's search when the answer names the account, else the
    // whole key; an answered page ends the streak of 429s its take saw.
    gate.answered = [&limiter, last, sender](const outreach::error* e) -> bool {
        if (!last->open) {
            return false;  // no take of this gate's is waiting for its answer
        }
        last->open = false;
        if (e == nullptr) {
            if (last->verdict.key_streak || last->verdict.account_streak) {
                limiter.succeeded(last->check, last->verdict);
            }
            return true;
        }
        if (e->what_to_do != outreach::disposition::back_off) {
            return false;
        }
        limiter.refund(last->check);
        --last->pages;
        std::optional<std::chrono::milliseconds> ra;
        if (e->retry_after_s) {
            ra = std::chrono::seconds(*e->retry_after_s);
        }
        const auto where = outreach::limit_names_account(e->message, sender) ? limits::scope::account_action
                                                                              : limits::scope::key;
        return limiter.rate_limited(last->check, where, ra).has_value();
    };
    return gate;
}

sender_search_limits search_limits_of(store& db, const std::string& sender,
                                      const std::array<limits::action_defaults, limits::action_count>& defaults) {
    for (const auto& a : db.accounts()) {
        if (a.account_id == sender) {
            return {effective(a.quotas, defaults)[static_cast<std::size_t>(limits::action::search)], a.time_zone};
        }
    }
    return {};
}

std::string search_failure_text(const outreach::error& e) {
    if (e.code == "NOT_SENT" || e.code == "LIMITS_UNAVAILABLE") {
        return e.message + "; nothing was stored";
    }
    if (e.may_have_been_charged) {
        // The first page's answer was lost after it was sent: the API most likely billed it, and
        // with nothing stored there is no campaign to book it to.
        return "the audience search failed: " + outreach::describe(e) +
               "; its answer was lost after the request was sent, so the API may have billed the page, which no "
               "campaign's budget holds (serve's credit reads count it as drift); nothing was stored";
    }
    return "the audience search failed: " + outreach::describe(e) + "; nothing was stored";
}

apply_charge audience_charge(const audience_found& found, const std::string& sender) {
    return {sender, "search_people", found.credits};
}

std::vector<lead_input> leads_from_file(const campaigns::campaign& c) {
    std::vector<lead_input> leads;
    for (const auto& row : c.who.leads) {
        lead_input l;
        l.profile_url = row.at("profile_url");
        for (const auto& [k, v] : row) {
            l.fields[k] = v;
        }
        leads.push_back(std::move(l));
    }
    return leads;
}

std::vector<lead_input> leads_from_search(const std::vector<outreach::person_hit>& hits) {
    std::vector<lead_input> leads;
    for (const auto& hit : hits) {
        lead_input l;
        l.profile_url = hit.profile_url;
        l.fields = {{"first_name", hit.first_name},
                    {"last_name", hit.last_name},
                    {"full_name", hit.first_name + (hit.last_name.empty() ? "" : " " + hit.last_name)},
                    {"headline", hit.headline},
                    {"location", hit.location},
                    {"profile_url", hit.profile_url}};
        leads.push_back(std::move(l));
    }
    return leads;
}

apply_plan plan_apply(store& db, const campaigns::campaign& c) {
    apply_plan plan;
    if (c.who.kind == campaigns::audience::source::search && !c.accounts.empty()) {
        if (const auto sender = db.resolve_account(c.accounts.front())) {
            plan.search_sender = sender->account_id;
        }
    }
    auto current = db.current_definition(c.name, plan.search_sender);
    if (!current) {
        // A new campaign already past its end_at would stop at once, its audience search billed
        // and its leads enrolled for nothing: refused before anything is (a re-apply of an
        // existing one may keep a past end_at: it stays ended, with a warning).
        if (c.end_at && *c.end_at <= std::chrono::system_clock::now()) {
            throw campaign_conflict("campaign '" + c.name + "': its end_at " + campaigns::format_instant(*c.end_at) +
                                    " has passed: a new campaign would stop at once; give a later end_at, or none");
        }
        return plan;
    }
    plan.exists = true;
    plan.version = current->version;
    plan.active = current->state == "active";
    plan.budget_used = current->budget_used;
    plan.today_used = current->today_used;
    plan.sender_used = current->sender_used;
    plan.file_budget = current->file_budget;
    plan.live_budget = current->live_budget;
    if (current->state == "cancelled") {
        throw campaign_conflict("campaign '" + c.name + "' was cancelled; apply it under a new name");
    }
    const nlohmann::json canonical = campaigns::to_json(c);
    plan.unchanged = current->digest == definition_digest(canonical);
    if (!current->search_basis.empty() && c.who.kind == campaigns::audience::source::search) {
        // What the search depends on, as campaigns/search_basis.sql builds it from the stored
        // version (a key the canonical form lacks is null there).
        const auto& accounts = canonical.at("accounts");
        const auto limits = canonical.value("limits", nlohmann::json::object());
        nlohmann::json basis{
            {"audience", canonical.at("audience")},
            {"exclude", canonical.value("exclude", nlohmann::json())},
            {"first_account", accounts.is_array() && !accounts.empty() ? accounts.front() : nlohmann::json()},
            {"search_limits", limits.value("search", nlohmann::json())}};
        nlohmann::json stored = nlohmann::json::parse(current->search_basis, nullptr, false);
        // The first account is compared as an account: its label in one version and its id in
        // the next are the same sender, and the search through it is the same search.
        const auto as_account = [&db](nlohmann::json& b) {
            if (b.is_object() && b.contains("first_account") && b["first_account"].is_string()) {
                if (const auto found = db.resolve_account(b["first_account"].get<std::string>())) {
                    b["first_account"] = found->account_id;
                }
            }
        };
        as_account(basis);
        as_account(stored);
        plan.audience_unchanged = stored == basis;
        if (!plan.audience_unchanged && stored.is_object()) {
            for (const auto& [key, said] : {std::pair<const char*, const char*>{"audience", "the search"},
                                            {"exclude", "its exclusions"},
                                            {"first_account", "the first account"},
                                            {"search_limits", "limits.search"}}) {
                if (stored.value(key, nlohmann::json()) != basis.value(key, nlohmann::json())) {
                    plan.search_changes.push_back(said);
                }
            }
        }
    }
    return plan;
}

apply_outcome unchanged_outcome(const apply_plan& plan) {
    apply_outcome out;
    out.version = plan.version;
    return out;
}

bool skips_search(const campaigns::campaign& c, const apply_plan& plan, bool search_again) {
    return plan.unchanged && !search_again && c.who.kind == campaigns::audience::source::search;
}

std::string predicted_search_refusal(const campaigns::campaign& c, const apply_plan& plan, bool search_again) {
    if (skips_search(c, plan, search_again) || reuses_audience(c, plan, search_again)) {
        return "";
    }
    return search_refusal(c, plan, true);
}

std::string predicted_search_hold(const campaigns::campaign& c, const apply_plan& plan, bool search_again) {
    if (c.who.kind != campaigns::audience::source::search || !predicted_search_refusal(c, plan, search_again).empty() ||
        (plan.exists && (skips_search(c, plan, search_again) || reuses_audience(c, plan, search_again)))) {
        return "";
    }
    const auto room = search_room(c, plan);
    auto p = audience_search(c);
    const std::int64_t asked = p.total_results.value_or(10);
    const std::int64_t whole = outreach::estimate(p).credits;
    if (whole <= room.credits || room.credits <= 0) {
        return "";
    }
    // The most people the room pays for at the cost model's price (a first page, as the search
    // would ask for them).
    std::int64_t lo = 0;
    std::int64_t hi = asked;
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        p.total_results = mid;
        if (outreach::estimate(p).credits <= room.credits) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return "the audience search would ask for no more people than " + room.what + " pays for (" +
           orch::text::counted(room.credits, "credit", "credits") + " left): at most about " + std::to_string(lo) +
           " of the " + std::to_string(asked) + " people asked for, where the whole search would cost about " +
           orch::text::counted(whole, "credit", "credits") +
           " (fewer when the API caps the people per page: the pages after the first are then paid for whole)";
}

std::string search_refusal(const campaigns::campaign& c, const apply_plan& plan, bool predicted) {
    if (!plan.exists || c.who.kind != campaigns::audience::source::search) {
        return "";
    }
    const ledger::budget wanted{c.budget_credits, c.budget_per_account_credits, c.budget_per_day_credits};
    const bool kept_live = !file_changes_budget(plan.file_budget, wanted) && plan.live_budget;
    const ledger::budget& in_force = kept_live ? *plan.live_budget : wanted;
    // Where the number comes from, and how to raise it: the live budget with `budget set` (or the
    // admin API's PUT), the file's in the file, since it replaces the live one.
    const std::string kept = "; this apply keeps the live budget, since the file's is unchanged";
    const std::string what = "campaign '" + c.name + "': " +
                             (predicted ? "an apply now would not send the audience search: "
                                        : "the audience search was not sent: ");
    // A raise with `budget set` wakes the leads that wait for the cap at once, and while the
    // campaign is active its workers can spend the new room before the next apply searches (a
    // file's raise is stored by the apply that searches, so it has no such race).
    const std::string race = plan.active ? "; while the campaign is active, its waiting leads may spend the raise "
                                           "before the next apply searches, so `campaign pause " +
                                               c.name + "` first, raise, apply, then `campaign resume " + c.name + "`"
                                         : std::string();
    const auto raise = [&](const char* flag, const char* key) {
        return kept_live ? std::string("raise it with `budget set ") + c.name + " " + flag +
                               " N` (the admin API: PUT /v1/campaigns/" + c.name + "/budget" + race +
                               "), or change the file's " + key + ", whose new budget replaces the live one"
                         : std::string("raise ") + key +
                               " in the file (its budget replaces the live one, so `budget set` does not help here)";
    };
    if (plan.budget_used >= in_force.total) {
        const bool live = in_force.total != wanted.total;  // else the file says the same
        return what + "its budget of " + orch::text::counted(in_force.total, "credit", "credits") +
               (live ? " (the live budget, from `budget set`" + kept + ")" : " (budget_credits)") + " has nothing left (" +
               std::to_string(plan.budget_used) + " spent or held by calls in flight); " +
               raise("--credits", "budget_credits") + ", to search again";
    }
    if (in_force.per_day && plan.today_used >= *in_force.per_day) {
        const bool live = in_force.per_day != wanted.per_day;
        return what + "today's day cap of " + orch::text::counted(*in_force.per_day, "credit", "credits") + " (" +
               (live ? "the live cap, from `budget set`" + kept : std::string("budget_per_day_credits")) + "; UTC day " +
               ledger::utc_day(std::chrono::system_clock::now()) + ") has nothing left (" +
               std::to_string(plan.today_used) + " spent or held today); " +
               raise("--per-day", "budget_per_day_credits") + "; or apply again after 00:00 UTC";
    }
    if (in_force.per_account && !plan.search_sender.empty() && plan.sender_used >= *in_force.per_account) {
        const bool live = in_force.per_account != wanted.per_account;
        return what + "the cap of " + orch::text::counted(*in_force.per_account, "credit", "credits") +
               " per sender (" +
               (live ? "the live cap, from `budget set`" + kept : std::string("budget_per_account_credits")) +
               ") has nothing left on account '" + orch::text::escaped(plan.search_sender) +
               "', which the search goes through as the campaign's first account (" + std::to_string(plan.sender_used) +
               " spent or held by calls in flight); " + raise("--per-account", "budget_per_account_credits") +
               ", or list another account first";
    }
    return "";
}

search_budget search_room(const campaigns::campaign& c, const apply_plan& plan) {
    const ledger::budget wanted{c.budget_credits, c.budget_per_account_credits, c.budget_per_day_credits};
    const bool kept_live = !file_changes_budget(plan.file_budget, wanted) && plan.live_budget;
    const ledger::budget& in_force = kept_live ? *plan.live_budget : wanted;
    search_budget out{in_force.total - plan.budget_used,
                      (kept_live ? "the live budget of " : "the budget of ") +
                          orch::text::counted(in_force.total, "credit", "credits") +
                          (kept_live ? " (`budget set`)" : " (budget_credits)")};
    if (in_force.per_day && *in_force.per_day - plan.today_used < out.credits) {
        out = {*in_force.per_day - plan.today_used,
               "today's day cap of " + orch::text::counted(*in_force.per_day, "credit", "credits") +
                   (kept_live ? " (`budget set`)" : " (budget_per_day_credits)")};
    }
    if (in_force.per_account && *in_force.per_account - plan.sender_used < out.credits) {
        out = {*in_force.per_account - plan.sender_used,
               "the cap of " + orch::text::counted(*in_force.per_account, "credit", "credits") + " per sender" +
                   (kept_live ? " (`budget set`)" : " (budget_per_account_credits)")};
    }
    return out;
}

std::string search_again_note(const campaigns::campaign& c, const apply_plan& plan, bool search_again,
                              std::string_view search_again_flag) {
    const auto join_words = [](const std::vector<std::string>& words) {
        std::string out;
        for (std::size_t i = 0; i < words.size(); ++i) {
            out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
        }
        return out;
    };
    if (!plan.exists || c.who.kind != campaigns::audience::source::search || skips_search(c, plan, search_again) ||
        reuses_audience(c, plan, search_again)) {
        return "";
    }
    const std::string sender = c.accounts.empty() ? plan.search_sender : c.accounts.front();
    const std::string changed = plan.search_changes.empty()
                                    ? std::string("the search, its exclusions, the first account or limits.search differ")
                                    : join_words(plan.search_changes) +
                                          // "its exclusions" is plural on its own
                                          (plan.search_changes.size() == 1 &&
                                                   plan.search_changes.front() != std::string("its exclusions")
                                               ? " differs"
                                               : " differ");
    return "an apply sends the audience search again (up to " +
           orch::text::counted(c.who.total_results, "person", "people") + ", through account '" +
           orch::text::escaped_name(sender) +
           "', billed in the campaign's budget; people enrolled already are not enrolled twice): " +
           (search_again ? std::string(search_again_flag) + " asks for it"
                         : changed + " from version " + std::to_string(plan.version) + "'s");
}

bool reuses_audience(const campaigns::campaign& c, const apply_plan& plan, bool search_again) {
    return !plan.unchanged && plan.audience_unchanged && !search_again &&
           c.who.kind == campaigns::audience::source::search;
}

namespace {

state_change change_state_once(store& db, const std::string& name, state_change o) {
    pqxx::work tx(db.connection());
    auto r = tx.exec_params(std::string(schema::query("admin/lock_campaign")), name);
    if (r.empty()) {
        return o;
    }
    o.found = true;
    o.from = r[0][1].as<std::string>();
    if (o.from == "paused" && o.to == "paused" && r[0][2].as<std::string>() != "operator") {
        // Paused by the engine (the key's credits, the budget, end_at): a top-up, a raise or a
        // later end_at would resume it. The operator's pause is kept through those.
        o.warning = "it was paused (" + r[0][3].as<std::string>() +
                    "); it is now paused by an operator too, and only `campaign resume` resumes it";
        set_campaign_state(tx, name, "paused", "paused by an operator");
        tx.commit();
        o.changed = true;
        return o;
    }
    if (o.from == o.to) {
        return o;
    }
    const bool allowed = (o.to == "paused" && o.from == "active") || (o.to == "active" && o.from == "paused") ||
                         (o.to == "cancelled" && (o.from == "active" || o.from == "paused"));
    if (!allowed) {
        o.conflict = true;
        return o;
    }
    if (o.to == "active") {
        // A campaign past its end_at is paused again by the first claim of its rows: a resume
        // would say active and be undone a moment later. Its file's end_at is what resumes it.
        if (const auto ended = tx.exec_params(std::string(schema::query("campaigns/end_at_passed")), name);
            !ended.empty()) {
            o.conflict = true;
            o.why = "its end_at " + ended[0][0].as<std::string>() +
                    " has passed; apply its file with a later end_at, or none, to resume it";
            return o;
        }
        for (const auto& b : ledger::campaign_budgets(tx, name)) {
            if (b.pause_reason.rfind("budget exhausted", 0) == 0) {
                o.warning = "it was paused for its budget (" + b.pause_reason + "); " +
                            orch::text::counted(b.available, "credit is", "credits are") +
                            " available, and it pauses again at the first call they cannot cover: raise the "
                            "budget (`budget set`, or PUT .../budget)";
            }
        }
    }
    set_campaign_state(tx, name, o.to, o.to == "paused" ? "paused by an operator" : "");
    tx.commit();
    o.changed = true;
    return o;
}

}  // namespace

state_change change_campaign_state(store& db, const std::string& name, const std::string& verb) {
    state_change o;
    o.to = verb == "pause" ? "paused" : (verb == "resume" ? "active" : "cancelled");
    // Resuming unparks the campaign's rows, which lanes may be settling in another order.
    return again_after_deadlock("campaign " + verb, [&] {
        try {
            return change_state_once(db, name, o);
        } catch (const pqxx::failure&) {
            rethrow_as_store_error("campaigns/set_state");
        }
    });
}

std::string state_conflict_message(const std::string& verb, const std::string& name, const state_change& o) {
    return "cannot " + verb + " campaign '" + name + "': " + (o.why.empty() ? "it is " + o.from : o.why);
}

apply_outcome apply_definition(store& db, const campaigns::campaign& c, const std::string& source,
                               const std::vector<std::string>& senders, const std::vector<lead_input>& leads,
                               const std::optional<apply_charge>& charge, std::chrono::system_clock::time_point now,
                               const store::apply_progress& progress, bool move_running) {
    return db.apply_campaign(c.name, campaigns::to_json(c), source, c.steps.front().id, leads, senders, now,
                             progress, charge, move_running);
}

apply_preview preview_apply(store& db, const campaigns::campaign& c, const std::vector<std::string>& senders,
                            bool move_running) {
    apply_preview out;
    apply_outcome r;
    try {
        r = db.apply_campaign(c.name, campaigns::to_json(c), "", c.steps.front().id, {}, senders,
                              std::chrono::system_clock::now(), {}, std::nullopt, move_running, true);
    } catch (const campaign_conflict&) {
        return out;
    }
    if (!r.changed && !move_running) {
        return out;  // an unchanged definition: the apply stores nothing and says nothing
    }
    out.warnings = outcome_warnings(r, c);
    out.live_budget = live_budget_text(r, c, true);
    out.live_budget_kept = r.live_budget_kept;
    if (move_running) {
        out.moved = moved_running_text(r);
    }
    return out;
}

std::string budget_below_text(const std::string& the_budget, std::int64_t committed) {
    return the_budget + " is no more than what is already spent or reserved (" +
           orch::text::counted(committed, "credit", "credits") +
           "): nothing is available, and the campaign pauses at its next call, once its calls in flight have settled";
}

std::vector<std::string> outcome_warnings(const apply_outcome& r, const campaigns::campaign& c) {
    std::vector<std::string> out;
    if (r.budget_below_committed) {
        const std::string budget =
            "this version's budget of " + orch::text::counted(r.budget_below_committed->total, "credit", "credits");
        // A completed campaign makes no call: nothing pauses it, but a lead added later has nothing.
        out.push_back(r.state == "completed"
                          ? budget + " is no more than what is already spent or reserved (" +
                                orch::text::counted(r.budget_below_committed->committed, "credit", "credits") +
                                "): nothing is available for a lead an apply adds later"
                          : budget_below_text(budget, r.budget_below_committed->committed));
    }
    for (const auto& cap : r.caps_below_used) {
        const std::string used = orch::text::counted(cap.used, "credit", "credits");
        if (cap.scope == "day") {
            out.push_back("this version's day cap of " + orch::text::counted(cap.cap, "credit", "credits") +
                          " is no more than what the campaign has spent or holds today (" + used + ", UTC day " +
                          cap.key + "): nothing more is spent today, and its leads wait for the next UTC day");
        } else {
            out.push_back("this version's per-account cap of " + orch::text::counted(cap.cap, "credit", "credits") +
                          " is no more than what the campaign has spent or holds through account " +
                          orch::text::escaped_name(cap.key) + " (" + used +
                          "): its leads on that sender make no more calls, and wait for a higher cap");
        }
    }
    if (r.resumed_ended) {
        out.push_back("the campaign was paused at its end_at; this version's " +
                      std::string(c.end_at ? "later end_at (" + campaigns::format_instant(*c.end_at) + ")" : "lack of one") +
                      " resumes it, and its leads go on");
    }
    if (r.excluded_stopped > 0) {
        // As `dnc add` says of the leads it stops: the operator sees who an edit took away.
        out.push_back(orch::text::counted(r.excluded_stopped, "live lead", "live leads") +
                      " stopped: this version's `exclude:` names them (cancelled, reason 'stopped: excluded by the "
                      "campaign')");
    }
    if (r.excluded_calling > 0) {
        out.push_back(orch::text::counted(r.excluded_calling, "live lead", "live leads") +
                      " this version's `exclude:` names " + (r.excluded_calling == 1 ? "is" : "are") +
                      " in a call: its worker stops " + (r.excluded_calling == 1 ? "it" : "them") +
                      " when the call's outcome is recorded (a request already sent has gone; one still queued is "
                      "not sent)");
    }
    if (r.excluded_companies_unmatchable > 0) {
        out.push_back(orch::text::counted(r.excluded_companies_unmatchable, "live lead has", "live leads have") +
                      " no company field (leads from a search carry none): this version's `exclude: companies:` "
                      "cannot match them; add their profile URLs to `exclude: profile_urls:` to keep them from being "
                      "contacted");
    }
    if (r.held_for_start > 0) {
        out.push_back(orch::text::counted(r.held_for_start, "live lead waits", "live leads wait") + " for start_at (" +
                      orch::text::escaped(r.start_at) +
                      "): none is worked before it, those between steps too (a lead in a call finishes it first)");
    }
    if (!r.off_senders.empty()) {
        std::int64_t n = 0;
        std::string who;
        for (const auto& s : r.off_senders) {
            n += s.count;
            const std::string id = orch::text::escaped_name(s.account_id);
            const std::string now = s.connected ? "" : "disconnected now";
            const std::string named = s.label.empty() ? id + (now.empty() ? "" : " (" + now + ")")
                                                      : orch::text::escaped_name(s.label) + " (" + id +
                                                            (now.empty() ? "" : ", " + now) + ")";
            who += (who.empty() ? "" : ", ") + named + ": " + std::to_string(s.count);
        }
        const std::string name = orch::text::escaped_name(c.name);
        out.push_back(orch::text::counted(n, "live lead stays", "live leads stay") +
                      " on senders this version no longer lists (" + who +
                      "): a lead keeps the sender it was given, whose invitation and conversation it goes on with "
                      "(and waits while that account is disconnected); `orchestrator leads list " + name +
                      "` shows each lead's account, `leads move " + name +
                      " LEAD_ID... --account SENDER` moves one not contacted yet (one invited or messaged already "
                      "stays), `leads stop` stops one");
    }
    for (const auto& z : r.zone_conflicts) {
        const std::string id = orch::text::escaped_name(z.account_id);
        out.push_back("account " + (z.label.empty() ? id : orch::text::escaped_name(z.label) + " (" + id + ")") +
                      " counts its day quotas in " +
                      orch::text::escaped(z.time_zone) + ", not in this campaign's time zone (" +
                      orch::text::escaped(c.schedule.time_zone) + "): every campaign on an account shares its one "
                      "quota day, which starts at midnight in " + orch::text::escaped(z.time_zone) +
                      " (`orchestrator accounts limits " + orch::text::escaped(z.account_id) +
                      " --time-zone ZONE` changes it)");
    }
    return out;
}

namespace {
std::string budget_words(std::int64_t total, const std::optional<std::int64_t>& per_day,
                         const std::optional<std::int64_t>& per_account) {
    return orch::text::counted(total, "credit", "credits") + ", per day " + (per_day ? std::to_string(*per_day) : "none") +
           ", per account " + (per_account ? std::to_string(*per_account) : "none");
}
}  // namespace

std::string live_budget_text(const apply_outcome& r, const campaigns::campaign& c, bool preview) {
    if (!r.live_budget) {
        return "";
    }
    const std::string live = budget_words(r.live_budget->total, r.live_budget->per_day, r.live_budget->per_account);
    const std::string file = budget_words(c.budget_credits, c.budget_per_day_credits, c.budget_per_account_credits);
    if (r.live_budget_kept) {
        return std::string(preview ? "the campaign would keep" : "the campaign keeps") + " its live budget (" + live +
               ", from `budget set`): this version " + (preview ? "does" : "did") + " not change the file's budget (" + file +
               "); write the live one into the file, or change the file's, to end the difference";
    }
    return "the file's new budget (" + file + ") " + (preview ? "would replace" : "replaced") + " the live one (" +
           live + ", from `budget set`)";
}

std::string moved_running_text(const apply_outcome& r) {
    std::int64_t kept = 0;
    for (const auto& k : r.kept) {
        kept += k.count;
    }
    if (r.moved == 0 && kept == 0) {
        return "";
    }
    std::string out = "moved " + orch::text::counted(r.moved, "running lead", "running leads") + " to version " +
                      std::to_string(r.version);
    if (kept > 0) {
        out += "; " + std::to_string(kept) + " kept on " + (kept == 1 ? "its" : "their") + " version: ";
        std::int64_t again = 0;  // in a call, or busy: another apply may move them
        for (std::size_t i = 0; i < r.kept.size(); ++i) {
            const auto& k = r.kept[i];
            out += (i > 0 ? ", " : "") + std::to_string(k.count) + " at step '" + orch::text::escaped(k.step) + "' (" +
                   k.why + ")";
            again += k.why == "in a call" || k.why.rfind("busy", 0) == 0 ? k.count : 0;
        }
        if (again > 0) {
            out += std::string("; apply again with --move-running once ") +
                   (again == 1 ? "its call has ended" : "their calls have ended");
        }
    }
    return out;
}

}  // namespace orch::engine
