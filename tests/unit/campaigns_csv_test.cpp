// The CSV reader of audience files (RFC 4180): quoting, line breaks, positions, errors.
#include "campaigns/detail/csv.hpp"

#include <gtest/gtest.h>

namespace {

using namespace orch::campaigns::detail;

std::vector<std::vector<std::string>> values(const csv_document& doc) {
    std::vector<std::vector<std::string>> out;
    for (const csv_record& r : doc.records) {
        std::vector<std::string> row;
        for (const csv_field& f : r.fields) {
            row.push_back(f.value);
        }
        out.push_back(row);
    }
    return out;
}

using rows = std::vector<std::vector<std::string>>;

TEST(csv, plain_records) {
    csv_document doc = parse_csv("a,b,c\n1,2,3\n");
    EXPECT_TRUE(doc.errors.empty());
    EXPECT_EQ(values(doc), (rows{{"a", "b", "c"}, {"1", "2", "3"}}));
    EXPECT_EQ(doc.records[1].line, 2);
}

TEST(csv, last_line_without_newline_and_empty_fields) {
    EXPECT_EQ(values(parse_csv("a,,c\n,x,")), (rows{{"a", "", "c"}, {"", "x", ""}}));
    EXPECT_EQ(values(parse_csv("single")), (rows{{"single"}}));
    EXPECT_TRUE(parse_csv("").records.empty());
}

TEST(csv, quoted_commas_quotes_and_line_breaks) {
    csv_document doc =
        parse_csv("name,note\n\"Doe, Jane\",\"said \"\"hi\"\"\"\n\"multi\nline\",x\nlast,\"\"\n");
    EXPECT_TRUE(doc.errors.empty());
    EXPECT_EQ(values(doc),
              (rows{{"name", "note"}, {"Doe, Jane", "said \"hi\""}, {"multi\nline", "x"}, {"last", ""}}));
    EXPECT_EQ(doc.records[2].line, 3);
    EXPECT_EQ(doc.records[3].line, 5);  // the quoted line break moved it down
    EXPECT_EQ(doc.records[3].fields[1].column, 6);
}

TEST(csv, crlf_bom_and_blank_lines) {
    csv_document doc = parse_csv(
        "\xEF\xBB\xBF"
        "a,b\r\n\r\n1,\"x\r\ny\"\r\n\n2,3\r\n");
    EXPECT_TRUE(doc.errors.empty());
    EXPECT_EQ(values(doc), (rows{{"a", "b"}, {"1", "x\r\ny"}, {"2", "3"}}));
    EXPECT_EQ(doc.records[0].fields[0].column, 1);  // the BOM takes no column
    EXPECT_EQ(doc.records[1].line, 3);
    EXPECT_EQ(doc.records[2].line, 6);
}

TEST(csv, a_lone_carriage_return_is_data) {
    EXPECT_EQ(values(parse_csv("a\rb,c\n")), (rows{{"a\rb", "c"}}));
}

TEST(csv, columns_count_characters_not_bytes) {
    csv_document doc = parse_csv("é,ü,x\n");
    ASSERT_EQ(doc.records.size(), 1u);
    EXPECT_EQ(doc.records[0].fields[2].column, 5);
}

TEST(csv, spaces_are_data) {
    EXPECT_EQ(values(parse_csv(" a , b \n")), (rows{{" a ", " b "}}));
}

TEST(csv, unterminated_quote_points_at_its_opening) {
    csv_document doc = parse_csv("a,b\n1,\"open\n2,3\n");
    ASSERT_EQ(doc.errors.size(), 1u);
    EXPECT_EQ(doc.errors[0].line, 2);
    EXPECT_EQ(doc.errors[0].column, 3);
    EXPECT_NE(doc.errors[0].message.find("unterminated quoted field"), std::string::npos);
    EXPECT_EQ(doc.records.size(), 1u);  // reading stopped
}

TEST(csv, text_after_a_closing_quote) {
    csv_document doc = parse_csv("a\n\"x\"y,z\n");
    ASSERT_EQ(doc.errors.size(), 1u);
    EXPECT_EQ(doc.errors[0].line, 2);
    EXPECT_EQ(doc.errors[0].column, 4);
    EXPECT_NE(doc.errors[0].message.find("unexpected text after a closing quote"), std::string::npos);
}

TEST(csv, quote_inside_an_unquoted_field) {
    csv_document doc = parse_csv("a,b\nx,5\"6\n");
    ASSERT_EQ(doc.errors.size(), 1u);
    EXPECT_EQ(doc.errors[0].line, 2);
    EXPECT_EQ(doc.errors[0].column, 4);
    EXPECT_NE(doc.errors[0].message.find("quote inside an unquoted field"), std::string::npos);
}

}  // namespace
