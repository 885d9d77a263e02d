// engine/record_rows.hpp: the text of an array of composite rows (its escaping is checked against
// Postgres itself in tests/integration/engine_rows_pg_test.cpp) and the field-order rule.
#include "engine/record_rows.hpp"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string_view>

namespace {

using orch::engine::record_rows;

constexpr std::array<std::string_view, 4> fields{"id", "name", "flag", "ids"};

TEST(RecordRows, EmptyIsAnEmptyArray) {
    record_rows rows(fields);
    EXPECT_TRUE(rows.empty());
    EXPECT_EQ(rows.text(), "{}");
}

TEST(RecordRows, FieldsNotAddedAreNull) {
    record_rows rows(fields);
    rows.row().add("id", 1).add("name", "a").add("flag", true).add("ids", std::vector<std::int64_t>{1, 2});
    rows.row().add("name", "b");   // id, flag, ids NULL
    rows.row();                    // all NULL
    EXPECT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows.text(), R"x({"(1,\"a\",t,\"{1,2}\")","(,\"b\",,)","(,,,)"})x");
    // text() leaves the rows as they were: a retried statement sends the same text
    EXPECT_EQ(rows.text(), R"x({"(1,\"a\",t,\"{1,2}\")","(,\"b\",,)","(,,,)"})x");
}

TEST(RecordRows, QuotesAndBackslashesAreEscapedForTheRowAndForTheArray) {
    record_rows rows(fields);
    rows.row().add("name", R"(say "hi" \ bye)");
    // in the row: "say \"hi\" \\ bye"; in the array around it, each " and \ escaped again
    EXPECT_EQ(rows.text(), R"x({"(,\"say \\\"hi\\\" \\\\ bye\",,)"})x");
}

TEST(RecordRows, EmptyTextIsNotNull) {
    record_rows rows(fields);
    rows.row().add("name", "").add_or_null("ids", std::optional<std::int64_t>{});
    rows.row().add_or_null("name", "");
    EXPECT_EQ(rows.text(), R"x({"(,\"\",,)","(,,,)"})x");
}

TEST(RecordRows, AFieldOutOfOrderOrUnknownIsAProgrammingError) {
    record_rows rows(fields);
    EXPECT_THROW(rows.add("id", 1), std::logic_error);   // before row()
    rows.row().add("name", "x");
    EXPECT_THROW(rows.add("id", 1), std::logic_error);   // id comes before name
    EXPECT_THROW(rows.add("name", "y"), std::logic_error);   // twice
    EXPECT_THROW(rows.add("nope", 1), std::logic_error);
}

}  // namespace
