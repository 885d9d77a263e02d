// The HTTP server's start (api/http_server): an address it cannot take is said in one line an
// operator can read, the step and the system's reason, without the library's source location
// (a boost::system::system_error's what() carries it).
#include "api/http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

namespace http = boost::beast::http;

TEST(HttpServer, AnAddressInUseIsSaidWithTheStepAndTheReason) {
    boost::asio::io_context io;
    orch::api::handler ok = [](orch::api::request& req,
                               boost::beast::tcp_stream&) -> boost::asio::awaitable<orch::api::handler_result> {
        co_return orch::api::handler_result::reply(orch::api::json_response(req.version(), false, http::status::ok, "{}"));
    };
    orch::api::http_server first(io.get_executor(), orch::api::server_settings{}, ok);
    orch::api::server_settings same;
    same.listen_port = first.port();
    try {
        orch::api::http_server second(io.get_executor(), same, ok);
        FAIL() << "a second server took the port";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("cannot bind 127.0.0.1:" + std::to_string(first.port()) + ": ", 0), 0u) << what;
        EXPECT_NE(what.find("in use"), std::string::npos) << what;
        EXPECT_EQ(what.find(".hpp"), std::string::npos) << what;
        EXPECT_EQ(what.find("boost"), std::string::npos) << what;
    }
}

}  // namespace
