/* ragsweep/ragsweep.h: the whole public API.
 *
 *   error.h      rs_code, rs_error: the one error type
 *   measures.h   the measure catalogue (trec_eval names and parameters) and
 *                rs_eval_topic, the allocation-free per-topic kernel
 *   eval.h       measures by ir_measures-style name (nDCG@10, AnswerPresence@5)
 *   trec_eval.h  trec_eval 10.0 semantics over TREC text qrels and runs
 *
 * Only what these headers declare is exported by libragsweep.so.  Build
 * with `pkg-config --cflags --libs ragsweep` (--static for libragsweep.a). */
#ifndef RAGSWEEP_H
#define RAGSWEEP_H

#include "ragsweep/error.h"
#include "ragsweep/eval.h"
#include "ragsweep/measures.h"
#include "ragsweep/trec_eval.h"

#endif
