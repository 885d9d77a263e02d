// The client's one error taxonomy. Every failure of a call (connect, timeout, dropped
// connection, HTTP status, V2 error code, V1 `status: error` with HTTP 200, malformed JSON,
// cancellation) becomes an `outreach::error` that says what to do next (`what_to_do`) and
// whether a side-effecting request may have taken effect (`may_have_taken_effect`), so a caller
// reconciles (check_invitation, list_sent, get_conversation) instead of resending blindly.
//
// Disposition table (known API codes win over the HTTP status):
//
//   code / condition                         kind                 what_to_do       may_have_taken_effect
//   ---------------------------------------  -------------------  ---------------  -----------------------------
//   RATE_LIMITED (429)                       api_error            back_off         false (retry_after_s from the
//                                                                                  Retry-After header when sent)
//   ACCOUNT_INACTIVE (403), INVALID_ACCOUNT  api_error            pause_account    false
//   INVALID_API_KEY (403)                    api_error            stop_everything  false
//   INSUFFICIENT_CREDITS (402)               api_error            pause_budget     false
//   INVALID_PARAMS, INVALID_ACTION (400),    api_error            give_up          false
//   CHANNEL_ERROR (422), FORBIDDEN,
//   NOT_FOUND, METHOD_NOT_ALLOWED
//   INTERNAL_ERROR (500)                     api_error            retry_later      true for 500/502/503/504
//   unknown code or no code, status 5xx      api_error/http_status retry_later     true for 500/502/503/504
//   unknown code or no code, status 429      api_error/http_status back_off        false
//   unknown code or no code, status 402      api_error/http_status pause_budget    false
//   unknown code or no code, status 408      api_error/http_status retry_later     false
//   unknown code or no code, other 4xx       api_error/http_status give_up         false
//   V1 `status: "error"` (any HTTP status)   v1_error             by the code the message implies (insufficient
//                                                                 credits -> INSUFFICIENT_CREDITS, "temporarily
//                                                                 unavailable" -> SERVICE_UNAVAILABLE/retry_later,
//                                                                 "is required"/"must be" -> INVALID_PARAMS/give_up,
//                                                                 else V1_ERROR/give_up)
//   connect / resolve failure                transport_connect    retry_later      false (nothing was written)
//   TLS certificate rejected                 transport_connect    stop_everything  false (code TLS_VERIFY_FAILED:
//                                                                 every call will fail until configuration changes)
//   connection dropped before the whole      connection_lost      retry_later      true when the whole request had
//   response arrived                                                               been written
//   deadline (connect, read, total)          timeout              retry_later      true when the whole request had
//                                                                                  been written
//   2xx body that is not the documented      malformed_response   give_up          true when the call had a side
//   shape (not JSON, no `data`, wrong type                                         effect: the API said it succeeded
//   of a strict field)
//   caller cancelled                         cancelled            retry_later      true when the whole request had
//                                                                                  been written
//
// `may_have_taken_effect` is only ever true for calls with a side effect (invite, send, accept,
// withdraw, webhook changes, ...); read-only calls always report false.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace orch::outreach {

enum class error_kind {
    transport_connect,  // resolve, TCP connect or TLS handshake failed: nothing was sent
    connection_lost,    // the connection broke while writing or before the whole response arrived
    timeout,            // a deadline (connect, read or total) passed
    http_status,        // a non-2xx status without a recognisable API error body
    api_error,          // a V2 (or V2-shaped) error envelope with `error.code`
    v1_error,           // a V1 `{status: "error", message}` answer, whatever the HTTP status
    malformed_response, // the answer is not the documented shape (bad JSON, no `data`, wrong type)
    cancelled           // the caller cancelled the call (asio cancellation slot)
};

// What the caller should do about the failure.
enum class disposition {
    retry_later,     // transient: retry the same call later (reconcile first if it may have taken effect)
    back_off,        // rate limited: wait retry_after_s (when given) or back off exponentially
    pause_account,   // the account is unknown or inactive: stop using it until it is logged in again
    stop_everything, // the API key is refused (or TLS is misconfigured): stop all work, alert an operator
    pause_budget,    // not enough credits: pause until the balance is topped up
    give_up          // this item cannot succeed as asked: record it as failed, do not retry it
};

// Where the failure happened (diagnostics; `timeout` and `connection_lost` use it).
enum class failure_step { none, pool_wait, resolve, connect, tls_handshake, write, read, parse };

struct error {
    error_kind kind = error_kind::malformed_response;
    disposition what_to_do = disposition::give_up;
    // The API's code ("RATE_LIMITED") or the client's ("TIMEOUT", "CONNECT_FAILED",
    // "CONNECTION_LOST", "TLS_VERIFY_FAILED", "MALFORMED_RESPONSE", "CANCELLED", "HTTP_502", "V1_ERROR").
    std::string code;
    int http_status = 0;           // 0 when no response arrived
    std::string message;           // the API's message or a description of the failure
    std::optional<std::int64_t> retry_after_s; // from Retry-After (delta-seconds or HTTP-date)
    bool may_have_taken_effect = false;
    // The request reached the API and its answer was lost or unreadable: a read too may have been
    // billed (the caller's ledger counts the most it could have cost as spent).
    bool may_have_been_charged = false;
    failure_step step = failure_step::none;
    nlohmann::json details = nullptr; // other fields of the API's error object (e.g. required, remaining)

    // Whether retrying the same call later can succeed (retry_later or back_off).
    bool retryable() const {
        return what_to_do == disposition::retry_later || what_to_do == disposition::back_off;
    }
};

std::string_view to_string(error_kind k);
std::string_view to_string(disposition d);
std::string_view to_string(failure_step s);
// "api_error RATE_LIMITED (HTTP 429): too many requests [back_off, retry after 3 s]".
std::string describe(const error& e);

// ---- Classification rules (pure; the client uses them, tests pin them). ----

// Whether a RATE_LIMITED answer to a request for `account_id` is that account's limit (its
// action's cooldown) rather than the API key's: its message names the account, by its id as a
// whole word. The spec gives RATE_LIMITED no scope and api-facts no wording; a message that only
// says "account" ("rate limit exceeded for your account") may mean the customer's account, the
// whole key, so it is read as the key's: the wider cooldown, which never sends inside the key's
// window, at the price of holding every account when the limit was one account's.
bool limit_names_account(std::string_view message, std::string_view account_id);

// The disposition for an API code and HTTP status, per the table above.
disposition disposition_for(std::string_view code, int http_status);
// Whether an HTTP status means a written request may have been acted on (500, 502, 503, 504).
bool status_may_have_taken_effect(int http_status);
// The code a V1 error message implies ("insufficient credits available" -> INSUFFICIENT_CREDITS).
std::string v1_code_from_message(std::string_view message);
// Retry-After as seconds from `now`: delta-seconds ("120") or an HTTP-date (IMF-fixdate
// "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 or asctime). A date in the past gives 0. nullopt when
// the header is empty or unparseable, and when it asks for more than max_retry_after_s; the
// cooldown is then the backoff's, as without the header. A quota's 429 asks for the wait until its
// day or rolling week frees (a day cap's until midnight, a week's up to 7 days), which is a real
// answer to keep: read as no header, the calls went on inside it. Longer than the week and a day
// of margin is not believable for a rate limit: taken at its word, one garbage header (a date in
// 2100) would hold every call of the API key for good.
inline constexpr std::int64_t max_retry_after_s = 8 * 86'400;
std::optional<std::int64_t> parse_retry_after(std::string_view header, std::chrono::system_clock::time_point now);

// Builders used by the client (and tests).
error make_api_error(error_kind kind, int http_status, std::string code, std::string message,
                     std::optional<std::int64_t> retry_after_s, bool side_effect);
error make_transport_error(error_kind kind, failure_step step, std::string message, bool request_written,
                           bool side_effect);
error make_malformed(std::string message, int http_status, bool side_effect);

} // namespace orch::outreach
