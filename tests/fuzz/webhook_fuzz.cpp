// libFuzzer target: the webhook receiver's verify-and-parse, as engine/intake.cpp runs it on a
// delivery: outreach::verify_webhook over the headers and raw body, then parse_webhook_event on the
// body. The input is split at the first two NUL bytes into timestamp header, signature header and
// body; one input in two is signed with the test secret so the parser also sees bodies that pass.
#include "engine/outreach/signature.hpp"
#include "engine/outreach/types.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto a = in.find('\0');
    auto b = a == std::string_view::npos ? std::string_view::npos : in.find('\0', a + 1);
    std::string_view timestamp = a == std::string_view::npos ? in : in.substr(0, a);
    std::string_view signature = b == std::string_view::npos ? std::string_view() : in.substr(a + 1, b - a - 1);
    std::string_view body = b == std::string_view::npos ? std::string_view() : in.substr(b + 1);
    const std::string secret = "whsec_fuzz";
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
    std::string good;
    if (size % 2 == 0) {
        timestamp = "1800000000";
        good = orch::outreach::sign_webhook(secret, 1800000000, body);
        signature = good;
    }
    auto check = orch::outreach::verify_webhook(secret, timestamp, signature, body, now);
    (void)orch::outreach::to_string(check);
    auto event = orch::outreach::parse_webhook_event(body);
    if (event) {
        (void)event->account_id.size();
    }
    return 0;
}
