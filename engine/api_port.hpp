// orch::engine api_port: the Outreach API as the call path sees it, the six requests a step's
// call can make (engine/executor.cpp). `client_port` is the real one, over outreach::client's
// HTTP; the seeded simulation (tests/sim) has its own, with simulated latency and faults. The
// executor, and so every outcome mapping (Retry-After, CHANNEL_ERROR, reconciliation), is the
// same code over either.
#pragma once

#include "engine/outreach/client.hpp"

#include <boost/asio/awaitable.hpp>

#include <string_view>

namespace orch::engine {

class api_port {
public:
    template <typename T>
    using answer = boost::asio::awaitable<outreach::result<T>>;

    virtual ~api_port() = default;
    virtual answer<outreach::invitation_status> check_invitation(std::string_view account_id,
                                                                 const outreach::profile_url_params& p) = 0;
    virtual answer<outreach::invite_result> invite(std::string_view account_id, const outreach::invite_params& p) = 0;
    virtual answer<outreach::withdraw_result> withdraw(std::string_view account_id,
                                                       const outreach::withdraw_params& p) = 0;
    virtual answer<outreach::send_message_result> send_message(std::string_view account_id,
                                                               const outreach::send_message_params& p) = 0;
    virtual answer<outreach::conversation_page> get_conversation(std::string_view account_id,
                                                                 const outreach::get_conversation_params& p) = 0;
    virtual answer<outreach::visit_result> visit(std::string_view account_id,
                                                 const outreach::profile_url_params& p) = 0;
};

// The HTTP client behind the port (the client outlives it).
class client_port final : public api_port {
public:
    explicit client_port(outreach::client& c) : c_(c) {}
    answer<outreach::invitation_status> check_invitation(std::string_view account_id,
                                                         const outreach::profile_url_params& p) override {
        return c_.check_invitation(account_id, p);
    }
    answer<outreach::invite_result> invite(std::string_view account_id, const outreach::invite_params& p) override {
        return c_.invite(account_id, p);
    }
    answer<outreach::withdraw_result> withdraw(std::string_view account_id,
                                               const outreach::withdraw_params& p) override {
        return c_.withdraw(account_id, p);
    }
    answer<outreach::send_message_result> send_message(std::string_view account_id,
                                                       const outreach::send_message_params& p) override {
        return c_.send_message(account_id, p);
    }
    answer<outreach::conversation_page> get_conversation(std::string_view account_id,
                                                         const outreach::get_conversation_params& p) override {
        return c_.get_conversation(account_id, p);
    }
    answer<outreach::visit_result> visit(std::string_view account_id, const outreach::profile_url_params& p) override {
        return c_.visit(account_id, p);
    }

private:
    outreach::client& c_;
};

}  // namespace orch::engine
