// Child processes for end-to-end tests: run a program to completion with a given environment,
// or start one in the background and stop it (SIGTERM) or kill it (SIGKILL) at will.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace orch::test {

struct run_result {
    int exit_code = -1;   // -1: killed by a signal or timed out
    std::string output;   // stdout and stderr, interleaved
};

// Runs `argv` with the current environment plus `env`, waits at most `timeout_ms`. `input`, when
// given, is the child's standard input (else it inherits ours).
run_result run_program(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
                       int timeout_ms = 60'000, const std::optional<std::string>& input = std::nullopt);

// A loopback port the kernel says is free now (bound to 0, read back, released).
unsigned short free_port();

class background_process {
public:
    background_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});
    ~background_process();  // SIGKILL if still running
    background_process(const background_process&) = delete;
    background_process& operator=(const background_process&) = delete;

    pid_t pid() const { return pid_; }
    bool alive();
    // Sends `sig`, then waits at most `timeout_ms` for the exit; returns the exit code (-1 for a
    // signal death or a timeout, after which it is SIGKILLed).
    int stop(int sig, int timeout_ms = 15'000);
    // Waits for the process to exit by itself; -1 on timeout (it keeps running).
    int wait(int timeout_ms);
    std::string log() const;

private:
    pid_t pid_ = -1;
    int exit_code_ = -1;
    bool exited_ = false;
    std::string log_path_;
};

}  // namespace orch::test
