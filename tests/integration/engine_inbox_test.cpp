// End-to-end tests of the replies inbox (engine/inbox.hpp, engine/inbox_sender.hpp) and
// `orchestrator campaign watch`: the real `orchestrator` (serve with its webhook receiver and
// admin API, a worker, the CLI) against the real sandbox, Postgres and Redis. The leads of a small
// campaign reply for real (the sandbox's replies reach serve as signed webhooks); the tests answer
// them over REST and the CLI and check, against the sandbox's own record of what was sent, that a
// manual reply goes out exactly once: when the request is repeated, and after a simulated crash
// between the call and the recording of its result. Refusals (quota, budget, do-not-contact,
// unavailable account) and bad input change nothing and send nothing.
#include "tests/support/e2e_campaign.hpp"
#include "tests/support/http_client.hpp"
#include "tests/support/orchestrator_env.hpp"
#include "tests/support/require_services.hpp"
#include "tests/support/sandbox_process.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace {

using orch::test::background_process;
using orch::test::free_port;
using orch::test::http_client;
using orch::test::http_result;
using orch::test::json;

const std::string token = "inbox-test-token-0123456789";

class InboxTest : public orch::test::campaign_fixture {
protected:
    void SetUp() override {
        campaign_fixture::SetUp();
        if (IsSkipped()) {
            return;
        }
        start({"--accept-probability", "1", "--accept-delay-ms-min", "50", "--accept-delay-ms-max", "200",
               "--reply-probability", "1", "--reply-delay-ms-min", "50", "--reply-delay-ms-max", "200"});
        env_->set("ORCH_ADMIN_TOKEN", token);
        auto file = write("c.yaml", orch::test::campaign_yaml("inbox-demo", orch::test::search_audience(4), "20s",
                                                               {"sender-1", "sender-2"}));
        auto applied = env_->run({"campaign", "apply", file});
        ASSERT_EQ(applied.exit_code, 0) << applied.output;
        start_serve();
        auto worker = env_->spawn({"worker", "--exit-when-idle", "--lease-seconds", "10", "--api-timeout-ms", "5000"});
        ASSERT_EQ(worker->wait(120'000), 0) << worker->log();
        // Every lead was messaged and replied: four replies in the inbox.
        ASSERT_TRUE(wait_for("SELECT count(*) FROM events WHERE kind = 'message' AND lead_id IS NOT NULL", "4"))
            << serve_->log() << worker->log() << "\nthe leads:\n"
            << env_->scalar("SELECT string_agg(concat_ws(' ', e.lead_id, e.account_id, e.status, e.step, 'accepted=' || "
                            "(e.accepted_at IS NOT NULL), e.reason, l.canonical_url), E'\\n' ORDER BY e.lead_id) FROM "
                            "enrollments e JOIN leads l USING (lead_id)")
            << "\nthe events:\n"
            << env_->scalar("SELECT string_agg(concat_ws(' ', ev.event_id, ev.account_id, ev.kind, 'lead=' || "
                            "COALESCE(ev.lead_id::text, '-'), ev.received_at), E'\\n' ORDER BY ev.event_id) FROM events ev");
        // From here on nobody answers: the inbox holds those four replies.
        http_client control("127.0.0.1", sandbox_->control_port());
        auto quiet = control.request("POST", "/control/settings", R"({"reply_probability": 0})",
                                     {{"Content-Type", "application/json"}});
        ASSERT_EQ(quiet.status, 200) << quiet.body;
    }

    void start_serve() {
        // A restart keeps the receiver's address: the webhooks (and the sandbox's deliveries) stay valid.
        admin_port_ = admin_port_ != 0 ? admin_port_ : free_port();
        if (hook_.empty()) {
            hook_ = "127.0.0.1:" + std::to_string(free_port());
        }
        const auto& hook = hook_;
        serve_ = env_->spawn({"serve", "--webhook-listen", hook, "--webhook-public-url", "http://" + hook + "/webhooks",
                              "--admin-listen", "127.0.0.1:" + std::to_string(admin_port_)});
        for (int i = 0; i < 400; ++i) {
            try {
                if (http_client("127.0.0.1", admin_port_).get("/healthz").status == 200 &&
                    env_->scalar("SELECT count(*) FROM accounts WHERE webhook_id IS NOT NULL") == "3") {
                    client_ = std::make_unique<http_client>("127.0.0.1", admin_port_);
                    return;
                }
            } catch (const std::exception&) {
                // not listening yet
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        FAIL() << "serve did not come up: " << serve_->log();
    }

    bool wait_for(const std::string& sql, const std::string& want, int ms = 20'000) {
        for (int i = 0; i < ms / 50; ++i) {
            if (env_->scalar(sql) == want) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }

    http_result call(const std::string& method, const std::string& target, const std::string& body = "",
                     std::map<std::string, std::string> headers = {}) {
        headers["Authorization"] = "Bearer " + token;
        if (!body.empty()) {
            headers["Content-Type"] = "application/json";
        }
        return client_->request(method, target, body, headers);
    }

    static std::string error_message(const http_result& r) {
        auto j = r.body_json();
        EXPECT_TRUE(j.contains("error")) << r.body;
        EXPECT_EQ(j["error"]["status"], r.status) << r.body;
        return j["error"].value("message", "");
    }

    // How many times the sandbox received `text` (from any account, to anyone).
    int sent_count(const std::string& text) {
        http_client control("127.0.0.1", sandbox_->control_port());
        int n = 0;
        auto all = control.get("/control/side-effects").body_json();
        for (const auto& m : all["messages"]) {
            n += m.contains("text") && m["text"].is_string() && m["text"].get<std::string>() == text ? 1 : 0;
        }
        return n;
    }

    // The replies in the inbox, newest first.
    json replies() {
        auto r = call("GET", "/v1/inbox");
        EXPECT_EQ(r.status, 200) << r.body;
        return r.body_json()["replies"];
    }

    // Polls a manual reply until it is final (or 20 s).
    json settled(std::int64_t reply_id) {
        json m;
        for (int i = 0; i < 400; ++i) {
            m = call("GET", "/v1/manual-replies/" + std::to_string(reply_id)).body_json()["manual_reply"];
            const auto st = m["state"].get<std::string>();
            if (st == "sent" || st == "failed" || st == "refused") {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return m;
    }

    std::unique_ptr<background_process> serve_;
    std::unique_ptr<http_client> client_;
    unsigned short admin_port_ = 0;
    std::string hook_;
};

// List, filters and the conversation; answering over REST (202, then sent once; a repeat is the
// same reply); answering with the CLI; bad input.
TEST_F(InboxTest, ListShowAndReplyExactlyOnce) {
    auto list = replies();
    ASSERT_EQ(list.size(), 4u) << list.dump();
    for (const auto& r : list) {
        EXPECT_EQ(r["campaign"], "inbox-demo") << r.dump();
        EXPECT_FALSE(r["text"].get<std::string>().empty()) << r.dump();
        EXPECT_TRUE(r["profile_url"].is_string()) << r.dump();
    }
    // By campaign and account.
    EXPECT_EQ(call("GET", "/v1/inbox?campaign=no-such").body_json()["replies"].size(), 0u);
    const auto account = list[0]["account_id"].get<std::string>();
    const auto on_account = call("GET", "/v1/inbox?account=" + account).body_json()["replies"];
    EXPECT_GE(on_account.size(), 1u);
    for (const auto& r : on_account) {
        EXPECT_EQ(r["account_id"], account);
    }
    const auto paged = call("GET", "/v1/inbox?limit=3").body_json();
    EXPECT_EQ(paged["replies"].size(), 3u);
    EXPECT_EQ(call("GET", "/v1/inbox?limit=3&cursor=" + std::to_string(paged["next_cursor"].get<std::int64_t>()))
                  .body_json()["replies"]
                  .size(),
              1u);

    // The conversation: our campaign message, then their reply.
    const auto id = list[0]["id"].get<std::int64_t>();
    const auto path = "/v1/inbox/" + std::to_string(id);
    auto shown = call("GET", path);
    ASSERT_EQ(shown.status, 200) << shown.body;
    auto conv = shown.body_json()["conversation"];
    ASSERT_GE(conv.size(), 2u) << shown.body;
    EXPECT_EQ(conv[0]["direction"], "out") << shown.body;
    EXPECT_EQ(conv[conv.size() - 1]["direction"], "in") << shown.body;
    EXPECT_EQ(conv[conv.size() - 1]["text"], list[0]["text"]);

    // Bad input: the documented error shape, nothing stored.
    for (const auto& [target, body, status] : std::vector<std::tuple<std::string, std::string, int>>{
             // 400: the request cannot be read; 422: a JSON object whose fields are wrong.
             {path + "/reply", "", 400},
             {path + "/reply", "{}", 422},
             {path + "/reply", "{\"text\": null}", 422},
             {path + "/mark", " ", 400},
             {path + "/reply", "{\"text\": \"   \"}", 422},
             {path + "/reply", "{\"text\": 5}", 422},
             {path + "/reply", "{\"text\": \"hi\", \"extra\": 1}", 422},
             {path + "/reply", "not json", 400},
             {path + "/reply", "{\"text\": \"a\\u0000b\"}", 400},
             {path + "/reply", "{\"text\": \"" + std::string(8001, 'x') + "\"}", 422},
             {"/v1/inbox/abc/reply", "{\"text\": \"hi\"}", 400},
             {"/v1/inbox/999999/reply", "{\"text\": \"hi\"}", 404},
             {path + "/mark", "{\"mark\": \"spam\"}", 422},
             {path + "/mark", "{\"mark\": \"not_interested\", \"by\": 7}", 422}}) {
        auto r = call("POST", target, body);
        EXPECT_EQ(r.status, status) << target << " " << body.substr(0, 60) << ": " << r.body;
        EXPECT_FALSE(error_message(r).empty());
    }
    EXPECT_NE(error_message(call("POST", path + "/reply", "{\"text\": null}")).find("'text' must be a string, got null"),
              std::string::npos);
    EXPECT_NE(error_message(call("POST", path + "/reply", "")).find("empty body: send {\"text\""), std::string::npos);
    EXPECT_NE(error_message(call("POST", path + "/reply", R"({"text": "hi\u0007there"})"))
                  .find("'text' holds a control character other than a line break or tab (U+0007 at character 3)"),
              std::string::npos);
    // A body with several problems is answered with every one of them.
    EXPECT_EQ(error_message(call("POST", path + "/reply", R"({"text": "  ", "extra": 1, "requested_by": 3})")),
              "unknown field 'extra' (fields: text, idempotency_key, requested_by); 'requested_by' must be a string, "
              "got 3; 'text' is empty; nothing changed");
    EXPECT_EQ(error_message(call("POST", path + "/mark", R"({"mark": "spam", "by": 7, "x": null})")),
              "unknown field 'x' (fields: mark, by); 'mark' must be \"not_interested\" (or \"not-interested\"), got "
              "\"spam\"; 'by' must be a string, got 7; nothing changed");
    EXPECT_EQ(call("GET", "/v1/inbox?limit=0").status, 400);
    EXPECT_EQ(call("GET", "/v1/inbox?color=red").status, 400);
    EXPECT_EQ(call("GET", "/v1/inbox/999999").status, 404);
    auto wrong = call("DELETE", path);
    EXPECT_EQ(wrong.status, 405);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM manual_replies"), "0");

    // Answered over REST: queued (202), then sent once by serve.
    const std::string text = "Thanks for your answer! Does Tuesday work?";
    const std::string body = json{{"text", text}}.dump();
    auto queued = call("POST", path + "/reply", body);
    ASSERT_EQ(queued.status, 202) << queued.body;
    const auto reply_id = queued.body_json()["manual_reply"]["id"].get<std::int64_t>();
    auto done = settled(reply_id);
    ASSERT_EQ(done["state"], "sent") << done.dump() << serve_->log();
    EXPECT_GT(done["credits"].get<int>(), 0) << "the send was billed to the campaign";
    EXPECT_EQ(sent_count(text), 1);
    // The same request again: the same reply, not a second send.
    auto again = call("POST", path + "/reply", body);
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(again.body_json()["duplicate"], true);
    EXPECT_EQ(again.body_json()["manual_reply"]["id"], reply_id);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(sent_count(text), 1);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM manual_replies"), "1");
    // The conversation shows it; the ledger charged it as a send of the campaign.
    auto conv2 = call("GET", path).body_json();
    EXPECT_EQ(conv2["conversation"].back()["text"], text) << conv2.dump();
    EXPECT_EQ(conv2["manual_replies"].size(), 1u);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM step_attempts WHERE step = 'manual_reply' AND outcome = 'ok'"), "1");
    // The conversation as the API has it (get_conversation), charged to the campaign.
    const auto charged_before = env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'get_conversation'");
    auto live = call("GET", path + "?live=true");
    ASSERT_EQ(live.status, 200) << live.body;
    auto lc = live.body_json()["live_conversation"];
    ASSERT_GE(lc.size(), 3u) << live.body;
    EXPECT_EQ(lc.back()["text"], text) << live.body;
    EXPECT_EQ(lc.back()["direction"], "out") << live.body;
    if (live.body_json()["live_credits"].get<int>() > 0) {
        EXPECT_EQ(env_->scalar("SELECT count(*) FROM ledger_transfers WHERE action = 'get_conversation'"),
                  std::to_string(std::stoi(charged_before) + 1));
    }
    EXPECT_EQ(call("GET", path + "?live=maybe").status, 400);
    auto cli_live = env_->run({"inbox", "show", std::to_string(id), "--live"});
    ASSERT_EQ(cli_live.exit_code, 0) << cli_live.output;
    EXPECT_NE(cli_live.output.find("read from the API"), std::string::npos) << cli_live.output;
    EXPECT_NE(cli_live.output.find(text), std::string::npos) << cli_live.output;
    // A client key reused for another text is a conflict.
    const std::map<std::string, std::string> keyed = {{"Idempotency-Key", "op-42"}};
    auto k1 = call("POST", path + "/reply", json{{"text", "Keyed answer"}}.dump(), keyed);
    ASSERT_EQ(k1.status, 202) << k1.body;
    auto k2 = call("POST", path + "/reply", json{{"text", "Another text"}}.dump(), keyed);
    EXPECT_EQ(k2.status, 409) << k2.body;
    EXPECT_NE(error_message(k2).find("idempotency key"), std::string::npos);
    EXPECT_EQ(settled(k1.body_json()["manual_reply"]["id"].get<std::int64_t>())["state"], "sent");
    EXPECT_EQ(sent_count("Keyed answer"), 1);
    EXPECT_EQ(sent_count("Another text"), 0);

    // The CLI: list, show, reply (waits for serve), and the repeat.
    const auto other = std::to_string(list[1]["id"].get<std::int64_t>());
    auto cli_list = env_->run({"inbox", "list", "--campaign", "inbox-demo", "--format", "json"});
    ASSERT_EQ(cli_list.exit_code, 0) << cli_list.output;
    EXPECT_EQ(json::parse(cli_list.output)["replies"].size(), 4u);
    auto cli_show = env_->run({"inbox", "show", other});
    ASSERT_EQ(cli_show.exit_code, 0) << cli_show.output;
    EXPECT_NE(cli_show.output.find("conversation:"), std::string::npos) << cli_show.output;
    const std::string cli_text = "Happy to share more, here is a link.";
    auto r1 = env_->run({"inbox", "reply", other, cli_text, "--wait", "20"});
    ASSERT_EQ(r1.exit_code, 0) << r1.output << serve_->log();
    EXPECT_NE(r1.output.find(": sent"), std::string::npos) << r1.output;
    auto r2 = env_->run({"inbox", "reply", other, cli_text, "--wait", "5"});
    ASSERT_EQ(r2.exit_code, 0) << r2.output;
    EXPECT_NE(r2.output.find("asked for before"), std::string::npos) << r2.output;
    EXPECT_EQ(r2.output.find("serve sends it"), std::string::npos) << r2.output;  // sent already
    EXPECT_EQ(sent_count(cli_text), 1);
    auto bad = env_->run({"inbox", "reply", "abc", "x"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    auto empty = env_->run({"inbox", "reply", other, " "});
    EXPECT_EQ(empty.exit_code, 2) << empty.output;
    // Not found: exit 2, as every command's (the admin API's 404).
    for (const std::vector<std::string>& args : {std::vector<std::string>{"inbox", "reply", "999999", "x"},
                                                std::vector<std::string>{"inbox", "mark", "999999", "not-interested"},
                                                std::vector<std::string>{"inbox", "show", "999999"}}) {
        auto missing = env_->run(args);
        EXPECT_EQ(missing.exit_code, 2) << args[1] << ": " << missing.output;
    }
    // With no serve running, the reply is queued and the command says so at once (it waited its
    // --wait out and said that serve sends it when it can).
    serve_->stop(SIGTERM);
    const auto third = std::to_string(list[2]["id"].get<std::int64_t>());
    const auto asked_at = std::chrono::steady_clock::now();
    auto alone = env_->run({"inbox", "reply", third, "Back soon", "--wait", "30"});
    EXPECT_EQ(alone.exit_code, 1) << alone.output;
    EXPECT_NE(alone.output.find("no serve is running"), std::string::npos) << alone.output;
    EXPECT_LT(std::chrono::steady_clock::now() - asked_at, std::chrono::seconds(15));
    EXPECT_EQ(env_->scalar("SELECT state FROM manual_replies WHERE body = 'Back soon'"), "queued");

    // Their message stored late (as a catch-up sweep after a gap stores it), written before ours
    // went: placed by when it was written, before ours. It sat after ours, as if it answered it.
    const auto reply = conv[conv.size() - 1];
    ASSERT_TRUE(reply["written_at"].is_string()) << reply.dump();
    EXPECT_EQ(reply["written_late"], false) << reply.dump();  // stored as it came
    const std::string written = "'" + reply["written_at"].get<std::string>() + "'::timestamptz";
    env_->scalar("UPDATE events SET received_at = " + written + " + interval '5 minutes' WHERE event_id = " +
                 std::to_string(id) + " RETURNING 1");
    env_->scalar("UPDATE step_attempts a SET finished_at = " + written + " + interval '30 seconds' FROM enrollments "
                 "en WHERE a.enrollment_id = en.enrollment_id AND en.lead_id = " +
                 std::to_string(list[0]["lead_id"].get<std::int64_t>()) + " AND en.account_id = '" +
                 list[0]["account_id"].get<std::string>() + "' AND a.call = 'send' RETURNING 1");
    auto late_cli = env_->run({"inbox", "show", std::to_string(id), "--format", "json"});  // serve is stopped
    ASSERT_EQ(late_cli.exit_code, 0) << late_cli.output;
    const auto shown_late = json::parse(late_cli.output);
    const auto& late = shown_late["conversation"];
    ASSERT_GE(late.size(), 2u) << late.dump();
    EXPECT_EQ(late[0]["direction"], "in") << late.dump();
    EXPECT_EQ(late[0]["text"], list[0]["text"]) << late.dump();
    EXPECT_EQ(late[0]["written_late"], true) << late.dump();         // the mark the CLI and dashboard say it by
    EXPECT_EQ(shown_late["reply"]["written_late"], true) << shown_late["reply"].dump();
    EXPECT_EQ(late[late.size() - 1]["direction"], "out") << late.dump();
    auto as_text = env_->run({"inbox", "show", std::to_string(id)});
    EXPECT_NE(as_text.output.find("(written " + reply["written_at"].get<std::string>() + ")"), std::string::npos)
        << as_text.output;
}

// A crash between the call and the recording of its result: the intent is left in flight under an
// expired lease. Sent already: the conversation shows it, so it is confirmed, not sent again. Not
// sent: the conversation does not show it, so it is sent, once.
TEST_F(InboxTest, InFlightIntentIsReconciledNotResent) {
    auto list = replies();
    ASSERT_GE(list.size(), 2u);
    const auto first = std::to_string(list[0]["id"].get<std::int64_t>());
    const std::string text = "Following up on your reply.";
    auto sent = call("POST", "/v1/inbox/" + first + "/reply", json{{"text", text}}.dump());
    ASSERT_EQ(sent.status, 202) << sent.body;
    const auto id = std::to_string(sent.body_json()["manual_reply"]["id"].get<std::int64_t>());
    ASSERT_EQ(settled(std::stoll(id))["state"], "sent");
    ASSERT_EQ(sent_count(text), 1);

    // Sent, but the sender "died" before recording it.
    serve_.reset();
    env_->scalar("UPDATE step_attempts SET outcome = 'in_flight', finished_at = NULL, credits = 0 "
                 "WHERE attempt_id = (SELECT attempt_id FROM manual_replies WHERE reply_id = " + id + ")");
    env_->scalar("UPDATE manual_replies SET state = 'in_flight', lease_owner = 'dead', lease_expires_at = now() - "
                 "interval '1 second', sent_at = NULL, finished_at = NULL WHERE reply_id = " + id);
    // Not sent: the intent was written, then the sender died before the request left.
    const auto second = std::to_string(list[1]["id"].get<std::int64_t>());
    const std::string unsent = "This one never left before the crash.";
    auto queued = env_->run({"inbox", "reply", second, unsent, "--wait", "0"});
    ASSERT_EQ(queued.exit_code, 0) << queued.output;
    const auto id2 = env_->scalar("SELECT reply_id FROM manual_replies WHERE body = '" + unsent + "'");
    env_->scalar("INSERT INTO step_attempts (attempt_id, enrollment_id, step, call, attempt, body, worker) "
                 "SELECT nextval('step_attempts_attempt_id_seq'), enrollment_id, 'manual_reply', 'send', 0, body, 'dead' "
                 "FROM manual_replies WHERE reply_id = " + id2);
    env_->scalar("UPDATE manual_replies SET state = 'in_flight', lease_owner = 'dead', lease_expires_at = now() - "
                 "interval '1 second', attempt_id = (SELECT max(attempt_id) FROM step_attempts) WHERE reply_id = " + id2);

    start_serve();
    auto recovered = settled(std::stoll(id));
    EXPECT_EQ(recovered["state"], "sent") << recovered.dump() << serve_->log();
    EXPECT_NE(recovered["reason"].get<std::string>().find("confirmed by reading the conversation"), std::string::npos)
        << recovered.dump();
    auto resent = settled(std::stoll(id2));
    EXPECT_EQ(resent["state"], "sent") << resent.dump() << serve_->log();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    EXPECT_EQ(sent_count(text), 1) << "the reply was sent twice";
    EXPECT_EQ(sent_count(unsent), 1);
    EXPECT_EQ(env_->scalar("SELECT string_agg(a.outcome::text, ',' ORDER BY a.attempt_id) FROM step_attempts a "
                           "JOIN manual_replies r ON r.enrollment_id = a.enrollment_id AND a.body = r.body "
                           "WHERE r.reply_id = " + id + " AND a.step = 'manual_reply'"),
              "uncertain,reconciled_present");
    EXPECT_EQ(env_->scalar("SELECT string_agg(a.outcome::text, ',' ORDER BY a.attempt_id) FROM step_attempts a "
                           "JOIN manual_replies r ON r.enrollment_id = a.enrollment_id AND a.body = r.body "
                           "WHERE r.reply_id = " + id2 + " AND a.step = 'manual_reply'"),
              "uncertain,reconciled_absent,ok");
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM step_attempts WHERE outcome = 'in_flight'"), "0");
}

// A reply whose send's answer was lost went out, or may have: the CLI's wait ends saying so, not
// "not sent" (a trial's serve killed mid-send: the message had gone out). Its check reads the
// conversation after the reconcile delay (60 s by default), past the wait.
TEST_F(InboxTest, AReplyWhoseAnswerWasLostIsNotCalledUnsent) {
    auto list = replies();
    ASSERT_GE(list.size(), 1u);
    http_client control("127.0.0.1", sandbox_->control_port());
    ASSERT_EQ(control.request("POST", "/control/settings", R"({"lost_response_rate": 1})",
                              {{"Content-Type", "application/json"}})
                  .status,
              200);
    const std::string text = "Thanks, let us talk on Monday.";
    auto r = env_->run({"inbox", "reply", std::to_string(list[0]["id"].get<std::int64_t>()), text, "--wait", "3"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(": reconcile"), std::string::npos) << r.output << serve_->log();
    EXPECT_NE(r.output.find("not confirmed within 3 s: the send may have gone out, and serve reads the conversation "
                            "before it sends again"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("not sent within"), std::string::npos) << r.output;
    EXPECT_EQ(sent_count(text), 1);
}

// `inbox show --live` against an API slower than api_timeout_ms: the read timed out after it was
// sent, and the API most likely billed it. It is booked at its most (100 messages asked: 10
// credits) on the campaign, and the message says so; before, it was booked nowhere (a trial).
TEST_F(InboxTest, ALiveReadWhoseAnswerWasLostIsBookedAtItsMost) {
    auto list = replies();
    ASSERT_GE(list.size(), 1u);
    http_client control("127.0.0.1", sandbox_->control_port());
    const auto booked = [&] {
        return std::stoll(env_->scalar("SELECT COALESCE(sum(posted), 0) FROM ledger_transfers WHERE state = 'posted' "
                                       "AND action = 'get_conversation'"));
    };
    const auto before = booked();
    ASSERT_EQ(control.request("POST", "/control/settings", R"({"latency_ms_min": 1500, "latency_ms_max": 1600})",
                              {{"Content-Type", "application/json"}})
                  .status,
              200);
    env_->set("ORCH_API_TIMEOUT_MS", "500");
    auto r = env_->run({"inbox", "show", std::to_string(list[0]["id"].get<std::int64_t>()), "--live"});
    env_->set("ORCH_API_TIMEOUT_MS", "30000");
    ASSERT_EQ(control.request("POST", "/control/settings", R"({"latency_ms_min": 0, "latency_ms_max": 0})",
                              {{"Content-Type", "application/json"}})
                  .status,
              200);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("its answer was lost after the request was sent: booked at its most, 10 credits"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(booked() - before, 10);
}

// `inbox show --live` reads at up to 10 credits (100 messages), charged without a reservation: a
// campaign with less than that left in its budget is not read, nothing is billed, and both the
// CLI and the admin API say why. Before, the read went past the budget (a trial: 140 of 139).
TEST_F(InboxTest, ALiveReadIsNotMadeWhenTheCampaignCannotPayItsMost) {
    auto list = replies();
    ASSERT_GE(list.size(), 1u);
    const auto id = std::to_string(list[0]["id"].get<std::int64_t>());
    // serve's start-up sweep charges its reads as they come: the budget is read once it is over
    // (it spent 2 between the read and the set once, and the 5 left were 3).
    ASSERT_TRUE(wait_for("SELECT count(*) FROM accounts WHERE intake_gap_at IS NOT NULL", "0")) << serve_->log();
    const std::string available =
        "SELECT a.balance FROM ledger_scopes s JOIN ledger_accounts a USING (scope_id) JOIN campaigns c "
        "USING (campaign_id) WHERE c.name = 'inbox-demo' AND s.kind = 'campaign' AND a.kind = 'available'";
    const auto total = std::stoll(env_->scalar("SELECT total FROM ledger_budgets b JOIN campaigns c USING "
                                               "(campaign_id) WHERE c.name = 'inbox-demo'"));
    const auto five_left = std::to_string(total - std::stoll(env_->scalar(available)) + 5);
    auto set = env_->run({"budget", "set", "inbox-demo", "--credits", five_left});
    ASSERT_EQ(set.exit_code, 0) << set.output;
    ASSERT_EQ(env_->scalar(available), "5");
    http_client control("127.0.0.1", sandbox_->control_port());
    const auto reads = [&] {
        return control.get("/control/requests?key=test-key&action=get_conversation").body_json()["requests"].size();
    };
    const auto reads_before = reads();
    auto r = env_->run({"inbox", "show", id, "--live"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("campaign inbox-demo has 5 credits left in its budget or caps, and reading the "
                            "conversation may cost up to 10: not read"),
              std::string::npos)
        << r.output;
    auto live = call("GET", "/v1/inbox/" + id + "?live=true");
    EXPECT_EQ(live.status, 409) << live.body;
    EXPECT_EQ(reads(), reads_before);
    EXPECT_EQ(env_->scalar(available), "5");
}

// An exhausted send quota holds the reply (not sent, not billed); an exhausted budget refuses it;
// a person on the do-not-contact list and an unavailable account are refused at once.
TEST_F(InboxTest, RefusalsSendNothingAndBillNothing) {
    auto list = replies();
    ASSERT_GE(list.size(), 4u);
    const auto path = [&](int i) { return "/v1/inbox/" + std::to_string(list[i]["id"].get<std::int64_t>()); };
    const auto account = list[0]["account_id"].get<std::string>();
    const auto spent_before = env_->scalar("SELECT sum(credits) FROM step_attempts");

    // The account's send quota is 0 today.
    auto limited = call("PUT", "/v1/accounts/" + account + "/limits", R"({"send": {"per_day": 0}})");
    ASSERT_EQ(limited.status, 200) << limited.body;
    auto held = call("POST", path(0) + "/reply", R"({"text": "Held by the quota"})");
    ASSERT_EQ(held.status, 202) << held.body;
    const auto held_id = std::to_string(held.body_json()["manual_reply"]["id"].get<std::int64_t>());
    ASSERT_TRUE(wait_for("SELECT reason LIKE 'waiting for the send day quota%' FROM manual_replies WHERE reply_id = " + held_id, "t"))
        << env_->scalar("SELECT state || ' ' || reason FROM manual_replies WHERE reply_id = " + held_id) << serve_->log();
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    EXPECT_EQ(env_->scalar("SELECT state FROM manual_replies WHERE reply_id = " + held_id), "queued");
    EXPECT_EQ(sent_count("Held by the quota"), 0);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM step_attempts WHERE step = 'manual_reply'"), "0") << "no call, no charge";
    EXPECT_EQ(env_->scalar("SELECT sum(credits) FROM step_attempts"), spent_before);

    // The quota back to its default: the held reply is asked again at once and sent, once (it
    // stayed queued until the quota day's end, a trial).
    ASSERT_EQ(call("PUT", "/v1/accounts/" + account + "/limits", R"({"clear": ["send"]})").status, 200);
    const auto released = settled(std::stoll(held_id));
    EXPECT_EQ(released["state"], "sent") << released.dump() << serve_->log();
    EXPECT_EQ(sent_count("Held by the quota"), 1);

    // The campaign's day cap has nothing left today: held until the next UTC day; a raise asks
    // again at once.
    const auto today = [&] {
        auto r = env_->run({"budget", "show", "inbox-demo", "--format", "json"});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return json::parse(r.output, nullptr, false)["today"];
    };
    ASSERT_EQ(env_->run({"budget", "set", "inbox-demo", "--per-day", "100000"}).exit_code, 0);
    const auto used = today()["spent"].get<std::int64_t>() + today()["reserved"].get<std::int64_t>();
    ASSERT_EQ(env_->run({"budget", "set", "inbox-demo", "--per-day", std::to_string(used)}).exit_code, 0);
    auto capped = call("POST", path(3) + "/reply", R"({"text": "Held by the day cap"})");
    ASSERT_EQ(capped.status, 202) << capped.body;
    const auto capped_id = capped.body_json()["manual_reply"]["id"].get<std::int64_t>();
    ASSERT_TRUE(wait_for("SELECT reason LIKE 'waiting for the campaign''s daily budget%' FROM manual_replies "
                         "WHERE reply_id = " + std::to_string(capped_id), "t"))
        << env_->scalar("SELECT state || ' ' || reason FROM manual_replies WHERE reply_id = " +
                        std::to_string(capped_id)) << serve_->log();
    EXPECT_EQ(sent_count("Held by the day cap"), 0);
    // The CLI says so at once and exits 0: the reply is held till the next UTC day, not failed (it
    // waited its 30 s, then said "not sent" and exited 1).
    const auto cli_started = std::chrono::steady_clock::now();
    auto cli_held = env_->run({"inbox", "reply", std::to_string(list[3]["id"].get<std::int64_t>()),
                               "Held by the day cap too", "--wait", "20"});
    EXPECT_EQ(cli_held.exit_code, 0) << cli_held.output;
    EXPECT_LT(std::chrono::steady_clock::now() - cli_started, std::chrono::seconds(15)) << cli_held.output;
    EXPECT_NE(cli_held.output.find("held until "), std::string::npos) << cli_held.output;
    EXPECT_NE(cli_held.output.find("(waiting for the campaign's daily budget"), std::string::npos) << cli_held.output;
    ASSERT_EQ(env_->run({"budget", "set", "inbox-demo", "--per-day", "100000"}).exit_code, 0);
    const auto raised = settled(capped_id);
    EXPECT_EQ(raised["state"], "sent") << raised.dump() << serve_->log();
    EXPECT_EQ(sent_count("Held by the day cap"), 1);
    ASSERT_EQ(env_->run({"budget", "set", "inbox-demo", "--per-day", "none"}).exit_code, 0);

    // The campaign's budget is spent: refused, not sent, not billed.
    auto budget = env_->run({"budget", "set", "inbox-demo", "--credits", "1"});
    ASSERT_EQ(budget.exit_code, 0) << budget.output;
    auto broke = call("POST", path(1) + "/reply", R"({"text": "No budget for this"})");
    ASSERT_EQ(broke.status, 202) << broke.body;
    auto refused = settled(broke.body_json()["manual_reply"]["id"].get<std::int64_t>());
    EXPECT_EQ(refused["state"], "refused") << refused.dump();
    EXPECT_NE(refused["reason"].get<std::string>().find("budget"), std::string::npos) << refused.dump();
    EXPECT_EQ(refused["credits"], 0);
    EXPECT_EQ(sent_count("No budget for this"), 0);
    ASSERT_TRUE(wait_for("SELECT count(*) FROM manual_replies WHERE state = 'sent'", "3")) << serve_->log();
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM step_attempts WHERE step = 'manual_reply'"), "3") << "the held ones'";
    // Asked again as it was written (after a raise, say), the request finds its refusal, and the
    // CLI says how to send it anew: before, it only said the reply was asked for before.
    auto again = env_->run({"inbox", "reply", std::to_string(list[1]["id"].get<std::int64_t>()), "No budget for this"});
    EXPECT_EQ(again.exit_code, 1) << again.output;
    EXPECT_NE(again.output.find("the same reply was refused before and is not asked for again; to send it now, give "
                                "it a new idempotency key"),
              std::string::npos)
        << again.output;
    EXPECT_EQ(sent_count("No budget for this"), 0);

    // Not interested: the person goes on the do-not-contact list; a reply to them is refused.
    const auto profile = list[2]["profile_url"].get<std::string>();
    auto marked = call("POST", path(2) + "/mark", R"({"mark": "not_interested", "by": "ops"})");
    ASSERT_EQ(marked.status, 200) << marked.body;
    EXPECT_EQ(marked.body_json()["added"], true);
    auto dnc = call("GET", "/v1/dnc").body_json()["entries"];
    ASSERT_EQ(dnc.size(), 1u) << dnc.dump();
    EXPECT_EQ(dnc[0]["profile_url"], profile);
    EXPECT_EQ(dnc[0]["added_by"], "ops");
    EXPECT_EQ(call("GET", path(2)).body_json()["reply"]["mark"], "not_interested");
    auto to_dnc = call("POST", path(2) + "/reply", R"({"text": "Are you sure?"})");
    EXPECT_EQ(to_dnc.status, 409) << to_dnc.body;
    EXPECT_NE(error_message(to_dnc).find("do-not-contact"), std::string::npos);
    // The CLI marks another; marking again changes nothing.
    const auto fourth = std::to_string(list[3]["id"].get<std::int64_t>());
    auto cli_mark = env_->run({"inbox", "mark", fourth, "not-interested", "--by", "cli-test"});
    ASSERT_EQ(cli_mark.exit_code, 0) << cli_mark.output;
    EXPECT_NE(cli_mark.output.find("added to the do-not-contact list"), std::string::npos) << cli_mark.output;
    auto cli_again = env_->run({"inbox", "mark", fourth, "not-interested"});
    ASSERT_EQ(cli_again.exit_code, 0) << cli_again.output;
    EXPECT_NE(cli_again.output.find("already on"), std::string::npos) << cli_again.output;
    EXPECT_EQ(env_->run({"inbox", "mark", fourth, "spam"}).exit_code, 2);
    EXPECT_EQ(env_->scalar("SELECT count(*) FROM do_not_contact"), "2");

    // An unavailable account: refused at once.
    env_->scalar("UPDATE accounts SET connected = false, api_status = 'DISCONNECTED' WHERE account_id = '" +
                 list[1]["account_id"].get<std::string>() + "'");
    auto gone = call("POST", path(1) + "/reply", R"({"text": "To a disconnected account"})");
    EXPECT_EQ(gone.status, 409) << gone.body;
    EXPECT_NE(error_message(gone).find("unavailable"), std::string::npos);
    EXPECT_EQ(sent_count("To a disconnected account"), 0);
}

// `serve`'s inbox sender gates an operator's reply by its own quotas in the workers' buckets: a
// worker started with other rate-limit settings than serve's is told, and so is a serve started
// next to such a worker. The workers of SetUp, with serve's values, said nothing.
TEST_F(InboxTest, AWorkerOrServeWithOtherRateLimitsThanTheOthersIsTold) {
    const std::string told = "other worker or serve process(es) on this database run with other rate-limit settings";
    const auto shows = [&](const background_process& p) {
        for (int i = 0; i < 400; ++i) {
            if (p.log().find(told) != std::string::npos) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(25));
        }
        return false;
    };
    EXPECT_EQ(serve_->log().find(told), std::string::npos) << serve_->log();
    auto worker = env_->spawn({"worker", "--send-per-day", "3", "--worker-lanes", "1", "--idle-poll-ms", "50"});
    EXPECT_TRUE(shows(*worker)) << worker->log();
    EXPECT_NE(worker->log().find("worker: 1 other worker or serve process(es)"), std::string::npos) << worker->log();
    EXPECT_EQ(serve_->stop(SIGTERM), 0) << serve_->log();
    start_serve();
    EXPECT_TRUE(shows(*serve_)) << serve_->log();
    EXPECT_NE(serve_->log().find("serve: inbox sender: 1 other worker or serve process(es)"), std::string::npos) << serve_->log();
    EXPECT_EQ(worker->stop(SIGTERM), 0) << worker->log();
}

// `campaign watch --once`: one frame with the state, the progress and the funnel.
TEST_F(InboxTest, CampaignWatchPrintsOneFrame) {
    // The ledger's side too, as `budget show` has it (the audience search included), read before
    // and after the frame: serve's sweep may bill a list_inbox meanwhile; then the frame is taken
    // again.
    auto budget = [&] {
        return json::parse(env_->run({"budget", "show", "inbox-demo", "--format", "json"}).output, nullptr, false);
    };
    orch::test::run_result w;
    json b;
    for (int tries = 0; tries < 5; ++tries) {
        const json before = budget();
        w = env_->run({"campaign", "watch", "inbox-demo", "--once"});
        b = budget();
        if (!before.is_discarded() && !b.is_discarded() && before["spent"] == b["spent"]) {
            break;
        }
    }
    ASSERT_EQ(w.exit_code, 0) << w.output;
    EXPECT_NE(w.output.find("campaign 'inbox-demo'"), std::string::npos) << w.output;
    EXPECT_NE(w.output.find("4/4 finished, 0 live"), std::string::npos) << w.output;
    EXPECT_NE(w.output.find("replied"), std::string::npos) << w.output;
    EXPECT_NE(w.output.find("funnel"), std::string::npos) << w.output;
    ASSERT_FALSE(b.is_discarded());
    EXPECT_NE(w.output.find("budget    " + std::to_string(b["spent"].get<std::int64_t>()) + " spent, 0 held by calls, " +
                            std::to_string(b["available"].get<std::int64_t>()) + " left of " +
                            std::to_string(b["budget"].get<std::int64_t>())),
              std::string::npos)
        << w.output << b.dump();
    auto none = env_->run({"campaign", "watch", "no-such", "--once"});
    EXPECT_EQ(none.exit_code, 2) << none.output;
    auto bad = env_->run({"campaign", "watch", "inbox-demo", "--interval", "0"});
    EXPECT_NE(bad.exit_code, 0) << bad.output;
    EXPECT_NE(bad.output.find("--interval"), std::string::npos) << bad.output;

    // Two leads made live again: one ready in its step's delay (not due for an hour, no stored
    // reason), one due with a stale reason. The first is not "due", the second's old reason is
    // not shown as its wait (as `leads show` says them).
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'ready', finished_at = NULL, reason = '', "
                           "next_run_at = now() + interval '1 hour', due_at = now() + interval '1 hour' "
                           "WHERE enrollment_id = (SELECT min(enrollment_id) FROM enrollments) RETURNING 1) "
                           "SELECT count(*) FROM u"),
              "1");
    ASSERT_EQ(env_->scalar("WITH u AS (UPDATE enrollments SET status = 'ready', finished_at = NULL, "
                           "reason = 'waiting for the API key''s request rate until 10:00', "
                           "next_run_at = now() - interval '1 minute', due_at = now() - interval '1 minute' "
                           "WHERE enrollment_id = (SELECT max(enrollment_id) FROM enrollments) RETURNING 1) "
                           "SELECT count(*) FROM u"),
              "1");
    auto live = env_->run({"campaign", "watch", "inbox-demo", "--once"});
    ASSERT_EQ(live.exit_code, 0) << live.output;
    EXPECT_NE(live.output.find("ready    waiting in step "), std::string::npos) << live.output;
    EXPECT_NE(live.output.find("ready    (due: waiting for a worker)"), std::string::npos) << live.output;
    EXPECT_EQ(live.output.find("request rate"), std::string::npos) << live.output;
    // A paused campaign's leads wait for the campaign, as `leads list` says.
    ASSERT_EQ(env_->run({"campaign", "pause", "inbox-demo"}).exit_code, 0);
    auto paused = env_->run({"campaign", "watch", "inbox-demo", "--once"});
    ASSERT_EQ(paused.exit_code, 0) << paused.output;
    EXPECT_NE(paused.output.find("ready    paused by an operator"), std::string::npos) << paused.output;
    EXPECT_EQ(paused.output.find("waiting in step "), std::string::npos) << paused.output;
    auto listed = env_->run({"leads", "list", "inbox-demo", "--state", "live"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    EXPECT_NE(listed.output.find("paused by an operator"), std::string::npos) << listed.output;
}

}  // namespace

namespace {

// inbox_not_interested_pattern: a reply that matches it, arriving as a signed webhook, is marked
// not interested at intake (its person on the do-not-contact list); one that does not is left
// alone; a pattern that is not a regular expression stops serve at start, saying which setting.
TEST_F(InboxTest, PatternMarksMatchingRepliesAtIntake) {
    auto bad = env_->run({"serve", "--inbox-not-interested-pattern", "(unclosed", "--admin-listen", "off"}, 10'000);
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("inbox_not_interested_pattern"), std::string::npos) << bad.output;

    auto list = replies();
    ASSERT_GE(list.size(), 2u);
    serve_.reset();
    env_->set("ORCH_INBOX_NOT_INTERESTED_PATTERN", "unsubscribe|not (a|the right) (priority|person)");
    start_serve();
    // The restarted leader checks the webhooks it reuses before events flow again.
    for (int i = 0; i < 200 && serve_->log().find("reused") == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    http_client control("127.0.0.1", sandbox_->control_port());
    auto say = [&](const json& r, const std::string& text) {
        auto res = control.request("POST", "/control/events",
                                   json{{"type", "message_received"}, {"account_id", r["account_id"]},
                                        {"profile_url", r["profile_url"]}, {"text", text}}
                                       .dump(),
                                   {{"Content-Type", "application/json"}});
        ASSERT_EQ(res.status, 200) << res.body;
    };
    say(list[0], "Please UNSUBSCRIBE me from this.");
    say(list[1], "Tell me more about pricing.");
    ASSERT_TRUE(wait_for("SELECT count(*) FROM events WHERE kind = 'message'", "6")) << env_->scalar("SELECT count(*) FROM events WHERE kind = 'message'") << serve_->log();
    ASSERT_TRUE(wait_for("SELECT count(*) FROM do_not_contact", "1")) << serve_->log();
    EXPECT_EQ(env_->scalar("SELECT profile_url || '|' || added_by FROM do_not_contact"),
              list[0]["profile_url"].get<std::string>() + "|serve: inbox_not_interested_pattern");
    EXPECT_EQ(env_->scalar("SELECT string_agg(COALESCE(inbox_mark, '-'), ',' ORDER BY event_id) FROM events "
                           "WHERE kind = 'message' AND event_id > " + std::to_string(list[0]["id"].get<std::int64_t>())),
              "not_interested,-");
}

}  // namespace
