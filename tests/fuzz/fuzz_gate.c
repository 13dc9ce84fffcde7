/* fuzz_gate: quality gates ("RR@10>=0.70") through gate_parse (CLI code,
 * src/cli/gate.c compiled into this target), then the spec that computes
 * the gated measure (gate_spec) and a pass/fail check. */
#include "fuzz.h"
#include "cli/gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = fz_str(data, size);
  gate g = {0};
  rs_error err = {0};
  if (gate_parse(text, &g, &err) == RS_OK) {
    rs__spec *spec = NULL;
    if (!g.measure || !g.threshold_text || !gate_op_text(g.op)) abort();
    if (gate_spec(NULL, 0, &g, 1, NULL, 0, 1000, &spec, &err) == RS_OK && spec_find(spec, g.measure) == SIZE_MAX) abort();
    (void)gate_pass(&g, 0.5);
    rs__spec_free(spec);
    gate_free(&g);
  } else if (err.msg[0] == '\0') {
    abort();
  }
  free(text);
  return 0;
}
