// The JSON Schema (campaigns/schema.json): embedded byte for byte, a draft-07 document whose
// vocabulary matches the code, enforced by the loader, and worded for editors.
#include "campaigns/campaigns.hpp"
#include "campaigns/detail/time_rules.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace {

using namespace orch::campaigns;

json schema() {
    return json::parse(schema_text());
}

TEST(schema, embedded_text_is_the_file) {
    std::ifstream in(std::string(ORCH_CAMPAIGNS_DIR) + "/schema.json", std::ios::binary);
    ASSERT_TRUE(in);
    std::ostringstream file;
    file << in.rdbuf();
    EXPECT_EQ(schema_text(), file.str());
}

TEST(schema, is_a_draft_07_object_schema) {
    json s = schema();
    EXPECT_EQ(s["$schema"], "http://json-schema.org/draft-07/schema#");
    EXPECT_EQ(s["type"], "object");
    EXPECT_EQ(s["additionalProperties"], false);
}

TEST(schema, every_top_level_key_is_described_for_editors) {
    const json s = schema();  // a range-for over a temporary's member would dangle
    for (const auto& [key, property] : s["properties"].items()) {
        EXPECT_TRUE(property.contains("description") || property.contains("$ref")) << key;
    }
    for (const auto& [key, property] : s["definitions"]["step"]["properties"].items()) {
        EXPECT_TRUE(property.contains("description")) << key;
    }
}

TEST(schema, step_kinds_are_the_model_kinds) {
    std::vector<std::string> from_schema = schema()["definitions"]["step"]["properties"]["kind"]["enum"];
    std::vector<std::string> from_code;
    for (step_kind k :
         {step_kind::check_invitation, step_kind::invite, step_kind::wait_accepted, step_kind::send,
          step_kind::delay, step_kind::visit, step_kind::withdraw, step_kind::end}) {
        from_code.push_back(to_string(k));
        EXPECT_EQ(step_kind_from_string(to_string(k)), k);
    }
    EXPECT_EQ(from_schema, from_code);
    EXPECT_FALSE(step_kind_from_string("wait").has_value());
}

TEST(schema, limit_actions_are_the_model_actions) {
    std::vector<std::string> actions;
    const json s = schema();
    for (const auto& [action, _] : s["properties"]["limits"]["properties"].items()) {
        actions.push_back(action);
    }
    EXPECT_EQ(actions, (std::vector<std::string>{"check_invitation", "invite", "search", "send", "visit",
                                                 "withdraw"}));
}

// The duration pattern (for editors) and parse_duration (for the loader) agree on the shape.
TEST(schema, duration_pattern_agrees_with_the_parser) {
    std::regex pattern(schema()["definitions"]["duration"]["pattern"].get<std::string>());
    for (const char* text : {"7d", "12h", "30m", "45s", "1d12h", "2h30m15s", "0s", "7", "", "d", "7 d",
                             "7days", "1h1d", "1d1d", "-1d", "1.5h", "1w", "01d"}) {
        EXPECT_EQ(std::regex_search(text, pattern), orch::campaigns::detail::parse_duration(text).has_value())
            << text;
    }
}

TEST(schema, hours_pattern_accepts_what_the_parser_reads) {
    std::regex pattern(
        schema()["properties"]["schedule"]["properties"]["hours"]["pattern"].get<std::string>());
    std::string error;
    for (const char* text : {"09:00-18:00", "00:00-24:00", "08:30-17:45"}) {
        EXPECT_TRUE(std::regex_search(text, pattern)) << text;
        EXPECT_TRUE(orch::campaigns::detail::parse_hours(text, error)) << text;
    }
    for (const char* text : {"9-17", "9:00-18:00", "09:00 - 18:00", "0900-1800"}) {
        EXPECT_FALSE(std::regex_search(text, pattern)) << text;
    }
}

// The loader enforces the schema itself: each document below breaks exactly one schema rule and
// no semantic one, and is refused with one error.
TEST(schema, the_loader_enforces_it) {
    const std::string base =
        "name: n\naccounts: a\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
        "budget_credits: 1\nsteps: [{id: s, kind: visit}]\n";
    load_options options;
    ASSERT_TRUE(load_campaign(base, options).value);
    struct mutation {
        std::string text;
        std::string fragment;
    };
    std::vector<mutation> cases = {
        {base + "extra: 1\n", "unknown key 'extra'"},
        {base + "stop_on_reply: yes\n", "must be true or false, not the text 'yes'"},
        // A long text is cut in the message (a whole document read as one text was quoted whole).
        // At a character's start: the 'é' across the 80th byte is left out whole.
        {base + "stop_on_reply: " + std::string(79, 'y') + "\u00e9" + std::string(100, 'z') + "\n",
         "must be true or false, not the text '" + std::string(79, 'y') + "... (181 bytes)'"},
        {base + "on_account_unavailable: retry\n", "unknown value 'retry' (one of: wait, reassign)"},
        {base + "limits: {invite: {per_day: 0}}\n", "limits.invite.per_day: must be at least 1, not 0"},
        {base + "limits: {connect: {per_day: 3}}\n", "unknown key 'connect'"},
        {base + "max_attempts: 0\n", "max_attempts: must be at least 1"},
        {"name: n\naccounts: a\naudience: {search: {title: x}, total_results: 50001}\nschedule: {time_zone: "
         "UTC}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: visit}]\n",
         "audience.total_results: must be at most 50000, not 50001"},
        {"name: n\naccounts: a\naudience: {file: leads.txt}\nschedule: {time_zone: UTC}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: visit}]\n",
         "bad audience file 'leads.txt'"},
        {"name: n\naccounts: a\naudience: {search: {title: x}}\nschedule: {}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: visit}]\n",
         "schedule: missing required key 'time_zone'"},
        {"name: n\naccounts: a\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: send, variants: [{name: 'A B', message_text: hi}]}]\n",
         "bad variant name 'A B'"},
        {"name: n\naccounts: a\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: send, variants: [{message_text: hi}]}]\n",
         "steps[0].variants[0]: missing required key 'name'"},
        {"name: n\naccounts: a\naudience: {search: {title: x}}\nschedule: {time_zone: UTC}\n"
         "budget_credits: 1\nsteps: [{id: s, kind: end, next: s}]\n",
         "key 'next' does not apply to an end step"},
        {"- just\n- a list\n", "campaign: must be a mapping (key: value), not a list"},
    };
    for (const mutation& m : cases) {
        load_result r = load_campaign(m.text, options);
        ASSERT_EQ(r.errors.size(), 1u) << m.text << (r.errors.empty() ? "" : r.errors[0].to_string());
        EXPECT_NE(r.errors[0].message.find(m.fragment), std::string::npos) << r.errors[0].to_string();
    }
}

}  // namespace
