/* The allocation trace of bench/replay_trace: reading its CSV (RMM's replay-log columns
 * Thread,Time,Action,Pointer,Size,Stream, plus Step, Tag and Phase) into a list of events.
 * Shared by replay_trace and the parsers fuzz harness (tests/fuzz/fuzz_parsers.c).
 *
 * The first line is a header naming the columns; Action, Pointer and Size are required, the
 * others optional, in any order. Rows of the actions allocate, free, record_stream, enqueue,
 * empty_cache and step_begin become events; rows of any other action (RMM's "allocate failure")
 * and blank lines are skipped. Pointer is hexadecimal (an optional 0x), Size and Step decimal,
 * Stream any base C's strtoull takes; a malformed number in a kept row is an error naming the
 * line. Time is the logical clock when it is a plain non-negative integer, and ignored
 * otherwise (RMM's wall-clock times). Lines may be of any length.
 */
#ifndef C10C_BENCH_TRACE_CSV_H
#define C10C_BENCH_TRACE_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum trace_action {
  TRACE_ALLOCATE,
  TRACE_FREE,
  TRACE_RECORD_STREAM, /* Pointer is used on Stream too */
  TRACE_ENQUEUE,       /* Size ticks of work on Stream */
  TRACE_EMPTY_CACHE,
  TRACE_STEP_BEGIN
} trace_action;

typedef struct trace_event {
  uint64_t id;   /* Pointer */
  uint64_t size; /* bytes, or ticks for enqueue */
  int64_t time;  /* -1: none */
  size_t line;   /* the 1-based line of the file it came from (for messages) */
  trace_action act;
  int stream; /* index into the trace's stream names: 0 .. streams - 1 */
  int step;   /* the step it belongs to: 0 .. steps - 1 */
} trace_event;

/* Distinct Stream values a trace may name; more is an error. */
enum { TRACE_MAX_STREAMS = 64, TRACE_MAX_STEP = 1 << 30 };

typedef struct trace {
  trace_event *events;
  size_t count, cap;
  /* Stream values in order of first appearance: the first is the default stream. A row
   * without a Stream value is on the default stream. */
  uint64_t stream_names[TRACE_MAX_STREAMS];
  int streams; /* >= 1 after a successful load */
  int steps;   /* >= 1: one more than the highest Step of a step_begin */
} trace;

/* Reads a whole trace from f into *t (zeroed first). Returns 0, or -1 with a message in err
 * (err_size bytes, NUL-terminated when err_size > 0) and *t empty. */
int trace_csv_read(trace *t, FILE *f, char *err, size_t err_size);

/* The same for the len bytes at data (not NUL-terminated; a NUL byte is an ordinary byte of
 * its field, which then does not parse as a number or name an action). */
int trace_csv_parse(trace *t, const char *data, size_t len, char *err, size_t err_size);

/* Frees the events; *t is empty afterwards. */
void trace_free(trace *t);

#endif /* C10C_BENCH_TRACE_CSV_H */
