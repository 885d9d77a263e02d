#include "cmd/orchestrator/dnc_leads.hpp"

#include "api/text.hpp"
#include "cmd/orchestrator/command_support.hpp"

#include "engine/dnc.hpp"
#include "engine/lead_ops.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace orch::cli {

namespace {

using engine::json;
namespace dnc = engine::dnc;
namespace lead_ops = engine::lead_ops;

std::string q(std::string_view name) { return std::string(orch::schema::query(name)); }

// A lead that has finished (done, replied, failed, cancelled): it has no next run.
bool finished(const json& l) {
    const auto it = l.find("finished_at");
    return it != l.end() && it->is_string() && !it->get<std::string>().empty();
}

void print_add(const dnc::add_outcome& o, bool by_line) {
    for (const auto& e : o.added) {
        std::cout << "added #" << e.id << " "
                  << orch::text::escaped(e.kind == "company" ? "company " + e.company : e.profile_url) << "\n";
    }
    for (const auto& d : o.duplicates) {
        std::cout << "duplicate" << (by_line ? " (line " + std::to_string(d.line) + ")" : "") << ": "
                  << orch::text::escaped(d.value)
                  << (d.existing_id > 0 ? " is entry #" + std::to_string(d.existing_id)
                      : by_line         ? " repeats line " + std::to_string(d.repeats)
                                        : " repeats an earlier argument")
                  << "\n";
    }
    std::cout << o.added.size() << " added, " << orch::text::counted(static_cast<std::int64_t>(o.duplicates.size()), "duplicate", "duplicates")
              << "; " << orch::text::counted(o.cancelled, "live lead", "live leads") << " stopped (stopped: do-not-contact)";
    if (o.in_flight > 0) {
        std::cout << "; " << o.in_flight << " in a call now, stopped by their worker before any further call";
    }
    std::cout << "\n";
    if (o.live_without_company > 0) {
        std::cout << "note: " << orch::text::counted(o.live_without_company, "live lead has", "live leads have")
                  << " no company field (leads from a search carry none): a company entry cannot match them; "
                     "add their profile URLs to keep them from being contacted\n";
    }
}

int dnc_add(const engine::settings& s, const std::vector<std::string>& urls, const std::vector<std::string>& companies,
            const std::string& reason, const std::string& by) {
    result_on_stdout(s);
    if (urls.empty() && companies.empty()) {
        throw failure("dnc add: give a profile URL or --company NAME", 2);
    }
    std::vector<dnc::input> inputs;
    std::vector<std::string> problems;
    // The reason is every entry's: said once, not under each entry.
    if (auto why = dnc::reason_problem(reason); !why.empty()) {
        problems.push_back("--" + why);
    }
    // The flag names the field: "--company 'A\tB': has a control character", not "…: company: has".
    auto take = [&](dnc::input in, const std::string& shown, std::string_view field, const std::string& flag) {
        if (auto why = dnc::check(in); !why.empty()) {
            if (why.starts_with(field)) {
                why.erase(0, field.size());
            }
            // A problem that quotes the value itself ("'https://…' has a space") names it already.
            problems.push_back(why.starts_with("'") ? flag + why : shown + ": " + why);
        }
        in.reason = reason;
        inputs.push_back(std::move(in));
    };
    for (const auto& u : urls) {
        take({u, "", "", 0}, u.empty() ? std::string("an empty profile URL") : "'" + text::escaped_clipped(u, 200) + "'",
             "profile_url: ", "");
    }
    for (const auto& c : companies) {
        take({"", c, "", 0}, "--company '" + text::escaped_clipped(c, 200) + "'", "company: ", "--company ");
    }
    if (!problems.empty()) {
        std::string all = "dnc add: nothing added:";
        for (const auto& p : problems) {
            all += "\n  " + p;
        }
        throw failure(all, 2);
    }
    auto db = open_db(s);
    print_add(dnc::add(db->connection(), inputs, by), false);
    return 0;
}

int dnc_remove(const engine::settings& s, const std::string& what, const std::string& company) {
    result_on_stdout(s);
    if (what.empty() == company.empty()) {
        throw failure("dnc remove: give an entry id, a profile URL, or --company NAME (one of them)", 2);
    }
    auto db = open_db(s);
    std::int64_t id = 0;
    if (!company.empty()) {
        id = dnc::find(db->connection(), "", company).value_or(0);
        if (id == 0) {
            throw failure("dnc remove: no do-not-contact entry for company '" + orch::text::escaped(company) + "'", 2);
        }
    } else if (what.find_first_not_of("0123456789") == std::string::npos) {
        id = parse_id(what, "the entry id");
    } else {
        id = dnc::find(db->connection(), what, "").value_or(0);
        if (id == 0) {
            throw failure("dnc remove: no do-not-contact entry for '" + orch::text::escaped(what) + "' (canonical: " +
                              orch::text::escaped(engine::canonical_profile_url(what)) + ")", 2);
        }
    }
    auto removed = dnc::remove(db->connection(), id);
    if (!removed) {
        throw failure("dnc remove: no do-not-contact entry " + std::to_string(id), 2);
    }
    std::cout << "removed #" << removed->id << " "
              << orch::text::escaped(removed->kind == "company" ? "company " + removed->company : removed->profile_url)
              << " (leads it stopped stay stopped)\n";
    return 0;
}

int dnc_list(const engine::settings& s, const std::string& format) {
    auto db = open_db(s);
    std::vector<dnc::entry> all;
    for (std::int64_t cursor = 0;;) {
        auto page = dnc::list(db->connection(), cursor, 1000);
        all.insert(all.end(), page.begin(), page.end());
        if (page.size() < 1000) {
            break;
        }
        cursor = page.back().id;
    }
    if (format == "json") {
        json out = json::array();
        for (const auto& e : all) {
            out.push_back(dnc::to_json(e));
        }
        std::cout << json{{"entries", out}}.dump(2) << "\n";
        return 0;
    }
    text_table t{"", {"id", "kind", "profile_url", "company", "reason", "added_by", "added_at"}, {}};
    for (const auto& e : all) {
        t.rows.push_back({std::to_string(e.id), e.kind, e.profile_url, e.company, e.reason, e.added_by, e.added_at});
    }
    if (format == "csv") {
        print_csv(t);
        return 0;
    }
    // One column for what the entry names: the profile, or the company.
    text_table shown{"", {"id", "kind", "profile / company", "added", "by", "reason"}, {}};
    for (const auto& e : all) {
        shown.rows.push_back({std::to_string(e.id), e.kind, e.kind == "company" ? e.company : e.profile_url, e.added_at,
                              e.added_by, e.reason});
    }
    print_aligned(shown);
    std::printf("%zu %s\n", all.size(), all.size() == 1 ? "entry" : "entries");
    return 0;
}

int dnc_import(const engine::settings& s, const std::string& file, const std::string& reason, const std::string& by) {
    result_on_stdout(s);
    auto read = read_file(file, 64 * 1024 * 1024);
    if (!read.text) {
        throw failure("dnc import: cannot read '" + orch::text::escaped(file) + "': " + read.why, 2);
    }
    auto rows = dnc::read_csv(*read.text, reason);
    if (!rows.problems.empty()) {
        std::string all = "dnc import: " + orch::text::escaped(file) + ": " +
                          orch::text::counted(static_cast<std::int64_t>(rows.problems.size()), "invalid line", "invalid lines") +
                          "; nothing was added:";
        for (const auto& p : rows.problems) {
            all += "\n  " + orch::text::escaped(file) + ": " + orch::text::escaped(p);
        }
        throw failure(all, 2);
    }
    auto db = open_db(s);
    print_add(dnc::add(db->connection(), rows.inputs, by), true);
    return 0;
}

// ---- leads ----

std::int64_t campaign_id(pqxx::transaction_base& tx, const std::string& name) {
    auto r = tx.exec_params(q("admin/campaign_id"), name);
    if (r.empty()) {
        throw failure(no_campaign_named(name), 2);
    }
    return r[0][0].as<std::int64_t>();
}

void check_state(const std::string& state) {
    if (!state.empty() && std::find(lead_ops::states.begin(), lead_ops::states.end(), state) == lead_ops::states.end()) {
        std::string all;
        for (const auto& s : lead_ops::states) {
            all += (all.empty() ? "" : ", ") + s;
        }
        throw failure("--state must be one of " + all + ", got '" + state + "'", 2);
    }
}

int leads_list(const engine::settings& s, const std::string& name, const std::string& state, const std::string& format,
               std::int64_t limit) {
    check_state(state);
    auto db = open_db(s);
    pqxx::read_transaction tx(db->connection());
    auto id = campaign_id(tx, name);
    json items = json::array();
    std::int64_t after = 0;
    while (limit <= 0 || static_cast<std::int64_t>(items.size()) < limit) {
        auto rows = tx.exec_params(q("admin/leads"), id, state, after, std::int64_t{1000});
        for (const auto& r : rows) {
            if (limit > 0 && static_cast<std::int64_t>(items.size()) == limit) {
                break;
            }
            items.push_back(engine::lead_ops::lead_item(r));
            after = r[0].as<std::int64_t>();
        }
        if (rows.size() < 1000) {
            break;
        }
    }
    if (format == "json") {
        std::cout << json{{"campaign", name}, {"leads", items}}.dump(2) << "\n";
        return 0;
    }
    auto text = [](const json& v) { return v.is_null() ? std::string() : v.get<std::string>(); };
    if (format == "csv") {
        // The codes for programs (why it waits, a calling lead's kind of call) and the sentence for
        // people, after the columns that were there first.
        text_table t{"", {"lead_id", "enrollment_id", "profile_url", "account_id", "step", "state", "reason",
                          "next_run_at", "updated_at", "finished_at", "wait_code", "call", "waiting"}, {}};
        for (const auto& l : items) {
            t.rows.push_back({std::to_string(l["lead_id"].get<std::int64_t>()),
                              std::to_string(l["enrollment_id"].get<std::int64_t>()), text(l["profile_url"]),
                              text(l["account_id"]), text(l["step"]), text(l["state"]), text(l["reason"]),
                              text(l["next_run_at"]), text(l["updated_at"]), text(l["finished_at"]),
                              text(l["wait_code"]), text(l["call"]), text(l["waiting"])});
        }
        print_csv(t);
        return 0;
    }
    text_table t{"", {"lead", "state", "step", "account", "next run", "profile", "why"}, {}};
    for (const auto& l : items) {
        // A finished lead keeps its last next_run_at in the table; it has no next run.
        t.rows.push_back({std::to_string(l["lead_id"].get<std::int64_t>()), text(l["state"]), text(l["step"]),
                          text(l["account_id"]), finished(l) ? std::string("-") : text(l["next_run_at"]),
                          text(l["profile_url"]),
                          text(l["waiting"]) + (l["parked"].get<bool>() ? " [parked]" : "")});
    }
    print_aligned(t);
    std::cout << orch::text::counted(static_cast<std::int64_t>(items.size()), "lead", "leads") << "\n";
    return 0;
}

int leads_show(const engine::settings& s, const std::string& name, const std::string& lead, const std::string& format) {
    auto lead_id = parse_id(lead, "LEAD_ID");
    auto db = open_db(s);
    pqxx::read_transaction tx(db->connection());
    auto id = campaign_id(tx, name);
    auto detail = engine::lead_ops::lead_detail(tx, id, name, lead_id);
    if (!detail) {
        throw failure("campaign '" + orch::text::escaped(name) + "' has no lead " + orch::text::escaped(lead), 2);
    }
    const json& l = *detail;
    const json& timeline = l["timeline"];
    if (format == "json") {
        std::cout << l.dump(2) << "\n";
        return 0;
    }
    // Text from the API, the campaign file or an operator: escaped for the terminal. A JSON value
    // (the lead's fields) is printed as JSON, whose own escapes stay as they are (escaping them
    // again would double every backslash); what JSON leaves raw (a bidi control) is spelled out.
    auto t = [](const json& v) {
        return v.is_string() ? orch::text::escaped(v.get<std::string>()) : orch::text::terminal_lines(v.dump());
    };
    // `attempt` counts the failed tries at the step since it was entered or retried (0 on the first
    // try, and again after a retry): "attempt 0" read as none made while the timeline showed one.
    auto failed_at_step = [](const json& attempt) {
        const std::int64_t n = attempt.is_number_integer() ? attempt.get<std::int64_t>() : 0;
        return n > 0 ? " (" + orch::text::counted(n, "failed try", "failed tries") + " at it so far)" : std::string();
    };
    // A finished lead's sentence names its state ("finished: replied (the lead replied)"): said once.
    const auto waiting = l["waiting"].is_string() ? l["waiting"].get<std::string>() : std::string();
    const bool says_state = waiting.rfind("finished: ", 0) == 0;
    std::cout << "lead " << l["lead_id"] << " in campaign " << orch::text::escaped(name) << ": "
              << (says_state ? t(l["waiting"]) : t(l["state"]) + " (" + t(l["waiting"]) + ")") << "\n"
              << "  profile     " << t(l["profile_url"]) << "\n"
              << "  step        "
              << (l["step"].is_string() && !l["step"].get<std::string>().empty()
                      ? t(l["step"]) + failed_at_step(l["attempt"])
                      : std::string("none, finished") +
                            (l.contains("finished_at") && l["finished_at"].is_string() &&
                                     !l["finished_at"].get<std::string>().empty()
                                 ? " at " + t(l["finished_at"])
                                 : ""))
              << "\n"
              << "  account     " << t(l["account_id"]) << "\n"
              << "  next run    " << (finished(l) ? std::string("none, finished") : t(l["next_run_at"]))
              << (l["parked"].get<bool>() ? " (parked)" : "")
              << "\n  version     " << l["version"] << "\n  fields      " << t(l["fields"]) << "\n";
    std::cout << "  timeline (" << timeline.size() << (timeline.size() == 1 ? " call" : " calls") << "):\n";
    for (const auto& a : timeline) {
        std::cout << "    " << t(a["started_at"]) << "  " << t(a["step"]) << "  " << t(a["call"])
                  << (a["reconcile"].get<bool>() ? " (reconcile)" : "") << "  " << t(a["outcome"])
                  << (a["error"].get<std::string>().empty() ? "" : "  " + t(a["error"])) << "\n";
        if (const auto text = a.value("text", std::string()); !text.empty()) {
            // The text of a call that was refused, or found not to have gone out, was not sent.
            const auto outcome = a.value("outcome", std::string());
            const char* label = outcome == "ok" || outcome == "reconciled_present" ? "text"
                                : outcome == "uncertain" || outcome == "in_flight" ? "text (may have been sent)"
                                                                                   : "text (not sent)";
            std::cout << "      " << label << ": " << orch::text::escaped(text) << "\n";
        }
    }
    const json& events = l["events"];
    std::cout << "  events (" << events.size() << "):\n";
    for (const auto& e : events) {
        std::cout << "    " << t(e["received_at"]) << "  " << t(e["kind"]) << "\n";
    }
    return 0;
}

int leads_act(const engine::settings& s, lead_ops::request r, const std::vector<std::string>& ids, const std::string& format) {
    result_on_stdout(s);
    // Every bad id said at once (the first five), not one per run.
    std::vector<std::string> bad;
    std::size_t bad_count = 0;
    for (const auto& t : ids) {
        try {
            r.lead_ids.push_back(parse_id(t, "LEAD_ID"));
        } catch (const failure& e) {
            if (++bad_count <= 5) {
                bad.emplace_back(e.what());
            }
        }
    }
    if (bad_count > 0) {
        std::string all;
        for (const auto& b : bad) {
            all += (all.empty() ? "" : "; ") + b;
        }
        if (bad_count > bad.size()) {
            all += "; and " + std::to_string(bad_count - bad.size()) + " more";
        }
        throw failure(all + "; nothing changed", 2);
    }
    if (!r.lead_ids.empty() && !r.state.empty()) {
        throw failure(std::string("leads ") + lead_ops::to_string(r.what) + ": give LEAD_ID(s) or --state, not both", 2);
    }
    if (auto why = lead_ops::check(r); !why.empty()) {
        throw failure(std::string("leads ") + lead_ops::to_string(r.what) + ": " + why, 2);
    }
    auto db = open_db(s);
    auto o = lead_ops::run(db->connection(), r);
    using kind = lead_ops::outcome::kind;
    if (o.result == kind::no_campaign || o.result == kind::no_lead || o.result == kind::bad_request) {
        throw failure(o.message, 2);
    }
    if (o.result == kind::conflict) {
        throw failure(o.message, 2);  // a conflict with the lead's state: the caller's to resolve
    }
    // Every lead matched refused, none changed and none stopped already: nothing the command asked
    // for happened, which a script must tell from an exit status (as with one lead named).
    const int status = o.changed.empty() && o.already_count == 0 && o.refused_count > 0 ? 2 : 0;
    if (format == "json") {
        std::cout << lead_ops::to_json(r, o).dump(2) << "\n";
        return status;
    }
    for (const auto& c : o.changed) {
        const bool ended = c.state == "done" || c.state == "replied" || c.state == "failed" || c.state == "cancelled";
        std::cout << "lead " << c.lead_id << ": " << c.from << " -> " << c.state << (c.step.empty() ? "" : " at " + c.step)
                  << ", account " << c.account_id << (ended ? std::string() : ", next run " + c.next_run_at) << "\n";
    }
    std::cout << lead_ops::to_string(r.what) << ": " << o.matched << " matched, " << o.changed.size() << " changed, "
              << o.refused_count << " refused"
              << (o.already_count > 0 ? ", " + std::to_string(o.already_count) + " stopped already" : std::string())
              << "\n";
    for (const auto& [why, n] : o.refused_by_why) {
        std::cout << "  " << n << " refused: " << why << "\n";
    }
    if (!o.sender_not_listed.empty()) {
        std::cout << "warning: " << orch::text::escaped(o.sender_not_listed) << "\n";
    }
    if (o.not_known_connected > 0) {
        std::cout << "note: " << orch::text::counted(o.not_known_connected, "lead was", "leads were")
                  << " moved to a message step with no acceptance seen: the platform lets only connections be "
                     "messaged, so the message is refused unless the person is connected to the sender already\n";
    }
    if (status != 0) {
        std::cout << "nothing changed: every lead matched was refused\n";
    }
    return status;
}

}  // namespace

void add_dnc_and_leads_commands(CLI::App& app, std::function<int()>& action, std::function<engine::settings()> load_db) {
    // State the callbacks fill, kept alive for the whole run (CLI11 binds options to it).
    struct opts {
        std::vector<std::string> urls, companies, ids;
        std::string reason, by = who_default(), format = "table", file, target, company, campaign, state, lead, to,
                                account;
        std::int64_t limit = 0;
    };
    static opts o;

    auto* dnc_cmd = app.add_subcommand("dnc", "the do-not-contact list: people (profile URL) and companies never contacted");
    dnc_cmd->require_subcommand(1);
    auto* add = dnc_cmd->add_subcommand("add", "add people by profile URL and/or companies; stops their live leads");
    add->add_option("URL", o.urls, "profile URL(s)");
    add->add_option("--company", o.companies, "a company name (matched against a lead's company field, any case)")
        ->allow_extra_args(false);
    add->add_option("--reason", o.reason, "why (kept with the entry)");
    add->add_option("--by", o.by, "who adds it (default cli:$USER)");
    add->callback([&, load_db] {
        action = guarded([load_db] { return dnc_add(load_db(), o.urls, o.companies, o.reason, o.by); });
    });
    auto* remove = dnc_cmd->add_subcommand("remove", "remove an entry (by id, profile URL or --company)");
    remove->add_option("ENTRY", o.target, "entry id or profile URL");
    remove->add_option("--company", o.company, "the company entry to remove");
    remove->callback([&, load_db] { action = guarded([load_db] { return dnc_remove(load_db(), o.target, o.company); }); });
    auto* list = dnc_cmd->add_subcommand("list", "the entries, oldest first");
    list->add_option("--format", o.format)->check(CLI::IsMember({"table", "json", "csv"}));
    list->callback([&, load_db] { action = guarded([load_db] { return dnc_list(load_db(), o.format); }); });
    auto* import = dnc_cmd->add_subcommand(
        "import", "add the entries of a CSV file (profile_url and/or company column, optional reason); "
                  "any invalid line adds nothing");
    import->add_option("FILE", o.file)->required();
    import->add_option("--reason", o.reason, "reason for rows without one");
    import->add_option("--by", o.by, "who adds them (default cli:$USER)");
    import->callback([&, load_db] { action = guarded([load_db] { return dnc_import(load_db(), o.file, o.reason, o.by); }); });

    auto* leads = app.add_subcommand("leads", "a campaign's leads: list, show, and stop|retry|skip|move one or many");
    leads->require_subcommand(1);
    auto* llist = leads->add_subcommand("list", "a campaign's leads (enrollment order)");
    llist->add_option("CAMPAIGN", o.campaign)->required();
    llist->add_option("--state", o.state, "live, ready, calling, waiting, done, replied, failed or cancelled")
        ->check(CLI::IsMember(lead_ops::states));
    llist->add_option("--format", o.format)->check(CLI::IsMember({"table", "json", "csv"}));
    llist->add_option("--limit", o.limit, "at most N leads (default all)")->check(CLI::Range(std::int64_t{1}, std::int64_t{10'000'000}));
    llist->callback([&, load_db] {
        action = guarded([load_db] { return leads_list(load_db(), o.campaign, o.state, o.format, o.limit); });
    });
    auto* show = leads->add_subcommand("show", "one lead: where it is, why, and its calls");
    show->add_option("CAMPAIGN", o.campaign)->required();
    show->add_option("LEAD_ID", o.lead)->required();
    show->add_option("--format", o.format)->check(CLI::IsMember({"table", "json"}));
    show->callback([&, load_db] { action = guarded([load_db] { return leads_show(load_db(), o.campaign, o.lead, o.format); }); });

    const std::vector<std::pair<lead_ops::verb, std::string>> verbs = {
        {lead_ops::verb::stop, "stop live leads (cancelled, \"stopped by an operator\"); never one in a call"},
        {lead_ops::verb::retry, "make ready leads due now; the worker's gate (quotas, cooldowns, hours) still decides"},
        {lead_ops::verb::skip, "move live leads to a step of their campaign (--to STEP)"},
        {lead_ops::verb::move, "give leads their sender has not contacted yet another sender (--account ACCOUNT)"}};
    for (const auto& [v, help] : verbs) {
        auto* sub = leads->add_subcommand(lead_ops::to_string(v), help);
        sub->add_option("CAMPAIGN", o.campaign)->required();
        sub->add_option("LEAD_ID", o.ids, "one or more lead ids (or --state)");
        sub->add_option("--state", o.state, "every lead in this state (live, ready, waiting, ...)")
            ->check(CLI::IsMember(lead_ops::states));
        if (v == lead_ops::verb::skip) {
            sub->add_option("--to", o.to, "the step id to move to")->required();
        }
        if (v == lead_ops::verb::move) {
            sub->add_option("--account", o.account, "the new sender (account id or label)")->required();
        }
        sub->add_option("--format", o.format)->check(CLI::IsMember({"table", "json"}));
        const auto verb = v;
        sub->callback([&, load_db, verb] {
            action = guarded([load_db, verb] {
                lead_ops::request r;
                r.what = verb;
                r.campaign = o.campaign;
                r.state = o.state;
                r.to_step = o.to;
                r.account = o.account;
                check_state(r.state);
                return leads_act(load_db(), r, o.ids, o.format);
            });
        });
    }
}

}  // namespace orch::cli
