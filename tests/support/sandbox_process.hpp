// Starts the real outreach-sandbox binary for a test on free loopback ports and stops it at
// the end. Every integration test of the sandbox goes through this one harness.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace orch::test {

// Path of the built binary (set by CMake).
std::string sandbox_binary();

class sandbox_process {
public:
    // Starts the sandbox with --listen/--control-listen on free ports, a ready file, and
    // --api-key test-key:1000000 unless `args` names --api-key itself. Extra flags go in `args`
    // (e.g. {"--accept-probability", "1"}). Throws std::runtime_error when it does not come up
    // within 10 s (its log is in the message).
    explicit sandbox_process(std::vector<std::string> args = {});
    ~sandbox_process();
    sandbox_process(const sandbox_process&) = delete;
    sandbox_process& operator=(const sandbox_process&) = delete;

    unsigned short port() const { return port_; }
    unsigned short control_port() const { return control_port_; }
    pid_t pid() const { return pid_; }
    // Sends SIGTERM and waits; returns the exit status (as from waitpid).
    int stop();
    // Whether the process is still running.
    bool alive();
    // What the process wrote to stdout and stderr so far.
    std::string log() const;

private:
    pid_t pid_ = -1;
    unsigned short port_ = 0;
    unsigned short control_port_ = 0;
    std::string dir_;
};

} // namespace orch::test
