/* A minimal optimizer plugin in plain C99, compiled several ways (see tests/CMakeLists.txt) to
 * exercise the host's reading of rp_optimizer_vtable.supported_dof (ABI 1.2): as a 1.1 plugin
 * (a vtable whose size ends before the member), and as a 1.2 plugin declaring DOF 6 and 12.
 * Its minimize evaluates the start point once and keeps it. */
#include <regpipe/abi.h>

#include <stdlib.h>

#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR RP_ABI_MINOR
#endif
/* Defined: the vtable's size is ABI 1.1's, which ends at get_extension. The supported_dof
 * bytes after it are still in memory (set to RP_DOF_6 below), as whatever follows a real 1.1
 * vtable would be: a host that reads past `size` would wrongly refuse every DOF but 6. */
#ifdef FAKE_VTABLE_1_1
#define FAKE_VTABLE_SIZE (offsetof(rp_optimizer_vtable, get_extension) + sizeof(void *))
#define FAKE_SUPPORTED_DOF RP_DOF_6
#else
#define FAKE_VTABLE_SIZE sizeof(rp_optimizer_vtable)
#define FAKE_SUPPORTED_DOF (RP_DOF_6 | RP_DOF_12)
#endif

static rp_status fake_create(const rp_host *host, const rp_param_value *params, size_t n,
                             void **self_out, rp_error_buf *err) {
  (void)host; (void)params; (void)n; (void)err;
  *self_out = calloc(1, 1);
  return *self_out != NULL ? RP_OK : RP_OUT_OF_MEMORY;
}

static rp_status fake_minimize(void *self, const rp_objective *objective, double *x_inout,
                               double *f_out) {
  (void)self;
  return objective->evaluate(objective->ctx, x_inout, 1, f_out);
}

static const char *fake_last_error(const void *self) {
  (void)self;
  return "";
}

static void fake_destroy(void *self) { free(self); }

static const rp_optimizer_vtable kVtable = {FAKE_VTABLE_SIZE, 0,           fake_create,
                                            fake_minimize,    fake_last_error, fake_destroy,
                                            NULL,             FAKE_SUPPORTED_DOF};

static const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_OPTIMIZER, "test.fake_optimizer", "Fake optimizer",
     "1.0.0", "Keeps the start point (ABI test fixture).", NULL, 0, &kVtable}};

static const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, FAKE_ABI_MINOR,
                                       "fake_optimizer", "1.0.0", "MIT", 1, kComponents};

RP_EXPORT const rp_plugin_entry *regpipe_plugin_entry(void) { return &kEntry; }
