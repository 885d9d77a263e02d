// An HTTP receiver for webhook deliveries in tests: a real orch::api::http_server on loopback,
// running its own io_context on its own thread. It records every request (headers and the raw,
// unmodified body) and answers with a configurable sequence of statuses, so retries can be
// tested ("500, 500, 200": the third request and every later one get 200).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace orch::test {

struct received_request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers; // lower-case names
    std::string body;                           // raw bytes as received
    std::chrono::steady_clock::time_point at;
    int answered_status = 0;

    std::string header(const std::string& lower_name) const;
    bool has_header(const std::string& lower_name) const { return headers.contains(lower_name); }
};

class test_receiver {
public:
    // Request i (0-based) is answered statuses[min(i, size-1)]; an empty list means 200.
    explicit test_receiver(std::vector<int> statuses = {200});
    ~test_receiver();
    test_receiver(const test_receiver&) = delete;
    test_receiver& operator=(const test_receiver&) = delete;

    unsigned short port() const;
    // "http://127.0.0.1:<port><path>".
    std::string url(const std::string& path = "/hook") const;

    // Replaces the status sequence; counting restarts at the next request.
    void set_statuses(std::vector<int> statuses);
    // Delays every answer (to make deliveries time out).
    void set_delay(std::chrono::milliseconds delay);

    std::vector<received_request> requests() const;
    std::size_t count() const;
    // Waits until at least `n` requests arrived; false on timeout.
    bool wait_for(std::size_t n, std::chrono::milliseconds timeout) const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace orch::test
