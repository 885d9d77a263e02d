// The outreach client against the real sandbox: login, checkpoint, accounts, credits, and the
// key-level errors.
#include "tests/integration/sandbox_client_common.hpp"

using namespace orch::test;
using namespace orch::outreach;

namespace {

TEST(SandboxClientAccounts, LoginIsIdempotentAndAccountsList) {
    client_fixture f;
    std::string a = f.login("tok-a");
    EXPECT_EQ(f.login("tok-a"), a);
    std::string b = f.login("tok-b");
    auto page = f.run(f.api->list_accounts({}));
    ASSERT_TRUE(page) << describe(page.error());
    EXPECT_EQ(page->total, 2);
    EXPECT_EQ(page->meta.action, "list_accounts");
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_EQ(page->items[0].is_active, true);
    EXPECT_TRUE(page->items[0].created_at);
    list_accounts_params one;
    one.limit = 1;
    one.offset = 1;
    auto second = f.run(f.api->list_accounts(one));
    ASSERT_TRUE(second);
    EXPECT_EQ(second->items.size(), 1u);
    auto acc = f.run(f.api->get_account(b));
    ASSERT_TRUE(acc) << describe(acc.error());
    EXPECT_EQ(acc->account.account_id, b);
    EXPECT_EQ(acc->account.platform, "network");
    EXPECT_EQ(acc->meta.credits_consumed, 0);
    auto missing = f.run(f.api->get_account("acc_missing"));
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().what_to_do, disposition::pause_account);
}

TEST(SandboxClientAccounts, CheckpointCompletesALogin) {
    client_fixture f({"--checkpoint-rate", "1", "--checkpoint-code", "424242"});
    login_params p;
    p.country = "US";
    p.email = "a@b.c";
    p.password = "pw";
    auto r = f.run(f.api->login(p));
    ASSERT_TRUE(r) << describe(r.error());
    EXPECT_TRUE(r->checkpoint_required());
    EXPECT_EQ(r->challenge_type, "code_challenge");
    auto wrong = f.run(f.api->checkpoint({r->account_id, "000000"}));
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code, "INVALID_PARAMS");
    auto ok = f.run(f.api->checkpoint({r->account_id, "424242"}));
    ASSERT_TRUE(ok) << describe(ok.error());
    EXPECT_EQ(ok->status, "connected");
    EXPECT_EQ(ok->meta.credits_consumed, 1);
}

TEST(SandboxClientAccounts, CreditsAndAnInvalidKey) {
    client_fixture f({"--api-key", "test-key:321"});
    auto credits = f.run(f.api->get_credits());
    ASSERT_TRUE(credits) << describe(credits.error());
    EXPECT_EQ(credits->credits, 321);

    client_settings s = f.api->settings();
    s.api_key = "wrong-key";
    auto other = client::make(f.io.get_executor(), s);
    ASSERT_TRUE(other);
    auto refused = f.run(other->get_credits());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, "INVALID_API_KEY");
    EXPECT_EQ(refused.error().http_status, 403);
    EXPECT_EQ(refused.error().what_to_do, disposition::stop_everything);
}

TEST(SandboxClientAccounts, UnknownPathsAndBadLoginsAreGiveUp) {
    client_fixture f;
    auto nothing = f.run(f.api->call_v1("GET", "/v2/nothing", nullptr, false));
    ASSERT_FALSE(nothing);
    EXPECT_EQ(nothing.error().http_status, 404);
    EXPECT_EQ(nothing.error().what_to_do, disposition::give_up);
    login_params p; // no country, no token
    auto bad = f.run(f.api->login(p));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, "INVALID_PARAMS");
    EXPECT_FALSE(bad.error().may_have_taken_effect);
}

} // namespace
