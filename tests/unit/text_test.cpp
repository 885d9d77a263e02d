// orch::text (api/text.hpp): the checks of user text and the escape that keeps it on one log line,
// and the log formatter that applies it to every message.
#include "api/log_format.hpp"
#include "api/text.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <string>
#include <utility>

namespace {

using orch::text::check_name;
using orch::text::check_text;
using orch::text::escaped;

TEST(text, check_text_accepts_utf8_and_refuses_the_rest_with_its_offset) {
    EXPECT_FALSE(check_text(""));
    EXPECT_FALSE(check_text("plain ascii"));
    EXPECT_FALSE(check_text("Zürich – 東京 🚀"));
    EXPECT_FALSE(check_text("tab\tand\nnewline"));  // text, not a name
    struct bad {
        std::string text;
        std::size_t offset;
        std::string what;
    };
    for (const auto& b : {bad{"ab\xff", 2, "invalid UTF-8 (byte 0xff)"},
                          bad{std::string("a\0b", 3), 1, "a NUL byte"},
                          bad{"\xc3", 0, "invalid UTF-8 (byte 0xc3)"},           // truncated
                          bad{"x\xc3(", 1, "invalid UTF-8 (byte 0xc3)"},         // bad continuation
                          bad{"\xc0\xaf", 0, "invalid UTF-8 (byte 0xc0)"},       // overlong '/'
                          bad{"\xe0\x80\x80", 0, "invalid UTF-8 (byte 0xe0)"},   // overlong NUL
                          bad{"\xed\xa0\x80", 0, "invalid UTF-8 (byte 0xed)"},   // a surrogate
                          bad{"\xf4\x90\x80\x80", 0, "invalid UTF-8 (byte 0xf4)"},  // past U+10FFFF
                          bad{"\x80", 0, "invalid UTF-8 (byte 0x80)"}}) {
        auto p = check_text(b.text);
        ASSERT_TRUE(p) << b.what;
        EXPECT_EQ(p->offset, b.offset) << b.what;
        EXPECT_EQ(p->what, b.what);
    }
}

TEST(text, check_name_refuses_controls_and_bidi_overrides) {
    EXPECT_FALSE(check_name("campaign-2026 Q1 (Zürich)"));
    // The joiners scripts and emoji sequences need are names' characters.
    EXPECT_FALSE(check_name("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb"));  // woman, ZWJ, laptop
    EXPECT_FALSE(check_name("\xd9\x85\xdb\x8c\xe2\x80\x8c\xd8\xae"));  // Persian, with a ZWNJ
    // Characters that show as nothing are not: a name holding one would look like another.
    for (const std::string invisible : {"a\xe2\x80\x8b", "\xef\xbb\xbf" "a", "a\xc2\xad" "b", "a\xe2\x81\xa0",
                                        "a\xe2\x80\x8e", "a\xe2\x80\xa8"}) {
        auto p = check_name(invisible);
        ASSERT_TRUE(p) << escaped(invisible);
        EXPECT_NE(p->what.find("invisible character U+"), std::string::npos) << p->what;
    }
    for (const std::string bad : {"a\n", "\x1b[31m", "a\x7f", "\xc2\x85", "\xc2\x9f", "\xe2\x80\xaa", "\xe2\x80\xae",
                                  "\xe2\x81\xa6", "\xe2\x81\xa9", "\t", "\r"}) {
        auto p = check_name(bad);
        ASSERT_TRUE(p) << escaped(bad);
    }
    auto p = check_name("ab\xe2\x80\xae");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->offset, 2u);
    EXPECT_EQ(p->what, "bidirectional control character U+202E");
    EXPECT_EQ(check_name("x\ny")->what, "control character U+000A");
    EXPECT_EQ(check_name("x\xff")->what, "invalid UTF-8 (byte 0xff)");  // check_text first
}

TEST(text, escaped_keeps_text_on_one_line_and_shows_every_control) {
    EXPECT_EQ(escaped("plain Zürich 🚀"), "plain Zürich 🚀");
    EXPECT_EQ(escaped("a\nb\r\tc"), "a\\nb\\r\\tc");
    EXPECT_EQ(escaped("\x1b[2J"), "\\x1b[2J");
    EXPECT_EQ(escaped(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(escaped("back\\slash"), "back\\\\slash");
    EXPECT_EQ(escaped("\xff\xc3"), "\\xff\\xc3");
    EXPECT_EQ(escaped("x\xe2\x80\xaey"), "x\\u{202e}y");
    EXPECT_EQ(escaped("\xc2\x85"), "\\u{0085}");
    EXPECT_EQ(escaped("line\xe2\x80\xa8sep"), "line\\u{2028}sep");
    // The escape is itself valid, control-free text.
    EXPECT_FALSE(check_name(escaped("\n\x01\xff\xe2\x80\xae\x7f")));
}

TEST(text, escaped_name_spells_what_shows_as_nothing) {
    EXPECT_EQ(orch::text::escaped_name("sender-1\xe2\x80\x8b"), "sender-1\\u{200b}");
    EXPECT_EQ(escaped("sender-1\xe2\x80\x8b"), "sender-1\xe2\x80\x8b");  // text keeps it
    // The joiners scripts and emoji need stay.
    EXPECT_EQ(orch::text::escaped_name("a\xe2\x80\x8d" "b"), "a\xe2\x80\x8d" "b");
}

TEST(text, escaped_clipped_cuts_a_long_value_at_a_characters_start) {
    EXPECT_EQ(orch::text::escaped_clipped("short\n", 10), "short\\n");
    EXPECT_EQ(orch::text::escaped_clipped(std::string(5000, 'a'), 4), "aaaa... (5000 bytes)");
    // "ü" is two bytes: a cut inside it moves back to its start.
    EXPECT_EQ(orch::text::escaped_clipped("abü" + std::string(10, 'x'), 3), "ab... (14 bytes)");
}

TEST(text, escaped_name_spells_a_space_that_is_not_a_plain_one) {
    EXPECT_EQ(orch::text::escaped_name("acc\xc2\xa0x"), "acc\\u{00a0}x");
    EXPECT_EQ(orch::text::escaped_name("a\xe3\x80\x80" "b"), "a\\u{3000}b");
    EXPECT_EQ(orch::text::escaped_name("a b"), "a b");
    EXPECT_EQ(orch::text::escaped("acc\xc2\xa0x"), "acc\xc2\xa0x");  // logs keep it
}

TEST(text, escaped_clipped_names_what_the_cut_hides) {
    EXPECT_EQ(orch::text::escaped_clipped("abcdef\xe2\x80\x8b", 4), "abcd... (9 bytes, \\u{200b} at byte 7)");
    EXPECT_EQ(orch::text::escaped_clipped(std::string("abcdef\tg"), 4), "abcd... (8 bytes, \\t at byte 7)");
    EXPECT_EQ(orch::text::escaped_clipped("abcd\xff" "e", 4), "abcd... (6 bytes, \\xff at byte 5)");
    EXPECT_EQ(orch::text::escaped_clipped("abcd\\e", 4), "abcd... (6 bytes)");  // a backslash shows
}

TEST(text, every_log_message_is_escaped_onto_one_line) {
    std::ostringstream out;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    auto logger = std::make_shared<spdlog::logger>("text-test", sink);
    spdlog::register_logger(logger);
    orch::api::escape_log_messages();
    logger->info("campaign '{}' applied", "evil\n[2026-01-01 00:00:00.000] [orchestrator] [info] forged\x1b[0m");
    logger->flush();
    spdlog::drop("text-test");
    const std::string text = out.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_NE(text.find("[text-test] [info] campaign 'evil\\n[2026-01-01 00:00:00.000] [orchestrator] [info] forged\\x1b[0m' applied"),
              std::string::npos)
        << text;
}

TEST(Text, CountsTakeTheirNounsNumber) {
    EXPECT_EQ(orch::text::counted(0, "lead", "leads"), "0 leads");
    EXPECT_EQ(orch::text::counted(1, "lead", "leads"), "1 lead");
    EXPECT_EQ(orch::text::counted(2, "entry", "entries"), "2 entries");
    EXPECT_EQ(orch::text::counted(-1, "credit", "credits"), "-1 credits");
}

// RFC 4180: a field is quoted only when it must be, and its quotes are doubled.
TEST(Text, CsvFieldsAreQuotedWhenTheyMustBe) {
    EXPECT_EQ(orch::text::csv_field("plain"), "plain");
    EXPECT_EQ(orch::text::csv_field(""), "");
    EXPECT_EQ(orch::text::csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(orch::text::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(orch::text::csv_field("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(orch::text::csv_field("cr\r"), "\"cr\r\"");
}

// A terminal message keeps its line breaks, tabs and backslashes (text escaped before stays as
// it was), and spells out any other control, invalid byte or bidirectional override.
TEST(Text, TerminalLinesKeepLinesAndSpellOutTheRest) {
    EXPECT_EQ(orch::text::terminal_lines("two\nlines\tand 'x\\x1b' as escaped"), "two\nlines\tand 'x\\x1b' as escaped");
    EXPECT_EQ(orch::text::terminal_lines("raw \x1b[31mred"), "raw \\x1b[31mred");
    EXPECT_EQ(orch::text::terminal_lines("cr\r"), "cr\\r");
    EXPECT_EQ(orch::text::terminal_lines("bad \xff byte"), "bad \\xff byte");
    EXPECT_EQ(orch::text::terminal_lines("bidi \u202e"), "bidi \\u{202e}");
    EXPECT_EQ(orch::text::terminal_lines("caf\u00e9 \u65e5"), "caf\u00e9 \u65e5");
    // An error's quoted value spells what a name could hide too; its lines and escapes stay.
    EXPECT_EQ(orch::text::terminal_error("no step 'hello\u00a0'\n  and 'a\u200bb' \\u{00a0}"),
              "no step 'hello\\u{00a0}'\n  and 'a\\u{200b}b' \\u{00a0}");
    EXPECT_EQ(orch::text::terminal_lines("hello\u00a0"), "hello\u00a0");
}

// Any kind of space, where it is, and what it is: an ASCII one, a no-break one, a zero-width one;
// letters beyond ASCII are none.
TEST(Text, FindSpaceSeesSpacesAnAsciiCheckMisses) {
    EXPECT_FALSE(orch::text::find_space("https://n.example/in/caf\u00e9-\u65e5"));
    auto ascii = orch::text::find_space("a b");
    ASSERT_TRUE(ascii);
    EXPECT_EQ(ascii->offset, 1u);
    EXPECT_EQ(ascii->what, "a space");
    auto nbsp = orch::text::find_space("ab\u00a0c");
    ASSERT_TRUE(nbsp);
    EXPECT_EQ(nbsp->offset, 2u);
    EXPECT_EQ(nbsp->what, "a no-break space (U+00A0)");
    for (const auto& [text, what] : {std::pair<std::string, std::string>{"x\u200b", "a zero-width space (U+200B)"},
                                     {"x\u200d", "a zero-width joiner or non-joiner (U+200D)"},
                                     {"x\ufeff", "a byte order mark (U+FEFF)"},
                                     {"x\u2029", "a line or paragraph separator (U+2029)"},
                                     {"\xff \u3000", "a space"}}) {  // an invalid byte is check_text's
        auto found = orch::text::find_space(text);
        ASSERT_TRUE(found) << text;
        EXPECT_EQ(found->what, what);
        EXPECT_EQ(found->offset, 1u);
    }
}

}  // namespace

// Names compared ignoring case (time zones, excluded companies): ASCII letters only; other bytes,
// a UTF-8 letter's included, are left as they are.
TEST(text, ascii_lower_lowers_ascii_letters_only) {
    EXPECT_EQ(orch::text::ascii_lower("Europe/PARIS"), "europe/paris");
    EXPECT_EQ(orch::text::ascii_lower("Ünïcode ÉTÉ 42"), "Ünïcode ÉtÉ 42");
    EXPECT_EQ(orch::text::ascii_lower(""), "");
}
