/* ragsweep/ragsweep.h: the whole public API.
 *
 *   error.h      rs_code, rs_error: the one error type
 *   measures.h   the measure catalogue (trec_eval names and parameters) and
 *                rs_eval_topic, the allocation-free per-topic kernel
 *   trec_eval.h  trec_eval 10.0 semantics over TREC text qrels and runs
 *
 * Link with -lragsweep -lz -lm (and -fopenmp for the parallel build). */
#ifndef RAGSWEEP_H
#define RAGSWEEP_H

#include "ragsweep/error.h"
#include "ragsweep/measures.h"
#include "ragsweep/trec_eval.h"

#endif
