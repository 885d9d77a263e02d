// Secrets at rest (engine/secret_box.hpp) and user text in logs (engine/text_safety.hpp).
#include "engine/secret_box.hpp"
#include "engine/text_safety.hpp"

#include <gtest/gtest.h>

using orch::engine::log_text;
using orch::engine::secret_box;

TEST(SecretBox, SealsAndOpensUnderTheSameKeyOnly) {
    secret_box box("a key of at least thirty-two characters!");
    auto sealed = box.seal("whsec_0123456789");
    EXPECT_EQ(sealed.find("whsec_0123456789"), std::string::npos) << "the secret is not stored in clear";
    EXPECT_EQ(box.open(sealed), "whsec_0123456789");
    EXPECT_NE(box.seal("whsec_0123456789"), sealed) << "a fresh nonce each time";
    secret_box other("another key of at least thirty-two chars");
    EXPECT_FALSE(other.open(sealed));
    std::string altered = sealed;
    altered.back() = static_cast<char>(altered.back() ^ 1);
    EXPECT_FALSE(box.open(altered));
    EXPECT_FALSE(box.open("short"));
    EXPECT_EQ(box.open(box.seal("")), "");
}

TEST(LogText, EscapesWhatCouldForgeOrDisguiseALine) {
    EXPECT_EQ(log_text("plain café"), "plain café");
    EXPECT_EQ(log_text("a\nb\r\tc"), "a\\nb\\r\\tc");
    EXPECT_EQ(log_text("\x1b[31mred"), "\\x1b[31mred");
    EXPECT_EQ(log_text("back\\slash"), "back\\\\slash");
    EXPECT_EQ(log_text("\xe2\x80\xae" "evil"), "\\u202eevil");        // right-to-left override
    EXPECT_EQ(log_text("\xc2\x85" "next"), "\\u0085next");           // C1 next-line
    EXPECT_EQ(log_text("bad\xff\xfe"), "bad\\xff\\xfe");              // invalid UTF-8
    EXPECT_EQ(log_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong
    EXPECT_EQ(log_text(std::string_view("nul\0x", 5)), "nul\\x00x");
}
