/* A resampler and a cost in plain C99 that offer RP_EXT_DEVICE_IMAGE (abi.h 1.3) with host
 * memory standing in for device memory, so the host's negotiation and hand-over run on a
 * machine without a GPU. Each counts what it was handed through rp_transfer_counts: the
 * resampler an upload per new input (input_id as resample.cuda) and a download per level
 * written to host memory; the cost an upload per image handed over in host memory. The cost is
 * the squared translation plus a small term of both images' voxel sums, so the costs (and the
 * transforms found) are the same on both paths only when the same voxels arrive. Parameters:
 * `device` (both) and, for the cost, `reference_on_device` (0: set_reference_device NULL). */
#include <regpipe/abi.h>

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int32_t param_int(const rp_param_value *params, size_t n, const char *name, int32_t fallback) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (strcmp(params[i].name, name) == 0) return (int32_t)params[i].int_value;
  return fallback;
}

static void count(uint64_t *times, uint64_t *bytes, size_t voxels) {
  *times += 1;
  *bytes += voxels * sizeof(float);
}

static size_t voxels_of(const uint32_t dims[3]) { return (size_t)dims[0] * dims[1] * dims[2]; }

/* ---- resampler: level voxel i = input's first voxel + (i mod 7) ---- */
typedef struct fake_resampler {
  int32_t device;
  uint64_t loaded_id;
  rp_transfer_counts counts;
} fake_resampler;

static rp_status resampler_create(const rp_host *host, const rp_param_value *params, size_t n, void **self_out,
                                  rp_error_buf *err) {
  fake_resampler *self = (fake_resampler *)calloc(1, sizeof(fake_resampler));
  (void)host;
  (void)err;
  if (self == NULL) return RP_OUT_OF_MEMORY;
  self->device = param_int(params, n, "device", 0);
  self->counts.size = sizeof(rp_transfer_counts);
  *self_out = self;
  return RP_OK;
}

static void fill_level(fake_resampler *self, const rp_resample_request *req, float *out) {
  size_t i, voxels = voxels_of(req->out_dims);
  if (req->input_id == 0 || req->input_id != self->loaded_id) count(&self->counts.uploads, &self->counts.upload_bytes, voxels_of(req->input->dims));
  self->loaded_id = req->input_id;
  for (i = 0; i < voxels; ++i) out[i] = req->input->data[0] + (float)(i % 7);
}

static rp_status resampler_resample(void *self, const rp_resample_request *req) {
  fake_resampler *r = (fake_resampler *)self;
  fill_level(r, req, req->out_data);
  count(&r->counts.downloads, &r->counts.download_bytes, voxels_of(req->out_dims));
  return RP_OK;
}

static int32_t resampler_device(const void *self) { return ((const fake_resampler *)self)->device; }

static rp_status resampler_to_device(void *self, const rp_resample_request *req, rp_device_image *out) {
  float *data = (float *)malloc(voxels_of(req->out_dims) * sizeof(float));
  if (data == NULL) return RP_OUT_OF_MEMORY;
  fill_level((fake_resampler *)self, req, data);
  memcpy(out->dims, req->out_dims, sizeof out->dims);
  memcpy(out->voxel_to_world, req->out_voxel_to_world, sizeof out->voxel_to_world);
  out->device = ((fake_resampler *)self)->device;
  out->data = data;
  out->handle = (uint64_t)(uintptr_t)data;
  return RP_OK;
}

static void resampler_release(void *self, uint64_t handle) {
  (void)self;
  free((void *)(uintptr_t)handle);
}

static void resampler_counts(const void *self, rp_transfer_counts *out) {
  const uint32_t size = out->size;
  memcpy(out, &((const fake_resampler *)self)->counts, size < sizeof(rp_transfer_counts) ? size : sizeof(rp_transfer_counts));
  out->size = size;
}

static const rp_resampler_device_image_ext kResamplerExt = {sizeof(rp_resampler_device_image_ext), resampler_device,
                                                            resampler_to_device, resampler_release, resampler_counts};

static const void *resampler_extension(void *self, const char *id) {
  (void)self;
  return strcmp(id, RP_EXT_DEVICE_IMAGE) == 0 ? &kResamplerExt : NULL;
}

/* ---- cost ---- */
typedef struct fake_cost {
  int32_t device, reference_on_device;
  int have_reference, have_moving;
  double reference_sum, moving_sum;
  rp_transfer_counts counts;
  rp_cost_device_image_ext ext; /* per instance: set_reference_device depends on a parameter */
} fake_cost;

static double sum_of(const float *data, const uint32_t dims[3]) {
  size_t i, voxels = voxels_of(dims);
  double sum = 0.0;
  for (i = 0; i < voxels; ++i) sum += data[i];
  return sum;
}

/* One image handed over: its sum kept; counted as an upload when it came from host memory. */
static rp_status take_image(void *self, int reference, const float *data, const uint32_t dims[3], int32_t device) {
  fake_cost *c = (fake_cost *)self;
  if (device >= 0 && device != c->device) return RP_INVALID_ARGUMENT;
  *(reference ? &c->reference_sum : &c->moving_sum) = sum_of(data, dims);
  *(reference ? &c->have_reference : &c->have_moving) = 1;
  if (device < 0) count(&c->counts.uploads, &c->counts.upload_bytes, voxels_of(dims));
  return RP_OK;
}

static rp_status cost_set_reference(void *self, const rp_image *ref, const rp_image *w) {
  (void)w;
  return take_image(self, 1, ref->data, ref->dims, -1);
}

static rp_status cost_set_moving(void *self, const rp_image *mov, const rp_image *w) {
  (void)w;
  return take_image(self, 0, mov->data, mov->dims, -1);
}

static rp_status cost_set_reference_device(void *self, const rp_device_image *ref) {
  return take_image(self, 1, ref->data, ref->dims, ref->device);
}

static rp_status cost_set_moving_device(void *self, const rp_device_image *mov) {
  return take_image(self, 0, mov->data, mov->dims, mov->device);
}

static rp_status cost_evaluate(void *self, const rp_cost_request *req) {
  fake_cost *c = (fake_cost *)self;
  size_t i;
  if (!c->have_reference || !c->have_moving) return RP_INVALID_ARGUMENT;
  for (i = 0; i < req->k; ++i) {
    const double *m = req->matrices + 16 * i;
    const double t2 = m[3] * m[3] + m[7] * m[7] + m[11] * m[11];
    req->costs_out[i] = t2 + 1e-9 * (c->reference_sum + c->moving_sum);
    if (req->overlap_out != NULL) req->overlap_out[i] = t2 > 1e4 ? 0.0 : 1.0; /* beyond 100 mm: apart */
  }
  return RP_OK;
}

static int32_t cost_device(const void *self) { return ((const fake_cost *)self)->device; }

static void cost_counts(const void *self, rp_transfer_counts *out) {
  const uint32_t size = out->size;
  memcpy(out, &((const fake_cost *)self)->counts, size < sizeof(rp_transfer_counts) ? size : sizeof(rp_transfer_counts));
  out->size = size;
}

static rp_status cost_create(const rp_host *host, const rp_param_value *params, size_t n, void **self_out,
                             rp_error_buf *err) {
  fake_cost *self = (fake_cost *)calloc(1, sizeof(fake_cost));
  (void)host;
  (void)err;
  if (self == NULL) return RP_OUT_OF_MEMORY;
  self->device = param_int(params, n, "device", 0);
  self->reference_on_device = param_int(params, n, "reference_on_device", 1);
  self->counts.size = sizeof(rp_transfer_counts);
  self->ext.size = sizeof(rp_cost_device_image_ext);
  self->ext.device = cost_device;
  self->ext.set_reference_device = self->reference_on_device ? cost_set_reference_device : NULL;
  self->ext.set_moving_device = cost_set_moving_device;
  self->ext.transfer_counts = cost_counts;
  *self_out = self;
  return RP_OK;
}

/* RP_EXT_DEVICE_INFO (abi.h 1.4): "Fake GPU <device>", filling only what out->size holds. */
static rp_status cost_describe_device(const void *self, rp_device_info *out) {
  rp_device_info info;
  const uint32_t size = out->size;
  memset(&info, 0, sizeof(info));
  info.device = ((const fake_cost *)self)->device;
  snprintf(info.name, sizeof(info.name), "Fake GPU %d", (int)info.device);
  info.compute_major = 9;
  info.memory_bytes = (uint64_t)80 << 30;
  info.runtime_version = 13000;
  memcpy(out, &info, size < sizeof(info) ? size : sizeof(info));
  out->size = size;
  return RP_OK;
}
static const rp_device_info_ext kCostDeviceInfo = {sizeof(rp_device_info_ext), cost_describe_device};

static const void *cost_extension(void *self, const char *id) {
  if (strcmp(id, RP_EXT_DEVICE_INFO) == 0) return &kCostDeviceInfo;
  return strcmp(id, RP_EXT_DEVICE_IMAGE) == 0 ? &((fake_cost *)self)->ext : NULL;
}

/* ---- descriptors ---- */
static const char *last_error(const void *self) {
  (void)self;
  return "";
}

static void destroy(void *self) { free(self); }

static const rp_cost_vtable kCostVtable = {sizeof(rp_cost_vtable), cost_create, cost_set_reference, cost_set_moving,
                                           cost_evaluate, last_error, destroy, cost_extension};
static const rp_resampler_vtable kResamplerVtable = {sizeof(rp_resampler_vtable), resampler_create, resampler_resample,
                                                     last_error, destroy, resampler_extension};

static const rp_param_desc kCostParams[] = {
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, NULL, "", "the pretended device"},
    {sizeof(rp_param_desc), "reference_on_device", RP_PARAM_BOOL, "true", 0, 1, NULL, "",
     "offer set_reference_device"}};
static const rp_param_desc kResamplerParams[] = {
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, NULL, "", "the pretended device"}};

static const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_COST, "test.device_cost", "Fake device-image cost", "1.0.0",
     "Squared translation; takes images from host or pretended device memory.", kCostParams, 2, &kCostVtable},
    {sizeof(rp_component_desc), RP_KIND_RESAMPLER, "test.device_resampler", "Fake device-image resampler", "1.0.0",
     "Levels in host or pretended device memory.", kResamplerParams, 1, &kResamplerVtable}};

static const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR, "fake_device_image",
                                       "1.0.0", "MIT", 2, kComponents};

RP_EXPORT const rp_plugin_entry *regpipe_plugin_entry(void) { return &kEntry; }
