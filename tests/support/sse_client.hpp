// A minimal server-sent-events reader for tests, over a plain loopback socket: sends one GET,
// parses the response header, then returns messages (blocks ended by a blank line) one at a
// time. Header-only so any test program can use it without linking more.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace orch::test {

struct sse_message {
    std::string id;
    bool has_id = false; // an id: line was present
    std::string event;
    std::string data;
    std::string comment;
};

class sse_client {
public:
    sse_client(unsigned short port, const std::string& target, const std::map<std::string, std::string>& headers = {}) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            close();
            throw std::runtime_error("sse_client: connect failed");
        }
        std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n";
        for (const auto& [k, v] : headers) {
            req += k + ": " + v + "\r\n";
        }
        req += "\r\n";
        if (::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
            close();
            throw std::runtime_error("sse_client: send failed");
        }
        auto end = buffer_.find("\r\n\r\n");
        while (end == std::string::npos) {
            if (!fill(std::chrono::milliseconds(2000))) {
                close();
                throw std::runtime_error("sse_client: no response header; got: " + buffer_);
            }
            end = buffer_.find("\r\n\r\n");
        }
        header_ = buffer_.substr(0, end);
        buffer_.erase(0, end + 4);
        status_ = std::stoi(header_.substr(9, 3));
    }
    ~sse_client() { close(); }
    sse_client(const sse_client&) = delete;
    sse_client& operator=(const sse_client&) = delete;

    int status() const { return status_; }
    const std::string& header_text() const { return header_; }
    // The rest of a non-stream answer (error bodies are small and sent at once).
    std::string body(std::chrono::milliseconds timeout = std::chrono::milliseconds(1000)) {
        if (buffer_.empty()) {
            fill(timeout);
        }
        return buffer_;
    }
    void close() {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    // The next message, or nullopt on timeout or when the server closed the stream.
    std::optional<sse_message> next(std::chrono::milliseconds timeout) {
        auto end = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            auto pos = buffer_.find("\n\n");
            if (pos != std::string::npos) {
                std::string block = buffer_.substr(0, pos);
                buffer_.erase(0, pos + 2);
                return parse(block);
            }
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0 || !fill(left)) {
                return std::nullopt;
            }
        }
    }
    // The next message that is not a keepalive comment.
    std::optional<sse_message> next_event(std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
        auto end = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return std::nullopt;
            }
            auto m = next(left);
            if (!m || !m->event.empty()) {
                return m;
            }
        }
    }

    // Whether the server closed the connection within `timeout` (data before that is skipped).
    bool closed_by_server(std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
        auto end = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < end) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) > 0) {
                char buf[4096];
                if (::recv(fd_, buf, sizeof buf, 0) <= 0) {
                    return true;
                }
            }
        }
        return false;
    }

private:
    bool fill(std::chrono::milliseconds timeout) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
            return false;
        }
        char buf[4096];
        auto n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) {
            return false;
        }
        buffer_.append(buf, static_cast<std::size_t>(n));
        return true;
    }
    static sse_message parse(const std::string& block) {
        sse_message m;
        std::size_t start = 0;
        while (start <= block.size()) {
            auto end = block.find('\n', start);
            std::string line = block.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (line.starts_with(":")) {
                m.comment = line.substr(line.size() > 1 && line[1] == ' ' ? 2 : 1);
            } else if (line.starts_with("id:")) {
                m.id = line.substr(line.starts_with("id: ") ? 4 : 3);
                m.has_id = true;
            } else if (line.starts_with("event: ")) {
                m.event = line.substr(7);
            } else if (line.starts_with("data: ")) {
                m.data += line.substr(6);
            }
            if (end == std::string::npos) {
                break;
            }
            start = end + 1;
        }
        return m;
    }

    int fd_ = -1;
    int status_ = 0;
    std::string header_;
    std::string buffer_;
};

} // namespace orch::test
