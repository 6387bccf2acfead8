/*
 * regpipe/abi.h — the stable C ABI between the regpipe host and its plugins.
 *
 * This header is the complete contract for plugin authors. It is C99, depends only on
 * <stdint.h> and <stddef.h>, and compiles as C and as C++. A plugin includes it (and,
 * optionally, the header-only C++ helpers in regpipe/plugin.hpp) and never links against
 * libregpipe.
 *
 * ---------------------------------------------------------------------------------------
 * Versioning rules
 *   - RP_ABI_MAJOR changes only for incompatible changes. The host refuses a library whose
 *     entry reports another major version and names both versions in its message.
 *   - RP_ABI_MINOR grows for additive changes: new members appended at the END of a struct,
 *     new functions appended at the end of a vtable, new enum values. Values and ids are
 *     never reused. A plugin built against an older minor keeps loading.
 *   - Every struct that crosses the ABI starts with `uint32_t size`, filled by whoever builds
 *     the struct with sizeof(struct) of the header it was compiled against. A reader reads a
 *     member only if offsetof(member) + sizeof(member) <= size (see RP_HAS_MEMBER) and uses
 *     the documented default otherwise (LV2's rule).
 *
 * Conventions
 *   - Images cross the ABI as float32, x fastest, then y, then z (data[x + nx*(y + ny*z)]).
 *   - World coordinates are millimetres in ITK's LPS frame (+x = patient left, +y = posterior,
 *     +z = superior). Every 4x4 matrix is row-major double[16]; the last row is 0 0 0 1.
 *   - A transform matrix maps REFERENCE world coordinates to MOVING world coordinates (the
 *     pull-back used for resampling): the moving image seen through T is mov(T * p_ref).
 *   - Nothing throws across the ABI. Every function that can fail returns rp_status; messages
 *     are owned by the callee (see each function).
 *   - Thread tags: [any-thread] may be called concurrently from several threads;
 *     [one call at a time per instance] means the host serialises calls on one instance,
 *     but different instances may be used concurrently.
 * ---------------------------------------------------------------------------------------
 */
#ifndef REGPIPE_ABI_H
#define REGPIPE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RP_ABI_MAJOR 1
#define RP_ABI_MINOR 7

#if defined(_WIN32)
#define RP_EXPORT __declspec(dllexport)
#else
#define RP_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct of the given `size` (as filled by its builder) contains `member`. */
#define RP_HAS_MEMBER(ptr, type, member) \
  ((ptr)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* ------------------------------------------------------------------------------------ */
/* Status codes (frozen values, since 1.0)                                                */
/* ------------------------------------------------------------------------------------ */
typedef int32_t rp_status;
#define RP_OK 0
#define RP_INVALID_ARGUMENT 1 /* a parameter, image or request is out of its documented domain */
#define RP_UNSUPPORTED 2      /* valid, but this component does not implement it */
#define RP_OUT_OF_MEMORY 3    /* host or device allocation failed */
#define RP_DEVICE 4           /* a device (GPU) is missing or failed */
#define RP_CANCELLED 5        /* the host asked to stop (rp_host.should_cancel) */
#define RP_INTERNAL 6         /* a bug: anything else */

/* Caller-owned buffer for errors raised before an instance exists (create). The callee
 * writes a NUL-terminated message of at most sizeof(msg)-1 bytes. No cross-heap free. */
typedef struct rp_error_buf {
  uint32_t size;
  char msg[512];
} rp_error_buf;

/* ------------------------------------------------------------------------------------ */
/* Host services handed to every instance                                                 */
/* ------------------------------------------------------------------------------------ */
#define RP_LOG_DEBUG 0
#define RP_LOG_INFO 1
#define RP_LOG_WARNING 2
#define RP_LOG_ERROR 3

typedef struct rp_host {
  uint32_t size;
  uint32_t abi_major; /* the host's RP_ABI_MAJOR */
  uint32_t abi_minor; /* the host's RP_ABI_MINOR */
  void *ctx;          /* opaque; pass back to every callback */
  /* [any-thread] Log a NUL-terminated UTF-8 line (no trailing newline needed). */
  void (*log)(void *ctx, int32_t level, const char *message);
  /* [any-thread] Report progress of the current long operation; fraction in [0,1], or a
   * negative value when unknown. `what` names the operation (e.g. "8 mm coarse search"). */
  void (*progress)(void *ctx, double fraction, const char *what);
  /* [any-thread] Non-zero when the user asked to stop: return RP_CANCELLED promptly. */
  int32_t (*should_cancel)(void *ctx);
} rp_host;

/* ------------------------------------------------------------------------------------ */
/* Images                                                                                 */
/* ------------------------------------------------------------------------------------ */
/* A borrowed, read-only view of a 3D float32 image. Valid only for the duration of the call
 * it is passed to, unless that call documents otherwise: components copy what they keep. */
typedef struct rp_image {
  uint32_t size;
  uint32_t dims[3];         /* voxels along x, y, z; each >= 1 */
  double voxel_to_world[16]; /* row-major 4x4: voxel index (x,y,z,1) -> LPS millimetres */
  const float *data;        /* dims[0]*dims[1]*dims[2] values, x fastest */
} rp_image;

/* ------------------------------------------------------------------------------------ */
/* Parameters                                                                             */
/* ------------------------------------------------------------------------------------ */
#define RP_PARAM_BOOL 0   /* int_value 0 or 1 */
#define RP_PARAM_INT 1    /* int_value, within [min, max] */
#define RP_PARAM_DOUBLE 2 /* double_value, within [min, max] */
#define RP_PARAM_ENUM 3   /* string_value, one of choices */
#define RP_PARAM_STRING 4 /* string_value */
#define RP_PARAM_PATH 5   /* string_value, an absolute file system path (the host resolves it) */

/* One entry of a component's parameter schema. Names are snake_case with units in the name
 * where they have one (smoothing_mm). The host validates pipeline values against the schema
 * before any work; `create` re-checks and names the parameter and value when it refuses. */
typedef struct rp_param_desc {
  uint32_t size;
  const char *name;
  int32_t type;                /* RP_PARAM_* */
  const char *default_value;   /* textual default, as it would be written in YAML */
  double min;                  /* INT and DOUBLE: inclusive bounds */
  double max;
  const char *const *choices;  /* ENUM: NULL-terminated list; otherwise NULL */
  const char *unit;            /* "mm", "rad", "" ... */
  const char *doc;             /* one line */
} rp_param_desc;

/* A parameter value handed to `create`. The host passes every schema parameter, defaults
 * included, already validated and converted to its type. Strings are borrowed for the call. */
typedef struct rp_param_value {
  uint32_t size;
  const char *name;
  int32_t type;         /* RP_PARAM_* (same as the schema) */
  int64_t int_value;    /* BOOL, INT */
  double double_value;  /* DOUBLE */
  const char *string_value; /* ENUM, STRING, PATH */
} rp_param_value;

/* ------------------------------------------------------------------------------------ */
/* Cost components: similarity of a reference and a moving image under k transforms       */
/* ------------------------------------------------------------------------------------ */
/* One batched evaluation. Costs are "lower is better" (1-CR, -MI, -NMI, 1-NCC, LS).
 * When a transform leaves no overlap between the images, the cost is the measure's worst
 * finite value (documented by the component, e.g. 1 for 1-CR) and overlap_out is 0: never
 * an error, never NaN or infinity. */
typedef struct rp_cost_request {
  uint32_t size;
  size_t k;                /* number of transforms, >= 1 */
  const double *matrices;  /* k row-major 4x4 matrices, reference world -> moving world */
  double *costs_out;       /* [out] k costs */
  double *overlap_out;     /* [out, nullable] k overlap fractions in [0,1]: w_ref * w_mov
                              summed over the reference voxels that map inside the moving
                              image, over the reference's total weight (w_mov 1 unweighted) */
} rp_cost_request;

typedef struct rp_cost_vtable {
  uint32_t size;
  /* [any-thread] Create an instance. `params` holds every schema parameter (count `n`).
   * On failure fills err->msg, leaves *self_out NULL and returns the status.
   * @retval RP_OK, RP_INVALID_ARGUMENT (parameter named in err), RP_DEVICE (no or bad
   *         device: the message names the CPU alternative), RP_OUT_OF_MEMORY, RP_INTERNAL */
  rp_status (*create)(const rp_host *host, const rp_param_value *params, size_t n,
                      void **self_out, rp_error_buf *err);
  /* [one call at a time per instance] Set the reference image and its optional weighting
   * (NULL = weight 1 everywhere; else the same grid as `ref`, values >= 0). The component
   * copies what it needs; preprocessing that depends only on the reference (histogram
   * bins, presorts) belongs here so that it is reused across moving images.
   * @retval RP_OK, RP_INVALID_ARGUMENT (e.g. constant image where the measure is undefined),
   *         RP_OUT_OF_MEMORY, RP_DEVICE */
  rp_status (*set_reference)(void *self, const rp_image *ref, const rp_image *ref_weight);
  /* [one call at a time per instance] Set the moving image and its optional weighting. */
  rp_status (*set_moving)(void *self, const rp_image *mov, const rp_image *mov_weight);
  /* [one call at a time per instance] Evaluate k transforms. Both images must be set.
   * @retval RP_OK, RP_INVALID_ARGUMENT (images not set, k == 0, NULL arrays),
   *         RP_CANCELLED, RP_DEVICE, RP_OUT_OF_MEMORY */
  rp_status (*evaluate)(void *self, const rp_cost_request *request);
  /* [one call at a time per instance] Message of the last failed call on this instance, or
   * "" — owned by the instance, valid until the next call on it. Never NULL. */
  const char *(*last_error)(const void *self);
  /* Destroy the instance (NULL is a no-op). */
  void (*destroy)(void *self);
  /* Optional features by versioned id ("regpipe.cost.gradient/1"); NULL when absent.
   * The vtable member itself may be NULL. */
  const void *(*get_extension)(void *self, const char *extension_id);
} rp_cost_vtable;

/* ------------------------------------------------------------------------------------ */
/* Optimizer components                                                                   */
/* ------------------------------------------------------------------------------------ */
/* The transform is always the 12-parameter affine, about the reference centre of mass c:
 *   x_moving = R * K * S * (x_ref - c) + c + t
 *   index 0..2  rotations rx, ry, rz [rad], R = Rz * Ry * Rx
 *   index 3..5  translations tx, ty, tz [mm]
 *   index 6..8  scales sx, sy, sz [1]      S = diag(sx, sy, sz)
 *   index 9..11 skews kxy, kxz, kyz [1]    K = [[1,kxy,kxz],[0,1,kyz],[0,0,1]]
 * Degrees of freedom select which are free; the others keep the values of the start point:
 *   3: translations; 6: + rotations; 7: + one global scale (sx = sy = sz);
 *   9: + three scales; 12: + skews. */
#define RP_PARAM_COUNT 12

/* The host's objective, handed to `minimize`. Every function pointer is non-NULL. */
typedef struct rp_objective {
  uint32_t size;
  void *ctx;
  uint32_t param_count;        /* RP_PARAM_COUNT */
  uint32_t dof;                /* 3, 6, 7, 9 or 12: the most the pipeline allows. Since 1.2 a
                                  host hands an optimizer only a DOF its supported_dof allows
                                  (a 1.0/1.1 host does not check: keep minimize's check) */
  const double *typical_step;  /* param_count values: a natural step per parameter (e.g.
                                  radians per mm of displacement at the image's radius) */
  uint32_t level_count;        /* resolution levels of the pipeline, coarsest first */
  const double *levels_mm;     /* level_count voxel sizes in mm */
  /* Evaluate k parameter vectors (k * param_count doubles, vector-major) at the current
   * level; writes k costs. Batching is the main lever for GPU costs: propose many points
   * per call where the algorithm allows.
   * @retval RP_OK, RP_CANCELLED, or the cost component's failure (message via last_error) */
  rp_status (*evaluate)(void *ctx, const double *params, size_t k, double *costs_out);
  /* Select the resolution level (index into levels_mm) used by later evaluations. */
  rp_status (*set_level)(void *ctx, uint32_t level);
  /* Message of the last failed objective call; never NULL. */
  const char *(*last_error)(void *ctx);
  /* Record a named stage for the report (evaluations and time are counted by the host
   * from this call to the next). Optional for the optimizer to call. */
  void (*begin_stage)(void *ctx, const char *stage_name);
} rp_objective;

/* Optimizer capability flags (rp_optimizer_vtable.flags). */
#define RP_OPTIMIZER_DRIVES_LEVELS 1u /* minimize is called once and calls set_level itself;
                                         otherwise the host calls set_level(i) and minimize
                                         for each level, coarsest first, carrying x over */
#define RP_OPTIMIZER_DEFORMABLE_ONLY 2u /* [1.5] minimize refuses (RP_UNSUPPORTED): the optimizer
                                           serves deformable stages only, through
                                           RP_EXT_DEFORMABLE_OPTIMIZER; a 1.5 host refuses it in
                                           an affine stage while validating the pipeline */

/* [1.2] Degrees of freedom as a bit set (rp_optimizer_vtable.supported_dof): bit d stands for
 * d DOF (d < 32). RP_DOF_ANY (0) declares nothing: every DOF the host offers. */
#define RP_DOF_BIT(dof) (1u << (dof))
#define RP_DOF_3 RP_DOF_BIT(3)
#define RP_DOF_6 RP_DOF_BIT(6)
#define RP_DOF_7 RP_DOF_BIT(7)
#define RP_DOF_9 RP_DOF_BIT(9)
#define RP_DOF_12 RP_DOF_BIT(12)
#define RP_DOF_ALL (RP_DOF_3 | RP_DOF_6 | RP_DOF_7 | RP_DOF_9 | RP_DOF_12)
#define RP_DOF_ANY 0u

typedef struct rp_optimizer_vtable {
  uint32_t size;
  uint32_t flags; /* RP_OPTIMIZER_* */
  rp_status (*create)(const rp_host *host, const rp_param_value *params, size_t n,
                      void **self_out, rp_error_buf *err);
  /* [one call at a time per instance] Minimise the objective from x_inout (param_count
   * values). On RP_OK, x_inout holds the best point found and *f_out its cost.
   * @retval RP_OK, RP_CANCELLED, RP_INVALID_ARGUMENT, or an objective failure */
  rp_status (*minimize)(void *self, const rp_objective *objective, double *x_inout,
                        double *f_out);
  const char *(*last_error)(const void *self);
  void (*destroy)(void *self);
  const void *(*get_extension)(void *self, const char *extension_id);
  /* [1.2] The DOF `minimize` accepts, as RP_DOF_* bits. Declared like the parameter schema: a
   * 1.2 host refuses a pipeline whose registration.dof is not in the set while validating it,
   * before any instance is created or image read, with a message naming the component and
   * the set, so minimize only sees a DOF of the set. RP_DOF_ANY (0), or the vtable of a
   * 1.0/1.1 plugin, which ends before this member (its size says so): any DOF. Hosts before
   * 1.2 do not read it: minimize keeps refusing another objective->dof (RP_INVALID_ARGUMENT). */
  uint32_t supported_dof;
} rp_optimizer_vtable;

/* ------------------------------------------------------------------------------------ */
/* Resampler components                                                                   */
/* ------------------------------------------------------------------------------------ */
#define RP_INTERP_NEAREST 0
#define RP_INTERP_TRILINEAR 1
#define RP_INTERP_SINC 2      /* windowed sinc, for final outputs */
#define RP_INTERP_BSPLINE 3   /* cubic B-spline, for final outputs */

/* Resample `input` onto the output grid: out(p) = input(matrix * p) for every output voxel
 * centre p (world); voxels mapping outside the input get `background`. With
 * prefilter_sigma_mm > 0 the input is first smoothed by a Gaussian of that standard
 * deviation (world mm, per axis) — the anti-aliasing of a multi-resolution pyramid. */
typedef struct rp_resample_request {
  uint32_t size;
  const rp_image *input;
  const double *matrix;          /* 4x4 output world -> input world (NULL = identity) */
  uint32_t out_dims[3];
  double out_voxel_to_world[16];
  float *out_data;               /* [out] caller-allocated, out_dims product floats */
  int32_t interpolation;         /* RP_INTERP_* */
  double prefilter_sigma_mm[3];  /* 0 = none */
  float background;
  /* [1.1] Nonzero: the caller's name for `input`. Requests carrying the same input_id pass the
   * same image (data pointer, dims, voxel_to_world) with unchanged data, so a resampler may
   * keep what it derived from the input (a device copy, say) between them: a pyramid's levels
   * are several requests on one image. 0 (or a 1.0 caller): no such promise. */
  uint64_t input_id;
} rp_resample_request;

typedef struct rp_resampler_vtable {
  uint32_t size;
  rp_status (*create)(const rp_host *host, const rp_param_value *params, size_t n,
                      void **self_out, rp_error_buf *err);
  /* [one call at a time per instance]
   * @retval RP_OK, RP_INVALID_ARGUMENT, RP_UNSUPPORTED (interpolation not offered),
   *         RP_OUT_OF_MEMORY, RP_CANCELLED */
  rp_status (*resample)(void *self, const rp_resample_request *request);
  const char *(*last_error)(const void *self);
  void (*destroy)(void *self);
  const void *(*get_extension)(void *self, const char *extension_id);
} rp_resampler_vtable;

/* ------------------------------------------------------------------------------------ */
/* [1.3] Device images: the optional extension RP_EXT_DEVICE_IMAGE                         */
/* ------------------------------------------------------------------------------------ */
/* A GPU resampler and a GPU cost on the same device can hand images over in device memory,
 * so that a registration uploads each image once and derives its pyramid levels there,
 * instead of downloading every level to host memory for the cost to upload it again. Both
 * sides offer it through get_extension(self, RP_EXT_DEVICE_IMAGE), which returns the
 * component kind's struct below (NULL: not offered, and the host uses the rp_image calls).
 * The host takes the device path only when the resampler and the cost both offer it and
 * report the same device; any other mix (CPU components, third-party plugins, two devices)
 * works as in 1.2. Nothing of the 1.0-1.2 structs changes.
 *
 * Device memory: a CUDA device pointer from cudaMalloc in the CUDA runtime's primary context
 * of `device` (the ordinal of the process's device numbering, as cudaSetDevice takes it).
 * Every CUDA runtime in one process, static or shared, uses that one primary context per
 * device, so the pointer is valid in another plugin's kernels and copies once that plugin
 * has selected the same device (cudaSetDevice: the current device is per runtime and thread).
 * Only the producer frees it. The extension's structs are static or owned by the instance:
 * valid until destroy. */
#define RP_EXT_DEVICE_IMAGE "regpipe.device_image/1"

/* A borrowed, read-only view of a 3D float32 image in device memory (layout of rp_image). */
typedef struct rp_device_image {
  uint32_t size;
  uint32_t dims[3];          /* voxels along x, y, z; each >= 1 */
  double voxel_to_world[16]; /* row-major 4x4: voxel index -> LPS millimetres */
  int32_t device;            /* CUDA device ordinal that holds `data` */
  const float *data;         /* device pointer: dims[0]*dims[1]*dims[2] values, x fastest */
  uint64_t handle;           /* the producer's nonzero name for the buffer (release_device_image) */
} rp_device_image;

/* Image data a component copied between host and device memory since it was created (its
 * own small arrays, such as voxel maps and costs, not counted): lets a host or a test check
 * that the device path makes no copy it should not. */
typedef struct rp_transfer_counts {
  uint32_t size;
  uint64_t uploads, upload_bytes;     /* host -> device copies of images or image-sized data */
  uint64_t downloads, download_bytes; /* device -> host */
} rp_transfer_counts;

/* A resampler's RP_EXT_DEVICE_IMAGE. */
typedef struct rp_resampler_device_image_ext {
  uint32_t size;
  /* [one call at a time per instance] The device the instance resamples on. */
  int32_t (*device)(const void *self);
  /* [one call at a time per instance] resample(), with the output kept in a device buffer
   * that the instance allocates and owns; request->out_data is not read (may be NULL), the
   * input is host memory as in resample() (input_id keeps its upload between requests). On
   * RP_OK fills *out (the caller sets out->size first): the data is complete when the call
   * returns and stays valid and unchanged until release_device_image(self, out->handle) or
   * destroy, whichever comes first; later requests do not touch it. The host keeps a
   * registration's moving levels until the registration ends and a batch's reference levels
   * until the batch ends.
   * @retval as resample(), RP_OUT_OF_MEMORY for the device buffer */
  rp_status (*resample_to_device)(void *self, const rp_resample_request *request,
                                  rp_device_image *out);
  /* [one call at a time per instance] Frees the buffer of `handle` (0 or an unknown handle:
   * a no-op). No component may read it afterwards. */
  void (*release_device_image)(void *self, uint64_t handle);
  /* [one call at a time per instance] Fills *out (the caller sets out->size). */
  void (*transfer_counts)(const void *self, rp_transfer_counts *out);
} rp_resampler_device_image_ext;

/* A cost's RP_EXT_DEVICE_IMAGE: set_reference / set_moving from device memory, unweighted
 * (with a weighting image the host uses set_reference / set_moving). The image is borrowed
 * for the call, as an rp_image is: the component has read what it keeps (into its own device
 * memory) when the call returns, with the same results as set_reference / set_moving of the
 * same voxels in host memory. A member may be NULL: that image is taken from host memory
 * only (e.g. a reference preparation that stays on the host for exactness).
 * @retval as set_reference / set_moving; RP_INVALID_ARGUMENT when image->device is not the
 *         component's device */
typedef struct rp_cost_device_image_ext {
  uint32_t size;
  /* [one call at a time per instance] The device the instance evaluates on. */
  int32_t (*device)(const void *self);
  /* [one call at a time per instance] */
  rp_status (*set_reference_device)(void *self, const rp_device_image *ref);
  /* [one call at a time per instance] */
  rp_status (*set_moving_device)(void *self, const rp_device_image *mov);
  /* [one call at a time per instance] Fills *out (the caller sets out->size). */
  void (*transfer_counts)(const void *self, rp_transfer_counts *out);
} rp_cost_device_image_ext;

/* ------------------------------------------------------------------------------------ */
/* [1.4] Which device a component runs on: the optional extension RP_EXT_DEVICE_INFO      */
/* ------------------------------------------------------------------------------------ */
/* Any component that computes on a device (a GPU) may describe it, so that a run's report
 * says which card produced its numbers. get_extension(self, RP_EXT_DEVICE_INFO) returns an
 * rp_device_info_ext (static or owned by the instance: valid until destroy), NULL: the
 * component runs on the host's CPU. Nothing of the 1.0-1.3 structs changes. */
#define RP_EXT_DEVICE_INFO "regpipe.device_info/1"

typedef struct rp_device_info {
  uint32_t size;
  int32_t device;              /* ordinal in the process's device numbering (cudaSetDevice's) */
  char name[256];              /* NUL-terminated, as the vendor names it: "NVIDIA H100 80GB HBM3" */
  int32_t compute_major;       /* compute capability (9.0 for Hopper); 0 where none applies */
  int32_t compute_minor;
  uint64_t memory_bytes;       /* the device's total memory */
  int32_t driver_version;      /* vendor's encoding (CUDA: 1000 * major + 10 * minor); 0 unknown */
  int32_t runtime_version;     /* the runtime the component was built with, same encoding */
} rp_device_info;

typedef struct rp_device_info_ext {
  uint32_t size;
  /* [one call at a time per instance] Fills the members of *out that out->size holds (the
   * caller sets out->size first) for the device the instance computes on.
   * @retval RP_OK, RP_DEVICE (the device cannot be queried) */
  rp_status (*describe_device)(const void *self, rp_device_info *out);
} rp_device_info_ext;

/* ------------------------------------------------------------------------------------ */
/* [1.5] Dense transforms: displacement fields, dense-gradient costs, deformable optimizers */
/* ------------------------------------------------------------------------------------ */
/* Deformable registration (SyN and its kin) works on a displacement field, not on the 12
 * affine parameters: the cost must say how it changes when each voxel's sampling point
 * moves, and the optimizer must hand back a field. Both are optional extensions by versioned
 * id, as RP_EXT_DEVICE_IMAGE is; nothing of the 1.0-1.4 structs changes, and a 1.4 plugin
 * keeps loading (it offers neither, so the host refuses it in a deformable stage by name). */

/* Where the memory behind a pointer lives. */
#define RP_MEMORY_HOST 0
#define RP_MEMORY_DEVICE 1 /* a CUDA device pointer, under RP_EXT_DEVICE_IMAGE's rules */

/* A displacement field on a grid: the voxel with index i, at world point p(i), maps to
 * p(i) + u(i). Vectors are LPS millimetres, 3 floats per voxel (u_x, u_y, u_z) interleaved,
 * x fastest; between voxel centres u is trilinear, outside the grid it is zero (ITK's
 * DisplacementFieldTransform, the form of ANTs' *Warp.nii.gz files). Whoever fills the
 * struct sets `size`; `vectors` is read-only where the field is an input. */
typedef struct rp_field {
  uint32_t size;
  uint32_t dims[3];          /* voxels along x, y, z; each >= 1 */
  double voxel_to_world[16]; /* row-major 4x4: voxel index -> LPS millimetres */
  int32_t memory;            /* RP_MEMORY_* */
  int32_t device;            /* CUDA device ordinal for RP_MEMORY_DEVICE; otherwise 0 */
  float *vectors;            /* 3 * dims[0]*dims[1]*dims[2] floats */
} rp_field;

/* A cost's RP_EXT_DENSE_COST: the cost of two images already on one grid (the fixed image and
 * the moving image resampled onto it, by whatever warp the caller holds) and its gradient with
 * respect to a displacement of the moving image's sampling points: gradient_out at voxel x is
 * d cost / d u(x) for moving'(x) = moving(p(x) + u(x)), in cost per LPS millimetre, 3 floats
 * per voxel interleaved. It is the negative of the force that pulls the moving image into
 * place (a SyN optimizer steps along -gradient). The component derives the moving image's
 * spatial gradient itself (on the grid, from `moving`), so the caller passes only values; the
 * fixed image's side of a symmetric method is the same call with the roles exchanged.
 * Parameters (a neighbourhood radius, bins) are the component's own, given at create.
 * "Lower is better" as for evaluate. */
#define RP_EXT_DENSE_COST "regpipe.dense_cost/1"

typedef struct rp_dense_cost_request {
  uint32_t size;
  uint32_t dims[3];          /* the common grid */
  double voxel_to_world[16]; /* row-major 4x4: voxel index -> LPS millimetres */
  int32_t memory;            /* RP_MEMORY_* of fixed, moving, fixed_mask and gradient_out */
  int32_t device;            /* CUDA device ordinal for RP_MEMORY_DEVICE; otherwise 0 */
  const float *fixed;        /* voxels floats */
  const float *moving;       /* voxels floats: the moving image resampled onto the grid */
  const float *fixed_mask;   /* nullable: only voxels with mask > 0 count (0: outside) */
  double *cost_out;          /* [out] host memory: one value */
  float *gradient_out;       /* [out, nullable] 3 * voxels floats, zero where a voxel does not
                                count; NULL: the cost alone */
} rp_dense_cost_request;

typedef struct rp_cost_dense_ext {
  uint32_t size;
  /* [one call at a time per instance] Independent of set_reference / set_moving: the images
   * come with the request. RP_MEMORY_DEVICE requests are for components that also offer
   * RP_EXT_DEVICE_IMAGE (and on its device); others return RP_UNSUPPORTED for them.
   * @retval RP_OK, RP_INVALID_ARGUMENT (NULL images, a zero dimension, non-finite values),
   *         RP_UNSUPPORTED, RP_OUT_OF_MEMORY, RP_DEVICE, RP_CANCELLED */
  rp_status (*evaluate_dense)(void *self, const rp_dense_cost_request *request);
} rp_cost_dense_ext;

/* An optimizer's RP_EXT_DEFORMABLE_OPTIMIZER: registers the moving image to the fixed one by a
 * displacement field, driven by a cost that offers RP_EXT_DENSE_COST. The optimizer owns its
 * schedule (levels, smoothing, iterations, convergence: its parameters); the host hands it the
 * full-resolution images, the affine start, the cost instance, and two fields to fill. */
#define RP_EXT_DEFORMABLE_OPTIMIZER "regpipe.deformable_optimizer/1"

typedef struct rp_deformable_problem {
  uint32_t size;
  const rp_image *fixed;            /* host memory */
  const rp_image *moving;           /* host memory, its own grid */
  const rp_image *fixed_mask;       /* nullable: the grid of `fixed`, voxels > 0 count */
  const double *initial_matrix;     /* nullable (identity): 4x4 fixed world -> moving world,
                                       the affine stage's result; the fields come on top */
  void *cost;                       /* a cost instance offering `dense` */
  const rp_cost_dense_ext *dense;   /* cost->get_extension(RP_EXT_DENSE_COST) */
  rp_field *forward_out;            /* [out] caller-allocated, host, on the fixed grid (dims
                                       and voxel_to_world set by the caller): a fixed world
                                       point p is seen in the moving image at
                                       initial_matrix * (p + u(p)) */
  rp_field *inverse_out;            /* [out, nullable] the same grid: v with
                                       p + u(p) + v(p + u(p)) = p (ANTs' InverseWarp) */
  int32_t cost_device;              /* [1.6] the GPU the cost computes on (its
                                       RP_EXT_DEVICE_IMAGE device(), else RP_EXT_DEVICE_INFO's
                                       device), or -1: a CPU cost. Absent (a 1.5 host): read
                                       as -1. Lets an optimizer keep its fields where the cost
                                       computes; the cost may still refuse RP_MEMORY_DEVICE
                                       requests (RP_UNSUPPORTED), so be ready to fall back. */
  double *cost_before_out;          /* [1.7] [out, nullable] host memory: the dense cost of
                                       the fixed image and the moving image resampled onto
                                       the fixed grid (trilinear, 0 outside its domain) through
                                       initial_matrix alone, with fixed_mask: the stage's cost
                                       before it. The host sets NaN; an optimizer that measures
                                       it where its images are (e.g. on the cost's device)
                                       writes it, one that leaves NaN (a 1.6 optimizer does)
                                       leaves the host to measure it. */
  double *cost_after_out;           /* [1.7] [out, nullable] the same through the result:
                                       the moving image sampled once at
                                       initial_matrix * (p + u(p)), u the forward field. */
} rp_deformable_problem;

typedef struct rp_optimizer_deformable_ext {
  uint32_t size;
  /* [one call at a time per instance] On RP_OK both fields are filled. The cost's errors come
   * back as the cost's status, with its message as this instance's last_error.
   * @retval RP_OK, RP_INVALID_ARGUMENT, RP_CANCELLED, RP_OUT_OF_MEMORY, or a cost failure */
  rp_status (*register_deformable)(void *self, const rp_deformable_problem *problem);
} rp_optimizer_deformable_ext;

/* ------------------------------------------------------------------------------------ */
/* Descriptors and the entry point                                                        */
/* ------------------------------------------------------------------------------------ */
#define RP_KIND_COST 0
#define RP_KIND_OPTIMIZER 1
#define RP_KIND_RESAMPLER 2

typedef struct rp_component_desc {
  uint32_t size;
  int32_t kind;            /* RP_KIND_* */
  const char *id;          /* lowercase dotted, unique: "cost.cr", third parties reverse-DNS */
  const char *name;        /* human name */
  const char *version;     /* "major.minor.patch" of the component */
  const char *description; /* one paragraph */
  const rp_param_desc *params;
  size_t param_count;
  const void *vtable;      /* rp_cost_vtable*, rp_optimizer_vtable* or rp_resampler_vtable* */
} rp_component_desc;

typedef struct rp_plugin_entry {
  uint32_t size;
  uint32_t abi_major; /* RP_ABI_MAJOR the plugin was built against */
  uint32_t abi_minor;
  const char *library_name;
  const char *library_version;
  const char *license;
  size_t component_count;
  const rp_component_desc *components;
} rp_plugin_entry;

/* The one symbol every plugin library exports. Returns static, immutable data; does no work
 * (no allocation, no device initialisation). [any-thread] */
typedef const rp_plugin_entry *(*rp_plugin_entry_fn)(void);
#define RP_PLUGIN_ENTRY_SYMBOL "regpipe_plugin_entry"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REGPIPE_ABI_H */
