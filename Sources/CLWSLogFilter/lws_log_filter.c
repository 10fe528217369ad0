// libwebsockets 4.1 as Debian builds it compiles its parser trace in: its HTTP header parser calls `_lws_log`
// (LLL_PARSER) for every byte it reads, ~230 times a request, and each call enters a variadic function — the register
// save area, the stack protector, `_lws_logv` — before lws finds that level off. That was 4-6 % of the instructions
// of an HTTP request. lws calls `_lws_log` through its PLT, so the definition below, exported by the executable,
// takes those calls: a disabled level returns after one load and one test; an enabled one goes on to lws's own
// `_lws_logv`, which formats and emits the line exactly as before.
//
// On x86-64 and AArch64 (ELF) `_lws_log` is four instructions of assembly: a C variadic function sets up its register
// save area before its first test (15 instructions a call, 2 % of an HTTP request), where the stub tests the level and
// jumps, every argument register and the stack untouched, to the variadic C function that takes the rare enabled
// line. Elsewhere the C function is `_lws_log` itself.
#include <stdarg.h>
#include <libwebsockets.h>

#include "lws_log_filter.h"

// Every level until the mask is set here: each line goes on to lws's own filter, as without this file.
// Not static: the assembly below reads it by name.
__attribute__((visibility("hidden"))) int lanpush_lws_visible = ~0;

void lanpush_lws_set_log_level(int level, void (*emit)(int level, const char *line)) {
    lws_set_log_level(level, emit);
    __atomic_store_n(&lanpush_lws_visible, level, __ATOMIC_RELAXED);
}

// ELF only: the assembly names sections and symbol types the ELF way.
#if defined(__ELF__) && (defined(__x86_64__) || defined(__aarch64__))
#define LANPUSH_LWS_LOG_STUB 1
#define LOG_EMIT lanpush_lws_log_emit
__attribute__((visibility("hidden"), used)) void lanpush_lws_log_emit(int filter, const char *format, ...);
#else
#define LOG_EMIT _lws_log
#endif

// An enabled level: lws's own formatting and emit.
void LOG_EMIT(int filter, const char *format, ...) {
    if (!(__atomic_load_n(&lanpush_lws_visible, __ATOMIC_RELAXED) & filter)) return;
    va_list ap;
    va_start(ap, format);
    _lws_logv(filter, format, ap);
    va_end(ap);
}

#if defined(LANPUSH_LWS_LOG_STUB) && defined(__x86_64__)
__asm__(
    ".pushsection .text._lws_log, \"ax\", @progbits\n"  // a section of its own, as -ffunction-sections gives C
    ".globl _lws_log\n"
    ".type _lws_log, @function\n"
    ".p2align 4\n"
    "_lws_log:\n"
    "    endbr64\n"
    "    testl %edi, lanpush_lws_visible(%rip)\n"
    "    jne lanpush_lws_log_emit\n"
    "    ret\n"
    ".size _lws_log, .-_lws_log\n"
    ".popsection\n");
#elif defined(LANPUSH_LWS_LOG_STUB) && defined(__aarch64__)
__asm__(
    ".pushsection .text._lws_log, \"ax\", %progbits\n"
    ".globl _lws_log\n"
    ".type _lws_log, %function\n"
    ".p2align 4\n"
    "_lws_log:\n"
    "    hint #34\n"  // bti c
    "    adrp x16, lanpush_lws_visible\n"
    "    ldr w16, [x16, :lo12:lanpush_lws_visible]\n"
    "    tst w16, w0\n"
    "    b.eq 1f\n"
    "    b lanpush_lws_log_emit\n"  // not b.ne: its +-1 MiB reach may not span the ordered text to the C function
    "1:  ret\n"
    ".size _lws_log, .-_lws_log\n"
    ".popsection\n");
#endif

void lanpush_lws_log_line(int filter, const char *line) {
    _lws_log(filter, "%s", line);
}

void lanpush_lws_log_sample(int filter) {
    _lws_log(filter, "log filter sample: %d %s %ld %u %c %x %.1f %s\n", -1, "two", 3L, 4u, '5', 0x6, 7.5, "eight");
}
