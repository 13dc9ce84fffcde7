/* test_badinput.c: a catalogue of malformed inputs (issue 13).  Each case
 * runs one command on inputs written into a fresh folder (or a fixture of
 * tests/data/bad/, see tests/indep/make_bad_h5.py) and asserts the exit
 * status (never a signal), a fragment of the message and that no output
 * file is left behind.
 *
 * crash_queries_id.h5 and crash_root_attr.h5 are `ragsweep import` outputs
 * with one byte changed (offsets 2072 and 2073, in the global heap holding
 * the variable-length strings), crash_run_attr.h5 likewise (offset 14005, in
 * run r's attribute 'model'); all make libhdf5 1.10.8 segfault in-process;
 * ragsweep probes every HDF5 file in a forked child first.  vlen_huge_len.h5
 * is good.h5 with the length of /queries/id row 1 (bytes 16..19 of the
 * dataset's storage, little-endian) set to 0x30000000: libhdf5 1.10.8
 * allocates and clears 768 MiB for it (20 s here) and `check` called the
 * file valid.  docs_id_unreadable.h5 is tests/fuzz/h5base/imp.h5 with byte 8299
 * (the top byte of the heap address of /docs/id row 2) set to 0x23 (found by
 * fuzz_corpus_h5): H5Dread of /docs/id fails part way through its
 * conversion, and libhdf5 1.10.8 leaks the strings it had converted.
 * queries_text_unreadable.h5 is the same edit to /queries/text row 1 (byte
 * 8251).  crash_queries_text.h5 is imp.h5 with byte 2153 (in the global heap)
 * set to 0xff: libhdf5 1.10.8 segfaults decoding /queries/text.  The query
 * and doc ids of these files are read from the file's bytes, not by libhdf5
 * (src/formats/h5_heap.c): a corrupt id heap is the reader's error. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define QRELS "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n"
#define RUN "1 Q0 d1 1 2.0 runA\n1 Q0 d2 2 1.0 runA\n2 Q0 d3 1 3.0 runA\n"

typedef struct {
  const char *name;
  const char *f1, *t1; /* an input file written into the case's folder (or NULL) */
  const char *f2, *t2;
  const char *env;     /* "NAME=value" or NULL */
  const char *cmd;     /* words split on spaces; %T = the case's folder, %D = tests/data/bad */
  int status;
  const char *msg;     /* a fragment of stderr */
  const char *out;     /* under %T: must not exist, or be an empty folder, afterwards */
} bad_case;

static const bad_case cases[] = {
  /* HDF5 that crashes libhdf5 in-process */
  /* strings libhdf5 still decodes (texts): the probe child crashes, not ragsweep */
  {"crash vlen texts: check", 0, 0, 0, 0, 0, "check %D/crash_queries_text.h5", 2, "libhdf5 crashed decoding /queries/text (", 0},
  {"crash vlen texts: eval", 0, 0, 0, 0, 0, "eval %D/crash_queries_text.h5 -o %T/out", 2, "libhdf5 crashed decoding /queries/text (", "out"},
  {"crash vlen texts: export", 0, 0, 0, 0, 0, "export %D/crash_queries_text.h5 -o %T/out", 2, "libhdf5 crashed decoding", "out"},
  /* the probe is shared among one child per thread (up to 4): the object named is the one a single child stops at */
  {"crash vlen texts: eval, 1 probe", 0, 0, 0, 0, "OMP_NUM_THREADS=1", "eval %D/crash_queries_text.h5 -o %T/out", 2, "libhdf5 crashed decoding /queries/text (", "out"},
  {"crash vlen texts: eval, 3 probes", 0, 0, 0, 0, "OMP_NUM_THREADS=3", "eval %D/crash_queries_text.h5 -o %T/out", 2, "libhdf5 crashed decoding /queries/text (", "out"},
  /* the ids' heap that segfaults libhdf5: ids are read from the file's bytes (src/formats/h5_heap.c), never by
   * libhdf5 in one process, and the reader names the row (the same at any number of threads) */
  {"corrupt id heap: check", 0, 0, 0, 0, 0, "check %D/crash_queries_id.h5", 2, "crash_queries_id.h5:/queries/id: row 0: the objects of the heap collection at offset 2048 do not fit it", 0},
  {"corrupt id heap: eval, 1 thread", 0, 0, 0, 0, "OMP_NUM_THREADS=1", "eval %D/crash_queries_id.h5 -o %T/out", 2, ":/queries/id: row 0: the objects of the heap collection at offset 2048 do not fit it", "out"},
  {"corrupt id heap: eval, 3 threads", 0, 0, 0, 0, "OMP_NUM_THREADS=3", "eval %D/crash_queries_id.h5 -o %T/out", 2, ":/queries/id: row 0: the objects of the heap collection at offset 2048 do not fit it", "out"},
  {"corrupt id heap: export", 0, 0, 0, 0, 0, "export %D/crash_queries_id.h5 -o %T/out", 2, ":/queries/id: row 0: the objects of the heap collection", "out"},
  {"crash root attr: eval, 4 probes", 0, 0, 0, 0, "OMP_NUM_THREADS=4", "eval %D/crash_root_attr.h5 -o %T/out", 2, "libhdf5 crashed decoding / attribute format", "out"},
  {"corrupt id heap: compare", 0, 0, 0, 0, 0, "compare %D/crash_queries_id.h5 -o %T/out", 2, ":/queries/id: row 0: the objects of the heap collection", 0},
  {"crash root attr: check", 0, 0, 0, 0, 0, "check %D/crash_root_attr.h5", 2, "libhdf5 crashed decoding / attribute format", 0},
  {"crash root attr: eval", 0, 0, 0, 0, 0, "eval %D/crash_root_attr.h5 -o %T/out", 2, "crash_root_attr.h5: libhdf5 crashed", "out"},
  {"crash root attr: export", 0, 0, 0, 0, 0, "export %D/crash_root_attr.h5 -o %T/out", 2, "libhdf5 crashed", "out"},
  {"crash run attribute: check", 0, 0, 0, 0, 0, "check %D/crash_run_attr.h5", 2, "libhdf5 crashed decoding /runs/r attribute model", 0},
  {"crash run attribute: eval", 0, 0, 0, 0, 0, "eval %D/crash_run_attr.h5 -o %T/out", 2, "crashed decoding /runs/r attribute model", "out"},
  {"crash as a run file: eval", 0, 0, 0, 0, 0, "eval %D/good.h5 %D/crash_root_attr.h5 -o %T/out", 2, "crash_root_attr.h5: libhdf5 crashed decoding", "out"},
  /* run files are probed side by side (one child each, one per thread): the first failing file in the given order is
   * named, and the probes started ahead of it are stopped (where in crash_root_attr.h5 libhdf5 faults depends on the
   * heap the child inherits: at the attribute, or at the file's closing) */
  {"crash as the 2nd of 3 run files, 1 thread", 0, 0, 0, 0, "OMP_NUM_THREADS=1", "eval %D/good.h5 %D/good.h5 %D/crash_root_attr.h5 %D/crash_run_attr.h5 -o %T/out", 2, "crash_root_attr.h5: libhdf5 crashed decoding", "out"},
  {"crash as the 2nd of 3 run files, 4 threads", 0, 0, 0, 0, "OMP_NUM_THREADS=4", "eval %D/good.h5 %D/good.h5 %D/crash_root_attr.h5 %D/crash_run_attr.h5 -o %T/out", 2, "crash_root_attr.h5: libhdf5 crashed decoding", "out"},
  {"crash as the 3rd of 3 run files, 2 threads", 0, 0, 0, 0, "OMP_NUM_THREADS=2", "eval %D/good.h5 %D/good.h5 %D/good.h5 %D/crash_run_attr.h5 -o %T/out", 2, "crash_run_attr.h5: libhdf5 crashed decoding", "out"},
  /* the root attribute: whether the corrupt string heap of crash_queries_id.h5 faults depends on the heap layout
   * the forked probe inherits, and this command never decodes those strings outside the probe */
  {"crash as a run file: compare", 0, 0, 0, 0, 0, "compare %D/good.h5 %D/crash_root_attr.h5 -o %T/out", 2, "crash_root_attr.h5: libhdf5 crashed decoding", 0},
  /* strings libhdf5 fails to read part way (and leaks what it had converted): the probe's read fails first, and the
   * file is refused before this process decodes them, at any number of probes */
  {"unreadable query texts: check", 0, 0, 0, 0, 0, "check %D/queries_text_unreadable.h5", 2, "queries_text_unreadable.h5:/queries/text: libhdf5 cannot decode the strings", 0},
  {"unreadable query texts: eval, 1 probe", 0, 0, 0, 0, "OMP_NUM_THREADS=1", "eval %D/queries_text_unreadable.h5 -o %T/out", 2, ":/queries/text: libhdf5 cannot decode the strings", "out"},
  {"unreadable query texts: eval, 3 probes", 0, 0, 0, 0, "OMP_NUM_THREADS=3", "eval %D/queries_text_unreadable.h5 -o %T/out", 2, ":/queries/text: libhdf5 cannot decode the strings", "out"},
  {"unreadable query texts: export", 0, 0, 0, 0, 0, "export %D/queries_text_unreadable.h5 -o %T/out", 2, ":/queries/text: libhdf5 cannot decode the strings", "out"},
  /* the same fault in the doc ids: the heap reader names the row */
  {"unreadable doc ids: check", 0, 0, 0, 0, 0, "check %D/docs_id_unreadable.h5", 2, "docs_id_unreadable.h5:/docs/id: row 2: its heap collection address 2522015791327479808 is outside the file (16784 bytes)", 0},
  {"unreadable doc ids: eval", 0, 0, 0, 0, 0, "eval %D/docs_id_unreadable.h5 -o %T/out", 2, ":/docs/id: row 2: its heap collection address", "out"},
  /* sizes bounded by the file */
  {"huge chunked doc: check", 0, 0, 0, 0, 0, "check %D/huge_doc.h5", 2, "/runs/r/doc: the dataset declares 17179869184 bytes", 0},
  {"huge chunked doc: eval", 0, 0, 0, 0, 0, "eval %D/huge_doc.h5 -o %T/out", 2, "refusing to allocate it", 0},
  {"huge chunked doc: export", 0, 0, 0, 0, 0, "export %D/huge_doc.h5 -o %T/out", 2, "declares 17179869184 bytes", 0},
  /* a variable-length string that declares 805306368 bytes (libhdf5 would allocate and clear that much) */
  {"huge vlen string length: check", 0, 0, 0, 0, 0, "check %D/vlen_huge_len.h5", 2,
   "/queries/id: row 1: the string declares 805306368 bytes but the file has 14264 bytes", 0},
  {"huge vlen string length: eval", 0, 0, 0, 0, 0, "eval %D/vlen_huge_len.h5 -o %T/out", 2, "the string declares 805306368 bytes", "out"},
  /* ids, grades, types */
  {"duplicate query ids: check", 0, 0, 0, 0, 0, "check %D/dup_qid.h5", 2, "/queries/id: rows 0 and 1: expected unique query ids, found 'q7' twice", 0},
  {"duplicate query ids: eval", 0, 0, 0, 0, 0, "eval %D/dup_qid.h5 -o %T/out", 2, "found 'q7' twice", "out"},
  {"empty query id", 0, 0, 0, 0, 0, "check %D/empty_qid.h5", 2, "/queries/id: row 1: expected a query id, found an empty string", 0},
  {"empty query id: eval", 0, 0, 0, 0, 0, "eval %D/empty_qid.h5 -o %T/out", 2, "found an empty string", "out"},
  {"non-UTF-8 query id", 0, 0, 0, 0, 0, "check %D/nonutf8_qid.h5", 2, "row 1: expected UTF-8, found byte 0xff at offset 0", 0},
  {"grade of 2^40", 0, 0, 0, 0, 0, "check %D/grade_2_40.h5", 2, "/qrels/grade: row 1: expected a grade that fits 32 bits, found 1099511627776", 0},
  {"grade of 2^40: eval", 0, 0, 0, 0, 0, "eval %D/grade_2_40.h5 -o %T/out", 2, "fits 32 bits", "out"},
  {"int8 run doc", 0, 0, 0, 0, 0, "check %D/doc_int8.h5", 2, "/runs/r/doc: expected int32 or int64 doc indexes, found 1-byte integers", 0},
  {"version as a string", 0, 0, 0, 0, 0, "check %D/version_string.h5", 2, "expected the integer 1, found the string \"1\"", 0},
  {"run without doc", 0, 0, 0, 0, 0, "check %D/no_run_doc.h5", 2, "missing dataset /runs/r/doc", 0},
  /* not HDF5 at all */
  {"text file given to eval", "x.h5", "hello\n", "r.txt", RUN, 0, "eval %T/x.h5 %T/r.txt -o %T/out", 2,
   "x.h5: not an input ragsweep reads (found: a first line of 1 field: 'hello'); expected a ragsweep corpus (HDF5), judgments then runs", "out"},
  {"TREC run without judgments given to eval", "r.txt", RUN, 0, 0, 0, "eval %T/r.txt -o %T/out", 1,
   "r.txt: a TREC run, and runs are scored against judgments", "out"},
  {"text file given to check", "x.h5", "hello\n", 0, 0, 0, "check %T/x.h5", 2, "expected an HDF5 corpus", 0},
  {"empty file given to export", "x.h5", "", 0, 0, 0, "export %T/x.h5 -o %T/out", 2, "expected an HDF5 corpus", "out"},
  {"missing corpus", 0, 0, 0, 0, 0, "check %T/none.h5", 2, "none.h5: cannot open: No such file or directory", 0},
  /* threads */
  {"--threads 0 on eval", 0, 0, 0, 0, 0, "eval %D/dup_qid.h5 --threads 0 -o %T/out", 1, "--threads: expected an integer from 1 to 4096, found '0'", "out"},
  {"--threads 99999 on compare", 0, 0, 0, 0, 0, "compare %D/dup_qid.h5 --threads 99999 -o %T/out", 1, "--threads: expected an integer from 1 to 4096", "out"},
  {"--threads 0 on import", "q.txt", QRELS, "r.txt", RUN, 0, "import -o %T/o.h5 --threads 0 --qrels %T/q.txt %T/r.txt", 1, "import: --threads: expected an integer from 1 to 4096, found '0'", "o.h5"},
  {"--threads x on import", "q.txt", QRELS, "r.txt", RUN, 0, "import -o %T/o.h5 --threads 4x --qrels %T/q.txt %T/r.txt", 1, "found '4x'", "o.h5"},
  {"--threads 5000 on trec_eval", "q.txt", QRELS, "r.txt", RUN, 0, "trec_eval --threads 5000 %T/q.txt %T/r.txt", 1, "--threads expects a number from 1 to 4096", 0},
  {"OMP_NUM_THREADS=99999 check", 0, 0, 0, 0, "OMP_NUM_THREADS=99999", "check %D/dup_qid.h5", 1, "OMP_NUM_THREADS: expected an integer from 1 to 4096", 0},
  {"OMP_NUM_THREADS=0 eval", 0, 0, 0, 0, "OMP_NUM_THREADS=0", "eval %D/dup_qid.h5 -o %T/out", 1, "found '0'", "out"},
  {"OMP_NUM_THREADS=abc trec_eval", "q.txt", QRELS, "r.txt", RUN, "OMP_NUM_THREADS=abc", "trec_eval %T/q.txt %T/r.txt", 1, "found 'abc'", 0},
  {"OMP_NUM_THREADS=4,99999 import", "q.txt", QRELS, "r.txt", RUN, "OMP_NUM_THREADS=4,99999", "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 1, "OMP_NUM_THREADS", "o.h5"},
  /* output folder */
  {"-o names a file", "afile", "x\n", 0, 0, 0, "eval %D/good.h5 -o %T/afile", 2, "/afile: is a file, expected a folder", 0},
  /* TREC text */
  {"qrels with 3 fields: import", "q.txt", "1 0 d1\n", "r.txt", RUN, 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2, "q.txt:1: malformed qrels line: expected 4 fields", "o.h5"},
  {"qrels with 3 fields: trec_eval", "q.txt", "1 0 d1\n", "r.txt", RUN, 0, "trec_eval %T/q.txt %T/r.txt", 2, "q.txt:1: malformed qrels line", 0},
  {"run with 4 fields: import", "q.txt", QRELS, "r.txt", "1 Q0 d1 1\n", 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2, "r.txt:1: malformed run line: expected at least 6 fields", "o.h5"},
  {"run with 4 fields: trec_eval", "q.txt", QRELS, "r.txt", "1 Q0 d1 1\n", 0, "trec_eval %T/q.txt %T/r.txt", 2, "r.txt:1: malformed run line", 0},
  {"empty qrels: import", "q.txt", "", "r.txt", RUN, 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2, "q.txt: the qrels file is empty", "o.h5"},
  {"missing run: trec_eval", "q.txt", QRELS, 0, 0, 0, "trec_eval %T/q.txt %T/none.txt", 2, "none.txt: cannot open: No such file or directory", 0},
  {"missing run: import", "q.txt", QRELS, 0, 0, 0, "import -o %T/o.h5 --qrels %T/q.txt %T/none.txt", 2, "none.txt", "o.h5"},
  /* numbers: ragsweep's own readers are strict where trec_eval reads atol/atof (trec_eval mode: below) */
  {"qrels grade abc: import", "q.txt", "1 0 d1 abc\n", "r.txt", RUN, 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2,
   "q.txt:1: expected an integer grade, found 'abc'", "o.h5"},
  {"qrels grade 2.9: import", "q.txt", "1 0 d1 1\n2 0 d3 2.9\n", "r.txt", RUN, 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2,
   "q.txt:2: expected an integer grade, found '2.9'", "o.h5"},
  {"run score x: import", "q.txt", QRELS, "r.txt", "1 Q0 d1 1 x runA\n", 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2,
   "r.txt:1: expected a number score, found 'x'", "o.h5"},
  {"run score 1.0x after a comment: import", "q.txt", QRELS, "r.txt", "1 Q0 d1 1 2.0 runA\n# c\n1 Q0 d2 2 1.0x runA\n", 0,
   "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2, "r.txt:3: expected a number score, found '1.0x'", "o.h5"},
  {"run score nan: import", "q.txt", QRELS, "r.txt", "1 Q0 d1 1 nan runA\n", 0, "import -o %T/o.h5 --qrels %T/q.txt %T/r.txt", 2,
   "r.txt:1: expected a number score, found 'nan'", "o.h5"},
  {"qrels grade abc: eval --qrels", "q.txt", "1 0 d1 abc\n", 0, 0, 0, "eval %D/good.h5 --qrels %T/q.txt -o %T/out", 2,
   "q.txt:1: expected an integer grade, found 'abc'", "out"},
  {"qrels grade abc: check --qrels", "q.txt", "1 0 d1 1\n1 0 d2 abc\n", 0, 0, 0, "check %D/good.h5 --qrels %T/q.txt", 2,
   "q.txt:2: expected an integer grade, found 'abc'", 0},
  {"docs TSV without a tab", "q.txt", QRELS, "d.tsv", "d1 no tab here\n", 0, "import -o %T/o.h5 --qrels %T/q.txt --docs %T/d.tsv", 2, "d.tsv:1: expected \"id<TAB>text\", found no tab", "o.h5"},
  /* JSON */
  {"JSON cut short", "e.json", "{\"queries\": [", 0, 0, 0, "import -o %T/o.h5 --json %T/e.json", 2, "e.json:1:14: not valid JSON", "o.h5"},
  {"JSON queries not an array", "e.json", "{\"queries\": 5}", 0, 0, 0, "import -o %T/o.h5 --json %T/e.json", 2, "\"queries\": expected an array of query objects, found number 5", "o.h5"},
  {"JSON id with a space, with a run", "e.json", "{\"queries\": [{\"id\": \"q1\", \"query\": \"x\", \"relevant_doc_ids\": [\"d1\"]}, {\"id\": \"a b\", \"query\": \"y\", \"relevant_doc_ids\": [\"d1\"]}]}",
   "r.txt", RUN, 0, "import -o %T/o.h5 --json %T/e.json %T/r.txt", 2, "query \"a b\": an id with whitespace cannot be matched against a TREC run", "o.h5"},
  {"JSON empty file", "e.json", "", 0, 0, 0, "import -o %T/o.h5 --json %T/e.json", 2, "e.json", "o.h5"},
  /* CSV */
  {"aggregate.csv without value", "a.csv", "run,measure\nr,P@10\n", 0, 0, 0, "table %T/a.csv", 2, "a.csv:1: expected a header run,<attributes...>,measure,value", 0},
  {"aggregate.csv without run", "a.csv", "x,y\n1,2\n", 0, 0, 0, "table %T/a.csv", 2, "no column 'run'", 0},
  /* scoring with other qrels */
  {"eval --qrels: unknown query", "q.txt", "zz 0 d1 1\n", 0, 0, 0, "eval %D/good.h5 --qrels %T/q.txt -o %T/out", 2,
   "q.txt:1: query 'zz' is not in the corpus", "out"},
  {"eval --qrels: missing file", 0, 0, 0, 0, 0, "eval %D/good.h5 --qrels %T/none.txt -o %T/out", 2, "none.txt: cannot open", "out"},
  {"compare --qrels with --per-query", "a.csv", "run,query,measure,value\n", "q.txt", QRELS, 0,
   "compare --per-query %T/a.csv --qrels %T/q.txt -o %T/out", 1, "--qrels scores a corpus's runs", "out"},
  /* judge */
  {"judge without --model", 0, 0, 0, 0, 0, "judge %D/good.h5 -o %T/out", 1, "--model NAME is required", "out"},
  {"judge on a corpus without texts", 0, 0, 0, 0, 0, "judge %D/good.h5 -o %T/out --model m", 2,
   "has no /queries/text: give the query texts with --queries FILE", "out"},
  {"judge --depth 0", 0, 0, 0, 0, 0, "judge %D/good.h5 -o %T/out --model m --depth 0", 1, "--depth: expected an integer from 1", "out"},
  {"judge --max-failures 2", 0, 0, 0, 0, 0, "judge %D/good.h5 -o %T/out --model m --max-failures 2", 1,
   "--max-failures: expected a fraction from 0 to 1 or a percentage", "out"},
  {"judge prompt file without labels", "p.txt", "system: x\n\n{query} {document}\n", 0, 0, 0,
   "judge %D/good.h5 -o %T/out --model m --prompt %T/p.txt", 2, "p.txt: the header declares no label scale", "out"},
  {"judge docs file without a tab", "d.tsv", "d1 no tab\n", "qs.tsv", "1\tq one\n2\tq two\n", 0,
   "judge %D/good.h5 -o %T/out --model m --docs %T/d.tsv --queries %T/qs.tsv", 2, "d.tsv:1: expected \"id<TAB>text\"", "out"},
  /* caches */
  {"cache stats on a text file", "c.sqlite", "hello\n", 0, 0, 0, "cache stats %T/c.sqlite", 2, "c.sqlite: not a ragsweep LLM cache", 0},
  {"cache merge from a text file", "c.sqlite", "hello\n", 0, 0, 0, "cache merge %T/new.sqlite %T/c.sqlite", 2,
   "not a ragsweep LLM cache", "new.sqlite"},
};

/* Replaces %T and %D in a word. */
static char *expand(const char *w, const char *tdir, const char *ddir)
{
  size_t cap = strlen(w) + 1;
  for (const char *p = w; (p = strchr(p, '%')); p++) cap += strlen(tdir) + strlen(ddir);
  char *s = malloc(cap), *o = s;
  cr_assert(s);
  for (const char *p = w; *p; p++) {
    if (p[0] == '%' && (p[1] == 'T' || p[1] == 'D')) {
      const char *r = p[1] == 'T' ? tdir : ddir;
      memcpy(o, r, strlen(r));
      o += strlen(r);
      p++;
    } else *o++ = *p;
  }
  *o = '\0';
  return s;
}

static void write_file(const char *dir, const char *name, const char *text)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* 1 when path does not exist or is a folder without entries. */
static int nothing_left(const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) return 1;
  if (!S_ISDIR(st.st_mode)) return 0;
  DIR *d = opendir(path);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n == 0;
}

static void run_case(const bad_case *c)
{
  char tdir[] = "/tmp/rs_badinput_XXXXXX", ddir[1024];
  cr_assert(mkdtemp(tdir));
  cr_assert(getcwd(ddir, sizeof ddir - 32));
  strcat(ddir, "/tests/data/bad");
  if (c->f1) write_file(tdir, c->f1, c->t1);
  if (c->f2) write_file(tdir, c->f2, c->t2);
  char *words = strdup(c->cmd), *argv[32];
  int n = 0;
  argv[n++] = (char *)th_bin();
  for (char *save = NULL, *w = strtok_r(words, " ", &save); w && n < 31; w = strtok_r(NULL, " ", &save))
    argv[n++] = expand(w, tdir, ddir);
  argv[n] = NULL;
  char *env[2] = {(char *)c->env, NULL};
  th_result r = th_run(NULL, argv, c->env ? env : NULL, NULL);
  cr_expect(r.status < 128, "%s: killed by signal %d", c->name, r.status - 128);
  cr_expect_eq(r.status, c->status, "%s: exit %d, expected %d; stderr: %s", c->name, r.status, c->status, r.err);
  /* check reports on stdout (a verdict per file), the others on stderr */
  cr_expect(strstr(r.err, c->msg) || strstr(r.out, c->msg), "%s: output lacks \"%s\": %s%s", c->name, c->msg, r.out,
            r.err);
  if (c->out) {
    char *out = expand("%T/", tdir, ddir), path[1200];
    snprintf(path, sizeof path, "%s%s", out, c->out);
    cr_expect(nothing_left(path), "%s: %s was left behind", c->name, path);
    free(out);
  }
  /* No stray temporary file of ours in the folder either. */
  DIR *d = opendir(tdir);
  for (struct dirent *e; d && (e = readdir(d));)
    cr_expect(!strstr(e->d_name, ".tmp"), "%s: temporary file %s left behind", c->name, e->d_name);
  if (d) closedir(d);
  th_free(&r);
  for (int i = 1; i < n; i++) free(argv[i]);
  free(words);
  char rm[600];
  snprintf(rm, sizeof rm, "rm -rf '%s'", tdir);
  cr_expect_eq(system(rm), 0);
}

Test(badinput, catalogue, .timeout = 240)
{
  cr_assert_geq(sizeof cases / sizeof *cases, 45);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

/* `check` rejects every input that makes another command fail (issue 13).
 * For each case whose command is not check, the files check can take (the
 * HDF5 inputs, and --qrels FILE of eval and compare) are given to check,
 * which must exit non-zero.  Cases with no such file are left out: TREC
 * text, JSON eval sets, CSV, prompt and text files and caches are read only
 * by the command that failed, whose own error is the check.  The cases
 * below fail for a reason that is not in any file check can take; each
 * must still find check exiting 0, so the list stays exact. */
static const struct {
  const char *name, *why;
} check_accepts[] = {
  {"-o names a file", "the output folder is the problem, not the corpus"},
  {"judge without --model", "an option judge requires"},
  {"judge on a corpus without texts", "texts are optional in the format; judge needs them (--queries FILE)"},
  {"judge --depth 0", "an option value"},
  {"judge --max-failures 2", "an option value"},
  {"judge prompt file without labels", "the prompt file is judge's input, not check's"},
  {"judge docs file without a tab", "the docs file is judge's input (import checks it too), not check's"},
};

/* The `check` command line for case c (argv[0] = "check", the rest
 * malloc'd) and its length, or 0 when c has no file that check takes. */
static int check_argv_of(const bad_case *c, const char *tdir, const char *ddir, char **argv, int max)
{
  char *words = strdup(c->cmd), *w[32];
  int nw = 0, n = 0, h5 = 0;
  for (char *save = NULL, *t = strtok_r(words, " ", &save); t && nw < 32; t = strtok_r(NULL, " ", &save)) w[nw++] = t;
  if (nw == 0) {
    free(words);
    return 0;
  }
  const int takes_qrels = strcmp(w[0], "eval") == 0 || strcmp(w[0], "compare") == 0;
  argv[n++] = "check";
  for (int i = 1; i < nw && n < max - 3; i++) {
    const size_t l = strlen(w[i]);
    if (strcmp(w[i], "-o") == 0 || strcmp(w[i], "--out") == 0) {
      i++; /* an output */
      continue;
    }
    if (takes_qrels && strcmp(w[i], "--qrels") == 0 && i + 1 < nw) {
      argv[n++] = strdup("--qrels");
      argv[n++] = expand(w[++i], tdir, ddir);
      continue;
    }
    if (l > 3 && strcmp(w[i] + l - 3, ".h5") == 0 && w[i][0] != '-') {
      argv[n++] = expand(w[i], tdir, ddir);
      h5++;
    }
  }
  argv[n] = NULL;
  free(words);
  return h5 ? n : 0;
}

Test(badinput, check_rejects_what_other_commands_reject, .timeout = 240)
{
  size_t checked = 0, exempt_seen = 0;
  for (size_t e = 0; e < sizeof check_accepts / sizeof *check_accepts; e++) {
    int found = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) found |= strcmp(cases[i].name, check_accepts[e].name) == 0;
    cr_expect(found, "check_accepts names no catalogue case: %s", check_accepts[e].name);
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const bad_case *c = &cases[i];
    if (strncmp(c->cmd, "check ", 6) == 0) continue;
    char tdir[] = "/tmp/rs_badcheck_XXXXXX", ddir[1024], *argv[32];
    cr_assert(mkdtemp(tdir));
    cr_assert(getcwd(ddir, sizeof ddir - 32));
    strcat(ddir, "/tests/data/bad");
    if (c->f1) write_file(tdir, c->f1, c->t1);
    if (c->f2) write_file(tdir, c->f2, c->t2);
    const int n = check_argv_of(c, tdir, ddir, argv + 1, 30);
    if (n) {
      argv[0] = (char *)th_bin();
      th_result r = th_run(NULL, argv, NULL, NULL);
      const char *why = NULL;
      for (size_t e = 0; e < sizeof check_accepts / sizeof *check_accepts; e++)
        if (strcmp(check_accepts[e].name, c->name) == 0) why = check_accepts[e].why;
      cr_expect(r.status < 128, "%s: check killed by signal %d", c->name, r.status - 128);
      if (why) {
        exempt_seen++;
        cr_expect_eq(r.status, 0, "%s: check now rejects it (drop it from check_accepts): %s", c->name, r.out);
      } else {
        checked++;
        cr_expect_neq(r.status, 0, "%s: '%s' fails but check accepts its files:\n%s", c->name, c->cmd, r.out);
      }
      th_free(&r);
      for (int k = 2; k <= n; k++) free(argv[k]); /* argv[1] is "check" */
    }
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", tdir);
    cr_expect_eq(system(rm), 0);
  }
  cr_expect_eq(exempt_seen, sizeof check_accepts / sizeof *check_accepts);
  /* the HDF5 cases of eval, export, compare and eval --qrels: most of the catalogue's non-check cases */
  cr_expect_geq(checked, 20, "only %zu cases had a file for check", checked);
}

/* trec_eval mode keeps trec_eval 10.0's atol/atof: grade "abc" is 0 and
 * "2.9" is 2, score "x" is 0.0.  So d2 (grade 2, score 1.0) ranks above d1
 * (grade 0, score 0): one relevant doc, retrieved first, AP 1. */
Test(badinput, trec_eval_mode_reads_numbers_as_trec_eval)
{
  const char *q = th_write_temp(5, "q.txt", "1 0 d1 abc\n1 0 d2 2.9\n"), *run = th_write_temp(6, "r.txt", "1 Q0 d1 1 x r\n1 Q0 d2 2 1.0 r\n");
  char *argv[] = {(char *)th_bin(), "trec_eval", "-q", "-m", "num_rel", "-m", "map", "-m", "relstring", (char *)q, (char *)run, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "num_rel               \tall\t1\n"), "%s", r.out);
  cr_expect(strstr(r.out, "map                   \tall\t1.0000\n"), "%s", r.out);
  cr_expect(strstr(r.out, "relstring             \t1\t'20'"), "%s", r.out);
  th_free(&r);
}

Test(badinput, file_as_output_folder)
{
  const char *f = th_write_temp(0, "notadir", "x\n");
  /* a valid corpus is needed to reach the output folder: import one */
  const char *q = th_write_temp(1, "q.txt", QRELS), *run = th_write_temp(2, "r.txt", RUN);
  char out[1100];
  snprintf(out, sizeof out, "%s.h5", q);
  char *imp[] = {(char *)th_bin(), "import", "-o", out, "--qrels", (char *)q, (char *)run, NULL};
  th_result r = th_run(NULL, imp, NULL, NULL);
  cr_assert_eq(r.status, 0, "%s", r.err);
  th_free(&r);
  char *ev[] = {(char *)th_bin(), "eval", out, "-o", (char *)f, NULL};
  r = th_run(NULL, ev, NULL, NULL);
  cr_expect_eq(r.status, 2);
  char want[1200];
  snprintf(want, sizeof want, "-o %s: is a file, expected a folder", f);
  cr_expect(strstr(r.err, want), "stderr: %s", r.err);
  th_free(&r);
}

Test(badinput, trec_eval_help)
{
  char *argv[] = {(char *)th_bin(), "trec_eval", "--help", NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 0);
  cr_expect(strstr(r.out, "usage: ragsweep trec_eval [options] QRELS RUN"), "stdout: %s", r.out);
  th_free(&r);
}

/* import onto a full disk: the reason, exit 2, no file and no temporary
 * file left, and no crash in HDF5's shutdown.  Needs root for a 64 KiB
 * tmpfs; skipped otherwise. */
Test(badinput, import_full_disk, .timeout = 60)
{
  char dir[] = "/tmp/rs_fulldisk_XXXXXX", cmd[256];
  cr_assert(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs '%s' 2>/dev/null", dir);
  if (geteuid() != 0 || system(cmd) != 0) {
    rmdir(dir);
    cr_skip_test("cannot mount a small tmpfs (not root)");
  }
  /* 200 queries x 100 docs: about 1 MB of corpus, far beyond 64 KiB */
  char *q = NULL, *run = NULL;
  size_t ql = 0, rl = 0;
  FILE *fq = open_memstream(&q, &ql), *fr = open_memstream(&run, &rl);
  for (int i = 1; i <= 200; i++) {
    fprintf(fq, "%d 0 d%d_1 1\n", i, i);
    for (int r = 1; r <= 100; r++) fprintf(fr, "%d Q0 d%d_%d %d %d.5 big\n", i, i, r, r, 1000 - r);
  }
  fclose(fq);
  fclose(fr);
  const char *qp = th_write_temp(3, "big_q.txt", q), *rp = th_write_temp(4, "big_r.txt", run);
  char out[300];
  snprintf(out, sizeof out, "%s/c.h5", dir);
  char *argv[] = {(char *)th_bin(), "import", "-o", out, "--qrels", (char *)qp, (char *)rp, NULL};
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
  cr_expect(strstr(r.err, "No space left on device"), "stderr: %s", r.err);
  cr_expect(!strstr(r.err, ".tmp"), "a temporary name is quoted: %s", r.err);
  cr_expect(nothing_left(dir), "files left on the full disk");
  th_free(&r);
  free(q);
  free(run);
  snprintf(cmd, sizeof cmd, "umount '%s'", dir);
  cr_expect_eq(system(cmd), 0);
  rmdir(dir);
}

/* The process ids of pid's children (from /proc), up to cap. */
static size_t children_of(pid_t pid, pid_t *out, size_t cap)
{
  char path[64], buf[512];
  size_t n = 0;
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = '\0';
  for (char *tok = strtok(buf, " \n"); tok && n < cap; tok = strtok(NULL, " \n")) out[n++] = (pid_t)atoi(tok);
  return n;
}

/* 1 while pid runs (a zombie, reaped or not by whoever adopted it, has ended). */
static int is_running(pid_t pid)
{
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = '\0';
  const char *close_paren = strrchr(buf, ')');
  return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
}

/* The children of pid that still run 300 ms after they are first seen,
 * looked for up to about 10 s (the quick probes of good files end before);
 * how many. */
static size_t lasting_children_of(pid_t pid, pid_t *kids, size_t cap)
{
  for (int i = 0; i < 400; i++) {
    th_sleep_ms(25);
    size_t n = children_of(pid, kids, cap);
    if (n == 0) continue;
    th_sleep_ms(300); /* into libhdf5's loop */
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
      if (is_running(kids[j])) kids[k++] = kids[j];
    if (k) return k;
  }
  return 0;
}

/* Runs ragsweep with args (after the binary; NULL-terminated) at `threads`
 * threads, kills it (kill -9) once one of its probe children spins in
 * libhdf5, and checks that those children end with it. */
static void killed_parent_takes_its_spinning_probes(const char *threads, char *const *args)
{
  char *argv[16];
  size_t a = 0;
  argv[a++] = (char *)th_bin();
  for (size_t i = 0; args[i] && a < 15; i++) argv[a++] = args[i];
  argv[a] = NULL;
  const pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    setenv("OMP_NUM_THREADS", threads, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  pid_t kids[8];
  const size_t n = lasting_children_of(pid, kids, 8);
  cr_assert_gt(n, 0, "no probe child spun in libhdf5");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  for (size_t k = 0; k < n; k++) {
    int i = 0;
    while (i++ < 100 && is_running(kids[k])) th_sleep_ms(20); /* up to 2 s */
    cr_expect(!is_running(kids[k]), "probe child %d still runs after its parent was killed", (int)kids[k]);
    if (is_running(kids[k])) kill(kids[k], SIGKILL); /* leave no spinning process behind */
  }
}

/* hang_root_attr.h5 (tests/fuzz/regress/fuzz_corpus_h5/root_attr_hang_stall_10s
 * applied to imp.h5) makes libhdf5 loop for ever on the root attribute: the
 * probe children spin until the parent stops them after 10 s.  A parent
 * killed first (kill -9) takes them with it: those of a corpus, and the
 * child of a lane of run files (rs__runsets_open), at one thread (which
 * waits for the parent's go before each file) and at two. */
Test(badinput, probe_children_end_with_a_killed_parent, .timeout = 90)
{
  char cwd[1024];
  cr_assert(getcwd(cwd, sizeof cwd));
  /* run from the repository root, as make test does */
  char *hang = th_join(cwd, "tests/data/bad/hang_root_attr.h5"), *good = th_join(cwd, "tests/data/bad/good.h5");
  char out[] = "/tmp/rs_killed_XXXXXX";
  cr_assert(mkdtemp(out));
  killed_parent_takes_its_spinning_probes("2", (char *[]){"check", hang, NULL});
  killed_parent_takes_its_spinning_probes("1", (char *[]){"eval", good, good, hang, "-o", out, NULL});
  killed_parent_takes_its_spinning_probes("2", (char *[]){"eval", good, good, hang, "-o", out, NULL});
  char rm[600];
  snprintf(rm, sizeof rm, "rm -rf '%s'", out);
  cr_expect_eq(system(rm), 0);
}

/* Run files are probed in lanes (rs__runsets_open): one child a lane takes
 * the lane's files in turn.  Its verdict on its first file stands; a fault
 * or a hang on a later file may come from an earlier file having hurt the
 * child, so that file is probed again by a child of its own.  hang_root_attr.h5
 * as the 2nd file of the one lane at one thread: 10 s in the lane's child,
 * then 10 s in its own, and the file is named; as the first file of the
 * second lane at two threads: 10 s, believed. */
Test(badinput, run_file_lanes_name_the_file_that_hangs, .timeout = 120)
{
  static const bad_case hangs[] = {
    {"hang as the 2nd run file of the lane, 1 thread", 0, 0, 0, 0, "OMP_NUM_THREADS=1",
     "eval %D/good.h5 %D/good.h5 %D/hang_root_attr.h5 %D/good.h5 -o %T/out", 2,
     "hang_root_attr.h5: libhdf5 hung decoding / attribute format (no progress for 10 s)", "out"},
    {"hang as the 1st run file of the 2nd lane, 2 threads", 0, 0, 0, 0, "OMP_NUM_THREADS=2",
     "eval %D/good.h5 %D/good.h5 %D/hang_root_attr.h5 %D/good.h5 -o %T/out", 2,
     "hang_root_attr.h5: libhdf5 hung decoding / attribute format (no progress for 10 s)", "out"},
  };
  const double min_seconds[] = {19.5, 9.5}, max_seconds[] = {60, 19.5};
  for (size_t i = 0; i < sizeof hangs / sizeof *hangs; i++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_case(&hangs[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    /* one stall watched to its end, or two: which child's verdict was taken */
    cr_expect(took >= min_seconds[i] && took < max_seconds[i], "%s: took %.1f s, expected %.1f to %.1f", hangs[i].name,
              took, min_seconds[i], max_seconds[i]);
  }
}

/* n copies of tests/data/bad/good.h5 in a new folder under /tmp, as run
 * files (their runs share one name, so eval fails on that, but only after
 * every file is open; copies, not links: libhdf5 opens a file it already
 * has open once); their paths into argv[at..at + n). */
static char *copied_run_files(size_t n, char **argv, size_t at)
{
  char *dir = strdup("/tmp/rs_openfiles_XXXXXX");
  cr_assert(mkdtemp(dir));
  FILE *in = fopen("tests/data/bad/good.h5", "rb");
  cr_assert(in);
  static char bytes[1 << 16];
  const size_t len = fread(bytes, 1, sizeof bytes, in);
  fclose(in);
  cr_assert(len > 0 && len < sizeof bytes);
  for (size_t i = 0; i < n; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/r%zu.h5", dir, i);
    FILE *out = fopen(path, "wb");
    cr_assert(out && fwrite(bytes, 1, len, out) == len && fclose(out) == 0, "cannot write %s", path);
    argv[at + i] = strdup(path);
  }
  return dir;
}

/* A sweep keeps each run file open: under the usual soft limit of 1024
 * open files, 600 run files are all opened (the soft limit is raised to the
 * hard one), under a hard limit of 700 too (one descriptor a file read with
 * pread), and under a hard limit of 64 the error says so and what to do. */
Test(badinput, many_run_files_open_up_to_the_hard_limit, .timeout = 120)
{
  enum { N = 600 };
  char **argv = calloc(N + 8, sizeof *argv);
  size_t a = 0;
  argv[a++] = (char *)th_bin();
  argv[a++] = "eval";
  argv[a++] = "tests/data/bad/good.h5";
  char *dir = copied_run_files(N, argv, a);
  a += N;
  char out[300];
  snprintf(out, sizeof out, "%s/out", dir);
  argv[a++] = "-o";
  argv[a++] = out;
  argv[a] = NULL;
  struct rlimit l;
  cr_assert_eq(getrlimit(RLIMIT_NOFILE, &l), 0);
  cr_assert_geq(l.rlim_max, 2 * N + 64, "this test needs a hard limit of %d open files", 2 * N + 64);
  l.rlim_cur = 1024;
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &l), 0);
  th_result r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "run 'r' is in both"), "not every run file was opened: %s", r.err);
  th_free(&r);

  /* A run file whose datasets are read with pread is not opened with
   * libhdf5 here at all (its probe hands over the runs it found): one
   * descriptor a file, so 600 fit under 700. */
  l.rlim_cur = l.rlim_max = 700; /* a hard limit: the soft one is raised to it */
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &l), 0);
  r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, "run 'r' is in both"), "not every run file was opened under 700 descriptors: %s", r.err);
  th_free(&r);

  l.rlim_cur = l.rlim_max = 64; /* this test's process only */
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &l), 0);
  r = th_run(NULL, argv, NULL, NULL);
  cr_expect_eq(r.status, 2);
  cr_expect(strstr(r.err, ": cannot open: too many files open at once (this process may have 64); raise the limit "
                          "(ulimit -n) or put more runs in each run file"),
            "stderr: %s", r.err);
  cr_expect(th_exists(out) == 0, "%s was written", out);
  th_free(&r);
  char rm[400];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  cr_expect_eq(system(rm), 0);
  for (size_t i = 3; i < 3 + N; i++) free(argv[i]);
  free(argv);
  free(dir);
}
