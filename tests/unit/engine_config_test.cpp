// The orchestrator's settings model: sources and their precedence, and every problem reported
// together with where it came from.
#include "engine/config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace {

using orch::engine::load_settings;
using orch::engine::settings_needs;
using orch::engine::settings_sources;

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
    return std::any_of(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

TEST(EngineConfig, FlagsWinOverEnvironmentWhichWinsOverTheFile) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "database_url: postgresql://file/db\nbatch_size: 10\napi_key: from-file\n";
    src.env = {{"DATABASE_URL", "postgresql://env/db"}, {"OUTREACH_API_KEY", "from-env"}, {"HOME", "/root"}};
    src.flags = {{"database_url", "postgresql://flag/db"}};
    auto r = load_settings(src, settings_needs{});
    ASSERT_TRUE(r.problems.empty()) << r.problems.front();
    EXPECT_EQ(r.value.database_url, "postgresql://flag/db");
    EXPECT_EQ(r.value.api_key, "from-env");
    EXPECT_EQ(r.value.batch_size, 10);
    EXPECT_FALSE(r.value.worker_id.empty());
}

TEST(EngineConfig, EveryProblemIsListedAtOnceWithItsSource) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "batch_size: lots\nnot_a_setting: 1\nwebhook_listen: nowhere\n";
    src.flags = {{"api_url", "ftp://x"}, {"log_level", "loud"}};
    settings_needs needs;
    needs.api = true;
    auto r = load_settings(src, needs);
    // A setting given twice is refused, with where it was first.
    settings_sources twice;
    twice.file_name = "orch.yaml";
    twice.file_text = "batch_size: 10\nbatch_size: 20\n";
    EXPECT_TRUE(mentions(load_settings(twice, settings_needs{}).problems,
                         "orch.yaml:2:1: batch_size is given twice (first at line 1)"));
    // A bad value is pointed at where the value starts; an unknown name, at the name.
    EXPECT_TRUE(mentions(r.problems, "orch.yaml:1:13: batch_size must be an integer")) << r.problems.size();
    EXPECT_TRUE(mentions(r.problems, "orch.yaml:2:1: unknown setting 'not_a_setting'"));
    EXPECT_TRUE(mentions(r.problems, "webhook_listen must be HOST:PORT"));
    EXPECT_TRUE(mentions(r.problems, "api_url must be an http:// or https:// URL"));
    EXPECT_TRUE(mentions(r.problems, "log_level must be one of"));
    EXPECT_TRUE(mentions(r.problems, "database_url is required"));
    EXPECT_TRUE(mentions(r.problems, "api_key is required"));
    EXPECT_GE(r.problems.size(), 7u);
}

// A value that is wrong on its own (a URL, an address, a level, a worker's name) is pointed at
// where it was given, also when a later source overrides it; a problem across settings names
// where those of them given were given.
TEST(EngineConfig, ValuesWrongOnTheirOwnArePointedAtAndCrossChecksNameTheirSources) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "api_url: notaurl\nadmin_listen: \"x:y\"\nworker_id: \"a b\"\nlog_level: loud\n"
                    "redis_url: http://r\nwebhook_public_url: ftp://h\nwebhook_listen: nowhere\nlease_seconds: 10\n";
    src.env = {{"OUTREACH_API_URL", "http://127.0.0.1:1"}, {"ORCH_WORKER_ID", "w/1"}};
    src.flags = {{"database_url", "postgresql://x/y"}, {"api_timeout_ms", "30000"}, {"retry_cap_ms", "5"}};
    auto r = load_settings(src, settings_needs{});
    const std::vector<std::string> expected = {
        "orch.yaml:1:10: api_url must be an http:// or https:// URL, got 'notaurl'",
        "orch.yaml:2:15: admin_listen must be HOST:PORT or off, got 'x:y'",
        "orch.yaml:3:12: worker_id must be one word without '/'",
        "environment ORCH_WORKER_ID: worker_id must be one word without '/'",
        "orch.yaml:4:12: log_level must be one of trace, debug, info, warn, error; got 'loud'",
        "orch.yaml:5:12: redis_url must start with redis://, got 'http://r'",
        "orch.yaml:6:21: webhook_public_url must be an http:// or https:// URL, got 'ftp://h'",
        "orch.yaml:7:17: webhook_listen must be HOST:PORT, got 'nowhere'",
        "orch.yaml:8:16, flag --api-timeout-ms: lease_seconds (10 s) must exceed api_timeout_ms (30000 ms)",
        "flag --retry-cap-ms: retry_cap_ms (5) must be at least retry_base_ms (2000)",
    };
    for (const auto& e : expected) {
        EXPECT_TRUE(mentions(r.problems, e)) << e << "\n" << ::testing::PrintToString(r.problems);
    }
    EXPECT_EQ(r.problems.size(), expected.size()) << ::testing::PrintToString(r.problems);
    EXPECT_EQ(r.value.api_url, "http://127.0.0.1:1");  // the environment's, which is good

    settings_sources week;
    week.flags = {{"invite_per_day", "50"}};
    week.env = {{"ORCH_INVITE_PER_WEEK", "40"}};
    EXPECT_TRUE(mentions(load_settings(week, settings_needs{}).problems,
                         "environment ORCH_INVITE_PER_WEEK, flag --invite-per-day: invite_per_week (40) is below"));

    // The sweep's back-off ceiling below its interval, given: said; at its default below a larger
    // sweep_seconds: taken as sweep_seconds, no problem.
    settings_sources sweep;
    sweep.flags = {{"sweep_max_seconds", "600"}};
    EXPECT_TRUE(mentions(load_settings(sweep, settings_needs{}).problems,
                         "flag --sweep-max-seconds: sweep_max_seconds (600) must be at least sweep_seconds (900)"));
    settings_sources longer;
    longer.env = {{"ORCH_SWEEP_SECONDS", "7200"}, {"DATABASE_URL", "postgresql://x/y"}};
    const auto taken = load_settings(longer, settings_needs{});
    EXPECT_TRUE(taken.problems.empty()) << ::testing::PrintToString(taken.problems);

    // URLs whose form is right but whose parts are not: each says which part.
    settings_sources parts;
    parts.flags = {{"database_url", "postgresql://x/y"}, {"api_url", "https://x/path?q=1"},
                   {"webhook_public_url", "https://h:99999/in"}, {"redis_url", "redis://h:abc"}};
    parts.env = {{"ORCH_WEBHOOK_LISTEN", "127.0.0.1:8701"}, {"REDIS_URL", "redis://"}};
    const auto said = load_settings(parts, settings_needs{}).problems;
    for (const auto& e : {std::string("flag --api-url: api_url must have no query ('?...'): the API's paths are added to "
                                      "it, got 'https://x/path?q=1'"),
                          std::string("flag --webhook-public-url: webhook_public_url has a bad port '99999' (1 to 65535)"),
                          std::string("flag --redis-url: redis_url has a bad port 'abc' (1 to 65535), got 'redis://h:abc'"),
                          std::string("environment REDIS_URL: redis_url has no host, got 'redis://'")}) {
        EXPECT_TRUE(mentions(said, e)) << e << "\n" << ::testing::PrintToString(said);
    }
    parts.flags = {{"database_url", "postgresql://x/y"}, {"api_url", "http://h/#f"}};
    EXPECT_TRUE(mentions(load_settings(parts, settings_needs{}).problems, "api_url must have no fragment ('#...')"));

    settings_sources fine;
    fine.flags = {{"database_url", "postgresql://x/y"}, {"worker_id", "host-1.example_2"}, {"admin_listen", "OFF"},
                  {"redis_url", "redis://:pw@127.0.0.1:6379/2"}, {"api_url", "https://api.example:8443/base"},
                  {"webhook_public_url", "https://hooks.example/in?token=x"}};
    const auto ok = load_settings(fine, settings_needs{});
    EXPECT_TRUE(ok.problems.empty()) << ::testing::PrintToString(ok.problems);
    EXPECT_EQ(ok.value.admin_listen, "off");
}

// An empty value in the file or a flag is refused where empty means nothing (most often a
// template's variable left unfilled, which would otherwise run with the default), also as a
// YAML null; an empty variable counts as unset. Where empty means something (no Redis, hosted
// mode, no pattern), it is taken.
TEST(EngineConfig, AnEmptyValueIsRefusedWhereItMeansNothing) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "worker_id: \"\"\napi_url:\nbatch_size: ~\nwebhook_public_url: \"\"\n"
                    "inbox_not_interested_pattern:\nredis_url: \"\"\n";
    src.env = {{"ORCH_ADMIN_LISTEN", ""}, {"ORCH_LOG_LEVEL", "debug"}};
    src.flags = {{"database_url", "postgresql://x/y"}, {"log_level", ""}, {"pacing", ""}};
    auto r = load_settings(src, settings_needs{});
    const std::vector<std::string> expected = {
        "orch.yaml:1:12: worker_id is empty; leave it out for its default (<host>-<pid>)",
        "orch.yaml:2:1: api_url is empty; leave it out for its default (http://127.0.0.1:8780)",
        "orch.yaml:3:1: batch_size is empty; leave it out for its default (50)",
        "flag --log-level: log_level is empty; leave it out for its default (info)",
        "flag --pacing: pacing is empty; leave it out for its default (true)",
    };
    for (const auto& e : expected) {
        EXPECT_TRUE(mentions(r.problems, e)) << e << "\n" << ::testing::PrintToString(r.problems);
    }
    EXPECT_EQ(r.problems.size(), expected.size()) << ::testing::PrintToString(r.problems);
    EXPECT_EQ(r.value.admin_listen, orch::engine::settings{}.admin_listen);  // the empty variable: unset

    settings_sources taken;
    taken.file_name = "orch.yaml";
    taken.file_text = "webhook_public_url: https://h/in\nredis_url: redis://127.0.0.1:6379\n";
    taken.flags = {{"database_url", "postgresql://x/y"}, {"webhook_public_url", ""}, {"redis_url", ""}};
    const auto ok = load_settings(taken, settings_needs{});
    EXPECT_TRUE(ok.problems.empty()) << ::testing::PrintToString(ok.problems);
    EXPECT_EQ(ok.value.webhook_public_url, "");  // hosted mode, over the file's
    EXPECT_EQ(ok.value.redis_url, "");
    // Where empty is taken but the command needs a value, the problem says who gave it empty.
    settings_needs redis;
    redis.redis = true;
    EXPECT_TRUE(mentions(load_settings(taken, redis).problems,
                         "redis_url is required (REDIS_URL, --redis-url or the config file); flag --redis-url gives it "
                         "empty"))
        << ::testing::PrintToString(load_settings(taken, redis).problems);
}

TEST(EngineConfig, BadYamlPointsAtItsLineAndColumn) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "database_url: x\nbatch_size: [1, 2\n";
    auto r = load_settings(src, settings_needs{});
    ASSERT_FALSE(r.problems.empty());
    EXPECT_EQ(r.problems.front().rfind("orch.yaml:", 0), 0u) << r.problems.front();
}

// A tag outside the YAML core schema (on a value, a key or the mapping) is refused with where it
// is, as in a campaign file; the core schema's tags are taken.
TEST(EngineConfig, TagsOutsideTheCoreSchemaAreRefused) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = "database_url: postgresql://file/db\nbatch_size: !!int 10\nlog_level: !!str info\nidle_poll_ms: !!python/object:os.system 9\n"
                    "!custom worker_id: w\n";
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(r.problems, "orch.yaml:4:15: unsupported YAML tag '!!python/object:os.system'"))
        << (r.problems.empty() ? "" : r.problems.front());
    EXPECT_TRUE(mentions(r.problems, "orch.yaml:5:1: unsupported YAML tag '!custom'"));
    EXPECT_EQ(r.problems.size(), 2u) << ::testing::PrintToString(r.problems);
    src.file_text = "!!map {database_url: postgresql://file/db, batch_size: 10}\n";
    EXPECT_TRUE(load_settings(src, settings_needs{}).problems.empty())
        << ::testing::PrintToString(load_settings(src, settings_needs{}).problems);
    src.file_text = "!!set {batch_size: 10}\n";
    EXPECT_TRUE(mentions(load_settings(src, settings_needs{}).problems, "orch.yaml:1:1: unsupported YAML tag"));
    // A core tag on a node it does not fit.
    src.file_text = "!!seq {batch_size: 10}\n";
    EXPECT_TRUE(mentions(load_settings(src, settings_needs{}).problems, "unsupported YAML tag '!!seq' on the configuration"));
    src.file_text = "database_url: postgresql://file/db\npacing: !!map false\n!!int batch_size: 10\n";
    auto fits = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(fits.problems, "orch.yaml:2:9: unsupported YAML tag '!!map' on a setting's value"))
        << ::testing::PrintToString(fits.problems);
    EXPECT_TRUE(mentions(fits.problems, "orch.yaml:3:1: unsupported YAML tag '!!int' on a setting's name"));
}

// A file that is not text, or nested past the parser, is refused with where, in plain words
// (yaml-cpp said "bad file", or named the line after a NUL).
TEST(EngineConfig, BytesThatAreNotTextAndDeepNestingAreSaidWhereTheyAre) {
    settings_sources src;
    src.file_name = "orch.yaml";
    src.file_text = std::string("batch_size: 10\nlog_level: info\0\nidle_poll_ms: 5\n", 48);
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(r.problems, "orch.yaml:2:16: the file is not valid text (a NUL byte)"))
        << ::testing::PrintToString(r.problems);
    src.file_text = "batch_size: 10\nlog_level: caf\xe9\n";
    EXPECT_TRUE(mentions(load_settings(src, settings_needs{}).problems, "orch.yaml:2:15: the file is not valid text"));
    // A setting's value that is not text, from any source (it reached PostgreSQL after the start).
    settings_sources env;
    env.env = {{"ORCH_WORKER_ID", "w\xff"}, {"DATABASE_URL", "postgresql://x/db"}};
    EXPECT_TRUE(mentions(load_settings(env, settings_needs{}).problems,
                         "environment ORCH_WORKER_ID: worker_id is not valid text (invalid UTF-8"))
        << ::testing::PrintToString(load_settings(env, settings_needs{}).problems);
    src.file_text = "a: " + std::string(600, '[') + std::string(600, ']') + "\n";
    EXPECT_TRUE(mentions(load_settings(src, settings_needs{}).problems, "levels deep (the configuration is a flat mapping"));
}

// A switch takes YAML's spellings of true and false (True, TRUE...) as well as 1/0, yes/no, on/off.
TEST(EngineConfig, SwitchesTakeEverySpellingOfTrueAndFalse) {
    for (const auto& [text, value] : std::vector<std::pair<std::string, bool>>{
             {"True", true}, {"TRUE", true}, {"on", true}, {"FALSE", false}, {"False", false}, {"0", false}}) {
        settings_sources src;
        src.file_name = "orch.yaml";
        src.file_text = "database_url: postgresql://file/db\npacing: " + text + "\n";
        auto r = load_settings(src, settings_needs{});
        ASSERT_TRUE(r.problems.empty()) << text << ": " << ::testing::PrintToString(r.problems);
        EXPECT_EQ(r.value.pacing, value) << text;
    }
    settings_sources bad;
    bad.file_text = "pacing: maybe\n";
    bad.file_name = "orch.yaml";
    EXPECT_TRUE(mentions(load_settings(bad, settings_needs{}).problems, "pacing must be true or false, got 'maybe'"));
}

TEST(EngineConfig, NumbersOutOfRangeAreRefused) {
    settings_sources src;
    src.flags = {{"database_url", "postgresql://x/y"}, {"batch_size", "0"}, {"worker_lanes", "65"}};
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(r.problems, "batch_size must be between 1 and 1000, got 0"));
    EXPECT_TRUE(mentions(r.problems, "worker_lanes must be between 1 and 64, got 65"));
}

TEST(EngineConfig, ALeaseMustOutlastTheCallItGuards) {
    settings_sources src;
    src.flags = {{"database_url", "postgresql://x/y"}, {"lease_seconds", "10"}, {"api_timeout_ms", "30000"}};
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(r.problems, "lease_seconds (10 s) must exceed api_timeout_ms"));
    src.flags["api_timeout_ms"] = "8000";
    EXPECT_TRUE(load_settings(src, settings_needs{}).problems.empty())
        << ::testing::PrintToString(load_settings(src, settings_needs{}).problems);
}

// The defaults never warn: a follow-up's reply check and its send both fit in the default lease
// (a default of 60 s beside a 30 s timeout made every worker warn at start).
TEST(EngineConfig, TheDefaultLeaseFitsACallOfTwoRequests) {
    settings_sources src;
    src.flags = {{"database_url", "postgresql://x/y"}};
    auto r = load_settings(src, settings_needs{});
    ASSERT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
    EXPECT_TRUE(lease_fits_two_requests(r.value)) << r.value.lease_seconds << " s, " << r.value.api_timeout_ms << " ms";
    src.flags["lease_seconds"] = "61";
    EXPECT_FALSE(lease_fits_two_requests(load_settings(src, settings_needs{}).value));
    src.flags["lease_seconds"] = "62";
    EXPECT_TRUE(lease_fits_two_requests(load_settings(src, settings_needs{}).value));
}

TEST(EngineConfig, PasswordsAreRedactedFromUrls) {
    EXPECT_EQ(orch::engine::redacted("postgresql://orch:secret@db:5432/orch"), "postgresql://orch:***@db:5432/orch");
    EXPECT_EQ(orch::engine::redacted("redis://127.0.0.1:6379/0"), "redis://127.0.0.1:6379/0");
}

}  // namespace

namespace {

TEST(EngineConfig, SettingsWithoutAConventionalVariableReadOrchPrefixedOnes) {
    settings_sources src;
    src.env = {{"DATABASE_URL", "postgresql://env/db"},
               {"ORCH_INVITE_PER_DAY", "25"},
               {"ORCH_RAMP_UP", "false"},
               {"ORCH_BATCH_SIZE", "7"}};
    src.flags = {{"batch_size", "9"}};
    auto r = load_settings(src, settings_needs{});
    ASSERT_TRUE(r.problems.empty()) << r.problems.front();
    EXPECT_EQ(r.value.invite_per_day, 25);
    EXPECT_FALSE(r.value.ramp_up);
    EXPECT_EQ(r.value.batch_size, 9);  // the flag still wins
    EXPECT_EQ(r.value.invite_per_week, 200);  // default
}

TEST(EngineConfig, QuotaAndSwitchProblemsNameTheirSource) {
    settings_sources src;
    src.env = {{"DATABASE_URL", "postgresql://env/db"}, {"ORCH_RAMP_UP", "maybe"}};
    src.flags = {{"invite_per_day", "-5"}};
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(r.problems, "environment ORCH_RAMP_UP: ramp_up must be true or false")) << r.problems.size();
    EXPECT_TRUE(mentions(r.problems, "flag --invite-per-day: invite_per_day must be between -1"));
}

TEST(EngineConfig, AdminTokenComesFromTheEnvironmentOnly) {
    settings_sources src;
    src.env = {{"DATABASE_URL", "postgresql://env/db"}, {"ORCH_ADMIN_TOKEN", "0123456789abcdef"}};
    auto ok = load_settings(src, settings_needs{});
    ASSERT_TRUE(ok.problems.empty()) << ok.problems.front();
    EXPECT_EQ(ok.value.admin_token, "0123456789abcdef");
    EXPECT_EQ(ok.value.admin_listen, "127.0.0.1:8702");

    src.file_name = "orch.yaml";
    src.file_text = "admin_token: 0123456789abcdef-file\nadmin_listen: nowhere\n";
    src.flags = {{"admin_token", "0123456789abcdef-flag"}};
    auto bad = load_settings(src, settings_needs{});
    EXPECT_TRUE(mentions(bad.problems, "orch.yaml:1:1: admin_token is a secret: set ORCH_ADMIN_TOKEN"));
    EXPECT_TRUE(mentions(bad.problems, "admin_token is a secret: set ORCH_ADMIN_TOKEN, not --admin-token"));
    EXPECT_TRUE(mentions(bad.problems, "admin_listen must be HOST:PORT or off"));
    EXPECT_EQ(bad.value.admin_token, "0123456789abcdef");  // neither the file nor the flag set it
    for (const auto& p : bad.problems) {
        EXPECT_EQ(p.find("-flag"), std::string::npos) << "a problem shows the secret: " << p;
        EXPECT_EQ(p.find("-file"), std::string::npos) << "a problem shows the secret: " << p;
    }

    settings_sources short_token;
    short_token.env = {{"DATABASE_URL", "postgresql://env/db"}, {"ORCH_ADMIN_TOKEN", "short"}};
    EXPECT_TRUE(mentions(load_settings(short_token, settings_needs{}).problems, "at least 16 characters"));
    short_token.env["ORCH_ADMIN_TOKEN"] = "";
    short_token.flags = {{"admin_listen", "off"}};
    EXPECT_TRUE(load_settings(short_token, settings_needs{}).problems.empty());
}

}  // namespace

namespace {

// deploy/orchestrator.example.yaml is `orchestrator config example`: every setting, documented,
// at its default. It must stay in step with the settings table and load without a problem.
TEST(EngineConfig, TheShippedExampleFileIsCurrentAndLoads) {
    std::ifstream in(std::string(ORCH_SOURCE_DIR) + "/deploy/orchestrator.example.yaml");
    ASSERT_TRUE(in) << "deploy/orchestrator.example.yaml is missing";
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), orch::engine::example_config())
        << "regenerate it: build/bin/orchestrator config example > deploy/orchestrator.example.yaml";
    settings_sources src;
    src.file_name = "orchestrator.example.yaml";
    src.file_text = text.str();
    src.env = {{"DATABASE_URL", "postgresql://x/y"}};
    auto r = load_settings(src, settings_needs{});
    EXPECT_TRUE(r.problems.empty()) << r.problems.front();
    for (const auto& d : orch::engine::setting_docs()) {
        EXPECT_NE(text.str().find(d.name), std::string::npos) << d.name;
    }
}

}  // namespace
