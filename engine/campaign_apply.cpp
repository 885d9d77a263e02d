#include "engine/campaign_apply.hpp"

#include "engine/outreach/cost_model.hpp"

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

apply_outcome apply_definition(store& db, const campaigns::campaign& c, const std::string& source,
                               const std::vector<std::string>& senders, const std::vector<lead_input>& leads,
                               const std::optional<apply_charge>& charge, std::chrono::system_clock::time_point now,
                               const store::apply_progress& progress) {
    return db.apply_campaign(c.name, campaigns::to_json(c), source, c.steps.front().id, leads, senders, now,
                             progress, charge);
}

}  // namespace orch::engine
