// jemalloc's settings for the two long-running programs (linked into orchestrator and
// outreach-sandbox only; see the top-level CMakeLists.txt). jemalloc reads this symbol at start;
// MALLOC_CONF in the environment still overrides it.
//
// narenas:1 — one arena instead of four per core. These programs run a handful of threads, and
// each keeps its own thread cache in front of the arena, so the shared arena costs no measurable
// CPU (tests/bench/engine_bench.sh); the default's extra arenas held about a third more memory
// per in-flight lead (4.2 KB against 3.3 KB in the bench's memory part).
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface
extern const char* malloc_conf;
const char* malloc_conf = "narenas:1";
}
