#include "cmd/orchestrator/inbox_watch.hpp"
#include "engine/time_format.hpp"

#include "cmd/orchestrator/command_support.hpp"

#include "api/text.hpp"
#include "engine/inbox.hpp"
#include "engine/intake.hpp"
#include "engine/ledger.hpp"
#include "engine/store.hpp"
#include "schema/schema.hpp"

#include <pqxx/pqxx>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

namespace orch::cli {

namespace {

using json = nlohmann::json;
namespace inbox = engine::inbox;

std::string str(const json& j) {
    if (j.is_null()) {
        return "";
    }
    return j.is_string() ? orch::text::escaped(j.get<std::string>()) : j.dump();
}

int inbox_list(const engine::settings& s, const std::string& campaign, const std::string& account, std::int64_t limit,
               const std::string& format) {
    auto db = open_db(s);
    // A filter that names nothing is a typo, not an empty inbox.
    {
        pqxx::read_transaction tx(db->connection());
        if (!campaign.empty() && tx.exec_params("SELECT 1 FROM campaigns WHERE name = $1", campaign).empty()) {
            throw failure("inbox list: " + no_campaign_named(campaign), 2);
        }
    }
    std::string account_id;
    if (!account.empty()) {
        auto found = db->resolve_account(account);
        if (!found) {
            throw failure("inbox list: no account '" + orch::text::escaped_clipped(account, 200) +
                              "' (give its id or label, as `accounts list` shows)",
                          2);
        }
        account_id = found->account_id;
    }
    inbox::list_filter f{campaign, account_id, 0, limit};
    auto out = inbox::list(db->connection(), f);
    if (format == "json") {
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    const auto& items = out["replies"];
    if (format == "csv") {
        // Every reply, whole; the manual replies' count and the last one's state say whether it
        // was answered.
        text_table t{"", {"id", "received_at", "campaign", "account_id", "lead_id", "profile_url", "sender_name",
                          "mark", "manual_replies", "last_reply_state", "text"}, {}};
        auto cell = [](const json& v) { return v.is_null() ? std::string() : v.is_string() ? v.get<std::string>() : v.dump(); };
        for (const auto& r : items) {
            t.rows.push_back({cell(r["id"]), cell(r["received_at"]), cell(r["campaign"]), cell(r["account_id"]),
                              cell(r["lead_id"]), cell(r["profile_url"]), cell(r["sender_name"]), cell(r["mark"]),
                              cell(r["manual_replies"]), cell(r["last_reply_state"]), cell(r["text"])});
        }
        print_csv(t);
        return 0;
    }
    if (items.empty()) {
        std::cout << "no replies\n";
        return 0;
    }
    // One line a reply; the text cut to 70 columns (`inbox show ID` has it whole).
    auto raw = [](const json& v) { return v.is_null() ? std::string() : v.is_string() ? v.get<std::string>() : v.dump(); };
    text_table t{"", {"id", "received", "campaign", "account", "answered", "from", "text"}, {}};
    for (const auto& r : items) {
        std::string answered = r["manual_replies"].get<std::int64_t>() > 0 ? raw(r["last_reply_state"]) : "";
        if (!r["mark"].is_null()) {
            answered = "not interested";
        }
        t.rows.push_back({raw(r["id"]), raw(r["received_at"]), raw(r["campaign"]), raw(r["account_id"]), answered,
                          raw(r["profile_url"].is_null() ? r["sender_name"] : r["profile_url"]), raw(r["text"])});
    }
    print_aligned(t, {0, 0, 0, 0, 0, 60, 70});
    return 0;
}

void print_reply_line(const json& m) {
    std::cout << "manual reply #" << m["id"].get<std::int64_t>() << ": " << str(m["state"]);
    if (!str(m["reason"]).empty()) {
        std::cout << " (" << str(m["reason"]) << ")";
    }
    std::cout << "; tries " << m["tries"].get<std::int64_t>() << ", credits " << m["credits"].get<std::int64_t>() << "\n";
}

int inbox_show(const engine::settings& s, const std::string& id_text, const std::string& format, bool live) {
    const auto id = parse_id(id_text, "the reply id");
    auto db = open_db(s);
    auto out = inbox::show(db->connection(), id);
    if (!out) {
        throw failure("no such reply: " + std::to_string(id), 2);
    }
    if (live) {
        inbox::live_outcome l;
        try {
            l = inbox::live_conversation(db->connection(), s, id);
        } catch (const engine::store_error&) {
            throw;
        } catch (const std::exception& e) {
            throw failure(std::string("inbox show --live: ") + e.what(), 1);
        }
        if (l.status != 200) {
            throw failure("inbox show --live: " + l.message, 1);
        }
        (*out)["conversation"] = l.conversation;
        (*out)["live_credits"] = l.credits;
    }
    if (format == "json") {
        std::cout << out->dump(2) << "\n";
        return 0;
    }
    const auto& r = (*out)["reply"];
    // A reply with no lead names whoever it can: its sender's name, else the conversation.
    const std::string from = !r["profile_url"].is_null() ? str(r["profile_url"])
                             : !str(r["sender_name"]).empty()
                                 ? str(r["sender_name"]) + " (no lead)"
                                 : r["conversation_id"].is_null()
                                       ? std::string("(no lead: its sender is not known)")
                                       : "(no lead: the event names only its conversation " + str(r["conversation_id"]) + ")";
    std::cout << "reply #" << id << " from " << from
              << "\n  campaign: " << (r["campaign"].is_null() ? "(none)" : str(r["campaign"]))
              << "\n  account:  " << str(r["account_id"]) << (r["account_connected"].get<bool>() ? "" : " (unavailable)")
              << "\n  received: " << str(r["received_at"])
              << (r.value("written_late", false) ? " (written " + str(r["written_at"]) + ")"
                      : std::string())
              << "\n";
    if (!r["copy_of"].is_null()) {
        std::cout << "  copy of:  reply #" << r["copy_of"].get<std::int64_t>()
                  << " (the same message, stored under its lead by the catch-up sweep; the inbox lists that one)\n";
    }
    if (!r["mark"].is_null()) {
        std::cout << "  marked:   " << str(r["mark"]) << " by " << str(r["marked_by"]) << " at " << str(r["marked_at"]) << "\n";
    }
    std::cout << (live ? "conversation (read from the API, " +
                             orch::text::counted((*out)["live_credits"].get<std::int64_t>(), "credit", "credits") + "):\n"
                       : std::string("conversation:\n"));
    for (const auto& m : (*out)["conversation"]) {
        // A message of theirs stored late is placed by when it was written (inbox::show): said.
        const std::string written = m.value("written_late", false) ? " (written " + str(m["written_at"]) + ")" : "";
        std::cout << "  " << (m["direction"] == "in" ? "<< " : ">> ") << str(m["at"]) << written << "  "
                  << str(m["text"]) << "\n";
    }
    for (const auto& m : (*out)["manual_replies"]) {
        std::cout << "  ";
        print_reply_line(m);
    }
    return 0;
}

int inbox_reply(const engine::settings& s, const std::string& id_text, const std::string& text, const std::string& key,
                const std::string& by, int wait_s) {
    inbox::reply_request r;
    r.event_id = parse_id(id_text, "the reply id");
    r.text = text;
    r.idempotency_key = key;
    r.requested_by = by;
    if (auto why = inbox::check(r); !why.empty()) {
        throw failure("inbox reply: " + why + "; nothing changed", 2);
    }
    auto db = open_db(s);
    auto o = inbox::request_reply(db->connection(), r);
    using kind = inbox::reply_outcome::kind;
    // Exit 2, as every command's not-found and conflict (the admin API's 404 and 409).
    if (o.what == kind::not_found || o.what == kind::conflict) {
        throw failure("inbox reply: " + o.message + "; nothing changed", 2);
    }
    const auto reply_id = o.reply["id"].get<std::int64_t>();
    auto state = o.reply;
    auto final_state = [](const json& j) {
        const auto st = j["state"].get<std::string>();
        return st == "sent" || st == "failed" || st == "refused";
    };
    // A repeated request of a reply that was sent (or failed) already: its state, not "serve sends it".
    std::cout << (o.what == kind::existing ? "the same reply was asked for before: " : "queued: ") << "manual reply #"
              << reply_id << " to reply #" << r.event_id << (final_state(state) ? "" : " (serve sends it)") << "\n";
    // serve sends it: with no replica running, waiting would only end in "not sent" (a trial
    // waited 30 s and was told that serve sends it when it can, with none running).
    if (!final_state(state) && wait_s > 0) {
        pqxx::nontransaction tx(db->connection());
        if (!tx.exec_params1(std::string(schema::query("intake/leader_running")), engine::intake_leader_lock_key)[0]
                 .as<bool>()) {
            print_reply_line(state);
            std::cerr << "no serve is running (no replica holds the intake's lead): the reply stays queued and the "
                      << "next serve to start sends it (`orchestrator inbox show " << r.event_id << "`)\n";
            return 1;
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
    const auto wall_deadline = std::chrono::system_clock::now() + std::chrono::seconds(wait_s);
    // Queued, and held by a quota, a cap or a cooldown past the wait: waiting would only end in
    // "not sent" (a trial waited 30 s for a reply held until the next UTC day, and exited 1).
    auto held_past_wait = [&](const json& j) {
        if (j["state"] != "queued" || j["reason"].get<std::string>().empty()) {
            return false;
        }
        const auto until = orch::parse_iso8601(j["not_before"].get<std::string>());
        return until && *until > wall_deadline;
    };
    while (!final_state(state) && !held_past_wait(state) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        state = *inbox::get_reply(db->connection(), reply_id);
    }
    print_reply_line(state);
    const auto st = state["state"].get<std::string>();
    if (st == "sent" || (wait_s == 0 && !final_state(state))) {
        return 0;
    }
    if (held_past_wait(state)) {
        std::cout << "held until " << state["not_before"].get<std::string>() << " ("
                  << orch::text::escaped(state["reason"].get<std::string>())
                  << "): serve sends it then, or at once when the account's quotas or the campaign's budget are "
                     "raised (`orchestrator inbox show "
                  << r.event_id << "`)\n";
        return 0;
    }
    if (o.what == kind::existing && (st == "refused" || st == "failed")) {
        // The request is idempotent on its key (by default the reply and the text), so asking
        // again after raising a budget finds the refusal again; a new key is a new request.
        std::cerr << "the same reply was " << st << " before and is not asked for again; to send it now, give it a "
                  << "new idempotency key: `orchestrator inbox reply " << r.event_id << " TEXT --key retry-1`\n";
    } else if (st == "in_flight" || st == "reconcile") {
        // Its send left, or may have: "not sent" would be wrong when the message went out and only
        // its answer was lost (a serve killed mid-send).
        std::cerr << "not confirmed within " << wait_s << " s: the send may have gone out, and serve reads the "
                  << "conversation before it sends again (`orchestrator inbox show " << r.event_id << "`)\n";
    } else if (!final_state(state)) {
        std::cerr << "not sent within " << wait_s << " s: the intent stays, and serve sends it when it can "
                  << "(`orchestrator inbox show " << r.event_id << "`)\n";
    }
    return 1;
}

int inbox_mark(const engine::settings& s, const std::string& id_text, const std::string& mark, const std::string& by) {
    result_on_stdout(s);
    const auto id = parse_id(id_text, "the reply id");
    if (mark != "not-interested" && mark != "not_interested") {
        throw failure("inbox mark: the mark must be not-interested, got '" + orch::text::escaped(mark) + "'", 2);
    }
    if (by.size() > 200 || orch::text::check_name(by)) {
        throw failure("inbox mark: --by must be at most 200 characters without control characters", 2);
    }
    auto db = open_db(s);
    auto o = inbox::mark_not_interested(db->connection(), id, by);
    if (!o.found || !o.message.empty()) {
        throw failure("inbox mark: " + o.message + "; nothing changed", 2);
    }
    std::cout << "reply #" << id << " marked not interested: "
              << (o.added ? "added to" : "already on") << " the do-not-contact list (entry #" << o.entry_id << "); "
              << orch::text::counted(o.stopped, "live lead", "live leads") << " stopped";
    if (o.in_flight > 0) {
        std::cout << "; " << o.in_flight << " in a call now, stopped by their worker";
    }
    std::cout << "\n";
    return 0;
}

// ---- campaign watch ----

std::atomic<bool> interrupted{false};
extern "C" void on_sigint(int) { interrupted = true; }

std::string bar(std::int64_t done, std::int64_t total, int width) {
    const int full = total > 0 ? static_cast<int>(width * done / total) : 0;
    return "[" + std::string(static_cast<std::size_t>(full), '#') + std::string(static_cast<std::size_t>(width - full), '.') +
           "]";
}

// One frame; false: no such campaign.
bool watch_frame(engine::store& db, const std::string& name, std::ostream& out) {
    pqxx::read_transaction tx(db.connection());
    auto row = tx.exec_params(std::string(orch::schema::query("admin/campaign")), name);
    if (row.empty()) {
        return false;
    }
    const auto& c = row[0];
    const auto enrolled = c[7].as<std::int64_t>();
    const auto live = c[8].as<std::int64_t>();
    std::vector<std::tuple<std::string, std::string, std::int64_t>> waits;
    for (const auto& r : tx.exec_params(std::string(orch::schema::query("inbox/waiting_reasons")), name)) {
        waits.emplace_back(r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::int64_t>());
    }
    // The ledger's side (`budget show`): the audience search and the reservations too, which the
    // funnel's credits (the leads' calls) do not hold.
    std::string budget;
    for (const auto& b : engine::ledger::campaign_budgets(tx, name)) {
        if (!b.limits) {
            continue;
        }
        budget = std::to_string(b.spent) + " spent, " + std::to_string(b.reserved) + " held by calls, " +
                 std::to_string(b.available) + " left of " + std::to_string(b.limits->total);
        if (b.limits->per_day) {
            const auto today = engine::cap_use_json(tx, b.campaign_id, b.limits->per_day, std::nullopt,
                                                    std::chrono::system_clock::now())["today"];
            budget += "; day cap " + std::to_string(*b.limits->per_day) + ", today (UTC) " + engine::day_cap_use_text(today);
        }
    }
    tx.commit();
    auto f = db.funnel(name);
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    out << "campaign '" << orch::text::escaped(name) << "'  " << c[2].as<std::string>();
    if (!c[3].is_null() && !c[3].as<std::string>().empty()) {
        out << " (" << orch::text::escaped(c[3].as<std::string>()) << ")";
    }
    out << "  version " << c[4].as<int>() << "   " << std::put_time(&tm, "%Y-%m-%d %H:%M:%S UTC") << "\n\n";
    const auto finished = enrolled - live;
    out << "progress  " << bar(finished, enrolled, 40) << " " << finished << "/" << enrolled << " finished, " << live
        << " live\n\n";
    out << "funnel\n";
    const std::vector<std::pair<const char*, std::int64_t>> stages = {
        {"found", f.found},       {"checked", f.checked}, {"invited", f.invited}, {"accepted", f.accepted},
        {"messaged", f.messaged}, {"replied", f.replied}, {"failed", f.failed},   {"skipped", f.skipped}};
    for (const auto& [stage, n] : stages) {
        out << "  " << std::left << std::setw(10) << stage << std::right << std::setw(8) << n << "  "
            << bar(n, std::max<std::int64_t>(f.found, 1), 30) << "\n";
    }
    out << "  credits   " << std::setw(8) << f.credits << "  (the leads' calls)\n";
    if (!budget.empty()) {
        out << "\nbudget    " << budget << "\n";
    }
    out << "\nwaiting\n";
    if (waits.empty()) {
        out << "  (no live lead)\n";
    }
    for (const auto& [status, reason, n] : waits) {
        // A row without a reason is where its status puts it: in a wait step, in a call, or due.
        const char* where = status == "waiting"   ? "(in a wait step: for the event, or its timeout)"
                            : status == "calling" ? "(a call queued or on the wire)"
                                                  : "(due: waiting for a worker)";
        out << "  " << std::setw(6) << n << "  " << std::left << std::setw(8) << status << std::right << " "
            << (reason.empty() ? std::string(where) : orch::text::escaped(reason)) << "\n";
    }
    return true;
}

int campaign_watch(const engine::settings& s, const std::string& name, int interval_s, bool once) {
    auto db = open_db(s);
    if (once) {
        if (!watch_frame(*db, name, std::cout)) {
            throw failure(no_campaign_named(name), 2);
        }
        return 0;
    }
    interrupted = false;
    auto previous = std::signal(SIGINT, on_sigint);
    while (!interrupted) {
        std::ostringstream frame;
        if (!watch_frame(*db, name, frame)) {
            std::signal(SIGINT, previous);
            throw failure(no_campaign_named(name), 2);
        }
        // Home and clear, then the frame: one write, so the screen does not flicker.
        std::cout << "\x1b[H\x1b[2J" << frame.str() << "\n(every " << interval_s << " s; Ctrl-C to stop)" << std::flush;
        for (int i = 0; i < interval_s * 10 && !interrupted; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    std::signal(SIGINT, previous);
    std::cout << "\n";
    return 0;
}

}  // namespace

void add_inbox_and_watch_commands(CLI::App& app, std::function<int()>& action, std::function<engine::settings()> load_db) {
    struct opts {
        std::string campaign, account, id, text, key, by = who_default(), format = "table", mark, name;
        std::int64_t limit = 50;
        int wait = 30;
        int interval = 2;
        bool once = false;
        bool live = false;
    };
    static opts o;

    auto* cmd = app.add_subcommand("inbox", "replies by campaign and account: read, answer, mark not interested");
    cmd->require_subcommand(1);
    auto* list = cmd->add_subcommand("list", "replies, newest first");
    // An empty value is refused rather than read as "every campaign" (or account).
    list->add_option("--campaign", o.campaign, "only this campaign's")
        ->check(not_empty("a campaign name"));
    list->add_option("--account", o.account, "only those received on this account (id or label)")
        ->check(not_empty("an account id or label"));
    list->add_option("--limit", o.limit, "at most N")->check(CLI::Range(std::int64_t{1}, std::int64_t{500}))->capture_default_str();
    list->add_option("--format", o.format)->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
    list->callback([&, load_db] {
        action = guarded([load_db] { return inbox_list(load_db(), o.campaign, o.account, o.limit, o.format); });
    });
    auto* show = cmd->add_subcommand("show", "a reply with its conversation and our manual replies");
    show->add_option("REPLY_ID", o.id)->required();
    show->add_option("--format", o.format)->check(CLI::IsMember({"table", "json"}))->capture_default_str();
    show->add_flag("--live", o.live,
                   "read the conversation from the API (get_conversation: the key's rate limit, charged to the campaign)");
    show->callback([&, load_db] { action = guarded([load_db] { return inbox_show(load_db(), o.id, o.format, o.live); }); });
    auto* reply = cmd->add_subcommand("reply", "answer a reply: serve sends it once, within quotas and budget");
    reply->add_option("REPLY_ID", o.id)->required();
    reply->add_option("TEXT", o.text, "the message")->required();
    reply->add_option("--key", o.key, "an idempotency key (default: derived from the reply and the text)");
    reply->add_option("--by", o.by, "who answers (default cli:$USER)");
    reply->add_option("--wait", o.wait, "seconds to wait for serve to send it (0: do not wait)")
        ->check(CLI::Range(0, 3600))
        ->type_name("SECONDS")
        ->capture_default_str();
    reply->callback([&, load_db] {
        action = guarded([load_db] { return inbox_reply(load_db(), o.id, o.text, o.key, o.by, o.wait); });
    });
    auto* mark = cmd->add_subcommand("mark", "mark a reply: not-interested puts the person on the do-not-contact list");
    mark->add_option("REPLY_ID", o.id)->required();
    mark->add_option("MARK", o.mark, "not-interested")->required();
    mark->add_option("--by", o.by, "who marks it (default cli:$USER)");
    mark->callback([&, load_db] { action = guarded([load_db] { return inbox_mark(load_db(), o.id, o.mark, o.by); }); });

    auto* campaign = app.get_subcommand("campaign");
    auto* watch = campaign->add_subcommand("watch", "live progress, the funnel and why leads wait, until Ctrl-C");
    watch->add_option("NAME", o.name, "the campaign's name")->required()->type_name("TEXT");
    watch->add_option("--interval", o.interval, "seconds between frames")
        ->check(CLI::Range(1, 3600))
        ->type_name("SECONDS")
        ->capture_default_str();
    watch->add_flag("--once", o.once, "print one frame and exit");
    watch->callback([&, load_db] {
        action = guarded([load_db] { return campaign_watch(load_db(), o.name, o.interval, o.once); });
    });
}

}  // namespace orch::cli
