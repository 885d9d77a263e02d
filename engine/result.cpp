#include "engine/result.hpp"

namespace orch::engine {

std::string_view to_string(error_category c) {
    switch (c) {
    case error_category::invalid_input:
        return "invalid_input";
    case error_category::unsupported_media:
        return "unsupported_media";
    case error_category::unprocessable:
        return "unprocessable";
    case error_category::not_found:
        return "not_found";
    case error_category::conflict:
        return "conflict";
    case error_category::contended:
        return "contended";
    case error_category::unavailable:
        return "unavailable";
    case error_category::internal:
        return "internal";
    }
    return "internal";
}

error_category category_of_sqlstate(std::string_view sqlstate) {
    if (sqlstate.rfind("08", 0) == 0 || sqlstate == "57P01") {
        return error_category::unavailable;  // connection exceptions, admin shutdown
    }
    if (sqlstate == "40001" || sqlstate == "40P01") {
        return error_category::contended;  // serialization failure, deadlock
    }
    if (sqlstate.rfind("22", 0) == 0) {
        return error_category::invalid_input;  // data exception: a value the checks should have refused
    }
    return error_category::internal;
}

}  // namespace orch::engine
