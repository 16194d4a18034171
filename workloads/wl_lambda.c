/*
 * lambda — an untyped lambda-calculus interpreter computing n! in Church
 * numerals: the Merlin paper's lambda-fact5 and lambda-fact6 (Table I,
 * "untyped lambda calculus interpreter evaluating 5! [6!] in the standard
 * Church numerals encoding"; Smalltalk programs from the UMass VM).
 *
 * The program text (PROGRAM below) defines booleans, Church numerals, succ,
 * pred, mul, iszero and the Y combinator, and
 *     fact = Y (\fact. \n. (iszero n) one (mul n (fact (pred n))))
 * then applies fact to the Church numeral n and reads the result back by
 * applying it to two primitives, #succ and #0, which turn it into a machine
 * integer.  The self-check compares that with n! computed in C.
 *
 * Everything the interpreter touches is a heap object:
 *  - terms (parsed once, long-lived): Var (de Bruijn index), Lam, App, Lit,
 *    Prim;
 *  - environments: linked Env frames (thunk, next), no substitution;
 *  - Thunk (term, env, value): call-by-need; once forced, value is set and
 *    term and env are dropped (an old thunk then points to a young value:
 *    the write barrier at work);
 *  - Closure (body, env): the value of a Lam;
 *  - the continuation is a heap-allocated stack of frames: ArgFrame (a
 *    pending argument), UpdateFrame (a thunk to update with the value),
 *    SuccFrame (add a count to the integer that comes back).
 * The evaluator is a lazy Krivine machine (Sestoft's mark-1 machine) in a C
 * loop, so C recursion stays flat whatever the term does.  #succ is strict,
 * so reading back a numeral needs a continuation as deep as its value; two
 * things keep it shallower: a variable used once in its lambda's body (not
 * under another lambda) is single-entry, so its thunk needs no UpdateFrame;
 * and a SuccFrame pushed onto a SuccFrame merges into it.  What remains is
 * about 2.7 frames per unit of n!, interleaved Update and Succ frames.
 *
 * Against Table I: 5! allocates 1.1 MiB here (lambda-fact5: 1.1 MB) with a
 * maximum live heap of about 0.1 MiB (25 KB), 6! 8.8 MiB (4.9 MB) and about
 * 0.3 MiB (55 KB) — 64-bit slots here, 32-bit Smalltalk objects there.
 * Work and allocation grow like n!: 9! is the default (8.4 GiB allocated,
 * about a million frames live at the deepest point).
 *
 * Size: the n in n!.  Temporaries: Env, Thunk, Closure and the frames; the
 * declared short-lived class is Thunk.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

enum {
  C_VAR, C_LAM, C_APP, C_LIT, C_PRIM,           /* terms */
  C_ENV, C_THUNK, C_CLOSURE,                     /* run time */
  C_ARG_FRAME, C_UPDATE_FRAME, C_SUCC_FRAME,     /* the continuation */
  NCLASSES
};
static const wl_class classes[] = {
    [C_VAR] = {"Var", EPH_FORMAT_POINTERS},
    [C_LAM] = {"Lam", EPH_FORMAT_POINTERS},
    [C_APP] = {"App", EPH_FORMAT_POINTERS},
    [C_LIT] = {"Lit", EPH_FORMAT_POINTERS},
    [C_PRIM] = {"Prim", EPH_FORMAT_POINTERS},
    [C_ENV] = {"Env", EPH_FORMAT_POINTERS},
    [C_THUNK] = {"Thunk", EPH_FORMAT_POINTERS},
    [C_CLOSURE] = {"Closure", EPH_FORMAT_POINTERS},
    [C_ARG_FRAME] = {"ArgFrame", EPH_FORMAT_POINTERS},
    [C_UPDATE_FRAME] = {"UpdateFrame", EPH_FORMAT_POINTERS},
    [C_SUCC_FRAME] = {"SuccFrame", EPH_FORMAT_POINTERS},
};

/* Slots. */
enum { VAR_INDEX = 0, VAR_LINEAR = 1 };
enum { LAM_BODY = 0 };
enum { APP_FUN = 0, APP_ARG = 1 };
enum { LIT_VALUE = 0 };
enum { ENV_THUNK = 0, ENV_NEXT = 1 };
enum { TH_TERM = 0, TH_ENV = 1, TH_VALUE = 2 };
enum { CL_BODY = 0, CL_ENV = 1 };
enum { FR_ITEM = 0, FR_NEXT = 1 }; /* ArgFrame/UpdateFrame: thunk; SuccFrame: count */

#define PROGRAM                                                  \
  "let true   = \\t. \\f. t in"                                  \
  " let false = \\t. \\f. f in"                                  \
  " let zero  = \\f. \\x. x in"                                  \
  " let succ  = \\n. \\f. \\x. f (n f x) in"                     \
  " let one   = succ zero in"                                    \
  " let pred  = \\n. \\f. \\x. n (\\g. \\h. h (g f)) (\\u. x) (\\u. u) in" \
  " let mul   = \\m. \\n. \\f. m (n f) in"                       \
  " let iszero = \\n. n (\\x. false) true in"                    \
  " let Y     = \\f. (\\x. f (x x)) (\\x. f (x x)) in"           \
  " let fact  = Y (\\fact. \\n. (iszero n) one (mul n (fact (pred n)))) in"

/* --- term constructors ------------------------------------------------------ */

static eph_value new_term1(wl_ctx *w, size_t cls, eph_value a) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, a);
  eph_value t = WL_NEW(w, cls, 1);
  eph_store(h, t, 0, a);
  EPH_RETURN(h, t);
}

static eph_value new_app(wl_ctx *w, eph_value fun, eph_value arg) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, fun);
  EPH_ROOT(h, arg);
  eph_value t = WL_NEW(w, C_APP, 2);
  eph_store(h, t, APP_FUN, fun);
  eph_store(h, t, APP_ARG, arg);
  EPH_RETURN(h, t);
}

/* --- the parser: named variables to de Bruijn indices ------------------------ */

enum { MAX_SCOPE = 64 };

typedef struct parser {
  wl_ctx *w;
  const char *p;
  const char *names[MAX_SCOPE];
  size_t lens[MAX_SCOPE];
  size_t depth;
  const char *error;
} parser;

static void skip_space(parser *ps) {
  while (isspace((unsigned char)*ps->p)) ps->p++;
}

static bool accept(parser *ps, const char *tok) {
  skip_space(ps);
  size_t n = strlen(tok);
  if (strncmp(ps->p, tok, n) != 0) return false;
  if (isalnum((unsigned char)tok[n - 1]) && (isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_')) return false;
  ps->p += n;
  return true;
}

static void expect(parser *ps, const char *tok) {
  if (!accept(ps, tok) && !ps->error) ps->error = "syntax error";
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }

/* Reads an identifier into the next scope slot (not yet pushed). */
static bool ident(parser *ps) {
  skip_space(ps);
  const char *s = ps->p;
  if (!is_ident_start(*s)) return false;
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
  if (ps->depth == MAX_SCOPE) {
    ps->error = "scope too deep";
    return false;
  }
  ps->names[ps->depth] = s;
  ps->lens[ps->depth] = (size_t)(ps->p - s);
  return true;
}

static eph_value parse_term(parser *ps);

static eph_value parse_var(parser *ps) {
  if (!ident(ps)) return EPH_NIL;
  const char *s = ps->names[ps->depth];
  size_t len = ps->lens[ps->depth];
  for (size_t i = ps->depth; i-- > 0;)
    if (ps->lens[i] == len && !strncmp(ps->names[i], s, len)) {
      eph_value v = WL_NEW(ps->w, C_VAR, 2);
      eph_store(ps->w->h, v, VAR_INDEX, eph_int((intptr_t)(ps->depth - 1 - i)));
      eph_store(ps->w->h, v, VAR_LINEAR, EPH_FALSE);
      return v;
    }
  ps->error = "unbound variable";
  return EPH_NIL;
}

static eph_value parse_atom(parser *ps) {
  if (accept(ps, "(")) {
    eph_value t = parse_term(ps);
    expect(ps, ")");
    return t;
  }
  if (accept(ps, "#succ")) return WL_NEW(ps->w, C_PRIM, 0);
  if (accept(ps, "#0")) return new_term1(ps->w, C_LIT, eph_int(0));
  return parse_var(ps);
}

/* An atom starts here (an identifier other than the keyword "in", "(", "#"). */
static bool atom_follows(parser *ps) {
  skip_space(ps);
  const char *s = ps->p;
  if (*s == '(' || *s == '#') return true;
  if (!is_ident_start(*s)) return false;
  return !(s[0] == 'i' && s[1] == 'n' && !isalnum((unsigned char)s[2]) && s[2] != '_');
}

static eph_value parse_app(parser *ps) {
  eph_heap *h = ps->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, fun);
  EPH_LOCAL(h, arg);
  fun = parse_atom(ps);
  while (!ps->error && atom_follows(ps)) {
    arg = parse_atom(ps);
    fun = new_app(ps->w, fun, arg);
  }
  EPH_RETURN(h, fun);
}

/* \x. body */
static eph_value parse_lambda(parser *ps) {
  expect(ps, ".");
  ps->depth++;
  eph_value body = parse_term(ps);
  ps->depth--;
  return new_term1(ps->w, C_LAM, body);
}

/* let x = def in body  ==  (\x. body) def */
static eph_value parse_let(parser *ps) {
  eph_heap *h = ps->w->h;
  EPH_FRAME(h);
  EPH_LOCAL(h, def);
  EPH_LOCAL(h, fun);
  if (!ident(ps)) ps->error = "let needs a name";
  size_t slot = ps->depth;
  const char *name = ps->names[slot];
  size_t len = ps->lens[slot];
  expect(ps, "=");
  def = parse_term(ps); /* not recursive: the name is not in scope yet */
  expect(ps, "in");
  if (ps->error) EPH_RETURN(h, EPH_NIL);
  ps->names[slot] = name, ps->lens[slot] = len; /* parsing def used the slot */
  ps->depth = slot + 1;
  fun = parse_term(ps);
  ps->depth = slot;
  fun = new_term1(ps->w, C_LAM, fun);
  EPH_RETURN(h, new_app(ps->w, fun, def));
}

static eph_value parse_term(parser *ps) {
  if (ps->error) return EPH_NIL;
  if (accept(ps, "\\")) {
    if (!ident(ps)) {
      ps->error = "lambda needs a name";
      return EPH_NIL;
    }
    return parse_lambda(ps);
  }
  if (accept(ps, "let")) return parse_let(ps);
  return parse_app(ps);
}

/* --- single-entry variables --------------------------------------------------- */

/*
 * A variable that occurs once in the body of its lambda, and not under a
 * nested lambda, is entered at most once per binding: every argument is a
 * fresh thunk, and a thunk is entered once (then updated).  Its thunk needs
 * no UpdateFrame (GHC calls these single-entry thunks).  Without this the
 * continuation of a Church numeral applied to #succ grows with the result.
 */
typedef struct occurrence {
  unsigned count;
  bool under_lambda;
  eph_value var;
} occurrence;

static void find_occurrences(const wl_ctx *w, eph_value t, intptr_t index, bool under_lambda, occurrence *o) {
  eph_class_id c = eph_class_of(t);
  if (c == w->cls[C_VAR] && eph_int_value(eph_slot(t, VAR_INDEX)) == index) {
    o->count++;
    o->under_lambda |= under_lambda;
    o->var = t;
  } else if (c == w->cls[C_LAM]) {
    find_occurrences(w, eph_slot(t, LAM_BODY), index + 1, true, o);
  } else if (c == w->cls[C_APP]) {
    find_occurrences(w, eph_slot(t, APP_FUN), index, under_lambda, o);
    find_occurrences(w, eph_slot(t, APP_ARG), index, under_lambda, o);
  }
}

/* Marks the single-entry variables of every lambda in t; no allocation. */
static unsigned mark_linear(wl_ctx *w, eph_value t) {
  eph_class_id c = eph_class_of(t);
  if (c == w->cls[C_APP]) return mark_linear(w, eph_slot(t, APP_FUN)) + mark_linear(w, eph_slot(t, APP_ARG));
  if (c != w->cls[C_LAM]) return 0;
  occurrence o = {0, false, EPH_NIL};
  find_occurrences(w, eph_slot(t, LAM_BODY), 0, false, &o);
  unsigned marked = o.count == 1 && !o.under_lambda;
  if (marked) eph_store(w->h, o.var, VAR_LINEAR, EPH_TRUE);
  return marked + mark_linear(w, eph_slot(t, LAM_BODY));
}

/* --- run-time objects --------------------------------------------------------- */

static eph_value new_thunk(wl_ctx *w, eph_value term, eph_value env) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, term);
  EPH_ROOT(h, env);
  eph_value t = WL_NEW(w, C_THUNK, 3);
  eph_store(h, t, TH_TERM, term);
  eph_store(h, t, TH_ENV, env);
  EPH_RETURN(h, t);
}

static eph_value new_env(wl_ctx *w, eph_value thunk, eph_value next) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, thunk);
  EPH_ROOT(h, next);
  eph_value e = WL_NEW(w, C_ENV, 2);
  eph_store(h, e, ENV_THUNK, thunk);
  eph_store(h, e, ENV_NEXT, next);
  EPH_RETURN(h, e);
}

static eph_value new_closure(wl_ctx *w, eph_value body, eph_value env) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, body);
  EPH_ROOT(h, env);
  eph_value c = WL_NEW(w, C_CLOSURE, 2);
  eph_store(h, c, CL_BODY, body);
  eph_store(h, c, CL_ENV, env);
  EPH_RETURN(h, c);
}

static eph_value push_arg(wl_ctx *w, eph_value thunk, eph_value stack) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, thunk);
  EPH_ROOT(h, stack);
  eph_value f = WL_NEW(w, C_ARG_FRAME, 2);
  eph_store(h, f, FR_ITEM, thunk);
  eph_store(h, f, FR_NEXT, stack);
  EPH_RETURN(h, f);
}

static eph_value push_update(wl_ctx *w, eph_value thunk, eph_value stack) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, thunk);
  EPH_ROOT(h, stack);
  eph_value f = WL_NEW(w, C_UPDATE_FRAME, 2);
  eph_store(h, f, FR_ITEM, thunk);
  eph_store(h, f, FR_NEXT, stack);
  EPH_RETURN(h, f);
}

static eph_value push_succ(wl_ctx *w, eph_value stack) {
  eph_heap *h = w->h;
  EPH_FRAME(h);
  EPH_ROOT(h, stack);
  eph_value f = WL_NEW(w, C_SUCC_FRAME, 2);
  eph_store(h, f, FR_ITEM, eph_int(1));
  eph_store(h, f, FR_NEXT, stack);
  EPH_RETURN(h, f);
}

/* --- the machine ------------------------------------------------------------ */

/* State; every field is a root while the machine runs. */
typedef struct machine {
  wl_ctx *w;
  eph_value term, env, stack, value;
  bool returning; /* false: evaluate term in env; true: return value to stack */
  const char *error;
  uint64_t steps, depth, max_depth;
} machine;

static bool is(const machine *m, eph_value v, size_t cls) {
  return eph_is_ptr(v) && eph_class_of(v) == m->w->cls[cls];
}

static void pushed(machine *m) {
  if (++m->depth > m->max_depth) m->max_depth = m->depth;
}

static void eval_var(machine *m) {
  eph_value env = m->env;
  for (intptr_t i = eph_int_value(eph_slot(m->term, VAR_INDEX)); i > 0; i--) env = eph_slot(env, ENV_NEXT);
  eph_value thunk = eph_slot(env, ENV_THUNK), v = eph_slot(thunk, TH_VALUE);
  if (v != EPH_NIL) {
    m->value = v;
    m->returning = true;
    return;
  }
  bool linear = eph_slot(m->term, VAR_LINEAR) == EPH_TRUE;
  m->term = eph_slot(thunk, TH_TERM);
  m->env = eph_slot(thunk, TH_ENV);
  if (linear) return; /* entered once: nobody reads an update */
  m->stack = push_update(m->w, thunk, m->stack);
  pushed(m);
}

static void eval_step(machine *m) {
  eph_value t = m->term;
  if (is(m, t, C_VAR)) {
    eval_var(m);
  } else if (is(m, t, C_APP)) {
    eph_value thunk = new_thunk(m->w, eph_slot(t, APP_ARG), m->env);
    m->stack = push_arg(m->w, thunk, m->stack);
    pushed(m);
    m->term = eph_slot(m->term, APP_FUN); /* t may have moved: re-read */
  } else if (is(m, t, C_LAM)) {
    m->value = new_closure(m->w, eph_slot(t, LAM_BODY), m->env);
    m->returning = true;
  } else if (is(m, t, C_LIT)) {
    m->value = eph_slot(t, LIT_VALUE);
    m->returning = true;
  } else if (is(m, t, C_PRIM)) {
    m->value = t;
    m->returning = true;
  } else {
    m->error = "not a term";
  }
}

/* #succ applied to an argument thunk: count it, then evaluate the argument. */
static void apply_succ(machine *m, eph_value thunk) {
  if (eph_slot(thunk, TH_VALUE) != EPH_NIL) {
    m->value = eph_slot(thunk, TH_VALUE);
  } else {
    /* Unshared (only the ArgFrame held it): no UpdateFrame needed. */
    m->term = eph_slot(thunk, TH_TERM);
    m->env = eph_slot(thunk, TH_ENV);
    m->returning = false;
  }
  if (is(m, m->stack, C_SUCC_FRAME))
    eph_store(m->w->h, m->stack, FR_ITEM, eph_int(eph_int_value(eph_slot(m->stack, FR_ITEM)) + 1));
  else
    m->stack = push_succ(m->w, m->stack), pushed(m);
}

static void apply_value(machine *m, eph_value thunk) {
  eph_value v = m->value;
  if (is(m, v, C_CLOSURE)) {
    m->term = eph_slot(v, CL_BODY);
    m->env = new_env(m->w, thunk, eph_slot(v, CL_ENV));
    m->returning = false;
  } else if (is(m, v, C_PRIM)) {
    apply_succ(m, thunk);
  } else {
    m->error = "applied a number";
  }
}

static void return_step(machine *m) {
  eph_heap *h = m->w->h;
  eph_value f = m->stack;
  m->depth--;
  if (is(m, f, C_UPDATE_FRAME)) {
    eph_value thunk = eph_slot(f, FR_ITEM);
    eph_store(h, thunk, TH_VALUE, m->value);
    eph_store(h, thunk, TH_TERM, EPH_NIL);
    eph_store(h, thunk, TH_ENV, EPH_NIL);
    m->stack = eph_slot(f, FR_NEXT);
  } else if (is(m, f, C_ARG_FRAME)) {
    m->stack = eph_slot(f, FR_NEXT);
    apply_value(m, eph_slot(f, FR_ITEM));
  } else if (is(m, f, C_SUCC_FRAME)) {
    if (!eph_is_int(m->value)) {
      m->error = "#succ of a non-number";
      return;
    }
    m->value = eph_int(eph_int_value(m->value) + eph_int_value(eph_slot(f, FR_ITEM)));
    m->stack = eph_slot(f, FR_NEXT);
  } else {
    m->error = "bad frame";
  }
}

/* Runs term to a value; returns the value, or EPH_NIL with m->error set. */
static eph_value run_machine(machine *m, eph_value term) {
  eph_heap *h = m->w->h;
  EPH_FRAME(h);
  m->term = term, m->env = EPH_NIL, m->stack = EPH_NIL, m->value = EPH_NIL;
  EPH_ROOT(h, m->term);
  EPH_ROOT(h, m->env);
  EPH_ROOT(h, m->stack);
  EPH_ROOT(h, m->value);
  m->returning = false;
  while (!m->error && !(m->returning && m->stack == EPH_NIL)) {
    m->steps++;
    if (m->returning) return_step(m);
    else eval_step(m);
  }
  EPH_RETURN(h, m->error ? EPH_NIL : m->value);
}

/* --- the workload ------------------------------------------------------------- */

/* PROGRAM applied to the Church numeral n, read back with #succ and #0. */
static char *program_text(wl_ctx *w, unsigned n) {
  size_t len = sizeof PROGRAM + 64 + 8 * (size_t)n;
  char *s = wl_malloc(w, len), *p = s;
  if (!s) return NULL;
  p += sprintf(p, "%s fact (", PROGRAM);
  for (unsigned i = 0; i < n; i++) p += sprintf(p, "succ (");
  p += sprintf(p, "zero");
  for (unsigned i = 0; i < n; i++) *p++ = ')';
  sprintf(p, ") #succ #0");
  return s;
}

static uint64_t factorial(unsigned n) {
  uint64_t f = 1;
  for (unsigned i = 2; i <= n; i++) f *= i;
  return f;
}

static int run(wl_ctx *w) {
  eph_heap *h = w->h;
  if (w->size > 20) return wl_check(w, false, "n = %llu: 20! is the largest that fits", (unsigned long long)w->size);
  unsigned n = (unsigned)w->size;
  char *text = program_text(w, n);
  if (!text) return wl_check(w, false, "out of memory");
  EPH_FRAME(h);
  EPH_LOCAL(h, term);
  parser ps = {.w = w, .p = text};
  term = parse_term(&ps);
  skip_space(&ps);
  if (!ps.error && *ps.p) ps.error = "trailing text";
  wl_free(w, text);
  if (ps.error) {
    EPH_UNFRAME(h);
    return wl_check(w, false, "program does not parse: %s", ps.error);
  }
  unsigned linear = mark_linear(w, term);
  machine m = {.w = w};
  eph_value v = run_machine(&m, term);
  EPH_UNFRAME(h);
  if (m.error) return wl_check(w, false, "evaluation failed after %llu steps: %s", (unsigned long long)m.steps, m.error);
  uint64_t expected = factorial(n);
  bool ok = eph_is_int(v) && (uint64_t)eph_int_value(v) == expected;
  return wl_check(w, ok, "%u! = %lld (expected %llu) in %llu machine steps, max continuation %llu frames; %u single-entry variables", n,
                  eph_is_int(v) ? (long long)eph_int_value(v) : -1LL, (unsigned long long)expected,
                  (unsigned long long)m.steps, (unsigned long long)m.max_depth, linear);
}

const wl_workload wl_lambda = {
    .name = "lambda",
    .description = "lazy lambda-calculus interpreter computing n! in Church numerals (Merlin's lambda-fact)",
    .unit = "n",
    .sizes = {.small = 5, .middle = 6, .normal = 9, .large = 0},
    .classes = classes,
    .nclasses = NCLASSES,
    .short_lived_class = "Thunk",
    .run = run,
};
