#include "sandbox/service.hpp"
namespace orch::sandbox {
asio::awaitable<api::handler_result> handle_webhooks_request(service&, api::request& req, beast::tcp_stream&) {
    co_return api::handler_result::reply(json_reply(req, 404, json{{"success", false}}));
}
void fan_out_event(service&, const std::shared_ptr<const stored_event>&) {}
void deactivate_webhooks_of(service&, const std::string&) {}
} // namespace orch::sandbox
