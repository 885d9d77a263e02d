// Secrets at rest (engine/secret_box.hpp).
#include "engine/secret_box.hpp"

#include <gtest/gtest.h>

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
