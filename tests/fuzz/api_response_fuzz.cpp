// libFuzzer target: the API client's response parser (engine/outreach/detail/parse.hpp): the V2
// and V1 envelopes, the error taxonomy of non-2xx answers and the per-result parsers the engine
// relies on, on arbitrary bodies. The first byte picks the HTTP status and the parser; the rest is
// the body. The decoders' contract is a result or a typed error, never a throw or a crash.
#include "engine/outreach/detail/parse.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace d = orch::outreach::detail;
namespace o = orch::outreach;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    static const int statuses[] = {200, 201, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503};
    const std::uint8_t pick = data[0];
    d::http_answer a;
    a.status = statuses[pick % 12];
    a.body.assign(reinterpret_cast<const char*>(data + 1), size - 1);
    a.retry_after = (pick & 0x10) != 0 ? "7" : "";
    a.content_type = "application/json";
    const bool side_effect = (pick & 0x20) != 0;
    switch ((pick >> 5) % 8) {
        case 0: (void)d::decode_v2<o::people_page>(a, side_effect, d::parse_people_page); break;
        case 1: (void)d::decode_v2<o::invite_result>(a, side_effect, d::parse_invite); break;
        case 2: (void)d::decode_v2<o::invitation_status>(a, side_effect, d::parse_invitation_status); break;
        case 3: (void)d::decode_v2<o::send_message_result>(a, side_effect, d::parse_send_message); break;
        case 4: (void)d::decode_v2<o::credits_result>(a, side_effect, d::parse_credits); break;
        case 5: (void)d::decode_v2<o::accounts_page>(a, side_effect, d::parse_accounts_page); break;
        case 6: (void)d::decode_v2<o::events_page>(a, side_effect, d::parse_events_page); break;
        default: {
            std::string message;
            (void)d::decode_v1_envelope(a, side_effect, true, message);
            auto j = orch::outreach::json::parse(a.body, nullptr, false);
            (void)d::error_from_answer(a, j.is_discarded() ? nullptr : &j, side_effect);
        }
    }
    return 0;
}
