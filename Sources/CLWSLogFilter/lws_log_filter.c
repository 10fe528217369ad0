// libwebsockets 4.1 as Debian builds it compiles its parser trace in: its HTTP header parser calls `_lws_log`
// (LLL_PARSER) for every byte it reads, ~230 times a request, and each call enters a variadic function — the register
// save area, the stack protector, `_lws_logv` — before lws finds that level off. That was 4-6 % of the instructions
// of an HTTP request. lws calls `_lws_log` through its PLT, so the definition below, exported by the executable,
// takes those calls: a disabled level returns after one load and one test; an enabled one goes on to lws's own
// `_lws_logv`, which formats and emits the line exactly as before.
//
// Plain C: an assembly entry that tested the level before the variadic prologue saved ~1,000 instructions of an HTTP
// request's ~150,000 (0.7 %, Benchmarks/callgrind.sh), not worth assembly for each architecture.
#include <stdarg.h>
#include <libwebsockets.h>

#include "lws_log_filter.h"

// Every level until the mask is set here: each line goes on to lws's own filter, as without this file.
static int lanpush_lws_visible = ~0;

void lanpush_lws_set_log_level(int level, void (*emit)(int level, const char *line)) {
    lws_set_log_level(level, emit);
    __atomic_store_n(&lanpush_lws_visible, level, __ATOMIC_RELAXED);
}

// A level that is off returns here; one that is on goes on to lws's own formatting and emit.
void _lws_log(int filter, const char *format, ...) {
    if (!(__atomic_load_n(&lanpush_lws_visible, __ATOMIC_RELAXED) & filter)) return;
    va_list ap;
    va_start(ap, format);
    _lws_logv(filter, format, ap);
    va_end(ap);
}

void lanpush_lws_log_line(int filter, const char *line) {
    _lws_log(filter, "%s", line);
}

void lanpush_lws_log_sample(int filter) {
    _lws_log(filter, "log filter sample: %d %s %ld %u %c %x %.1f %s\n", -1, "two", 3L, 4u, '5', 0x6, 7.5, "eight");
}
