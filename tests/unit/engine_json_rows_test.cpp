// engine/json_rows.hpp: the batch rows written as text parse back, with nlohmann, to exactly the
// values written (numbers, booleans, nulls, strings that need escaping, arrays).
#include "engine/json_rows.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace {

using orch::engine::json_rows;
using nlohmann::json;

TEST(JsonRows, EmptyIsAnEmptyArray) {
    json_rows rows;
    EXPECT_TRUE(rows.empty());
    EXPECT_EQ(rows.text(), "[]");
    EXPECT_EQ(json::parse(rows.text()), json::array());
}

TEST(JsonRows, RowsParseBackToTheValuesWritten) {
    json_rows rows;
    rows.row()
        .add("id", std::int64_t{42})
        .add("small", 7)
        .add("min", std::numeric_limits<std::int64_t>::min())
        .add("yes", true)
        .add("no", false)
        .add("nothing", nullptr)
        .add("name", "invite")
        .add("scopes", std::vector<std::int64_t>{3, 1, 2});
    rows.row().add_or_null("variant", "").add_or_null("posted", std::optional<std::int64_t>{}).add("empty_row_next", 1);
    rows.row();
    EXPECT_EQ(rows.size(), 3u);
    const json parsed = json::parse(rows.text());
    ASSERT_EQ(parsed.size(), 3u);
    EXPECT_EQ(parsed[0]["id"], 42);
    EXPECT_EQ(parsed[0]["small"], 7);
    EXPECT_EQ(parsed[0]["min"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(parsed[0]["yes"], true);
    EXPECT_EQ(parsed[0]["no"], false);
    EXPECT_TRUE(parsed[0]["nothing"].is_null());
    EXPECT_EQ(parsed[0]["name"], "invite");
    EXPECT_EQ(parsed[0]["scopes"], json::array({3, 1, 2}));
    EXPECT_TRUE(parsed[1]["variant"].is_null());
    EXPECT_TRUE(parsed[1]["posted"].is_null());
    EXPECT_EQ(parsed[2], json::object());
}

TEST(JsonRows, StringsAreEscaped) {
    const std::string tricky = "say \"hi\"\\ to\nJosé\t\x01";
    json_rows rows;
    rows.row().add("text", tricky);
    EXPECT_EQ(json::parse(rows.text())[0]["text"], tricky);
}

TEST(JsonRows, InvalidUtf8IsReplacedNotThrown) {
    json_rows rows;
    rows.row().add("error", std::string("bad \xff byte"));
    const json parsed = json::parse(rows.text());
    EXPECT_EQ(parsed[0]["error"], "bad \xEF\xBF\xBD byte");  // U+FFFD
}

TEST(JsonRows, TextCanBeTakenAgainAndRowsAddedAfter) {
    json_rows rows;
    rows.row().add("a", 1);
    const std::string first = rows.text();
    EXPECT_EQ(rows.text(), first);
    rows.row().add("a", 2);
    EXPECT_EQ(json::parse(rows.text()), json::parse(R"([{"a":1},{"a":2}])"));
}

}  // namespace
