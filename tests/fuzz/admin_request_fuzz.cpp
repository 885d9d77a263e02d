// libFuzzer target: the admin endpoint's request parsing. The input is raw bytes off the socket:
// Beast's HTTP/1.1 parser (with the server's header and body limits) reads them, then
// engine/admin_input.hpp does what the endpoint does before any route touches the database:
// the target's segments and query, the names in the path, the body's media type and text, and
// the JSON bodies of the two PUT routes. Only the documented refusals (400, 415, 422) may come
// out; any other exception, crash or sanitizer report is a finding.
#include "engine/admin_input.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace http = boost::beast::http;
namespace in = orch::engine::admin_input;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 * 1024);
    parser.header_limit(64 * 1024);
    parser.eager(true);
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(data, size), ec);
    if (ec || !parser.is_done()) {
        return 0;  // the server answers 400, 413 or 431 to these without reading further
    }
    const auto& req = parser.get();
    try {
        const auto target = in::read_target(req.target());
        in::check_path_names(target);
        const auto type = req[http::field::content_type];
        const auto& seg = target.segments;
        const bool budget = seg.size() == 4 && seg[1] == "campaigns" && seg[3] == "budget";
        const bool limits = seg.size() == 4 && seg[1] == "accounts" && seg[3] == "limits";
        if (req.method() == http::verb::put && (budget || limits)) {
            in::check_body(type, req.body(), {"application/json"});
            if (budget) {
                (void)in::parse_budget_body(req.body());
            } else {
                auto body = in::parse_limits_body(req.body());
                std::string why;
                (void)in::apply_limits_body({}, body, why);
            }
        } else if (req.method() == http::verb::post && seg.size() == 2) {
            in::check_body(type, req.body(), {"application/yaml", "application/x-yaml", "text/yaml", "application/json"});
            if (in::media_type(type) == "application/json") {
                (void)in::json_body(req.body());
            }
        } else {
            in::check_no_body(req.body());
        }
    } catch (const in::bad_request&) {
    } catch (const in::unsupported_media&) {
    } catch (const in::unprocessable&) {
    } catch (const orch::engine::budget_update_error&) {
    }
    return 0;
}
