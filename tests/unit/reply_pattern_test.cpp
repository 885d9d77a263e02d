// inbox_not_interested_pattern's matcher (engine/reply_pattern): ECMAScript syntax in any case;
// a bad pattern is said; a long reply against a repeated group, which overflowed the stack of
// std::regex's recursive matcher (serve died of it), matches or is reported as not matchable.
#include "engine/reply_pattern.hpp"

#include <gtest/gtest.h>

#include <string>

using orch::engine::reply_pattern;

TEST(ReplyPattern, MatchesInAnyCaseAndSaysABadPattern) {
    EXPECT_EQ(reply_pattern::problem("unsubscribe|not (a|the right) (priority|person)"), "");
    EXPECT_NE(reply_pattern::problem("(unclosed"), "");
    reply_pattern p("unsubscribe|not (a|the right) (priority|person)");
    std::string why;
    EXPECT_EQ(p.search("Please UNSUBSCRIBE me.", why), true);
    EXPECT_EQ(p.search("Not the right person, sorry", why), true);
    EXPECT_EQ(p.search("Tell me more about pricing.", why), false);
    EXPECT_EQ(why, "");
}

TEST(ReplyPattern, ALongReplyAgainstARepeatedGroupDoesNotCrash) {
    // std::regex recursed once per character here and died of a stack overflow at 20,000.
    reply_pattern repeated("(a|b)*c");
    const std::string reply(200'000, 'a');
    std::string why;
    const auto r = repeated.search(reply, why);
    EXPECT_TRUE(!r || !*r) << "nothing matches";
    EXPECT_EQ(!r, !why.empty());
    EXPECT_EQ(repeated.search(std::string(20'000, 'a') + "c", why), true);
    // A pattern whose matching explodes gives up with why rather than run on.
    reply_pattern costly("(x+x+)+y");
    why.clear();
    EXPECT_EQ(costly.search(std::string(5'000, 'x'), why), std::nullopt);
    EXPECT_NE(why, "");
}
