#include <regpipe/host/pipeline.hpp>

namespace regpipe {

// The one description of the pipeline file: the loader accepts exactly these keys, and
// docs/yaml-reference.md is generated from (and tested against) this table.
const std::vector<PipelineKeyDoc>& pipeline_schema() {
  static const std::vector<PipelineKeyDoc> rows = {
      {"inputs.reference", "path", "(required)",
       "Reference (fixed) image; its grid is the grid of the registered output."},
      {"inputs.moving", "path, glob pattern or list of paths", "(required)",
       "Moving image, registered to the reference. Several (a list, or a pattern with "
       "wildcards in any folder, such as `scans/*.nii.gz` or `sub-*/anat/*_T1w.nii.gz`, "
       "expanded in sorted order) make a batch: the reference is read and prepared once, each "
       "image's outputs go to outputs.dir/<folders the wildcards matched>/<file stem>/ "
       "(sub-01/anat/sub-01_T1w/: a BIDS tree is mirrored), and outputs.dir/batch_report.json "
       "sums them up, with each BIDS name's entities."},
      {"inputs.reference_volume", "int >= 0", "(none)",
       "Volume index when the reference file is 4D (a 4D file without it is an error)."},
      {"inputs.moving_volume", "int >= 0", "(none)", "Volume index when the moving file is 4D."},
      {"inputs.reference_weight", "path", "(none)",
       "Weighting image on the reference grid (FLIRT -refweight); 0 excludes a voxel."},
      {"inputs.moving_weight", "path", "(none)",
       "Weighting image on the moving grid (FLIRT -inweight)."},
      {"inputs.non_finite", "one of refuse, mask", "refuse",
       "Voxels that are NaN or infinite in an image or a weighting image: refuse the image "
       "(the message counts them and names the first), or mask them (weight 0, so that they "
       "take no part in the cost; the weighted path is used then). ITK reads them from NIfTI as 0 "
       "already; MetaImage, NRRD and Analyze files keep them."},
      {"registration.dof", "int: 3, 6, 7, 9 or 12", "12",
       "Degrees of freedom: translations; rigid; + global scale; + 3 scales; + skews. The "
       "optimizer must support it (optim.flirt: 6, 7, 9 or 12; `regpipe plugins` lists each "
       "optimizer's), else validation fails naming the optimizer."},
      {"registration.levels_mm", "list of numbers > 0", "[8, 4, 2, 1]",
       "Resolution levels in mm, coarsest first (FLIRT's schedule by default)."},
      {"registration.min_sampling_mm", "auto, or a number >= 0", "auto",
       "No level finer than this (FLIRT's -minsampling): a finer entry of levels_mm runs at this "
       "size instead (with that entry's settings), repeats dropped. `auto`: the coarser image's "
       "finest voxel size, since a level finer than both images only interpolates (a 2 mm "
       "template: the 1 mm level is left out); 0: every level as listed. report.json states the "
       "levels run (registration.sampled_levels_mm)."},
      {"registration.initialisation", "one of centre_of_mass, identity, geometric_centre, moments, scaled_voxels",
       "centre_of_mass",
       "Start point: `centre_of_mass` translates the moving image's centre of mass onto the "
       "reference's; `identity` takes the headers as they are (scanner space); "
       "`geometric_centre` puts the grids' centres together; `moments` also turns the "
       "reference's principal axes of inertia onto the moving image's (of the four rotations "
       "that do, the one nearest the identity), for heads far off in their headers; "
       "`scaled_voxels` ignores the headers' orientations as FLIRT does without -usesqform "
       "(FSL's scaled-voxel frames taken as one), then puts the centres of mass together."},
      {"registration.initial_transform", "path", "(none)",
       "Start from this transform (FLIRT -init, antsRegistration --initial-moving-transform, "
       "elastix -t0): FSL .mat (with the pipeline's images), ITK .tfm/.txt/.h5, ANTs .mat or a "
       "world 4x4 (.txt, moving -> reference RAS), told apart as `regpipe transform` does. The "
       "parameters the DOF does not free keep its values. Not with registration.initialisation."},
      {"registration.initial_transform_format", "one of fsl, itk, ants, world", "(detected)",
       "The initial transform's format, where its extension and content do not tell."},
      {"registration.bins_per_level", "bool", "false",
       "FLIRT's histogram bins per level: the cost's `bins` at 1 mm, bins / level mm at coarser "
       "levels (at least 16), so that a coarse level's few samples cannot fill a fine histogram "
       "(a near-empty overlap then scores the best cost). Needs a cost with a `bins` parameter."},
      {"registration.decouple_grids", "bool", "false",
       "Make the moving image's levels with voxels 1/16 larger than the reference's, so that the "
       "two level grids never coincide near the identity. Where they coincide (two images on one "
       "grid, a header-only change), trilinear interpolation stops blurring the moving image at "
       "that one transform and the cost has a cusp there (Pluim et al. 2000). `false`: both on "
       "the same level grid, as FLIRT."},
      {"registration.min_overlap", "number in [0, 1)", "0.25",
       "Least part of the smaller image (its weighted volume) that a transform must keep inside "
       "the other for its cost to count; below it the transform scores like one with no overlap "
       "(the measure's worst value). Histogram measures (MI, NMI, CR with many bins) score a "
       "sliver of a few samples as a perfect match; this keeps searches out of it. 0: off."},
      {"registration.evaluation_timeout_s", "number > 0", "300",
       "Longest one call into a plugin may take: a cost evaluation, an optimizer between two "
       "evaluations, a resampling. A plugin that runs longer (a hang; one that ignores "
       "cancellation) ends the run with exit status 3 and a message naming it; in a batch, its "
       "image fails and the batch goes on. Raise it for very large images on a CPU."},
      {"registration.cost.plugin", "plugin id or list of ids", "[cuda.cr, cpu.cr]",
       "Cost component; a list is a preference order: the first that can be created is used."},
      {"registration.cost.params", "map", "{}",
       "Parameters of the cost component(s), checked against their schemas."},
      {"registration.optimizer.plugin", "plugin id or list of ids", "optim.powell",
       "Optimizer component."},
      {"registration.optimizer.params", "map", "{}", "Parameters of the optimizer."},
      {"registration.resampler.plugin", "plugin id or list of ids", "[resample.cuda, resample.cpu]",
       "Resampler for the pyramid and the registered image (the GPU's when there is one; the two "
       "give the same levels bit for bit)."},
      {"registration.resampler.params", "map", "{}", "Parameters of the resampler."},
      {"registration.stages", "list of stage maps", "(none)",
       "Several stages in turn, as antsRegistration's Rigid, Affine and SyN: each affine stage "
       "starts from the previous one's result, the last may be `syn` (deformable), started from the "
       "final affine. With it, `dof`, `levels_mm`, `bins_per_level`, `cost` and `optimizer` are "
       "each stage's (below) and not the section's; the section's other keys apply to all. A syn "
       "stage alone starts from the identity (the headers). Not with a batch of moving images (yet)."},
      {"registration.stages.transform", "one of rigid, affine, syn", "(dof's)",
       "The stage's transform: `rigid` (6 DOF), `affine` (12 DOF), or `syn` (a displacement "
       "field by greedy SyN; its schedule is its optimizer's params). Without it, `dof` says."},
      {"registration.stages.dof", "int: 3, 6, 7, 9 or 12", "(the transform's)",
       "An affine stage's DOF, as registration.dof (must agree with `transform` when both are given)."},
      {"registration.stages.levels_mm", "list of numbers > 0", "[8, 4, 2, 1]",
       "An affine stage's levels, as registration.levels_mm (a syn stage's are its optimizer's params)."},
      {"registration.stages.bins_per_level", "bool", "false", "An affine stage's registration.bins_per_level."},
      {"registration.stages.cost.plugin", "plugin id or list of ids", "[cuda.cr, cpu.cr] or cpu.lcc",
       "The stage's cost: an affine stage's default as registration.cost; a syn stage's must offer "
       "the dense extension (RP_EXT_DENSE_COST: cpu.lcc, cpu.ls, cpu.mattes and their GPU twins cuda.lcc, "
       "cuda.ls, cuda.mattes), cpu.lcc by default."},
      {"registration.stages.cost.params", "map", "{}", "Parameters of the stage's cost."},
      {"registration.stages.optimizer.plugin", "plugin id or list of ids", "optim.powell or optim.syn",
       "The stage's optimizer: an affine optimizer for an affine stage, one offering the deformable "
       "extension (RP_EXT_DEFORMABLE_OPTIMIZER: optim.syn) for a syn stage."},
      {"registration.stages.optimizer.params", "map", "{}",
       "Parameters of the stage's optimizer (a syn stage's schedule: optim.syn's iterations, shrink_factors, smoothing_sigmas, as antsRegistration's --convergence, --shrink-factors, --smoothing-sigmas)."},
      {"outputs.dir", "path", "(required)",
       "Output folder (created if missing; its parent must exist)."},
      {"outputs.prefix", "string", "\"\"", "Prefix of every output file name."},
      {"outputs.transforms", "bool", "true",
       "Write transform.mat (FSL), transform.tfm (ITK), 0GenericAffine.mat (ANTs) and "
       "moving_to_reference_world.txt (and, until 0.2, the same matrix as transform_world.txt)."},
      {"outputs.registered_image", "bool", "true",
       "Write the moving image resampled into the reference grid."},
      {"outputs.interpolation", "one of nearest, trilinear, sinc, bspline", "bspline",
       "Interpolation of the registered image."},
      {"outputs.image_format", "one of .nii.gz, .nii, .nrrd, .mha", ".nii.gz",
       "File format of the registered image."},
      {"outputs.datatype", "one of moving, uint8, int8, uint16, int16, uint32, int32, float32, float64",
       "moving",
       "Voxel type of the registered image: `moving` writes the moving image file's type (FLIRT's "
       "default; a NIfTI file scaled by scl_slope/scl_inter counts as float32), integer types "
       "round each value to nearest and clamp it to the type's range (B-spline and sinc "
       "interpolation overshoot). float32 data compresses slowly and poorly: chris_PD registered "
       "onto chris_t1's 188x256x190 grid took 1.4 s to resample and write as a float32 .nii.gz "
       "(25 MB) and 0.55 s as its own uint8 (3.6 MB) on 2 CPU cores."},
      {"outputs.report", "bool", "true", "Write report.json (per level: evaluations, cost, time)."},
      {"outputs.qa_png", "bool", "false",
       "Write qa.png: the reference's edges in red over the registered image, in three axial, "
       "three coronal and three sagittal slices (at 30, 50 and 70 % of the head's extent where "
       "the moving image covers it) laid out anatomically and labelled R/L, A/P, S/I, with the "
       "file names and the final cost; edges only where the moving image has data."},
      {"outputs.qa_orientation", "one of radiological, neurological", "radiological",
       "Left-right display of qa.png's axial and coronal slices: `radiological` puts the "
       "patient's right on the picture's left (FSLeyes' default, and the radiology reading room's), "
       "`neurological` the patient's left."},
      {"outputs.parallel_io", "bool", "true",
       "Read and write image files on worker threads, overlapped with the registrations: a "
       "single run reads the reference and the moving image at once, while its components (and "
       "the GPU) start; a batch reads the next "
       "moving images while one registers and writes each result's files while the next "
       "registers (see the batch paragraph below). The results are the same; `false` does "
       "everything in turn on one thread."},
      {"outputs.resume", "bool", "true",
       "Batch mode: an image whose complete results are already in its folder under outputs.dir (its "
       "report.json made by the same pipeline from the same files, every output file present "
       "and non-empty) is skipped, so that a rerun of a killed batch only registers what is "
       "missing. `false` registers every image again. Needs outputs.report."},
      {"execution.devices", "all, or a list of device indices", "(none)",
       "The CUDA devices a batch's worker processes register on, one worker per entry (an index "
       "twice: two workers share that device): `all` takes every device this process sees "
       "(CUDA_VISIBLE_DEVICES narrows it), a list names them ([0, 1]). Each worker reads the "
       "reference and makes its components once, and takes the next image when it is ready for "
       "one. Without it one worker registers the whole batch. A single image runs on the first "
       "entry. Components then take no `device` parameter. `--devices` overrides it."},
      {"execution.workers", "int >= 1", "(one per device)",
       "Worker processes of a batch, spread over execution.devices in turn; without devices, "
       "CPU workers (each on its share of the cores). Results are the same for any count. "
       "`--workers` overrides it."},
      {"execution.registrations_per_worker", "auto, or int in [1, 16]", "auto",
       "Images one worker process registers at once, each on a thread of its own with its own "
       "components, sharing the worker's prepared reference and, on a GPU, its one CUDA "
       "context: one registration leaves a GPU idle between its evaluations, which the others "
       "fill. `auto`: 4 when the components compute on a GPU, 1 on the CPU (a CPU cost already "
       "uses every core of its worker). Results are the same for any count."},
      {"evaluation.truth", "path", "(none)",
       "Known moving->reference world (RAS) 4x4; the report then gives the mean displacement "
       "error over the reference."},
  };
  return rows;
}

}  // namespace regpipe
