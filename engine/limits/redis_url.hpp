#pragma once
// The Redis URL of the rate limits (redis://[[user]:password@]host[:port][/db]): read by the
// limits (limits.hpp) and checked with the settings (engine/config.cpp), which do not link them.
#include <optional>
#include <string>

namespace orch::limits {

struct redis_endpoint {
    std::string host = "127.0.0.1";
    int port = 6379;
    std::string user;
    std::string password;
    int db = 0;
};

// nullopt (and `error` set) when the URL is not redis://[[user]:password@]host[:port][/db].
inline std::optional<redis_endpoint> parse_redis_url(const std::string& url, std::string& error) {
    const std::string scheme = "redis://";
    if (url.rfind(scheme, 0) != 0) {
        error = "must start with redis://";
        return std::nullopt;
    }
    redis_endpoint ep;
    std::string rest = url.substr(scheme.size());
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    if (slash != std::string::npos) {
        std::string db = rest.substr(slash + 1);
        if (!db.empty()) {
            if (db.size() > 4 || db.find_first_not_of("0123456789") != std::string::npos) {
                error = "has a database that is not a number: '" + db + "'";
                return std::nullopt;
            }
            ep.db = std::stoi(db);
        }
    }
    auto at = authority.rfind('@');
    if (at != std::string::npos) {
        std::string userinfo = authority.substr(0, at);
        authority = authority.substr(at + 1);
        auto colon = userinfo.find(':');
        if (colon == std::string::npos) {
            ep.password = userinfo;
        } else {
            ep.user = userinfo.substr(0, colon);
            ep.password = userinfo.substr(colon + 1);
        }
    }
    auto colon = authority.rfind(':');
    std::string host = authority.substr(0, colon);
    if (colon != std::string::npos) {
        std::string port = authority.substr(colon + 1);
        if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(port) < 1 || std::stoi(port) > 65535) {
            error = "has a bad port '" + port + "' (1 to 65535)";
            return std::nullopt;
        }
        ep.port = std::stoi(port);
    }
    if (host.empty()) {
        error = "has no host";
        return std::nullopt;
    }
    ep.host = host;
    return ep;
}

}  // namespace orch::limits
