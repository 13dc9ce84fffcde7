#!/usr/bin/python3
"""Writes the malformed HDF5 corpora of tests/test_badinput.c (tests/data/bad/).

Each is a small valid corpus (2 queries, 3 docs, one dense run) with one
defect.  The crash_*.h5 files and docs_id_unreadable.h5 next to them are
not made here: they are single-byte mutations of a `ragsweep import` output
that crash libhdf5 1.10.8 in-process or make it fail a read and leak (found
by mutating every byte, and by fuzz_corpus_h5; see the test file).

  /usr/bin/python3 tests/indep/make_bad_h5.py tests/data/bad
"""
import os
import sys

import h5py
import numpy as np

STR = h5py.string_dtype()


def corpus(path, qids=(b"1", b"2"), grade=None, grade_dtype="int32", doc=None, version=1, run_doc=True):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "ragsweep-corpus"
        f.attrs["version"] = version
        f.create_dataset("queries/id", data=np.array(list(qids), dtype=object), dtype=STR)
        f.create_dataset("docs/id", data=np.array([b"d1", b"d2", b"d3"], dtype=object), dtype=STR)
        f.create_dataset("qrels/offsets", data=np.array([0, 2, 3], dtype="int64"))
        f.create_dataset("qrels/doc", data=np.array([0, 1, 2], dtype="int32"))
        f.create_dataset("qrels/grade", data=np.array(grade or [1, 0, 2], dtype=grade_dtype))
        g = f.create_group("runs/r")
        if run_doc:
            g.create_dataset("doc", data=doc if doc is not None else np.array([[0, 1], [2, -1]], dtype="int32"))


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)
    corpus(p("good.h5"))  # the valid base, for commands that need one
    corpus(p("dup_qid.h5"), qids=(b"q7", b"q7"))
    corpus(p("empty_qid.h5"), qids=(b"1", b""))
    corpus(p("nonutf8_qid.h5"), qids=(b"1", b"\xff\xfe"))
    corpus(p("grade_2_40.h5"), grade=[1, 2**40, 2], grade_dtype="int64")
    corpus(p("doc_int8.h5"), doc=np.array([[0, 1], [2, -1]], dtype="int8"))
    corpus(p("version_string.h5"), version="1")
    corpus(p("no_run_doc.h5"), run_doc=False)
    # A run doc dataset declared [2, 2^31], chunked with a fill value and never
    # written: 16 GB of int32 in a file of a few KB.
    corpus(p("huge_doc.h5"), run_doc=False)
    with h5py.File(p("huge_doc.h5"), "a") as f:
        f["runs/r"].create_dataset("doc", shape=(2, 2**31), dtype="int32", chunks=(1, 1024), fillvalue=-1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/bad")
