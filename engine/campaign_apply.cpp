#include "engine/campaign_apply.hpp"

#include "engine/outreach/cost_model.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>

namespace orch::engine {

campaigns::load_result check_definition(std::string_view text, const std::string& file_name, store* db,
                                        audience_reader read_file) {
    campaigns::load_options o;
    o.file_name = file_name;
    if (read_file) {
        o.read_file = std::move(read_file);
    } else {
        o.read_file = [](const std::string&) { return std::optional<std::string>(); };
    }
    if (db != nullptr) {
        o.account_lookup = [db](const std::string& id) {
            auto a = db->resolve_account(id);
            if (!a) {
                return campaigns::account_status::unknown;
            }
            return a->connected ? campaigns::account_status::connected : campaigns::account_status::disconnected;
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

std::int64_t search_charge(const campaigns::campaign& c, const outreach::people_page& found) {
    if (found.meta.credits_consumed) {
        return *found.meta.credits_consumed;
    }
    return outreach::estimate(audience_search(c)).credits;
}

apply_charge audience_charge(const campaigns::campaign& c, const outreach::people_page& found,
                             const std::string& sender) {
    return {sender, "search_people", search_charge(c, found)};
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
    auto current = db.current_definition(c.name);
    if (!current) {
        return plan;
    }
    plan.exists = true;
    plan.version = current->version;
    if (current->state == "cancelled") {
        throw campaign_conflict("campaign '" + c.name + "' was cancelled; apply it under a new name");
    }
    plan.unchanged = current->digest == definition_digest(campaigns::to_json(c));
    return plan;
}

apply_outcome unchanged_outcome(const apply_plan& plan) {
    apply_outcome out;
    out.version = plan.version;
    return out;
}

bool skips_search(const campaigns::campaign& c, const apply_plan& plan) {
    return plan.unchanged && c.who.kind == campaigns::audience::source::search;
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
    if (o.from == o.to) {
        return o;
    }
    const bool allowed = (o.to == "paused" && o.from == "active") || (o.to == "active" && o.from == "paused") ||
                         (o.to == "cancelled" && (o.from == "active" || o.from == "paused"));
    if (!allowed) {
        o.conflict = true;
        return o;
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
    try {
        return change_state_once(db, name, o);
    } catch (const pqxx::failure&) {
        rethrow_as_store_error("campaigns/set_state");
    }
}

std::string state_conflict_message(const std::string& verb, const std::string& name, const std::string& from) {
    return "cannot " + verb + " campaign '" + name + "': it is " + from;
}

apply_outcome apply_definition(store& db, const campaigns::campaign& c, const std::string& source,
                               const std::vector<std::string>& senders, const std::vector<lead_input>& leads,
                               const std::optional<apply_charge>& charge, std::chrono::system_clock::time_point now,
                               const store::apply_progress& progress) {
    return db.apply_campaign(c.name, campaigns::to_json(c), source, c.steps.front().id, leads, senders, now,
                             progress, charge);
}

}  // namespace orch::engine
