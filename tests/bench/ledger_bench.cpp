// Ledger benchmark driver (run by ledger_bench.sh): reserve+settle pairs per second through
// engine/ledger on a migrated database, the way the worker uses it: a reserve transaction for a
// batch of attempts, then a settle transaction (3 of 4 posted at or below the reservation, 1 of 4
// voided). All clients draw on ONE campaign budget (the hot row: the worst case).
//
//   ledger_bench DATABASE_URL BATCH CLIENTS SECONDS
// prints: "pairs <n> seconds <s> refused <r>"
#include "engine/ledger.hpp"

#include <pqxx/pqxx>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ledger = orch::engine::ledger;

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: ledger_bench DATABASE_URL BATCH CLIENTS SECONDS\n");
        return 2;
    }
    const std::string url = argv[1];
    const int batch = std::atoi(argv[2]);
    const int clients = std::atoi(argv[3]);
    const double seconds = std::atof(argv[4]);
    if (batch < 1 || clients < 1 || seconds <= 0) {
        std::fprintf(stderr, "ledger_bench: BATCH and CLIENTS must be >= 1, SECONDS > 0\n");
        return 2;
    }
    // Enough intent rows for the run: 40,000 pairs/s batched, 5,000/s one by one, per client set.
    const std::int64_t per_client = static_cast<std::int64_t>(seconds * (batch > 1 ? 40000 : 5000) / clients) + batch;
    std::int64_t campaign = 0;
    std::int64_t first_attempt = 0;
    std::int64_t warmup_attempt = 0;
    try {
        pqxx::connection conn(url);
        pqxx::work tx(conn);
        tx.exec("INSERT INTO accounts (account_id) VALUES ('bench-acc') ON CONFLICT DO NOTHING");
        campaign = tx.exec("INSERT INTO campaigns (name) VALUES ('ledger-bench-' || txid_current()) RETURNING campaign_id")[0][0]
                       .as<std::int64_t>();
        tx.exec_params("INSERT INTO campaign_versions (campaign_id, version, definition, source, digest) "
                       "VALUES ($1, 1, '{}', '', '')",
                       campaign);
        auto lead = tx.exec_params("INSERT INTO leads (canonical_url, profile_url) VALUES ($1, $1) RETURNING lead_id",
                                   "bench.example/in/" + std::to_string(campaign))[0][0]
                        .as<std::int64_t>();
        auto enrollment = tx.exec_params("INSERT INTO enrollments (campaign_id, version, lead_id, account_id, step) "
                                         "VALUES ($1, 1, $2, 'bench-acc', 'check') RETURNING enrollment_id",
                                         campaign, lead)[0][0]
                              .as<std::int64_t>();
        auto warmup_rows = tx.exec_params("WITH a AS (INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) "
                                          "SELECT $1, 'check', 'invite', 1, 'bench' FROM generate_series(1, 2000) "
                                          "RETURNING attempt_id) SELECT min(attempt_id) FROM a",
                                          enrollment);
        warmup_attempt = warmup_rows[0][0].as<std::int64_t>();
        first_attempt = tx.exec_params("WITH a AS (INSERT INTO step_attempts (enrollment_id, step, call, attempt, worker) "
                                       "SELECT $1, 'check', 'invite', 1, 'bench' FROM generate_series(1, $2) "
                                       "RETURNING attempt_id) SELECT min(attempt_id) FROM a",
                                       enrollment, per_client * clients)[0][0]
                            .as<std::int64_t>();
        tx.commit();
        ledger::set_budget(conn, campaign, {std::int64_t{1} << 40, {}, {}}, std::chrono::system_clock::now());
        // Steady state, not an empty database: 2,000 pairs, then fresh statistics (autovacuum
        // would take a minute to get there).
        auto now = std::chrono::system_clock::now();
        for (int b = 0; b < 20; ++b) {
            std::vector<ledger::reserve_request> req;
            std::vector<ledger::post_request> posts;
            for (int i = 0; i < 100; ++i) {
                req.push_back({warmup_attempt + b * 100 + i, campaign, "bench-acc", "invite", 2});
                posts.emplace_back(warmup_attempt + b * 100 + i, 1);
            }
            ledger::reserve(conn, req, now);
            ledger::post(conn, posts, now);
        }
        pqxx::nontransaction(conn).exec("ANALYZE");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ledger_bench: setup failed: %s\n", e.what());
        return 1;
    }

    std::atomic<std::int64_t> pairs{0}, refused{0};
    std::atomic<bool> failed{false};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
        threads.emplace_back([&, c] {
            try {
                pqxx::connection conn(url);
                std::mt19937_64 rng(static_cast<std::uint64_t>(c) + 1);
                std::int64_t next = first_attempt + c * per_client;
                const std::int64_t end = next + per_client;
                while (std::chrono::steady_clock::now() < deadline && next + batch <= end) {
                    std::vector<ledger::reserve_request> req;
                    for (int i = 0; i < batch; ++i) {
                        req.push_back({next++, campaign, "bench-acc", "invite", static_cast<std::int64_t>(1 + rng() % 3)});
                    }
                    auto now = std::chrono::system_clock::now();
                    auto got = ledger::reserve(conn, req, now);
                    std::vector<ledger::post_request> posts;
                    std::vector<std::int64_t> voids;
                    for (const auto& g : got) {
                        if (!g.reserved) {
                            ++refused;
                        } else if (rng() % 4 == 0) {
                            voids.push_back(g.attempt_id);
                        } else {
                            posts.emplace_back(g.attempt_id, static_cast<std::int64_t>(rng() % (g.credits + 1)));
                        }
                    }
                    {
                        // One settle transaction for the batch, as the worker's.
                        pqxx::work tx(conn);
                        ledger::settle(tx, posts, voids, now);
                        tx.commit();
                    }
                    pairs += static_cast<std::int64_t>(posts.size() + voids.size());
                }
            } catch (const std::exception& e) {
                std::fprintf(stderr, "ledger_bench: client %d: %s\n", c, e.what());
                failed = true;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("pairs %lld seconds %.2f refused %lld\n", static_cast<long long>(pairs.load()), elapsed,
                static_cast<long long>(refused.load()));
    return failed ? 1 : 0;
}
