// jemalloc's settings for the two long-running programs (linked into orchestrator and
// outreach-sandbox only; see the top-level CMakeLists.txt). jemalloc reads this symbol at start;
// MALLOC_CONF in the environment still overrides it.
//
// narenas:1 — one arena instead of four per core. These programs run a handful of threads, and
// each keeps its own thread cache in front of the arena, so the shared arena costs no measurable
// CPU (tests/bench/engine_bench.sh); the default's extra arenas held about a third more memory
// per in-flight lead (4.2 KB against 3.3 KB in the bench's memory part).
//
// dirty_decay_ms:250 (the orchestrator only, ORCH_MALLOC_QUICK_DECAY) — freed pages go back to the
// system over about a quarter of a second instead of jemalloc's 10 s. A worker's lane cycle builds
// and frees its batch's statements, results and plan at every cycle; with the default, the pages
// of several lanes' cycles stayed resident together, and the peak RSS per in-flight lead was
// 3.8-3.9 KB against 3.0 (the bench's memory part); the worker's CPU per transition stayed within
// the VM's noise (tests/bench/engine_ab.sh). muzzy_decay_ms:0: lazily freed pages are not kept
// either.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's interface
extern const char* malloc_conf;
#ifdef ORCH_MALLOC_QUICK_DECAY
const char* malloc_conf = "narenas:1,dirty_decay_ms:250,muzzy_decay_ms:0";
#else
const char* malloc_conf = "narenas:1";
#endif
}
