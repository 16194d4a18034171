/*
 * sigstop.h — SIGINT and SIGTERM end a profile cleanly, for both runtimes
 * (the heap profiler in src/profile and the runtime adapters, src/runtime).
 *
 * A profiler writes its file as the program runs; an interrupt that kills
 * the process at once leaves the file without its closing chunk (readable
 * up to the last chunk flushed, as after SIGKILL).  While a profiler holds
 * the signals, the handler only records the signal: the profiler polls
 * ephs_sigstop_pending() at its own safe points (outside any collection, where
 * it may finish its file), finishes, and calls ephs_sigstop_release(), which
 * then ends the process by the signal's default action, so that its parent
 * sees it killed by SIGINT or SIGTERM (a shell's $? is 128 + N), as
 * `perf record` does.
 *
 * A bounded way out: a second SIGINT or SIGTERM before that (a program
 * blocked in a system call, or that never reaches a safe point) takes the
 * default action at once.  Signals the process ignores (SIG_IGN, e.g. a
 * background job of a non-interactive shell, or nohup) stay ignored.
 *
 * Async-signal safety: the handler writes one volatile sig_atomic_t and, on
 * a second signal, calls only sigaction and raise.  Holders are counted
 * under a mutex, in normal context only.
 */
#ifndef EPH_SIGSTOP_H
#define EPH_SIGSTOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* The signal received while held (SIGINT or SIGTERM), or 0.  Cheap: one
 * load, meant for safe points. */
extern volatile sig_atomic_t ephs_sigstop_signal;
static inline int ephs_sigstop_pending(void) { return ephs_sigstop_signal; }

/*
 * Adds a holder: the first one installs the handlers, saving the previous
 * ones: over a handler the program installed only if over_handlers (a
 * profiler the program asked for by name; the Lua module, loaded into a
 * host that may handle signals itself, passes false), never over SIG_IGN.
 * Returns false with msg filled if a handler cannot be installed (nothing
 * is held then).
 */
bool ephs_sigstop_hold(bool over_handlers, char *msg, size_t msglen);

/*
 * Removes a holder (call it once per successful ephs_sigstop_hold, when the
 * profile is finished).  The last one puts back the previous handlers
 * (where ours is still installed) and, if a signal came while held,
 * raises it with its default action: the call does not return then.
 */
void ephs_sigstop_release(void);

/* "SIGINT", "SIGTERM" or "signal N", for messages. */
const char *ephs_sigstop_name(int sig);

#endif /* EPH_SIGSTOP_H */
