// A small synchronous HTTP/1.1 client for tests (Beast), keep-alive on one connection.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>

namespace orch::test {

using json = nlohmann::json;

struct http_result {
    int status = 0;
    std::string body;
    std::map<std::string, std::string> headers; // lower-case names
    // The body parsed as JSON (null when it is not JSON).
    json body_json() const;
    std::string header(const std::string& lower_name) const;
};

class http_client {
public:
    http_client(std::string host, unsigned short port);
    ~http_client();

    // Sends one request; reconnects once if the kept-alive connection was closed. Throws
    // std::runtime_error on a transport failure (refused, reset, timeout after 10 s).
    http_result request(const std::string& method, const std::string& target, const std::string& body = "",
                        const std::map<std::string, std::string>& headers = {});
    http_result get(const std::string& target, const std::string& api_key = "");
    http_result post(const std::string& target, const json& body, const std::string& api_key = "");
    // POST /v2/<category> with the V2 envelope.
    http_result v2(const std::string& api_key, const std::string& category, const std::string& account_id,
                   const std::string& action, const json& params = json::object());

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// A client of the server on 127.0.0.1:`port` once its /healthz answers 200 (a process just
// spawned), polled every 25 ms for up to 10 s; nullptr when it did not come up.
std::unique_ptr<http_client> client_when_up(unsigned short port);

// Logs in a network account with a login token and returns its account_id (asserts success
// by throwing std::runtime_error with the answer otherwise).
std::string login_account(http_client& client, const std::string& api_key, const std::string& login_token,
                          const std::string& country = "FR");

// Sends raw bytes on a new connection and returns what the server wrote until it closed the
// connection (or 5 s passed): for requests an HTTP client library would not send (a body above
// a server's limit, which it answers and closes before reading).
std::string raw_exchange(unsigned short port, const std::string& bytes);

// The status and body of a raw HTTP/1.1 answer (Content-Length bodies only).
struct raw_answer {
    int status = 0;
    std::string body;
};
raw_answer parse_answer(const std::string& text);

} // namespace orch::test
