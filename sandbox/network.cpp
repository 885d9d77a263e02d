// /v2/network: invitations, connections and recommendations of an account, and the simulated
// people on the other side who accept invitations after a delay.
//
// State: one `relation` per (account, person) in account.relations. Transitions:
//   none | withdrawn | declined --invite--> pending_sent --(timer or control)--> connected
//   pending_sent --withdraw--> withdrawn
//   (seeded or control) --> pending_received --accept--> connected, --decline--> declined
// Every invite request, refused or not, is counted in svc.invitation_records() so tests can
// prove nobody was invited twice.
#include "sandbox/dialect.hpp"
#include "sandbox/network_detail.hpp"
#include "sandbox/service.hpp"

#include "engine/time_format.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_set>

namespace orch::sandbox {

namespace {

using detail::full_name;
using detail::in_quotes;
using detail::profile_picture_url;

// Salts keep the deterministic draws of different purposes independent of each other.
constexpr std::uint64_t accept_salt = 0x61636365'70740001ULL;
constexpr std::uint64_t seed_salt = 0x7365'65640003ULL;
constexpr std::uint64_t secret_salt = 0x73656372'65740004ULL;
constexpr std::uint64_t recommend_salt = 0x7265636f'6d6d0005ULL;
constexpr std::int64_t max_offset = 1'000'000'000;
constexpr auto week = std::chrono::hours(24 * 7);

std::string invitation_urn(std::uint64_t id) { return "urn:li:invitation:" + std::to_string(id); }

// "5m", "3h", "2d": the relative age the platform shows next to an invitation.
std::string relative_age(time_point then, time_point now) {
    auto minutes = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::minutes>(now - then).count());
    if (minutes < 60) {
        return std::to_string(minutes) + "m";
    }
    if (minutes < 24 * 60) {
        return std::to_string(minutes / 60) + "h";
    }
    return std::to_string(minutes / (24 * 60)) + "d";
}

std::int64_t age_days(time_point then, time_point now) {
    return std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::hours>(now - then).count() / 24);
}

const relation* find_relation(const account_state& account, person_id who) {
    auto it = account.relations.find(who);
    return it == account.relations.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Acceptance by the simulated person

void complete_acceptance(service& svc, account_state& account, person_id who) {
    relation& rel = account.relations.at(who);
    rel.state = relation_state::connected;
    rel.connected_at = svc.now();
    auto rec = svc.invitation_records().find({account.id, who});
    if (rec != svc.invitation_records().end()) {
        rec->second.outcome = "accepted";
    }
    const person& p = svc.world().at(who);
    // api-facts 1.4: the payload is not documented; dialect_accepted_shape picks the reading.
    svc.publish_event(account, "accepted_invitation",
                      accepted_invitation_body(svc.cfg(), accepted_person{world::profile_url(p), p.public_id,
                                                                          p.first_name, p.last_name, full_name(p),
                                                                          std::to_string(rel.invitation_id)}),
                      world::profile_url(p));
}

bool will_accept(const service& svc, const std::string& account_id, const person& p) {
    return unit_from_hash(hash64(account_id + "|" + p.public_id, svc.cfg().seed ^ accept_salt)) <
           svc.cfg().accept_probability;
}

void schedule_acceptance(service& svc, const std::string& account_id, person_id who, std::uint64_t invitation_id) {
    auto delay_ms = svc.rng().between(svc.cfg().accept_delay_ms_min, svc.cfg().accept_delay_ms_max);
    svc.schedule_after(std::chrono::milliseconds(delay_ms), [&svc, account_id, who, invitation_id] {
        account_state* account = svc.find_account(account_id);
        if (account == nullptr) {
            return;
        }
        const relation* rel = find_relation(*account, who);
        // Withdrawn, already accepted through the control interface, or re-sent since: the
        // invitation this timer was for no longer exists.
        if (rel == nullptr || rel->state != relation_state::pending_sent || rel->invitation_id != invitation_id) {
            return;
        }
        complete_acceptance(svc, *account, who);
    });
}

// ---------------------------------------------------------------------------------------------
// invite

const person& invite_target(const action_context& ctx) {
    const person* p = detail::person_from_url_params(ctx.svc, ctx.params, {"profile_url", "network_url"});
    auto identifier = optional_string(ctx.params, "identifier");
    if (p != nullptr) {
        return *p;
    }
    if (!identifier) {
        throw invalid_params("params.profile_url (or its alias params.network_url, or params.identifier) is required");
    }
    if (identifier->empty()) {
        throw invalid_params("params.identifier must not be empty");
    }
    p = ctx.svc.world().find_by_public_id(*identifier);
    if (p == nullptr) {
        throw invalid_params("params.identifier: profile not found: " + in_quotes(*identifier));
    }
    return *p;
}

invitation_record& count_invite_request(action_context& ctx, const person& p) {
    invitation_record& rec = ctx.svc.invitation_records()[{ctx.account.id, p.id}];
    if (rec.requests == 0) {
        rec.account_id = ctx.account.id;
        rec.profile_url = world::profile_url(p);
        rec.first_at = ctx.now;
    }
    ++rec.requests;
    rec.last_at = ctx.now;
    return rec;
}

// Records why an invite was refused (unless an invitation exists, whose state stays the
// outcome) and throws the refusal.
[[noreturn]] void refuse(invitation_record& rec, const std::string& reason, const api_error& e) {
    if (rec.sent == 0) {
        rec.outcome = "refused: " + reason;
    }
    throw e;
}

void check_can_invite(const action_context& ctx, const person& p, invitation_record& rec) {
    const relation* rel = find_relation(ctx.account, p.id);
    auto state = rel == nullptr ? relation_state::none : rel->state;
    if (state == relation_state::pending_sent) {
        refuse(rec, "already pending",
               channel_error("an invitation to this person is already pending (invitation_id " +
                             std::to_string(rel->invitation_id) + ")"));
    }
    if (state == relation_state::connected) {
        refuse(rec, "already connected", channel_error("already connected to " + full_name(p)));
    }
    if (state == relation_state::pending_received) {
        refuse(rec, "invitation received",
               channel_error(full_name(p) + " has already invited this account; accept that invitation instead "
                                            "(see list_invitations)"));
    }
}

// The weekly cap counts every invitation created in the last 7 days, withdrawn ones included.
void check_weekly_cap(action_context& ctx, invitation_record& rec) {
    int cap = ctx.svc.cfg().weekly_invitation_cap;
    auto& sent = ctx.account.invitations_sent_at;
    auto horizon = ctx.now - week;
    // Appended in time order, so the expired ones are at the front: dropping them is O(1) per
    // invitation, where a scan of the whole week (erase_if) cost O(week's invitations) per invite.
    while (!sent.empty() && sent.front() < horizon) {
        sent.pop_front();
    }
    if (cap <= 0 || static_cast<int>(sent.size()) < cap) {
        return;
    }
    json extra = json::object();
    if (ctx.svc.cfg().retry_after) {
        auto oldest = *std::min_element(sent.begin(), sent.end());
        auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(oldest + week - ctx.now).count();
        extra["retry_after_s"] = std::max<std::int64_t>(1, (wait_ms + 999) / 1000);
    }
    refuse(rec, "weekly cap",
           api_error("RATE_LIMITED", 429,
                     rate_limit_message(ctx.svc.cfg(), "weekly invitation limit of " + std::to_string(cap) +
                                                           " reached for account " + ctx.account.id),
                     extra));
}

json invite(action_context& ctx) {
    const person& p = invite_target(ctx);
    invitation_record& rec = count_invite_request(ctx, p);
    std::optional<std::string> note;
    try {
        note = optional_string(ctx.params, "message");
    } catch (const api_error& e) {
        refuse(rec, "bad note", e);
    }
    auto note_max = static_cast<std::size_t>(ctx.svc.cfg().invitation_note_max_chars);
    if (note && detail::utf8_length(*note) > note_max) {
        refuse(rec, "note too long",
               invalid_params("params.message is " + std::to_string(detail::utf8_length(*note)) +
                              " characters long; an invitation note has at most " + std::to_string(note_max)));
    }
    check_can_invite(ctx, p, rec);
    check_weekly_cap(ctx, rec);
    try {
        ctx.charge(1);
    } catch (const api_error& e) {
        refuse(rec, "insufficient credits", e);
    }

    relation& rel = ctx.account.relations[p.id];
    rel = relation{};
    rel.state = relation_state::pending_sent;
    rel.invitation_id = ctx.svc.next_invitation_id();
    rel.note = note.value_or("");
    rel.invited_at = ctx.now;
    rel.will_accept = will_accept(ctx.svc, ctx.account.id, p);
    ctx.account.invitations_sent_at.push_back(ctx.now);
    ++rec.sent;
    rec.invitation_id = rel.invitation_id;
    rec.outcome = "pending";
    ctx.side_effect = true;
    if (rel.will_accept) {
        schedule_acceptance(ctx.svc, ctx.account.id, p.id, rel.invitation_id);
    }
    return json{{"invitation_urn", invitation_urn(rel.invitation_id)},
                {"invitation_id", std::to_string(rel.invitation_id)},
                {"profile_urn", world::member_urn(p)},
                {"first_name", p.first_name},
                {"last_name", p.last_name},
                {"headline", p.headline},
                {"public_identifier", p.public_id},
                {"profile_picture_url", profile_picture_url(p)}};
}

// ---------------------------------------------------------------------------------------------
// check_invitation and withdraw

json check_invitation(action_context& ctx) {
    const person* found = detail::person_from_url_params(ctx.svc, ctx.params, {"profile_url", "network_url"});
    if (found == nullptr) {
        throw invalid_params("params.profile_url (or its alias params.network_url) is required");
    }
    const person& p = *found;
    const relation* rel = find_relation(ctx.account, p.id);
    auto state = rel == nullptr ? relation_state::none : rel->state;
    ctx.charge(1);
    std::string name = full_name(p);
    json data = {{"invitation_state", "NO_INVITATION"},
                 {"invitation_type", nullptr},
                 {"invitation_id", nullptr},
                 {"member_distance", ctx.svc.world().member_distance(ctx.account, p)},
                 {"message", "There is no pending invitation between you and " + name + "."}};
    if (state == relation_state::connected) {
        data["invitation_state"] = "ACCEPTED";
        data["invitation_type"] = "CONNECTED";
        data["message"] = "You are connected with " + name + ".";
        if (rel->invitation_id != 0) {
            data["invitation_id"] = rel->invitation_id; // the invitation that made the connection
        }
    } else if (state == relation_state::pending_sent || state == relation_state::pending_received) {
        bool sent = state == relation_state::pending_sent;
        data["invitation_state"] = "PENDING";
        data["invitation_type"] = sent ? "SENT" : "RECEIVED";
        data["invitation_id"] = rel->invitation_id; // unsigned 64-bit: dumped digit for digit
        data["message"] = sent ? "Your invitation to " + name + " is pending."
                               : name + " has invited you to connect; accept or decline it.";
    }
    return data;
}

std::uint64_t invitation_id_param(const json& params) {
    auto it = params.find("invitation_id");
    if (it == params.end() || it->is_null()) {
        throw invalid_params("params.invitation_id is required");
    }
    if (it->is_number_unsigned()) {
        return it->get<std::uint64_t>();
    }
    if (it->is_number_integer()) {
        if (it->get<std::int64_t>() <= 0) {
            throw invalid_params("params.invitation_id must be positive, got " +
                                 std::to_string(it->get<std::int64_t>()));
        }
        return static_cast<std::uint64_t>(it->get<std::int64_t>());
    }
    if (it->is_string()) {
        const auto& text = it->get_ref<const std::string&>();
        std::uint64_t id = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
        if (ec == std::errc{} && end == text.data() + text.size() && !text.empty() && id > 0) {
            return id;
        }
        throw invalid_params("params.invitation_id must be a string of digits, got " + in_quotes(text));
    }
    throw invalid_params(std::string("params.invitation_id must be a string of digits (or an integer), got ") +
                         detail::json_type_name(*it));
}

json withdraw(action_context& ctx) {
    std::uint64_t id = invitation_id_param(ctx.params);
    relation* target = nullptr;
    person_id who = 0;
    for (auto& [pid, rel] : ctx.account.relations) {
        if (rel.invitation_id == id) {
            target = &rel;
            who = pid;
        }
    }
    if (target == nullptr || target->state != relation_state::pending_sent) {
        std::string why = target == nullptr                                   ? "is not an invitation of this account"
                          : target->state == relation_state::pending_received ? "was received, not sent; decline it"
                                                                              : "is no longer pending";
        throw invalid_params("params.invitation_id " + std::to_string(id) + " " + why);
    }
    ctx.charge(1);
    target->state = relation_state::withdrawn;
    auto rec = ctx.svc.invitation_records().find({ctx.account.id, who});
    if (rec != ctx.svc.invitation_records().end()) {
        rec->second.outcome = "withdrawn";
    }
    return json{{"withdrawn", true}, {"invitation_id", std::to_string(id)}};
}

// ---------------------------------------------------------------------------------------------
// accept and decline (received invitations)

struct received {
    person_id who = 0;
    relation* rel = nullptr;
};

// The pending received invitation named by shared_secret and entity_urn (from list_invitations).
received received_invitation(action_context& ctx) {
    const std::string& secret = require_string(ctx.params, "shared_secret");
    const std::string& urn = require_string(ctx.params, "entity_urn");
    for (auto& [pid, rel] : ctx.account.relations) {
        if (rel.shared_secret.empty() || invitation_urn(rel.invitation_id) != urn) {
            continue;
        }
        if (rel.state != relation_state::pending_received) {
            throw invalid_params("params.entity_urn " + in_quotes(urn) + " was already " +
                                 (rel.state == relation_state::declined ? "declined" : "accepted"));
        }
        if (rel.shared_secret != secret) {
            throw invalid_params("params.shared_secret does not match the invitation " + in_quotes(urn));
        }
        return {pid, &rel};
    }
    throw invalid_params("params.entity_urn " + in_quotes(urn) + " is not an invitation received by this account");
}

json accept(action_context& ctx) {
    received inv = received_invitation(ctx);
    ctx.charge(1);
    inv.rel->state = relation_state::connected;
    inv.rel->connected_at = ctx.now;
    return json::object();
}

json decline(action_context& ctx) {
    received inv = received_invitation(ctx);
    ctx.charge(1);
    inv.rel->state = relation_state::declined;
    return json{{"status", "declined"},
                {"message", "Invitation from " + full_name(ctx.svc.world().at(inv.who)) +
                                " declined; the sender is not notified."}};
}

// ---------------------------------------------------------------------------------------------
// Lists (offset pagination)

struct page {
    std::size_t offset = 0;
    std::size_t count = 10;
};

page page_params(const json& params) {
    page out;
    out.count = static_cast<std::size_t>(optional_int(params, "count", 1, 100).value_or(10));
    out.offset = static_cast<std::size_t>(optional_int(params, "offset", 0, max_offset).value_or(0));
    return out;
}

// The pages are the sandbox's: 10 results each, so pages_fetched matches the credits charged.
json pagination(const page& pg, std::size_t returned, std::size_t total) {
    return json{{"offset", pg.offset},
                {"count", returned},
                {"next_offset", pg.offset + returned},
                {"has_more", pg.offset + returned < total},
                {"results_per_page", 10},
                {"pages_fetched", std::max<std::size_t>(1, (returned + 9) / 10)}};
}

std::string invitation_type_param(const json& params) {
    std::string type = optional_string(params, "invitation_type").value_or("CONNECTION");
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::toupper(c); });
    if (type != "CONNECTION" && type != "ORGANIZATION" && type != "CONTENT_SERIES") {
        throw invalid_params("params.invitation_type must be CONNECTION, ORGANIZATION or CONTENT_SERIES, got " +
                             in_quotes(type));
    }
    return type;
}

// The account's relations in `state`, newest invitation first (stable on ties).
std::vector<std::pair<person_id, const relation*>> invitations_in(const account_state& account, relation_state state) {
    std::vector<std::pair<person_id, const relation*>> out;
    for (const auto& [pid, rel] : account.relations) {
        if (rel.state == state) {
            out.emplace_back(pid, &rel);
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.second->invited_at != b.second->invited_at ? a.second->invited_at > b.second->invited_at
                                                            : a.second->invitation_id > b.second->invitation_id;
    });
    return out;
}

json list_invitation_items(action_context& ctx, bool sent) {
    page pg = page_params(ctx.params);
    std::string type = invitation_type_param(ctx.params);
    std::vector<std::pair<person_id, const relation*>> all;
    if (type == "CONNECTION") {
        all = invitations_in(ctx.account, sent ? relation_state::pending_sent : relation_state::pending_received);
    }
    json items = json::array();
    for (std::size_t i = pg.offset; i < all.size() && items.size() < pg.count; ++i) {
        const person& p = ctx.svc.world().at(all[i].first);
        const relation& rel = *all[i].second;
        json who = {{"first_name", p.first_name},
                    {"last_name", p.last_name},
                    {"headline", p.headline},
                    {"network_url", world::profile_url(p)}};
        json item = {{"entity_urn", invitation_urn(rel.invitation_id)},
                     {"invitation_id", std::to_string(rel.invitation_id)},
                     {"invitation_type", type},
                     {"sent_time", relative_age(rel.invited_at, ctx.now)},
                     {"sent_time_days", age_days(rel.invited_at, ctx.now)}};
        if (sent) {
            who["profile_picture"] = profile_picture_url(p);
            item["recipient"] = who;
        } else {
            who["profile_picture_url"] = profile_picture_url(p);
            item["sender"] = who;
            item["shared_secret"] = rel.shared_secret;
        }
        items.push_back(std::move(item));
    }
    ctx.charge(list_cost(items.size()));
    json data = {{"invitations", items},
                 {"total_results", items.size()},
                 {"total_available_results", all.size()},
                 {"pagination", pagination(pg, items.size(), all.size())}};
    if (sent) {
        data["invitation_type"] = type;
    }
    return data;
}

json list_connections(action_context& ctx) {
    page pg = page_params(ctx.params);
    std::vector<std::pair<person_id, const relation*>> all;
    for (const auto& [pid, rel] : ctx.account.relations) {
        if (rel.state == relation_state::connected) {
            all.emplace_back(pid, &rel);
        }
    }
    // Oldest connection first, so offsets stay valid while new connections arrive.
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.second->connected_at != b.second->connected_at ? a.second->connected_at < b.second->connected_at
                                                                : a.first < b.first;
    });
    json items = json::array();
    for (std::size_t i = pg.offset; i < all.size() && items.size() < pg.count; ++i) {
        const person& p = ctx.svc.world().at(all[i].first);
        items.push_back(json{{"name", full_name(p)},
                             {"job_title", p.title},
                             {"profile_url", world::profile_url(p)},
                             {"profile_picture", profile_picture_url(p)},
                             {"connected_at", iso8601_s(all[i].second->connected_at)}});
    }
    ctx.charge(list_cost(items.size()));
    return json{{"connections", items},
                {"total_results", items.size()},
                {"total_available_results", all.size()},
                {"pagination", pagination(pg, items.size(), all.size())}};
}

json recommendations(action_context& ctx) {
    auto count = static_cast<std::size_t>(optional_int(ctx.params, "count", 1, 100).value_or(10));
    // Candidates ranked by a per-account hash: stable for one account, different between accounts.
    std::vector<std::pair<std::uint64_t, person_id>> ranked;
    for (const person& p : ctx.svc.world().people()) {
        const relation* rel = find_relation(ctx.account, p.id);
        bool excluded =
            rel != nullptr && (rel->state == relation_state::connected || rel->state == relation_state::pending_sent ||
                               rel->state == relation_state::pending_received);
        if (!excluded) {
            ranked.emplace_back(hash64(ctx.account.id + "|" + p.public_id, ctx.svc.cfg().seed ^ recommend_salt), p.id);
        }
    }
    auto take = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(take), ranked.end());
    json items = json::array();
    for (std::size_t i = 0; i < take; ++i) {
        const person& p = ctx.svc.world().at(ranked[i].second);
        items.push_back(json{{"public_id", p.public_id},
                             {"first_name", p.first_name},
                             {"last_name", p.last_name},
                             {"headline", p.headline},
                             {"location", p.location},
                             {"profile_picture_url", profile_picture_url(p)},
                             {"network_url", world::profile_url(p)},
                             {"invitation_state", "CAN_INVITE"},
                             {"member_distance", ctx.svc.world().member_distance(ctx.account, p)}});
    }
    ctx.charge(list_cost(items.size()));
    return json{{"results", items}, {"total_results", items.size()}};
}

// ---------------------------------------------------------------------------------------------
// Seeding

// Distinct people for a new account, drawn from a per-account hash stream.
std::vector<person_id> seed_people(const service& svc, const account_state& account, std::size_t wanted) {
    const auto& people = svc.world().people();
    wanted = std::min(wanted, people.size());
    std::vector<person_id> out;
    std::unordered_set<person_id> taken;
    for (std::uint64_t k = 0; out.size() < wanted && k < 8 * wanted + 64; ++k) {
        auto id = static_cast<person_id>(hash64(account.id + "|" + std::to_string(k), svc.cfg().seed ^ seed_salt) %
                                         people.size());
        if (taken.insert(id).second) {
            out.push_back(id);
        }
    }
    return out;
}

void add_received_invitation(service& svc, account_state& account, person_id who, time_point at) {
    relation& rel = account.relations[who];
    rel = relation{};
    rel.state = relation_state::pending_received;
    rel.invitation_id = svc.next_invitation_id();
    rel.invited_at = at;
    rel.shared_secret = hex(hash64(account.id + "|" + std::to_string(rel.invitation_id), svc.cfg().seed ^ secret_salt));
}

} // namespace

void seed_account_network(service& svc, account_state& account) {
    auto connections = static_cast<std::size_t>(std::max(0, svc.cfg().connections_per_account));
    auto received = static_cast<std::size_t>(std::max(0, svc.cfg().received_invitations_per_account));
    auto chosen = seed_people(svc, account, connections + received);
    auto now = svc.now();
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        std::uint64_t h = hash64(account.id + "|age|" + std::to_string(i), svc.cfg().seed ^ seed_salt);
        if (i < connections) {
            relation& rel = account.relations[chosen[i]];
            rel.state = relation_state::connected;
            // Connected between 1 day and about 3 years ago.
            rel.connected_at = now - std::chrono::minutes(24 * 60 + static_cast<std::int64_t>(h % (3 * 365 * 24 * 60)));
        } else {
            // Received between 1 hour and 2 weeks ago.
            add_received_invitation(svc, account, chosen[i],
                                    now - std::chrono::minutes(60 + static_cast<std::int64_t>(h % (14 * 24 * 60))));
        }
    }
}

bool simulate_acceptance(service& svc, account_state& account, person_id who, std::string& why) {
    const relation* rel = find_relation(account, who);
    if (rel == nullptr || rel->state != relation_state::pending_sent) {
        why = "account " + account.id + " has no pending invitation to " + world::profile_url(svc.world().at(who));
        return false;
    }
    complete_acceptance(svc, account, who);
    return true;
}

bool simulate_received_invitation(service& svc, account_state& account, person_id who, std::string& why) {
    const relation* rel = find_relation(account, who);
    auto state = rel == nullptr ? relation_state::none : rel->state;
    std::string url = world::profile_url(svc.world().at(who));
    if (state == relation_state::connected) {
        why = "account " + account.id + " is already connected to " + url;
        return false;
    }
    if (state == relation_state::pending_received) {
        why = url + " has already invited account " + account.id;
        return false;
    }
    if (state == relation_state::pending_sent) {
        why = "account " + account.id + " has a pending invitation to " + url;
        return false;
    }
    add_received_invitation(svc, account, who, svc.now());
    return true;
}

void register_network_actions(action_table& table) {
    table.add("network", "invite", invite);
    table.add("network", "check_invitation", check_invitation);
    table.add("network", "withdraw", withdraw);
    table.add("network", "accept", accept);
    table.add("network", "decline", decline);
    table.add("network", "list_invitations", [](action_context& ctx) { return list_invitation_items(ctx, false); });
    table.add("network", "list_sent", [](action_context& ctx) { return list_invitation_items(ctx, true); });
    table.add("network", "list_connections", list_connections);
    table.add("network", "recommendations", recommendations);
}

} // namespace orch::sandbox
