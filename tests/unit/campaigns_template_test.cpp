// Message templates: parsing, the fields they use (with or without default), rendering.
#include "campaigns/campaigns.hpp"
#include "campaigns/detail/template.hpp"

#include <gtest/gtest.h>

namespace {

using namespace orch::campaigns;
using orch::campaigns::detail::parse_template;

TEST(template_fields, in_order_with_defaults) {
    auto fields = template_fields({"Hi {{first_name}}, {{ company | your team }} and {{first_name}} {{x|}}"});
    ASSERT_EQ(fields.size(), 4u);
    EXPECT_EQ(fields[0].name, "first_name");
    EXPECT_FALSE(fields[0].has_default);
    EXPECT_EQ(fields[1].name, "company");
    EXPECT_TRUE(fields[1].has_default);
    EXPECT_EQ(fields[2].name, "first_name");
    EXPECT_EQ(fields[3].name, "x");
    EXPECT_TRUE(fields[3].has_default);  // an empty default is a default
}

TEST(template_fields, none_and_malformed) {
    EXPECT_TRUE(template_fields({"no placeholders, {single} braces } {"}).empty());
    EXPECT_TRUE(template_fields({"{{ }} {{1abc}} {{a-b}} {{open"}).empty());
}

TEST(fields_used, every_note_and_variant_once_sorted) {
    campaign c;
    step invite;
    invite.kind = step_kind::invite;
    invite.note = text_template{"Hi {{first_name}} from {{company|your team}}"};
    step quiet;
    quiet.kind = step_kind::invite;  // no note
    step send;
    send.kind = step_kind::send;
    send.variants = {{"A", {"{{first_name}}, {{headline}}?"}}, {"B", {"{{ title }} {{first_name}}"}}};
    c.steps = {invite, quiet, send};
    EXPECT_EQ(fields_used(c), (std::vector<std::string>{"company", "first_name", "headline", "title"}));
    EXPECT_TRUE(fields_used(campaign{}).empty());
}

TEST(render, values_defaults_and_missing) {
    std::map<std::string, std::string> fields = {{"first_name", "Ada"}, {"company", ""}};
    EXPECT_EQ(render({"Hi {{first_name}}!"}, fields), "Hi Ada!");
    EXPECT_EQ(render({"at {{company|your company}}"}, fields), "at your company");  // empty = missing
    EXPECT_EQ(render({"in {{city | your city }}."}, fields), "in your city.");  // default trimmed
    EXPECT_EQ(render({"[{{city}}]"}, fields), "[]");  // no default: ""
    EXPECT_EQ(render({"{{first_name}}{{first_name}}"}, fields), "AdaAda");
    EXPECT_EQ(render({"{{ first_name }}"}, fields), "Ada");
    EXPECT_EQ(render({"plain"}, {}), "plain");
    EXPECT_EQ(render({""}, {}), "");
}

TEST(render, leaves_malformed_placeholders_and_braces_as_text) {
    std::map<std::string, std::string> fields = {{"a", "1"}};
    EXPECT_EQ(render({"{a} {{a}} }} {{ }} {{a"}, fields), "{a} 1 }} {{ }} {{a");
    EXPECT_EQ(render({"{{{a}}}"}, fields), "{{{a}}}");  // "{{{a" is not a field name
    EXPECT_EQ(render({"x {{a|b|c}} y"}, {}), "x b|c y");  // the default runs to the closing braces
}

TEST(render, values_are_not_reinterpreted) {
    std::map<std::string, std::string> fields = {{"a", "{{b}}"}, {"b", "no"}};
    EXPECT_EQ(render({"{{a}}"}, fields), "{{b}}");
}

TEST(parse_template, errors_with_offsets) {
    auto parsed = parse_template("ok {{a}} {{ }} {{9x}} {{b {{c}}");
    ASSERT_EQ(parsed.placeholders.size(), 2u);
    EXPECT_EQ(parsed.placeholders[0].offset, 3u);
    EXPECT_EQ(parsed.placeholders[0].raw, "{{a}}");
    EXPECT_EQ(parsed.placeholders[1].name, "c");
    ASSERT_EQ(parsed.errors.size(), 3u);
    EXPECT_EQ(parsed.errors[0].offset, 9u);
    EXPECT_NE(parsed.errors[0].message.find("empty placeholder {{ }}"), std::string::npos);
    EXPECT_EQ(parsed.errors[1].offset, 15u);
    EXPECT_NE(parsed.errors[1].message.find("bad field name '9x'"), std::string::npos);
    EXPECT_EQ(parsed.errors[2].offset, 22u);
    EXPECT_NE(parsed.errors[2].message.find("unclosed placeholder '{{b {{c}}'"), std::string::npos);
}

TEST(parse_template, field_names) {
    using orch::campaigns::detail::is_field_name;
    EXPECT_TRUE(is_field_name("first_name"));
    EXPECT_TRUE(is_field_name("_x9"));
    EXPECT_TRUE(is_field_name("Company"));
    EXPECT_FALSE(is_field_name(""));
    EXPECT_FALSE(is_field_name("9lives"));
    EXPECT_FALSE(is_field_name("first name"));
    EXPECT_FALSE(is_field_name("a-b"));
    EXPECT_FALSE(is_field_name("é"));
}

}  // namespace
