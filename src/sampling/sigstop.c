/*
 * sigstop.c — SIGINT and SIGTERM deferred to a profiler's safe point
 * (sigstop.h).
 */
#include "sigstop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t ephs_sigstop_signal;

static const int SIGNALS[] = {SIGINT, SIGTERM};
#define NSIGNALS (sizeof SIGNALS / sizeof SIGNALS[0])

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned holders;
static struct sigaction saved[NSIGNALS];
static bool installed[NSIGNALS];

const char *ephs_sigstop_name(int sig) {
  static char other[32];
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  snprintf(other, sizeof other, "signal %d", sig);
  return other;
}

/* Default action for sig, and sig unblocked: raising it ends the process. */
static void take_default(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
}

static void on_signal(int sig) {
  int saved_errno = errno;
  if (ephs_sigstop_signal) { /* the second one: no more waiting */
    take_default(sig);
    raise(sig); /* delivered when this handler returns (sig is blocked in it) */
    errno = saved_errno;
    return;
  }
  ephs_sigstop_signal = sig;
  static const char int_msg[] = "ephemera: SIGINT: finishing the profile (send it again to quit at once)\n";
  static const char term_msg[] = "ephemera: SIGTERM: finishing the profile (send it again to quit at once)\n";
  ssize_t ignored = sig == SIGINT ? write(STDERR_FILENO, int_msg, sizeof int_msg - 1)
                                  : write(STDERR_FILENO, term_msg, sizeof term_msg - 1);
  (void)ignored;
  errno = saved_errno;
}

static void restore_handlers(void) {
  for (size_t i = 0; i < NSIGNALS; i++) {
    if (!installed[i]) continue;
    installed[i] = false;
    /* Put back the previous handler only if ours is still the one: the
     * program may have installed its own meanwhile (lua.c does, around
     * each chunk it runs). */
    struct sigaction cur;
    if (sigaction(SIGNALS[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
      sigaction(SIGNALS[i], &saved[i], NULL);
  }
}

bool ephs_sigstop_hold(bool over_handlers, char *msg, size_t msglen) {
  pthread_mutex_lock(&lock);
  if (holders++ > 0) {
    pthread_mutex_unlock(&lock);
    return true;
  }
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = on_signal;
  sigemptyset(&act.sa_mask);
  for (size_t i = 0; i < NSIGNALS; i++) sigaddset(&act.sa_mask, SIGNALS[i]); /* one handler at a time */
  act.sa_flags = SA_RESTART; /* a blocked read stays blocked: the second signal is the way out */
  for (size_t i = 0; i < NSIGNALS; i++) {
    if (sigaction(SIGNALS[i], NULL, &saved[i]) != 0) continue; /* not a signal here: nothing to hold */
    bool ignored = !(saved[i].sa_flags & SA_SIGINFO) && saved[i].sa_handler == SIG_IGN;
    bool handled = (saved[i].sa_flags & SA_SIGINFO) || (saved[i].sa_handler != SIG_DFL && !ignored);
    /* SIG_IGN (nohup, background jobs of a non-interactive shell): it stays ignored */
    if (ignored || (handled && !over_handlers)) continue;
    if (sigaction(SIGNALS[i], &act, NULL) != 0) {
      snprintf(msg, msglen, "cannot install a handler for %s: %s", ephs_sigstop_name(SIGNALS[i]), strerror(errno));
      restore_handlers();
      holders = 0;
      pthread_mutex_unlock(&lock);
      return false;
    }
    installed[i] = true;
  }
  pthread_mutex_unlock(&lock);
  return true;
}

void ephs_sigstop_release(void) {
  pthread_mutex_lock(&lock);
  if (holders == 0 || --holders > 0) {
    pthread_mutex_unlock(&lock);
    return;
  }
  restore_handlers();
  int sig = ephs_sigstop_signal;
  pthread_mutex_unlock(&lock);
  if (!sig) return;
  /* The profile is finished: the process ends as the signal would have
   * ended it at first. */
  take_default(sig);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  ephs_sigstop_signal = 0; /* not reached: the default action of SIGINT and SIGTERM ends the process */
}
