// The campaign loader: the examples validate; every kind of bad file gives its error at the right
// line:column with a clear message; all errors are collected; JSON input; the canonical form
// round-trips.
#include "campaigns/campaigns.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <fstream>
#include <sstream>

namespace {

using namespace orch::campaigns;

std::optional<std::string> read_example(const std::string& name) {
    std::ifstream in(std::string(ORCH_CAMPAIGNS_DIR) + "/examples/" + name, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// Accounts acc_1, acc_demo_1..3 are connected, acc_off is disconnected, others are unknown.
account_found test_accounts(const std::string& id) {
    if (id == "acc_1" || id == "acc_demo_1" || id == "acc_demo_2" || id == "acc_demo_3") {
        return account_status::connected;
    }
    if (id == "sender-1") {
        return {account_status::connected, "acc_1"};  // acc_1's label
    }
    return id == "acc_off" ? account_status::disconnected : account_status::unknown;
}

load_result load(const std::string& text, std::map<std::string, std::string> files = {}) {
    load_options options;
    options.file_name = "c.yaml";
    options.account_lookup = test_accounts;
    options.read_file = [files](const std::string& path) -> std::optional<std::string> {
        auto it = files.find(path);
        return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    return load_campaign(text, options);
}

// A one-step campaign whose audience is the file d.csv of `files`.
load_result load_d_csv(const std::map<std::string, std::string>& files) {
    return load("name: t\naccounts: acc_1\naudience: {file: d.csv}\nschedule: {time_zone: UTC}\n"
                "budget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                files);
}

std::string all_errors(const load_result& r) {
    std::string out;
    for (const diagnostic& d : r.errors) {
        out += d.to_string() + "\n";
    }
    return out;
}

// Lines 1-8; steps follow from line 9.
const std::string head =
    "name: t\n"
    "accounts: acc_1\n"
    "audience:\n"
    "  search: {title: Engineer}\n"
    "schedule:\n"
    "  time_zone: UTC\n"
    "budget_credits: 10\n"
    "steps:\n";

// ---------------------------------------------------------------------------------------------
// Examples

struct example_case {
    const char* file;
    std::size_t steps;
    std::size_t accounts;
};

std::ostream& operator<<(std::ostream& out, const example_case& c) {
    return out << c.file;
}

class examples : public ::testing::TestWithParam<example_case> {};

TEST_P(examples, validate) {
    auto text = read_example(GetParam().file);
    ASSERT_TRUE(text) << GetParam().file;
    load_options options;
    options.file_name = GetParam().file;
    options.account_lookup = test_accounts;
    options.read_file = [](const std::string& path) { return read_example(path); };
    load_result r = load_campaign(*text, options);
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    EXPECT_TRUE(r.warnings.empty());
    ASSERT_TRUE(r.value);
    EXPECT_EQ(r.value->steps.size(), GetParam().steps);
    EXPECT_EQ(r.value->accounts.size(), GetParam().accounts);
    // The canonical form a store keeps reads back to the same campaign.
    EXPECT_EQ(to_json(campaign_from_json(to_json(*r.value))), to_json(*r.value));
}

INSTANTIATE_TEST_SUITE_P(campaigns, examples,
                         ::testing::Values(example_case{"canonical.yaml", 4, 1},
                                           example_case{"follow_up.yaml", 8, 1},
                                           example_case{"multi_account.yaml", 4, 3}),
                         [](const auto& info) {
                             std::string name = info.param.file;
                             return name.substr(0, name.find('.'));
                         });

TEST(loader, canonical_example_means_what_it_says) {
    load_options options;
    options.account_lookup = test_accounts;
    load_result r = load_campaign(*read_example("canonical.yaml"), options);
    ASSERT_TRUE(r.value) << all_errors(r);
    const campaign& c = *r.value;
    EXPECT_EQ(c.name, "platform-engineers-berlin");
    EXPECT_EQ(c.accounts, std::vector<std::string>{"acc_demo_1"});
    EXPECT_EQ(c.who.kind, audience::source::search);
    EXPECT_EQ(c.who.search, json::parse(R"({"title": "Platform Engineer", "location": ["Berlin"]})"));
    EXPECT_EQ(c.who.total_results, 50);
    EXPECT_EQ(c.schedule.time_zone, "Europe/Berlin");
    EXPECT_EQ(c.schedule.start_minute, 9 * 60);
    EXPECT_EQ(c.schedule.end_minute, 18 * 60);
    EXPECT_EQ(c.limits.at("invite").per_day, 20);
    EXPECT_EQ(c.limits.at("invite").per_week, 80);
    EXPECT_FALSE(c.limits.at("send").per_week.has_value());
    EXPECT_EQ(c.budget_credits, 300);
    EXPECT_TRUE(c.stop_on_reply);
    EXPECT_EQ(c.max_attempts, 5);
    const step& check = c.steps[0];
    EXPECT_EQ(check.kind, step_kind::check_invitation);
    EXPECT_EQ(check.on_accepted, "hello");
    EXPECT_EQ(check.on_pending, "wait");
    EXPECT_EQ(check.on_no_invitation, "invite");
    EXPECT_EQ(c.steps[1].next, "wait");  // the step below
    ASSERT_TRUE(c.steps[1].note);
    EXPECT_EQ(c.steps[2].kind, step_kind::wait_accepted);
    EXPECT_EQ(c.steps[2].timeout, std::chrono::hours(24 * 7));
    EXPECT_EQ(c.steps[2].next, "hello");
    EXPECT_EQ(c.steps[2].on_timeout, "");
    ASSERT_EQ(c.steps[3].variants.size(), 1u);
    EXPECT_EQ(c.steps[3].variants[0].name, "default");
    EXPECT_EQ(c.steps[3].next, "");  // the last step ends
}

TEST(loader, csv_audience_fields_and_leads) {
    load_options options;
    options.account_lookup = test_accounts;
    options.read_file = [](const std::string& path) { return read_example(path); };
    load_result r = load_campaign(*read_example("follow_up.yaml"), options);
    ASSERT_TRUE(r.value) << all_errors(r);
    const audience& who = r.value->who;
    EXPECT_EQ(who.kind, audience::source::file);
    EXPECT_EQ(who.file, "leads.csv");
    EXPECT_EQ(who.fields_always, (std::vector<std::string>{"profile_url", "first_name", "last_name"}));
    EXPECT_EQ(who.fields_optional, (std::vector<std::string>{"company", "role"}));
    ASSERT_EQ(who.leads.size(), 3u);
    EXPECT_EQ(who.leads[0].at("role"), "engineering, research");
    EXPECT_EQ(who.leads[1].count("company"), 0u);
    EXPECT_EQ(who.leads[2].at("company"), "Bletchley \"Park\" Ltd");
}

TEST(loader, json_audience_null_and_absent_keys_are_optional_fields) {
    load_options options;
    options.account_lookup = test_accounts;
    options.read_file = [](const std::string& path) { return read_example(path); };
    load_result r = load_campaign(*read_example("multi_account.yaml"), options);
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_EQ(r.value->who.fields_always, (std::vector<std::string>{"profile_url", "first_name"}));
    EXPECT_EQ(r.value->who.fields_optional, (std::vector<std::string>{"city"}));
    EXPECT_EQ(r.value->unavailable, on_account_unavailable::reassign);
}

TEST(loader, json_definition_is_accepted) {
    std::string text = R"({
  "name": "json-campaign",
  "accounts": ["acc_1"],
  "audience": {"search": {"keyword": "rust"}, "total_results": 10},
  "schedule": {"time_zone": "Asia/Tokyo", "days": ["mon", "sat"], "hours": "08:00-24:00"},
  "budget_credits": 5,
  "steps": [{"id": "hi", "kind": "visit"}]
})";
    load_result r = load(text);
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_EQ(r.value->schedule.end_minute, 24 * 60);
    EXPECT_EQ(r.value->schedule.days, (std::array<bool, 7>{true, false, false, false, false, true, false}));
}

TEST(loader, json_definition_errors_have_positions) {
    std::string text =
        "{\n"
        "  \"name\": \"j\",\n"
        "  \"accounts\": \"acc_1\",\n"
        "  \"audience\": {\"search\": {\"title\": \"x\"}},\n"
        "  \"schedule\": {\"time_zone\": \"UTC\"},\n"
        "  \"budget_credits\": \"ten\",\n"
        "  \"steps\": [{\"id\": \"a\", \"kind\": \"visit\"}]\n"
        "}\n";
    load_result r = load(text);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].to_string(),
              "c.yaml:6:21: budget_credits: must be a whole number, not the text 'ten'");
}

TEST(loader, search_fields_and_account_lookup_skipped_without_database) {
    load_options options;  // no account_lookup: accounts are not checked
    load_result r =
        load_campaign(head +
                          "  - id: a\n    kind: send\n    message_text: \"{{full_name}} {{headline|}}\"\n"
                          "accounts_unused: x\n",
                      options);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("unknown key 'accounts_unused'"), std::string::npos);
    load_result ok = load_campaign(
        "name: n\naccounts: nobody\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
        "budget_credits: 1\nsteps: [{id: a, kind: send, message_text: \"{{full_name}} {{headline|}}\"}]\n",
        options);
    EXPECT_TRUE(ok.value) << all_errors(ok);
}

// ---------------------------------------------------------------------------------------------
// Bad files: each case has exactly one error, at this line:column, whose message contains this.

struct bad_case {
    const char* name;
    std::string text;
    int line;
    int column;
    const char* fragment;
};

std::ostream& operator<<(std::ostream& out, const bad_case& c) {
    return out << c.name;
}

class bad_files : public ::testing::TestWithParam<bad_case> {};

TEST_P(bad_files, one_error_at_its_place) {
    const bad_case& c = GetParam();
    std::map<std::string, std::string> files = {
        {"ok.csv", "profile_url,first_name\nhttps://n.example/in/a,A\n"},
        {"bad.csv", "profile_url,first_name\nhttps://n.example/in/a,\"A\n"},
        {"short.csv", "profile_url,first_name\nhttps://n.example/in/a,A\nhttps://n.example/in/b\n"},
        {"nourl.csv", "name,first_name\nx,A\n"},
        {"badcol.csv", "profile_url,First Name\nhttps://n.example/in/a,A\n"},
        {"bad.json", "[\n  {\"profile_url\": \"https://n.example/in/a\"},\n  {\"first_name\": \"B\"}\n]\n"},
        {"syntax.json", "[\n  {\"profile_url\": \"https://n.example/in/a\",}\n  {]\n"},
        {"empty.csv", "profile_url\n"},
    };
    load_result r = load(c.text, files);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_FALSE(r.value);
    const diagnostic& d = r.errors[0];
    EXPECT_EQ(d.line, c.line) << d.to_string();
    EXPECT_EQ(d.column, c.column) << d.to_string();
    EXPECT_NE(d.message.find(c.fragment), std::string::npos) << d.to_string();
}

std::string step(const std::string& body) {
    return head + body;
}

INSTANTIATE_TEST_SUITE_P(
    loader, bad_files,
    ::testing::Values(
        // syntax
        bad_case{"yaml_syntax", "name: [a, b\nsteps: 1\n", 1, 7, "YAML syntax error: this '[' is never closed"},
        bad_case{"duplicate_key", head + "  - {id: a, kind: visit}\nname: again\n", 10, 1,
                 "duplicate key 'name' (first at line 1)"},
        bad_case{"empty_file", "\n  \n", 1, 1, "the file is empty"},
        bad_case{"comments_only", "# nothing\n", 1, 1, "the file holds no value (null, ~ or comments only)"},
        bad_case{"json_null", "null", 1, 1, "the file holds no value"},
        bad_case{"nested_past_the_parser", "name: " + std::string(600, '[') + std::string(600, ']') + "\n", 1, 1207,
                 "values nested more than 500 levels deep (a campaign file takes 64)"},
        bad_case{"lone_surrogate", "{\"name\": \"a\\ud800b\"}", 1, 18,
                 "the escape \\uD800 is half of a surrogate pair without its other half"},
        bad_case{"two_documents", head + "  - {id: a, kind: visit}\n---\nname: b\n", 11, 1,
                 "one campaign per file"},
        // schema
        bad_case{"unknown_step_kind", step("  - id: a\n    kind: zap\n"), 10, 11, "unknown step kind 'zap'"},
        bad_case{"kind_typo", step("  - id: a\n    kind: chek_invitation\n"), 10, 11,
                 "did you mean 'check_invitation'?"},
        bad_case{"bad_duration_shape", step("  - id: w\n    kind: wait_accepted\n    timeout: 7days\n"), 11,
                 14, "bad duration '7days'"},
        bad_case{"bad_hours_shape",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule:\n  time_zone: UTC\n"
                 "  hours: 9-17\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 6, 10, "bad hours '9-17'"},
        bad_case{"unknown_key", step("  - {id: a, kind: visit}\nbudget_credit: 4\n"), 10, 1,
                 "unknown key 'budget_credit' (did you mean 'budget_credits'?)"},
        bad_case{"key_of_another_kind", step("  - id: a\n    kind: invite\n    timeout: 3d\n"), 11, 5,
                 "key 'timeout' does not apply to an invite step"},
        bad_case{"missing_branch",
                 step("  - id: a\n    kind: check_invitation\n    on_accepted: end\n    on_pending: end\n"),
                 9, 5, "missing required key 'on_no_invitation' for a check_invitation step"},
        bad_case{"missing_top_key",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "steps: [{id: a, kind: visit}]\n",
                 1, 1, "campaign: missing required key 'budget_credits'"},
        bad_case{"budget_zero",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 0\nsteps: [{id: a, kind: visit}]\n",
                 5, 17, "budget_credits: must be at least 1, not 0"},
        bad_case{"budget_day_cap_above_budget",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 10\nbudget_per_day_credits: 11\nsteps: [{id: a, kind: visit}]\n",
                 6, 25, "budget_per_day_credits: 11 is above budget_credits (10)"},
        bad_case{"budget_account_cap_above_budget",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 10\nbudget_per_account_credits:  12\nsteps: [{id: a, kind: visit}]\n",
                 6, 30, "budget_per_account_credits: 12 is above budget_credits (10)"},
        bad_case{"budget_day_cap_zero",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 10\nbudget_per_day_credits: 0\nsteps: [{id: a, kind: visit}]\n",
                 6, 25, "budget_per_day_credits: must be at least 1, not 0"},
        bad_case{"budget_text",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: lots\nsteps: [{id: a, kind: visit}]\n",
                 5, 17, "must be a whole number, not the text 'lots'"},
        bad_case{"empty_variants", step("  - id: s\n    kind: send\n    variants: []\n"), 11, 15,
                 "must list at least 1 item"},
        bad_case{"no_steps",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 1\nsteps: []\n",
                 6, 8, "steps: must list at least 1 item"},
        bad_case{"duplicate_day",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC, days: [mon, tue, mon]}\nbudget_credits: 1\nsteps: [{id: a, "
                 "kind: visit}]\n",
                 4, 45, "duplicate entry 'mon'"},
        bad_case{"search_empty",
                 "name: t\naccounts: acc_1\naudience: {search: {}}\nschedule: {time_zone: UTC}\n"
                 "budget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 20, "audience.search: must not be empty"},
        bad_case{"bad_target_text", step("  - id: a\n    kind: visit\n    next: 'no such'\n"), 11, 11,
                 "bad step target 'no such'"},
        // semantics: steps
        bad_case{"duration_too_long", step("  - id: w\n    kind: delay\n    duration: 400d\n"), 11, 15,
                 "step 'w': duration '400d' is longer than 365d"},
        bad_case{"duration_zero", step("  - id: w\n    kind: delay\n    duration: 0s\n"), 11, 15,
                 "must be longer than zero"},
        bad_case{"next_to_missing_step",
                 step("  - id: a\n    kind: visit\n    next: fnish\n  - id: finish\n    kind: end\n"), 11, 11,
                 "step 'a': next 'fnish' is not a step id (nor end) (did you mean 'finish'?)"},
        bad_case{"branch_to_missing_step",
                 step("  - id: c\n    kind: check_invitation\n    on_accepted: end\n    on_pending: end\n"
                      "    on_no_invitation: invit\n  - id: invite\n    kind: invite\n"),
                 13, 23, "on_no_invitation 'invit' is not a step id"},
        bad_case{"unreachable_step",
                 step("  - id: a\n    kind: visit\n    next: end\n  - id: b\n    kind: visit\n"), 12, 5,
                 "step 'b' is never reached from the first step 'a'"},
        bad_case{"duplicate_step_id", step("  - id: a\n    kind: visit\n  - id: a\n    kind: end\n"), 11, 9,
                 "duplicate step id 'a' (first at line 9)"},
        bad_case{"reserved_id", step("  - id: end\n    kind: end\n"), 9, 9, "step id 'end' is reserved"},
        bad_case{
            "loop",
            step("  - id: a\n    kind: visit\n  - id: b\n    kind: delay\n    duration: 1d\n    next: a\n"),
            14, 11, "steps loop: a -> b -> a"},
        bad_case{"send_without_text", step("  - id: s\n    kind: send\n"), 9, 5,
                 "a send step needs message_text"},
        bad_case{"send_with_both",
                 step("  - id: s\n    kind: send\n    message_text: hi\n    variants: [{name: A, "
                      "message_text: yo}]\n"),
                 9, 5, "give message_text or variants, not both"},
        bad_case{"duplicate_variant_names",
                 step("  - id: s\n    kind: send\n    variants:\n      - {name: A, message_text: one}\n"
                      "      - {name: A, message_text: two}\n"),
                 13, 16, "duplicate variant name 'A'"},
        // semantics: templates
        bad_case{"unknown_template_field",
                 step("  - id: s\n    kind: send\n    message_text: \"Hi {{frist_name}}!\"\n"), 11, 23,
                 "unknown field 'frist_name' in {{frist_name}}"},
        bad_case{"unknown_field_did_you_mean",
                 step("  - id: s\n    kind: send\n    message_text: \"Hi {{frist_name}}!\"\n"), 11, 23,
                 "(did you mean 'first_name'?)"},
        bad_case{"optional_field_without_default",
                 step("  - id: s\n    kind: send\n    message_text: |\n      Hello {{first_name}},\n      "
                      "how is {{company}}?\n"),
                 13, 14, "field 'company' may be missing for some leads and {{company}} has no default"},
        bad_case{"template_in_note",
                 step("  - id: i\n    kind: invite\n    note: 'Hi {{ first_name }} at {{employer|x}}'\n"), 11,
                 35, "unknown field 'employer'"},
        bad_case{"template_in_variant",
                 step("  - id: s\n    kind: send\n    variants:\n      - name: A\n        message_text: "
                      "\"{{location}}\"\n"),
                 13, 24, "field 'location' may be missing"},
        bad_case{"unclosed_placeholder",
                 step("  - id: s\n    kind: send\n    message_text: \"Hi {{first_name\"\n"), 11, 23,
                 "unclosed placeholder '{{first_name'"},
        bad_case{"empty_placeholder", step("  - id: s\n    kind: send\n    message_text: \"Hi {{ }}\"\n"), 11,
                 23, "empty placeholder {{ }}"},
        // semantics: campaign settings
        bad_case{"unknown_account",
                 "name: t\naccounts: [acc_1, acc_x]\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 2, 19, "unknown account 'acc_x'"},
        bad_case{"disconnected_account",
                 "name: t\naccounts: acc_off\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 2, 11, "account 'acc_off' is disconnected"},
        bad_case{"bad_time_zone",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: Europe/Berln}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 4, 23,
                 "unknown time zone 'Europe/Berln' (an IANA name such as Europe/Berlin or America/New_York) "
                 "(did you mean 'Europe/Berlin'?)"},
        bad_case{"time_zone_in_another_case",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: utc}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 4, 23,
                 "unknown time zone 'utc' (an IANA name such as Europe/Berlin or America/New_York) "
                 "(did you mean 'UTC'? zone names are case-sensitive)"},
        bad_case{"hours_reversed",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC, hours: \"18:00-09:00\"}\nbudget_credits: 1\nsteps: [{id: a, "
                 "kind: visit}]\n",
                 4, 35, "the end must be after the start"},
        bad_case{"hours_not_a_time",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC, hours: \"09:00-25:00\"}\nbudget_credits: 1\nsteps: [{id: a, "
                 "kind: visit}]\n",
                 4, 35, "25:00 is not a time of day"},
        bad_case{"limits_week_below_day",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}}\n"
                 "schedule: {time_zone: UTC}\nlimits:\n  invite: {per_day: 10, per_week: 5}\n"
                 "budget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 6, 35, "limits.invite.per_week: 5 is below per_day (10)"},
        bad_case{"audience_both",
                 "name: t\naccounts: acc_1\naudience: {search: {title: x}, file: ok.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 11, "give either search or file, not both"},
        bad_case{"total_results_with_file",
                 "name: t\naccounts: acc_1\naudience:\n  file: ok.csv\n  total_results: 5\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 5, 3, "total_results: applies to a search audience only"},
        // semantics: the audience file (its own line numbers)
        bad_case{"unreadable_file",
                 "name: t\naccounts: acc_1\naudience: {file: missing.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 18, "cannot read 'missing.csv'"},
        bad_case{"csv_unterminated_quote",
                 "name: t\naccounts: acc_1\naudience: {file: bad.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 2, 24, "unterminated quoted field"},
        bad_case{"csv_short_row",
                 "name: t\naccounts: acc_1\naudience: {file: short.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 1, "this row has 1 field, the header has 2"},
        bad_case{"csv_no_profile_url",
                 "name: t\naccounts: acc_1\naudience: {file: nourl.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 1, 1, "no profile_url column"},
        bad_case{"csv_bad_column_name",
                 "name: t\naccounts: acc_1\naudience: {file: badcol.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 1, 13, "column 'First Name' is not a field name"},
        bad_case{"csv_no_leads",
                 "name: t\naccounts: acc_1\naudience: {file: empty.csv}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 1, 1, "the audience file has no leads"},
        bad_case{"json_lead_without_url",
                 "name: t\naccounts: acc_1\naudience: {file: bad.json}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 3, "this lead has no profile_url"},
        bad_case{"json_syntax",
                 "name: t\naccounts: acc_1\naudience: {file: syntax.json}\n"
                 "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                 3, 4, "YAML syntax error"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(loader, file_column_empty_in_some_row_needs_a_default) {
    std::map<std::string, std::string> files = {
        {"l.csv",
         "profile_url,first_name,company\nhttps://n.example/in/a,A,Acme\nhttps://n.example/in/b,B,\n"}};
    std::string text =
        "name: t\naccounts: acc_1\naudience: {file: l.csv}\nschedule: {time_zone: UTC}\n"
        "budget_credits: 1\nsteps:\n  - id: s\n    kind: send\n    message_text: \"{{first_name}} at "
        "{{company}}\"\n";
    load_result r = load(text, files);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].to_string(),
              "c.yaml:9:38: field 'company' may be missing for some leads and {{company}} has no default: "
              "write {{company|...}}");
    std::string fixed = text.replace(text.find("{{company}}"), 11, "{{company|your company}}");
    EXPECT_TRUE(load(fixed, files).value);
}

TEST(loader, each_occurrence_of_a_bad_placeholder_is_located) {
    load_result r =
        load(step("  - id: s\n    kind: send\n    message_text: |\n      {{first_name}} {{bad}}\n"
                  "      and {{bad}} {{ bad }}\n"));
    std::vector<std::string> got;
    for (const diagnostic& d : r.errors) {
        got.push_back(std::to_string(d.line) + ":" + std::to_string(d.column));
    }
    EXPECT_EQ(got, (std::vector<std::string>{"12:22", "13:11", "13:19"})) << all_errors(r);
}

// One account named by its id and its label would be two senders (twice the leads): refused at
// the second name.
TEST(loader, an_account_named_twice_by_id_and_label_is_refused) {
    std::string text = head;
    text.replace(text.find("accounts: acc_1"), 15, "accounts: [acc_1, acc_demo_1, sender-1]");
    load_result r = load(text + "  - {id: a, kind: visit}\n");
    ASSERT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].to_string(),
              "c.yaml:2:31: accounts: 'sender-1' is account acc_1, named already as 'acc_1': name each sender once");
}

// A disconnected sender beside a connected one is a warning (its leads wait for it; new ones go to
// the connected senders), so that an outage does not block a fix of the file; alone it is an error.
TEST(loader, a_disconnected_sender_beside_a_connected_one_is_a_warning) {
    load_result r = load("name: t\naccounts: [acc_off, acc_1]\naudience: {search: {title: x}}\n"
                         "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    ASSERT_TRUE(r.value);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].line, 2);
    EXPECT_NE(r.warnings[0].message.find("account 'acc_off' is disconnected: its live leads wait until it logs in "
                                         "again (accounts connect), and new leads go to the connected senders; an "
                                         "audience search goes through the first account"),
              std::string::npos)
        << r.warnings[0].message;
    // Not first: no word of the search.
    r = load("name: t\naccounts: [acc_1, acc_off]\naudience: {search: {title: x}}\n"
             "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n");
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].message.find("audience search"), std::string::npos) << r.warnings[0].message;
    // Alone: an error.
    r = load("name: t\naccounts: [acc_off]\naudience: {search: {title: x}}\n"
             "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n");
    EXPECT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("is disconnected (log it in again, or remove it)"), std::string::npos);
}

TEST(loader, collects_all_errors_sorted_by_position) {
    std::string text =
        "name: t\n"
        "accounts: [acc_x, acc_off]\n"
        "audience: {search: {title: x}}\n"
        "schedule: {time_zone: Mars/Olympus, hours: \"10:00-09:00\"}\n"
        "budget_credits: 1\n"
        "steps:\n"
        "  - id: a\n"
        "    kind: send\n"
        "    message_text: \"{{nope}} {{company}}\"\n"
        "    next: zz\n"
        "  - id: a\n"
        "    kind: end\n";
    load_result r = load(text);
    std::vector<std::string> got;
    for (const diagnostic& d : r.errors) {
        got.push_back(d.to_string());
    }
    std::vector<std::string> want = {
        "c.yaml:2:12: accounts: unknown account 'acc_x' (orchestrator accounts list shows the ids)",
        "c.yaml:2:19: accounts: account 'acc_off' is disconnected (log it in again, or remove it)",
        "c.yaml:4:23: schedule.time_zone: unknown time zone 'Mars/Olympus' (an IANA name such as "
        "Europe/Berlin or "
        "America/New_York)",
        "c.yaml:4:44: schedule.hours: hours '10:00-09:00': the end must be after the start (a window across "
        "midnight "
        "is not supported)",
        "c.yaml:9:20: unknown field 'nope' in {{nope}} (fields of this audience: first_name, last_name, "
        "full_name, "
        "profile_url, headline, location, company)",
        "c.yaml:9:29: field 'company' may be missing for some leads and {{company}} has no default: write "
        "{{company|...}}",
        "c.yaml:10:11: step 'a': next 'zz' is not a step id (nor end)",
        "c.yaml:11:9: duplicate step id 'a' (first at line 7)",
    };
    EXPECT_EQ(got, want);
}

TEST(loader, schema_errors_are_all_reported_before_semantics) {
    std::string text =
        "name: ''\n"
        "accounts: []\n"
        "audience: {search: {title: x, network: [F, X]}}\n"
        "schedule: {time_zone: UTC, days: [mon, funday]}\n"
        "budget_credits: 1.5\n"
        "max_attempts: 50\n"
        "steps: [{id: 1a, kind: visit}]\n";
    load_result r = load(text);
    std::vector<std::string> got;
    for (const diagnostic& d : r.errors) {
        got.push_back(d.to_string());
    }
    std::vector<std::string> want = {
        "c.yaml:1:7: name: must not be blank",
        "c.yaml:2:11: accounts: must list at least 1 item(s)",
        "c.yaml:3:44: audience.search.network[1]: unknown value 'X' (one of: F, S, O)",
        "c.yaml:4:40: schedule.days[1]: unknown value 'funday' (one of: mon, tue, wed, thu, fri, sat, sun)",
        "c.yaml:5:17: budget_credits: must be a whole number, not the number 1.5",
        "c.yaml:6:15: max_attempts: must be at most 20, not 50",
        "c.yaml:7:14: steps[0].id: bad step id '1a': Unique step id: a letter, then letters, digits, _ or - "
        "(at most "
        "64); `end` is reserved.",
    };
    EXPECT_EQ(got, want);
}

TEST(loader, warnings_do_not_block) {
    std::string text = step(
        "  - id: w\n    kind: wait_accepted\n    timeout: 2d\n    on_timeout: drop\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n    next: end\n"
        "  - id: drop\n    kind: withdraw\n");
    load_result r = load(text);
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_EQ(r.warnings[0].line, 9);
    EXPECT_NE(r.warnings[0].message.find("step 'w' (wait_accepted) follows no invite"), std::string::npos);
    EXPECT_EQ(r.warnings[1].line, 17);
    EXPECT_NE(r.warnings[1].message.find("step 'drop' (withdraw)"), std::string::npos);
}

// A send right after an invite (a delay is no wait for the acceptance) goes to a person who has
// most likely not accepted: a warning at the send step, once, naming the invite.
TEST(loader, a_send_right_after_an_invite_is_a_warning) {
    load_result r = load(step(
        "  - id: inv\n    kind: invite\n"
        "  - id: pause\n    kind: delay\n    duration: 1d\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].line, 14);
    EXPECT_EQ(r.warnings[0].message,
              "step 'hi' (send) can follow invite step 'inv' with no wait_accepted or check_invitation between: the "
              "person has most likely not accepted yet, and a message to someone not connected is refused");

    // A wait for the acceptance, or a check of the invitation, between them: nothing to say.
    r = load(step(
        "  - id: inv\n    kind: invite\n"
        "  - id: w\n    kind: wait_accepted\n    timeout: 2d\n    on_timeout: end\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].to_string();
    r = load(step(
        "  - id: inv\n    kind: invite\n"
        "  - id: c\n    kind: check_invitation\n    on_accepted: hi\n    on_pending: end\n    on_no_invitation: end\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].to_string();

    // After a wait_accepted's timeout, or a check's PENDING branch, the person has not accepted.
    r = load(step(
        "  - id: inv\n    kind: invite\n"
        "  - id: w\n    kind: wait_accepted\n    timeout: 2d\n    next: thanks\n    on_timeout: nudge\n"
        "  - id: thanks\n    kind: send\n    message_text: thanks\n    next: end\n"
        "  - id: nudge\n    kind: send\n    message_text: hello?\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].message,
              "step 'nudge' (send) can follow the timeout of wait_accepted step 'w': the person did not accept, and "
              "a message to someone not connected is refused");
    r = load(step(
        "  - id: c\n    kind: check_invitation\n    on_accepted: end\n    on_pending: hi\n    on_no_invitation: end\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].message,
              "step 'hi' (send) can follow the PENDING branch of check_invitation step 'c': the person has not "
              "accepted yet, and a message to someone not connected is refused");
    // The NO_INVITATION branch: no invitation, and no connection (one reads ACCEPTED).
    r = load(step(
        "  - id: c\n    kind: check_invitation\n    on_accepted: end\n    on_pending: end\n    on_no_invitation: hi\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0].message,
              "step 'hi' (send) can follow the NO_INVITATION branch of check_invitation step 'c': the person is "
              "not connected (the check gives a connection as ACCEPTED), and a message to someone not connected is "
              "refused");
    // Each send is told the branch it follows: the PENDING branch's send, though NO_INVITATION
    // comes later in the step; and an invite on the NO_INVITATION branch, with no wait, is told as
    // the invite.
    r = load(step(
        "  - id: c\n    kind: check_invitation\n    on_accepted: end\n    on_pending: hi\n    on_no_invitation: inv\n"
        "  - id: inv\n    kind: invite\n    next: hey\n"
        "  - id: hi\n    kind: send\n    message_text: hello\n    next: end\n"
        "  - id: hey\n    kind: send\n    message_text: hey\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 2u);
    std::set<std::string> messages{r.warnings[0].message, r.warnings[1].message};
    EXPECT_TRUE(messages.contains("step 'hi' (send) can follow the PENDING branch of check_invitation step 'c': the "
                                  "person has not accepted yet, and a message to someone not connected is refused"))
        << r.warnings[0].message << "\n" << r.warnings[1].message;
    EXPECT_TRUE(messages.contains("step 'hey' (send) can follow invite step 'inv' with no wait_accepted or "
                                  "check_invitation between: the person has most likely not accepted yet, and a "
                                  "message to someone not connected is refused"))
        << r.warnings[0].message << "\n" << r.warnings[1].message;
}

TEST(loader, pending_branch_counts_as_an_invitation) {
    std::string text = step(
        "  - id: c\n    kind: check_invitation\n    on_accepted: end\n    on_pending: w\n"
        "    on_no_invitation: end\n  - id: w\n    kind: wait_accepted\n    timeout: 1d\n");
    load_result r = load(text);
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(loader, duplicate_profile_url_in_file_is_a_warning) {
    std::map<std::string, std::string> files = {
        {"d.csv", "profile_url\nhttps://n.example/in/a\nhttps://n.example/in/b\nhttps://n.example/in/a\n"}};
    load_result r = load_d_csv(files);
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_EQ(r.value->who.leads.size(), 2u);  // the repeat is dropped
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(
        r.warnings[0].to_string(),
        "d.csv:4:1: profile_url 'https://n.example/in/a' is listed again (first at line 2); the lead is "
        "enrolled once, from its first row");
}

// A profile URL with a control character (here ESC and TAB) or a space is refused with its line
// and byte: it would reach every listing of the lead, and terminals interpret an escape.
TEST(loader, a_profile_url_with_a_control_character_or_a_space_is_refused) {
    std::map<std::string, std::string> files = {
        {"d.csv", "profile_url\nhttps://n.example/in/ok\n\"https://n.example/in/e\x1b[31mred\"\n"
                  "\"https://n.example/in/t\tab\"\nhttps://n.example/in/a b\n"}};
    load_result r = load_d_csv(files);
    EXPECT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
    EXPECT_EQ(r.errors[0].to_string().rfind("d.csv:3:1: profile_url 'https://n.example/in/e\\x1b[31mred' has ", 0), 0u)
        << all_errors(r);
    EXPECT_NE(r.errors[0].to_string().find("at byte 23"), std::string::npos) << all_errors(r);
    EXPECT_EQ(r.errors[1].to_string().rfind("d.csv:4:1: profile_url 'https://n.example/in/t\\tab' has ", 0), 0u)
        << all_errors(r);
    EXPECT_EQ(r.errors[2].to_string(),
              "d.csv:5:1: profile_url 'https://n.example/in/a b' has a space at byte 23 (a URL writes it %20)")
        << all_errors(r);
}

// Spaces an ASCII check does not see: a no-break space, a zero-width one, an ideographic one.
TEST(loader, a_profile_url_with_a_unicode_space_is_refused) {
    std::map<std::string, std::string> files = {
        {"d.csv", "profile_url\nhttps://n.example/in/no\u00a0break\nhttps://n.example/in/zero\u200bwidth\n"
                  "https://n.example/in/wide\u3000space\nhttps://n.example/in/caf\u00e9\n"}};
    load_result r = load_d_csv(files);
    EXPECT_FALSE(r.value);
    ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);
    EXPECT_NE(r.errors[0].to_string().find("d.csv:2:1: profile_url 'https://n.example/in/no"), std::string::npos)
        << all_errors(r);
    EXPECT_NE(r.errors[0].to_string().find("has a no-break space (U+00A0) at byte 24 (invisible, likely pasted with "
                                           "the URL: remove it)"),
              std::string::npos)
        << all_errors(r);
    EXPECT_NE(r.errors[1].to_string().find("has a zero-width space (U+200B) at byte 26"), std::string::npos)
        << all_errors(r);
    EXPECT_NE(r.errors[2].to_string().find("has a space (U+3000) at byte 26"), std::string::npos) << all_errors(r);
}

// One person, one canonical URL, however the URL is spelled: scheme, www., case, a trailing
// slash, a query or fragment, a %XX of a plain letter, an accent raw or encoded.
TEST(loader, canonical_profile_urls_spell_each_character_one_way) {
    const std::string one = canonical_profile_url("https://n.example/in/jos\u00e9");
    EXPECT_EQ(one, "n.example/in/jos%c3%a9");
    for (const char* same : {"http://www.N.example/in/JOS%C3%A9/", "https://n.example/in/%4Aos%c3%a9?trk=x#top",
                             "n.example/in/jos\u00e9//"}) {
        EXPECT_EQ(canonical_profile_url(same), one) << same;
    }
    EXPECT_EQ(canonical_profile_url("https://n.example/in/%63hloe"), "n.example/in/chloe");
    // A %XX of a reserved or other character stays encoded (lower-case hex); a broken one as is.
    EXPECT_EQ(canonical_profile_url("https://n.example/in/100%25-SURE%2F"), "n.example/in/100%25-sure%2f");
    EXPECT_EQ(canonical_profile_url("https://n.example/in/a%zz%4"), "n.example/in/a%zz%4");
}

// An audience file that lists one person twice in two spellings enrolls them once, from the
// first row, with a warning that names both.
TEST(loader, one_person_in_two_spellings_is_one_lead) {
    std::map<std::string, std::string> files = {
        {"d.csv", "profile_url,first_name\nhttps://n.example/in/chloe,First\nhttps://n.example/in/%63hloe,Second\n"
                  "https://www.n.example/in/Chloe/,Third\nhttps://n.example/in/other,Other\n"}};
    load_result r = load_d_csv(files);
    ASSERT_TRUE(r.value) << all_errors(r);
    ASSERT_EQ(r.value->who.leads.size(), 2u);
    EXPECT_EQ(r.value->who.leads[0]["first_name"], "First");
    EXPECT_EQ(r.value->who.leads[1]["first_name"], "Other");
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_NE(r.warnings[0].to_string().find("d.csv:3:1: profile_url 'https://n.example/in/%63hloe' is the same person "
                                             "as 'https://n.example/in/chloe' (line 2)"),
              std::string::npos)
        << r.warnings[0].to_string();
}

// The scheme in capitals is a URL too.
TEST(loader, a_scheme_in_capitals_is_a_url) {
    load_result r = load_d_csv({{"d.csv", "profile_url\nHTTPS://n.example/in/a\nHttp://n.example/in/b\n"}});
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_EQ(r.value->who.leads.size(), 2u);
    EXPECT_FALSE(load_d_csv({{"d.csv", "profile_url\nftp://n.example/in/a\n"}}).value);
}

// An invisible character before the scheme is named as such, not "not a URL" (the quoted URL
// looks right on screen).
TEST(loader, an_invisible_character_before_the_scheme_is_named) {
    std::map<std::string, std::string> files = {{"d.csv", "profile_url\n\u200bhttps://n.example/in/a\n"}};
    load_result r = load_d_csv(files);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].to_string().find("has a zero-width space (U+200B) at byte 1"), std::string::npos)
        << all_errors(r);
}

// The reader says why a file cannot be read (a directory here), and the diagnostic passes it on.
TEST(loader, an_unreadable_audience_file_says_why) {
    load_options options;
    options.file_name = "c.yaml";
    options.account_lookup = test_accounts;
    options.read_file = [](const std::string&) { return file_read(std::nullopt, "it is a directory, not a file"); };
    load_result r = load_campaign(
        "name: t\naccounts: acc_1\naudience: {file: leads.csv}\nschedule: {time_zone: UTC}\n"
        "budget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
        options);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].to_string().find("audience.file: cannot read 'leads.csv': it is a directory, not a file"),
              std::string::npos)
        << all_errors(r);
}

// A message or note with a control character (ESC here) is refused where it stands; line breaks
// and tabs are text.
TEST(loader, a_message_with_a_control_character_is_refused) {
    load_result bad = load(step("  - {id: hi, kind: send, message_text: \"Hi \\e[31m{{first_name}}\"}\n"));
    EXPECT_FALSE(bad.value);
    ASSERT_EQ(bad.errors.size(), 1u) << all_errors(bad);
    EXPECT_NE(bad.errors[0].to_string().find("the text holds a control character (U+001B) at byte 4"),
              std::string::npos)
        << all_errors(bad);
    load_result good = load(step("  - {id: hi, kind: send, message_text: \"Hi\\n\\tthere {{first_name}}\"}\n"));
    EXPECT_TRUE(good.value) << all_errors(good);
}

TEST(loader, defaults) {
    load_result r = load(step("  - {id: a, kind: visit}\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    const campaign& c = *r.value;
    EXPECT_EQ(c.who.total_results, 25);
    EXPECT_EQ(c.schedule.days, (std::array<bool, 7>{true, true, true, true, true, false, false}));
    EXPECT_EQ(c.schedule.start_minute, 9 * 60);
    EXPECT_EQ(c.schedule.end_minute, 18 * 60);
    EXPECT_TRUE(c.limits.empty());
    EXPECT_TRUE(c.stop_on_reply);
    EXPECT_EQ(c.unavailable, on_account_unavailable::wait);
    EXPECT_EQ(c.max_attempts, 5);
    EXPECT_EQ(c.steps[0].next, "");
}

TEST(loader, budget_caps_are_optional_and_round_trip) {
    load_result plain = load(head + "  - {id: a, kind: visit}\n");
    ASSERT_TRUE(plain.value) << all_errors(plain);
    EXPECT_FALSE(plain.value->budget_per_day_credits);
    EXPECT_FALSE(plain.value->budget_per_account_credits);
    // No caps: the canonical form has no cap keys (its digest is what it was before caps existed).
    EXPECT_FALSE(to_json(*plain.value).contains("budget_per_day_credits"));
    EXPECT_FALSE(to_json(*plain.value).contains("budget_per_account_credits"));

    load_result capped = load(head + "  - {id: a, kind: visit}\nbudget_per_day_credits: 4\n"
                                     "budget_per_account_credits: 10\n");
    ASSERT_TRUE(capped.value) << all_errors(capped);
    EXPECT_EQ(capped.value->budget_per_day_credits, 4);
    EXPECT_EQ(capped.value->budget_per_account_credits, 10);  // equal to budget_credits is allowed
    campaign back = campaign_from_json(to_json(*capped.value));
    EXPECT_EQ(back.budget_per_day_credits, 4);
    EXPECT_EQ(back.budget_per_account_credits, 10);
    EXPECT_EQ(to_json(back), to_json(*capped.value));

    // At most 10^12 credits: more is no budget, and /metrics (a double) would not show it exactly.
    std::string most = head;
    most.replace(most.find("budget_credits: 10"), 18, "budget_credits: 1000000000000");
    EXPECT_TRUE(load(most + "  - {id: a, kind: visit}\n").value);
    std::string over = head;
    over.replace(over.find("budget_credits: 10"), 18, "budget_credits: 1000000000001");
    load_result refused = load(over + "  - {id: a, kind: visit}\n");
    EXPECT_FALSE(refused.value);
    EXPECT_NE(all_errors(refused).find("c.yaml:7:"), std::string::npos) << all_errors(refused);
}

TEST(loader, exclude_is_optional_checked_and_round_trips) {
    load_result plain = load(head + "  - {id: a, kind: visit}\n");
    ASSERT_TRUE(plain.value) << all_errors(plain);
    EXPECT_FALSE(to_json(*plain.value).contains("exclude"));  // digests of older files unchanged

    load_result ex = load(head + "  - {id: a, kind: visit}\nexclude:\n  profile_urls: [\"https://network.example/in/x\"]\n"
                                 "  companies: [\" Acme Corp \", acme corp]\n");
    ASSERT_TRUE(ex.value) << all_errors(ex);
    EXPECT_EQ(ex.value->exclude.profile_urls, std::vector<std::string>{"https://network.example/in/x"});
    EXPECT_EQ(ex.value->exclude.companies, (std::vector<std::string>{"Acme Corp", "acme corp"}));
    ASSERT_EQ(ex.warnings.size(), 1u);
    EXPECT_NE(ex.warnings[0].message.find("listed twice"), std::string::npos);
    campaign back = campaign_from_json(to_json(*ex.value));
    EXPECT_EQ(to_json(back), to_json(*ex.value));

    // Lines 1-8 are the head, 9 the step, 10 `exclude:`.
    load_result unknown = load(head + "  - {id: a, kind: visit}\nexclude:\n  profile_urls: []\n  people: []\n");
    EXPECT_FALSE(unknown.value);
    EXPECT_NE(all_errors(unknown).find("c.yaml:12:"), std::string::npos) << all_errors(unknown);
    load_result blank = load(head + "  - {id: a, kind: visit}\nexclude:\n  companies: [\"  \"]\n");
    EXPECT_FALSE(blank.value);
    EXPECT_NE(all_errors(blank).find("c.yaml:11:"), std::string::npos) << all_errors(blank);
    load_result values = load(head + "  - {id: a, kind: visit}\nexclude:\n  profile_urls: [x, \"https://network.example/in/ok\"]\n");
    EXPECT_FALSE(values.value);
    EXPECT_NE(all_errors(values).find("c.yaml:11:18: 'x' is not a profile URL"), std::string::npos) << all_errors(values);
    // The profile prefix alone names no one; one person spelled twice is listed twice.
    load_result prefix = load(head + "  - {id: a, kind: visit}\nexclude:\n  profile_urls: [\"https://network.example/in/\"]\n");
    EXPECT_FALSE(prefix.value);
    EXPECT_NE(all_errors(prefix).find("'https://network.example/in/' names no profile: nothing follows /in/"),
              std::string::npos)
        << all_errors(prefix);
    load_result twice = load(head + "  - {id: a, kind: visit}\nexclude:\n  profile_urls: [\"https://network.example/in/x\", "
                                    "\"HTTPS://www.Network.example/in/x/\"]\n");
    ASSERT_TRUE(twice.value) << all_errors(twice);
    ASSERT_EQ(twice.warnings.size(), 1u);
    EXPECT_NE(twice.warnings[0].message.find("is listed twice (first at line 11, column 18)"), std::string::npos)
        << twice.warnings[0].message;
}

TEST(model, a_profile_urls_shape) {
    EXPECT_FALSE(profile_url_shape_problem("https://network.example/in/jane-doe"));
    EXPECT_FALSE(profile_url_shape_problem("network.example/in/jane-doe"));
    EXPECT_FALSE(profile_url_shape_problem("https://network.example/pub/in"));  // "in" as a name, not the prefix
    EXPECT_FALSE(profile_url_shape_problem("https://network.example/in/in"));
    EXPECT_FALSE(profile_url_shape_problem("https://network.example/in/jos%C3%A9"));
    EXPECT_FALSE(profile_url_shape_problem("https://network.example/in/100%25"));
    for (const char* bad : {"x", "https://network.example", "https://network.example/", "https://localhost/in/x",
                            "/in/x", "https://network.example/in/", "https://www.network.example/in",
                            "https://network.example/in/?id=3", "https://network.example/in//"}) {
        EXPECT_TRUE(profile_url_shape_problem(bad)) << bad;
    }
    // Spellings that would be a second key for one person, or that no profile has: each says why.
    const std::vector<std::pair<std::string, std::string>> said = {
        {"https://network.example/in/bob%", "has a '%' at byte 31 that starts no escape"},
        {"https://network.example/in/bob%zz", "has a '%' at byte 31 that starts no escape"},
        {"https://network.example/in/bob%ff", "percent-encodes bytes that are not text: invalid UTF-8"},
        {"https://network.example./in/bob", "has a host that ends with a dot"},
        {"https://me@network.example/in/bob", "has user information before its host"},
        {"https://network.example:443/in/bob", "has a port after its host"},
    };
    for (const auto& [url, why] : said) {
        const auto problem = profile_url_shape_problem(url);
        ASSERT_TRUE(problem) << url;
        EXPECT_NE(problem->find(why), std::string::npos) << url << ": " << *problem;
    }
}

TEST(loader, durations_combine_units) {
    load_result r = load(step("  - {id: a, kind: delay, duration: 1d12h30m15s}\n"));
    ASSERT_TRUE(r.value) << all_errors(r);
    EXPECT_EQ(r.value->steps[0].duration, std::chrono::seconds(86400 + 12 * 3600 + 30 * 60 + 15));
}

TEST(loader, alias_bombs_are_bounded) {
    std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
        std::string prev(1, static_cast<char>(c - 1));
        text += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
                ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
                "]\n";
    }
    load_result r = load(text);  // 10^9 values if expanded
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("too many values"), std::string::npos);
}

TEST(loader, audience_files_of_the_maximum_size) {
    std::string csv = "profile_url,first_name,company\n";
    std::string json_leads = "[\n";
    for (int i = 0; i < 50000; ++i) {
        std::string url = "https://n.example/in/p" + std::to_string(i);
        csv += url + ",Name" + std::to_string(i) + (i % 2 ? ",Acme\n" : ",\n");
        json_leads +=
            std::string(i ? ",\n" : "") + "{\"profile_url\": \"" + url + "\", \"first_name\": \"N\"}";
    }
    json_leads += "\n]\n";
    std::string tail = "schedule: {time_zone: UTC}\nbudget_credits: 1\nsteps: [{id: a, kind: visit}]\n";
    std::map<std::string, std::string> files = {
        {"big.csv", csv}, {"big.json", json_leads}, {"over.csv", csv + "https://n.example/in/x,X,\n"}};
    load_result from_csv = load("name: t\naccounts: acc_1\naudience: {file: big.csv}\n" + tail, files);
    ASSERT_TRUE(from_csv.value) << all_errors(from_csv);
    EXPECT_EQ(from_csv.value->who.leads.size(), 50000u);
    EXPECT_EQ(from_csv.value->who.fields_optional, std::vector<std::string>{"company"});
    load_result from_json = load("name: t\naccounts: acc_1\naudience: {file: big.json}\n" + tail, files);
    ASSERT_TRUE(from_json.value) << all_errors(from_json);
    EXPECT_EQ(from_json.value->who.leads.size(), 50000u);
    load_result over = load("name: t\naccounts: acc_1\naudience: {file: over.csv}\n" + tail, files);
    ASSERT_EQ(over.errors.size(), 1u) << all_errors(over);
    EXPECT_EQ(over.errors[0].to_string(), "over.csv:50002:1: more than 50000 leads in one file");
}

TEST(loader, oversized_definition_is_refused) {
    std::string text(1024 * 1024 + 1, '#');
    load_result r = load(text);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].to_string(), "c.yaml:1:1: the campaign file is larger than 1 MiB");
}

// Text that is not UTF-8, or has a NUL byte, is refused where it is, before anything is parsed;
// a NUL through an escape ("\0" in YAML, "\u0000" in JSON) at its field.
TEST(loader, invalid_text_and_nul_are_refused_where_they_are) {
    const std::string steps = "  - id: visit\n    kind: visit\n";
    auto bad = load(head + steps + "# caf\xc3\n");
    ASSERT_EQ(bad.errors.size(), 1u) << all_errors(bad);
    EXPECT_EQ(bad.errors[0].to_string(), "c.yaml:11:6: the definition is not valid text: invalid UTF-8 (byte 0xc3)");
    auto raw_nul = load(std::string("name: a\0b\n", 10) + head.substr(8) + steps);
    ASSERT_EQ(raw_nul.errors.size(), 1u) << all_errors(raw_nul);
    EXPECT_EQ(raw_nul.errors[0].to_string(), "c.yaml:1:8: the definition is not valid text: a NUL byte");
    auto escaped = load("name: t\naccounts: acc_1\naudience:\n  search: {title: \"Eng\\0ineer\"}\n" + head.substr(head.find("schedule")) + steps);
    ASSERT_FALSE(escaped.errors.empty());
    EXPECT_EQ(escaped.errors[0].to_string(), "c.yaml:4:19: the value contains a NUL character") << all_errors(escaped);
    EXPECT_FALSE(escaped.value);
}

// A NUL or invalid UTF-8 in an audience file is refused where it is at validate time (it passed,
// and the apply failed in PostgreSQL with nothing said about where).
TEST(loader, invalid_text_in_an_audience_file_is_refused_where_it_is) {
    auto nul = load_d_csv({{"d.csv", "profile_url,first_name\nhttps://n.example/in/a,A" + std::string(1, '\0') + "na\n"}});
    ASSERT_EQ(nul.errors.size(), 1u) << all_errors(nul);
    EXPECT_EQ(nul.errors[0].to_string(), "d.csv:2:25: the file is not valid text: a NUL byte");
    auto latin1 = load_d_csv({{"d.csv", "profile_url,first_name\nhttps://n.example/in/a,Jos\xe9\n"}});
    ASSERT_EQ(latin1.errors.size(), 1u) << all_errors(latin1);
    EXPECT_EQ(latin1.errors[0].to_string(), "d.csv:2:27: the file is not valid text: invalid UTF-8 (byte 0xe9)");
    // A JSON escape makes a NUL the file's text does not hold.
    auto escaped = load("name: t\naccounts: acc_1\naudience: {file: d.json}\nschedule: {time_zone: UTC}\n"
                        "budget_credits: 1\nsteps: [{id: a, kind: visit}]\n",
                        {{"d.json", "[{\"profile_url\": \"https://n.example/in/a\", \"first_name\": \"A\\u0000n\"}]"}});
    ASSERT_EQ(escaped.errors.size(), 1u) << all_errors(escaped);
    EXPECT_EQ(escaped.errors[0].to_string(), "d.json:1:58: the value of 'first_name' holds a NUL byte");
}

// An invisible or direction character in a profile URL, written or percent-encoded, or in an
// excluded company, is refused where it is: such an entry matches nobody while reading as someone.
TEST(loader, invisible_characters_in_urls_and_exclusions_are_refused) {
    auto encoded = load_d_csv({{"d.csv", "profile_url\nhttps://n.example/in/jo%E2%80%8Bhn\n"}});
    ASSERT_EQ(encoded.errors.size(), 1u) << all_errors(encoded);
    EXPECT_NE(encoded.errors[0].message.find("has invisible character U+200B, percent-encoded at byte 24"),
              std::string::npos)
        << all_errors(encoded);
    // Percent-encoded text that is a name's (an accent) and bytes that are no text stay URLs.
    EXPECT_TRUE(load_d_csv({{"d.csv", "profile_url\nhttps://n.example/in/j%C3%BCrgen\nhttps://n.example/in/x%FF\n"
                                      "https://n.example/in/a%20b\n"}})
                    .value);
    const std::string steps = "  - {id: a, kind: visit}\n";
    for (const std::string exclude :
         {"exclude: {companies: [\"Acme\\u200B\"]}\n", "exclude: {companies: [\"\\u202Eemca\"]}\n",
          "exclude: {companies: [\"Acme\\u200D\"]}\n", "exclude: {companies: [\"\\u00A0\"]}\n",
          "exclude: {profile_urls: [\"https://n.example/in/x\\u200B\"]}\n",
          "exclude: {profile_urls: [\"https://n.example/in/x%E2%80%AE\"]}\n"}) {
        auto r = load(head + steps + exclude);
        ASSERT_FALSE(r.value) << exclude;
        EXPECT_NE(all_errors(r).find("c.yaml:10:"), std::string::npos) << exclude << all_errors(r);
        EXPECT_NE(all_errors(r).find("which would exclude nobody"), std::string::npos) << exclude << all_errors(r);
    }
}

// Only the core schema's tags are read; another schema's (a Python object, an include) is
// refused where it is, on a scalar, a mapping or a sequence.
TEST(loader, tags_of_other_schemas_are_refused) {
    const std::string steps = "  - id: visit\n    kind: visit\n";
    for (const std::string tagged :
         {"name: !!python/object:os.system t\n", "name: !include t.yaml\n", "name: !!python/name:os.system\n",
          "name: !custom {a: 1}\n", "name: !!set [a]\n", "name: !<tag:example.com,2000:x> t\n"}) {
        auto r = load(tagged + head.substr(head.find("accounts")) + steps);
        ASSERT_FALSE(r.errors.empty()) << tagged;
        EXPECT_EQ(r.errors[0].line, 1) << tagged << all_errors(r);
        EXPECT_NE(r.errors[0].message.find("unsupported YAML tag"), std::string::npos) << tagged << all_errors(r);
        EXPECT_FALSE(r.value);
    }
    auto core = load("name: !!str t\n" + head.substr(head.find("accounts")) + steps);
    EXPECT_TRUE(core.errors.empty()) << all_errors(core);
}

// A core tag on a node it does not fit is refused where it is, not read as the text.
TEST(loader, a_core_tag_must_fit_its_node) {
    const std::string steps = "  - id: visit\n    kind: visit\n";
    for (const auto& [tagged, message] : std::vector<std::pair<std::string, std::string>>{
             {"name: !!int tagged\n", "the tag !!int does not fit the value 'tagged', which is not an integer"},
             {"name: !!bool yes\n", "the tag !!bool does not fit the value 'yes', which is not true or false"},
             {"name: !!null t\n", "the tag !!null does not fit the value 't', which is not null"},
             {"name: !!float x1\n", "the tag !!float does not fit the value 'x1', which is not a number"},
             {"name: !!map t\n", "the tag !!map does not fit the value 't', which is not a mapping"},
             {"name: !!seq {a: 1}\n", "the tag !!seq does not fit a mapping"},
             {"name: !!map [a]\n", "the tag !!map does not fit a sequence"},
             {"!!int name: t\n", "the key 'name' has the tag '!!int': a key is text"},
             {"!x name: t\n", "the key 'name' has the tag '!x': a key is text"}}) {
        auto r = load(tagged + head.substr(head.find("accounts")) + steps);
        ASSERT_FALSE(r.errors.empty()) << tagged;
        EXPECT_EQ(r.errors[0].line, 1) << tagged << all_errors(r);
        EXPECT_NE(r.errors[0].message.find(message), std::string::npos) << tagged << all_errors(r);
        EXPECT_FALSE(r.value);
    }
    // The core schema's 0x and 0o integers, when !!int asks for one; plain, they stay text.
    const std::string rest = head.substr(head.find("accounts"));
    auto hex = load("name: t\n" + rest.substr(0, rest.find("budget_credits")) + "budget_credits: !!int 0x32\n" +
                    rest.substr(rest.find('\n', rest.find("budget_credits")) + 1) + steps);
    ASSERT_TRUE(hex.value) << all_errors(hex);
    EXPECT_EQ(hex.value->budget_credits, 50);
    // Each fits: the schema then says what the name must be.
    for (const std::string fits : {"name: !!str 5\n", "budget_credits: !!int 10\nname: t\n", "name: !!str true\n",
                                   "!!str name: t\n", "name: !!int 0x32\n", "name: !!int 0o17\n"}) {
        auto r = load(fits + head.substr(head.find("accounts")) + steps);
        EXPECT_EQ(all_errors(r).find("does not fit"), std::string::npos) << fits << all_errors(r);
    }
}

// A whole number beyond 64 bits is said once, as written, where it is: a trial's budget read as
// "9.999999999999999e+22" with a second, wrong "not a whole number" error. Quoted, it is text.
TEST(loader, a_whole_number_too_large_is_said_as_written) {
    const std::string steps = "  - id: visit\n    kind: visit\n";
    const std::string rest = head.substr(head.find("accounts"));
    const auto budget_at = rest.find("budget_credits");
    const std::string before = rest.substr(0, budget_at);
    const std::string after = rest.substr(rest.find('\n', budget_at) + 1);
    const int line = 2 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
    for (const std::string big : {"99999999999999999999999", "+9223372036854775808", "-9223372036854775809"}) {
        auto r = load("name: t\n" + before + "budget_credits: " + big + "\n" + after + steps);
        ASSERT_EQ(r.errors.size(), 1u) << big << all_errors(r);
        EXPECT_EQ(r.errors[0].line, line) << big << all_errors(r);
        EXPECT_EQ(r.errors[0].message, "the whole number " + big +
                                           " is too large: a whole number is at most 9223372036854775807 (quote it "
                                           "if it is text)")
            << all_errors(r);
        EXPECT_FALSE(r.value);
    }
    // The file's other problems are said in the same round, and the number's null is not said
    // again as a budget that is no whole number (a trial met four more after fixing the number).
    auto more = load("name: t\nstop_on_reply: \"yes\"\n" + before + "budget_credits: 99999999999999999999\n" + after +
                     steps);
    const auto all = all_errors(more);
    EXPECT_EQ(more.errors.size(), 2u) << all;
    EXPECT_NE(all.find("is too large: a whole number"), std::string::npos) << all;
    EXPECT_NE(all.find("stop_on_reply"), std::string::npos) << all;
    EXPECT_FALSE(more.value);
    // The largest that fits is read; the schema then says the budget's own bound.
    auto largest = load("name: t\n" + before + "budget_credits: 9223372036854775807\n" + after + steps);
    EXPECT_EQ(all_errors(largest).find("too large: a whole number"), std::string::npos) << all_errors(largest);
    // Quoted digits are text, whatever their length (a message, a search keyword).
    auto quoted = load("name: '99999999999999999999999'\n" + rest + steps);
    ASSERT_TRUE(quoted.value) << all_errors(quoted);
    EXPECT_EQ(quoted.value->name, "99999999999999999999999");
}

// An invitation note longer than the platform commonly allows is a warning at validate, not a
// failure of every invite at run time (a trial's 400-character note passed; the API refused each).
TEST(loader, a_note_longer_than_the_platform_allows_is_a_warning) {
    const std::string rest = head.substr(head.find("accounts"));
    // 300 characters, two bytes each: counted in characters, not bytes.
    std::string at_limit;
    for (int i = 0; i < 300; ++i) {
        at_limit += "\xc3\xa9";
    }
    auto fits = load("name: t\n" + rest + "  - id: invite\n    kind: invite\n    note: \"" + at_limit + "\"\n");
    ASSERT_TRUE(fits.value) << all_errors(fits);
    EXPECT_TRUE(fits.warnings.empty());
    auto long_note = load("name: t\n" + rest + "  - id: invite\n    kind: invite\n    note: \"" + at_limit + "e\"\n");
    ASSERT_TRUE(long_note.value) << all_errors(long_note);
    ASSERT_EQ(long_note.warnings.size(), 1u);
    EXPECT_EQ(long_note.warnings[0].line, 11);
    EXPECT_NE(long_note.warnings[0].message.find("the note is 301 characters long before its fields are filled in: "
                                                 "the platform commonly refuses invitation notes over 300 characters"),
              std::string::npos)
        << long_note.warnings[0].message;
}

// The campaign's name and its accounts are names: no control characters, no bidirectional
// overrides or isolates.
TEST(loader, names_with_control_characters_are_refused) {
    const std::string rest = head.substr(head.find("audience")) + "  - id: visit\n    kind: visit\n";
    for (const std::string name : {"\"a\\nb\"", "\"a\\tb\"", "\"\\e[2J\"", "\"a\\x7f\"", "\"a\\x9b\"", "\"\\u202Eabc\"",
                                   "\"\\u2067x\""}) {
        auto r = load("name: " + name + "\naccounts: acc_1\n" + rest);
        ASSERT_EQ(r.errors.size(), 1u) << name << all_errors(r);
        EXPECT_EQ(r.errors[0].line, 1) << name;
        EXPECT_NE(r.errors[0].message.find("name is not a valid name"), std::string::npos) << r.errors[0].message;
    }
    auto acc = load("name: ok\naccounts: [acc_1, \"acc\\u202E\"]\n" + rest);
    ASSERT_EQ(acc.errors.size(), 1u) << all_errors(acc);
    EXPECT_EQ(acc.errors[0].to_string(),
              "c.yaml:2:19: accounts[1] is not a valid name: bidirectional control character U+202E at byte 4 (names "
              "may not hold control, bidirectional-override or invisible characters)");
    // A character that shows as nothing would make the name look like another.
    for (const std::string name : {"\"ab\u200Bc\"", "\"\uFEFFabc\"", "\"a\u00ADb\"", "\"a\u2060b\"", "\"ab\u200E\"",
                                   "\"tour\u3164\"", "\"tour\u034F\"", "\"tour\U000E0041\""}) {
        auto r = load("name: " + name + "\naccounts: acc_1\n" + rest);
        ASSERT_EQ(r.errors.size(), 1u) << name << all_errors(r);
        EXPECT_NE(r.errors[0].message.find("invisible character U+"), std::string::npos) << r.errors[0].message;
    }
    // Nor a space or a joiner at either end.
    for (const std::string name : {"\"tour \"", "\" tour\"", "\"tour\u200D\"", "\"\u200Ctour\"", "\"\u00A0\"",
                                   "\"\u200D\""}) {
        auto r = load("name: " + name + "\naccounts: acc_1\n" + rest);
        ASSERT_EQ(r.errors.size(), 1u) << name << all_errors(r);
        EXPECT_NE(r.errors[0].message.find("at its start ("), r.errors[0].message.find("at its end ("))
            << r.errors[0].message;
    }
    // Other Unicode is fine, the joiners of scripts and emoji sequences too.
    auto ok = load("name: \"Ingénieurs – Zürich 🚀 👩\u200D💻 می\u200Cخواهم\"\naccounts: acc_1\n" + rest);
    EXPECT_TRUE(ok.errors.empty()) << all_errors(ok);
    // A bad name is said with the problems of the file's meaning, not alone before them (a trial
    // mended the name to meet five more).
    auto both = load("name: \" tour\"\naccounts: acc_1\n" + rest + "  - id: visit\n    kind: visit\n");
    ASSERT_EQ(both.errors.size(), 2u) << all_errors(both);
    EXPECT_NE(both.errors[0].message.find("name is not a valid name"), std::string::npos) << all_errors(both);
    EXPECT_NE(both.errors[1].message.find("duplicate step id 'visit'"), std::string::npos) << all_errors(both);
    EXPECT_FALSE(both.value);
}

// yaml-cpp reads empty documents forever at a ',' that no value precedes at a document's top
// An unclosed '[' or '{' is reported at the bracket, not where the parser gave up (the line after
// it, or the end of the file); brackets in quotes, comments and plain text do not count.
TEST(loader, an_unclosed_flow_is_reported_at_its_bracket) {
    struct bad {
        std::string text;
        std::string expect;
    };
    for (const auto& b :
         {bad{"name: [a\n", "c.yaml:1:7: YAML syntax error: this '[' is never closed (no ']' before the end of the file)"},
          bad{"name: {a: 1\n", "c.yaml:1:7: YAML syntax error: this '{' is never closed (no '}' before the end of the file)"},
          bad{"name: x # [\naccounts: [a, b\nbudget_credits: 3\n",
              "c.yaml:2:11: YAML syntax error: this '[' is never closed (no ']' before 3:15)"},
          bad{"note: a [b\nsteps:\n  - {id: a, kind: invite, note: \"x [y\", text: 'it''s [z'\n",
              "c.yaml:3:5: YAML syntax error: this '{' is never closed (no '}' before the end of the file)"}}) {
        auto r = load(b.text);
        ASSERT_EQ(r.errors.size(), 1u) << b.text << "\n" << all_errors(r);
        EXPECT_EQ(r.errors[0].to_string(), b.expect) << b.text;
    }
}

// (found by the fuzz target): the loader reports it where it is, at once.
TEST(loader, a_comma_where_a_value_should_start_is_an_error_not_a_hang) {
    struct bad {
        std::string text;
        std::string expect;
    };
    for (const auto& b : {bad{", *aUTC", "c.yaml:1:1: YAML syntax error: unexpected ',' where a value should start"},
                          bad{"[a]\n,", "c.yaml:2:1: YAML syntax error: unexpected ',' where a value should start"},
                          bad{"name: t\n...\n, x", "c.yaml:3:1: YAML syntax error: unexpected ',' where a value should start"},
                          bad{"---\n, &a", "c.yaml:2:1: YAML syntax error: unexpected ',' where a value should start"},
                          bad{"[a][a]\n,\n,", "c.yaml:2:1: YAML syntax error: unexpected ',' where a value should start"}}) {
        auto r = load(b.text);
        ASSERT_EQ(r.errors.size(), 1u) << b.text << "\n" << all_errors(r);
        EXPECT_EQ(r.errors[0].to_string(), b.expect);
    }
}

}  // namespace
