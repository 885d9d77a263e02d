// engine/lru_map: at most `capacity` entries; the least recently used goes first.
#include "engine/lru_map.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using orch::engine::lru_map;

TEST(LruMap, KeepsAtMostItsCapacityDroppingTheLeastRecentlyUsed) {
    lru_map<int, std::string> m(3);
    m.put(1, "a");
    m.put(2, "b");
    m.put(3, "c");
    ASSERT_NE(m.find(1), nullptr);  // 1 is used again: 2 is now the oldest
    m.put(4, "d");
    EXPECT_EQ(m.size(), 3u);
    EXPECT_EQ(m.find(2), nullptr);
    ASSERT_NE(m.find(1), nullptr);
    EXPECT_EQ(*m.find(1), "a");
    EXPECT_NE(m.find(3), nullptr);
    EXPECT_NE(m.find(4), nullptr);
}

TEST(LruMap, PuttingAKeyAgainReplacesItWithoutDroppingAnother) {
    lru_map<int, int> m(2);
    m.put(1, 10);
    m.put(2, 20);
    m.put(1, 11);
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(*m.find(1), 11);
    EXPECT_EQ(*m.find(2), 20);
    m.put(3, 30);  // 1 was read before 2 just above: 1 goes
    EXPECT_EQ(m.find(1), nullptr);
    EXPECT_NE(m.find(2), nullptr);
}

TEST(LruMap, ACapacityOfZeroKeepsOne) {
    lru_map<int, int> m(0);
    m.put(1, 1);
    m.put(2, 2);
    EXPECT_EQ(m.size(), 1u);
    EXPECT_NE(m.find(2), nullptr);
}

}  // namespace
