// The Redis started by deploy/dev-services.sh answers through hiredis, including Lua scripts
// loaded once and called by SHA (the way the rate-limit buckets will use it).
#include "tests/support/require_services.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {

struct reply_deleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

class RedisTest : public ::testing::Test {
protected:
    void SetUp() override {
        const char* url = std::getenv("REDIS_URL");
        ORCH_REQUIRE_SERVICE("REDIS_URL");
        // redis://HOST:PORT/DB
        std::string u = url;
        auto host_start = u.find("://") + 3;
        auto colon = u.find(':', host_start);
        auto slash = u.find('/', colon);
        std::string host = u.substr(host_start, colon - host_start);
        int port = std::stoi(u.substr(colon + 1, slash - colon - 1));
        ctx_ = redisConnect(host.c_str(), port);
        ASSERT_NE(ctx_, nullptr);
        ASSERT_EQ(ctx_->err, 0) << ctx_->errstr;
        prefix_ = "test:" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ":";
    }
    void TearDown() override {
        if (ctx_) {
            reply_ptr(static_cast<redisReply*>(redisCommand(ctx_, "DEL %s", (prefix_ + "k").c_str())));
            redisFree(ctx_);
        }
    }
    reply_ptr cmd(const char* fmt, const std::string& a, const std::string& b = "") {
        return reply_ptr(static_cast<redisReply*>(redisCommand(ctx_, fmt, a.c_str(), b.c_str())));
    }
    redisContext* ctx_ = nullptr;
    std::string prefix_;
};

TEST_F(RedisTest, SetAndGet) {
    auto set = cmd("SET %s %s", prefix_ + "k", "v");
    ASSERT_EQ(set->type, REDIS_REPLY_STATUS);
    auto get = cmd("GET %s", prefix_ + "k");
    ASSERT_EQ(get->type, REDIS_REPLY_STRING);
    EXPECT_EQ(std::string(get->str, get->len), "v");
}

TEST_F(RedisTest, ScriptLoadedOnceRunsBySha) {
    auto load = cmd("SCRIPT LOAD %s", "return redis.call('INCRBY', KEYS[1], ARGV[1])");
    ASSERT_EQ(load->type, REDIS_REPLY_STRING);
    std::string sha(load->str, load->len);
    auto r1 = cmd("EVALSHA %s 1 %s 3", sha, prefix_ + "k");
    ASSERT_EQ(r1->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(r1->integer, 3);
    auto r2 = cmd("EVALSHA %s 1 %s 3", sha, prefix_ + "k");
    EXPECT_EQ(r2->integer, 6);
    auto missing = cmd("EVALSHA %s 1 %s 1", std::string(40, '0'), prefix_ + "k");
    ASSERT_EQ(missing->type, REDIS_REPLY_ERROR);
    EXPECT_EQ(std::string(missing->str).rfind("NOSCRIPT", 0), 0u);
}

} // namespace
