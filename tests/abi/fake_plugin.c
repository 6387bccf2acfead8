/* A minimal cost plugin in plain C99, compiled several ways (see tests/CMakeLists.txt) to
 * exercise the host's ABI checks: current ABI, another major, a newer minor with grown
 * structs, a malformed id, and a library without the entry symbol. Its cost is the squared
 * norm of the transform's translation column, so tests can check values. */
#include <regpipe/abi.h>

#include <stdlib.h>
#include <string.h>

#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR RP_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR RP_ABI_MINOR
#endif
#ifndef FAKE_ID
#define FAKE_ID "test.fake_cost"
#endif
/* Bytes a "newer minor" plugin appends to every struct it hands out. */
#ifndef FAKE_EXTRA_SIZE
#define FAKE_EXTRA_SIZE 0
#endif

typedef struct fake_cost {
  int have_reference, have_moving;
  double offset;
} fake_cost;

static rp_status fake_create(const rp_host *host, const rp_param_value *params, size_t n,
                             void **self_out, rp_error_buf *err) {
  fake_cost *self;
  size_t i;
  (void)host;
  self = (fake_cost *)calloc(1, sizeof(fake_cost));
  if (self == NULL) return RP_OUT_OF_MEMORY;
  for (i = 0; i < n; ++i)
    if (strcmp(params[i].name, "offset") == 0) self->offset = params[i].double_value;
  if (self->offset < 0) {
    strcpy(err->msg, "offset is negative");
    free(self);
    return RP_INVALID_ARGUMENT;
  }
  *self_out = self;
  return RP_OK;
}

static rp_status fake_set_reference(void *self, const rp_image *ref, const rp_image *w) {
  (void)ref; (void)w;
  ((fake_cost *)self)->have_reference = 1;
  return RP_OK;
}

static rp_status fake_set_moving(void *self, const rp_image *mov, const rp_image *w) {
  (void)mov; (void)w;
  ((fake_cost *)self)->have_moving = 1;
  return RP_OK;
}

static rp_status fake_evaluate(void *self, const rp_cost_request *req) {
  fake_cost *c = (fake_cost *)self;
  size_t i;
  if (!c->have_reference || !c->have_moving) return RP_INVALID_ARGUMENT;
  for (i = 0; i < req->k; ++i) {
    const double *m = req->matrices + 16 * i;
    req->costs_out[i] = m[3] * m[3] + m[7] * m[7] + m[11] * m[11] + c->offset;
    if (req->overlap_out != NULL) req->overlap_out[i] = 1.0;
  }
  return RP_OK;
}

static const char *fake_last_error(const void *self) {
  (void)self;
  return "";
}

static void fake_destroy(void *self) { free(self); }

/* A vtable as a newer minor would have it: the 1.0 members, then members this host does
 * not know about. */
typedef struct {
  rp_cost_vtable v1;
  char appended[FAKE_EXTRA_SIZE + 1];
} grown_vtable;

static const grown_vtable kVtable = {
    {sizeof(rp_cost_vtable) + FAKE_EXTRA_SIZE, fake_create, fake_set_reference, fake_set_moving,
     fake_evaluate, fake_last_error, fake_destroy, NULL},
    {0}};

static const rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "offset", RP_PARAM_DOUBLE, "0", 0.0, 100.0, NULL, "", "added to every cost"}};

static const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc) + FAKE_EXTRA_SIZE, RP_KIND_COST, FAKE_ID, "Fake cost", "1.2.3",
     "Squared translation norm plus an offset (ABI test fixture).", kParams, 1, &kVtable}};

static const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry) + FAKE_EXTRA_SIZE,
                                       FAKE_ABI_MAJOR, FAKE_ABI_MINOR, "fake_plugin", "1.2.3",
                                       "MIT", 1, kComponents};

#ifndef FAKE_NO_ENTRY
RP_EXPORT const rp_plugin_entry *regpipe_plugin_entry(void) { return &kEntry; }
#else
RP_EXPORT const rp_plugin_entry *some_other_symbol(void) { return &kEntry; }
#endif
