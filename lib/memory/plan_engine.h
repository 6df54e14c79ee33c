/* The caching engine's planned mode (planning:True, plan_file:PATH), per device: the requests of
 * each step (between two c10c__engine_step marks) are recorded; at a boundary the step's
 * requests allocated and freed within it (steps found from the repeating requests until the
 * host marks one) get an offset plan (planner.h) in one arena, a backend segment of its own,
 * and the following steps' matching requests are served at their offsets. Everything else stays
 * the caching engine's. Every function here runs under the engine's lock.
 *
 * Never more than the engine alone: an online plan is installed only where what stays reserved
 * (the engine's cache that the recorded step used released, with host marks; none released
 * for a step found in the requests), plus the arena, plus an estimate of what the engine adds
 * for the requests the plan leaves to it, plus a margin, is at most the most the recorded step
 * reserved (the reference: the engine reserves as much again in a step that repeats it); else
 * it is declined (plan_declines). A step served as planned that reserves more stops planning;
 * before the engine grows past the reference the plan goes; a program that leaves the step
 * (misses) gives an idle arena back, or one holding blocks to the engine as a segment
 * (c10c__engine_adopt). A found step is planned only once it repeats exactly.
 *
 * Matching: a per-step cursor walks the plan's requests; a request matches the entry under it
 * when its size rounds to the entry's block and its stream is the entry's plan stream (plan
 * streams bind to runtime stream ids by order of first use in the step). A matching planned
 * entry is served only once every earlier occupant of its bytes has been freed (the planner's
 * need/free ranks); other streams are made to wait where the plan reuses their bytes (events at
 * the frees, stream waits at the mallocs), and at a step boundary every stream used in the step
 * is waited for by the others before they reuse the arena. A step whose requests miss the plan
 * too often (more than 10% of them) rebuilds the plan from that step; rebuilds at four
 * boundaries in a row drop planning on the device (plan_drops) until the settings are applied
 * again, as does an arena the backend cannot give. A plan file is served as one sequence across
 * boundaries until its entries run out. */
#ifndef C10C_PLAN_ENGINE_H
#define C10C_PLAN_ENGINE_H

#include "caching_engine.h"
#include "planner.h"

/* The planned mode's hooks for c10c__engine_new (caching_engine.h says what each does): the
 * engine calls up into this file only through them, and this file calls down into the engine's
 * services, so neither file calls the other back. */
extern const c10c__plan_hooks c10c__plan_engine_hooks;

#endif /* C10C_PLAN_ENGINE_H */
