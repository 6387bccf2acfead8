// Displacement fields (ITK/ANTs *Warp.nii.gz) against nibabel and numpy: a field regpipe writes
// is, as nibabel reads it, ANTs' form (intent 1007, shape (nx, ny, nz, 1, 3), float32) with
// the vectors in LPS as given; a field nibabel writes in that form is read by regpipe as ITK
// reads it; and `regpipe apply` through an affine and a field equals the chain composed
// independently in numpy. With antspyx importable, also ants.apply_transforms on the same
// files. Each test skips, saying why, when its python module is absent.
#include <regpipe/host/displacement_field_io.hpp>

#include "support/python.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace fs = std::filesystem;
using regpipe::test::python_lacks;
using regpipe::test::python_numbers;
using regpipe::test::run_command;
using regpipe_common::DisplacementField;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// A 6x5x4 field on a grid rotated 0.4 rad about z, voxels 1.5 x 2 x 2.5 mm, vector of voxel
// (i, j, k) = (i + 0.5, -2j, 3k + 0.25) mm (LPS).
DisplacementField patterned_field() {
  DisplacementField field;
  field.geometry.dims = {6, 5, 4};
  const double c = std::cos(0.4), s = std::sin(0.4);
  const double m[16] = {1.5 * c, -2.0 * s, 0, 10, 1.5 * s, 2.0 * c, 0, -20, 0, 0, 2.5, 30, 0, 0, 0, 1};
  std::copy(m, m + 16, field.geometry.voxel_to_world);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 6; ++i) {
        field.vectors.push_back(float(i + 0.5));
        field.vectors.push_back(float(-2 * j));
        field.vectors.push_back(float(3 * k + 0.25));
      }
  return field;
}

// Prints dim[0..7], intent code, whether float32, qform and sform codes, the largest
// difference from the vector pattern, then the affine's 12 top rows (RAS).
constexpr const char* kInspect = R"(import sys, nibabel as nib, numpy as np
im = nib.load(sys.argv[1])
h = im.header
print(*[int(d) for d in h['dim']])
print(int(h['intent_code']), int(h.get_data_dtype() == np.float32), int(h['qform_code']), int(h['sform_code']))
d = np.asanyarray(im.dataobj)
i, j, k = np.meshgrid(np.arange(6), np.arange(5), np.arange(4), indexing='ij')
expected = np.stack([i + 0.5, -2.0 * j, 3.0 * k + 0.25], axis=-1)
print(np.abs(d[:, :, :, 0, :] - expected).max())
print(*im.affine[:3].ravel())
)";

// Writes sys.argv[1] as ANTs writes a field, with nibabel: the same pattern on an oblique RAS
// affine (rotation about x), qform and sform code 1.
constexpr const char* kWriteAntsForm = R"(import sys, nibabel as nib, numpy as np
i, j, k = np.meshgrid(np.arange(7), np.arange(6), np.arange(5), indexing='ij')
data = np.stack([i * 1.25, -j - 0.5, 2.0 * k], axis=-1)[:, :, :, None, :].astype(np.float32)
a = 0.3
affine = np.array([[-2.0, 0, 0, 15], [0, 2.5 * np.cos(a), -3 * np.sin(a), -8], [0, 2.5 * np.sin(a), 3 * np.cos(a), 4], [0, 0, 0, 1]])
im = nib.Nifti1Image(data, affine)
im.header.set_intent('vector')
im.set_qform(affine, code=1)
im.set_sform(affine, code=1)
nib.save(im, sys.argv[1])
print(*affine[:3].ravel())
)";

}  // namespace

TEST(DisplacementFieldInterop, NibabelReadsRegpipesFieldAsAntsForm) {
  if (auto why = python_lacks("nibabel", "nibabel (Debian: python3-nibabel)")) GTEST_SKIP() << *why;
  regpipe::test::TempDir dir;
  const DisplacementField field = patterned_field();
  regpipe::write_displacement_field(field, dir / "1Warp.nii.gz");
  const std::vector<double> v = python_numbers(dir, kInspect, quoted(dir / "1Warp.nii.gz"));
  ASSERT_EQ(v.size(), 8u + 4u + 1u + 12u);
  const double dims[8] = {5, 6, 5, 4, 1, 3, 1, 1};
  for (int d = 0; d < 8; ++d) EXPECT_EQ(v[d], dims[d]) << "dim[" << d << "]";
  EXPECT_EQ(v[8], 1007) << "intent_code";
  EXPECT_EQ(v[9], 1) << "float32";
  EXPECT_EQ(v[10], 1) << "qform_code";
  EXPECT_EQ(v[11], 1) << "sform_code";
  EXPECT_EQ(v[12], 0.0) << "vectors stored as given (LPS), not turned into RAS";
  // The grid: nibabel's RAS affine is the LPS voxel_to_world with x and y negated.
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      const double lps = field.geometry.voxel_to_world[4 * r + c];
      EXPECT_NEAR(v[13 + 4 * r + c], r < 2 ? -lps : lps, 1e-5) << "affine(" << r << ", " << c << ")";
    }
}

TEST(DisplacementFieldInterop, ReadsAFieldNibabelWroteInAntsForm) {
  if (auto why = python_lacks("nibabel", "nibabel (Debian: python3-nibabel)")) GTEST_SKIP() << *why;
  regpipe::test::TempDir dir;
  const std::vector<double> ras = python_numbers(dir, kWriteAntsForm, quoted(dir / "0Warp.nii.gz"));
  ASSERT_EQ(ras.size(), 12u);
  const DisplacementField field = regpipe::read_displacement_field(dir / "0Warp.nii.gz");
  ASSERT_EQ(field.geometry.dims.nx, 7);
  ASSERT_EQ(field.geometry.dims.ny, 6);
  ASSERT_EQ(field.geometry.dims.nz, 5);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_NEAR(field.geometry.voxel_to_world[4 * r + c], r < 2 ? -ras[4 * r + c] : ras[4 * r + c], 1e-5)
          << "voxel_to_world(" << r << ", " << c << ")";
  size_t n = 0;
  for (int k = 0; k < 5; ++k)
    for (int j = 0; j < 6; ++j)
      for (int i = 0; i < 7; ++i, n += 3) {
        ASSERT_EQ(field.vectors[n], float(i * 1.25)) << i << " " << j << " " << k;
        ASSERT_EQ(field.vectors[n + 1], float(-j - 0.5));
        ASSERT_EQ(field.vectors[n + 2], float(2.0 * k));
      }
}

namespace {

// Writes, into sys.argv[1]: input.nii.gz (a smooth image on a grid rotated about x),
// reference.nii.gz (another grid), affine.tfm (an ITK affine, reference LPS -> moving LPS) and
// 1Warp.nii.gz (a smooth field in ANTs' form on a third, oblique grid, zero on its border
// planes), all with nibabel; no regpipe code.
constexpr const char* kMakeChain = R"(import sys, nibabel as nib, numpy as np
d = sys.argv[1]
def rot(axis, a):
    c, s = np.cos(a), np.sin(a)
    m = np.eye(4)
    i, j = [(1, 2), (0, 2), (0, 1)][axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m
def grid(spacing, rotation, origin):
    a = rotation @ np.diag(list(spacing) + [1.0])
    a[:3, 3] = origin
    return a
i, j, k = np.meshgrid(np.arange(32), np.arange(30), np.arange(28), indexing='ij')
image = (100 + 50 * np.sin(0.3 * i) * np.cos(0.2 * j) + 20.0 * k / 28).astype(np.float32)
nib.save(nib.Nifti1Image(image, grid((2.5, 2.5, 2.5), rot(0, 0.15), (-38, -35, -30))), d + '/input.nii.gz')
nib.save(nib.Nifti1Image(np.zeros((36, 34, 30), np.float32), grid((2, 2, 2), np.eye(4), (-35, -33, -29))), d + '/reference.nii.gz')
n = (20, 18, 16)
i, j, k = np.meshgrid(*[np.arange(m) for m in n], indexing='ij')
bump = np.sin(np.pi * i / (n[0] - 1)) * np.sin(np.pi * j / (n[1] - 1)) * np.sin(np.pi * k / (n[2] - 1))
u = np.stack([5.0 * bump * np.cos(0.3 * j), -4.0 * bump, 3.0 * bump * np.sin(0.4 * i)], axis=-1)
field = nib.Nifti1Image(u[:, :, :, None, :].astype(np.float32), grid((3, 3, 3), rot(2, 0.2), (-28, -30, -22)))
field.header.set_intent('vector')
nib.save(field, d + '/1Warp.nii.gz')
a = rot(2, 0.1) @ rot(0, -0.05)
a[:3, 3] = (3.0, -2.0, 4.0)
with open(d + '/affine.tfm', 'w') as f:
    f.write('#Insight Transform File V1.0\n#Transform 0\nTransform: AffineTransform_double_3_3\n')
    f.write('Parameters: ' + ' '.join('%.17g' % v for v in list(a[:3, :3].ravel()) + list(a[:3, 3])) + '\n')
    f.write('FixedParameters: 0 0 0\n')
np.save(d + '/affine.npy', a)
)";

// The expectation, in numpy alone: for each reference voxel p, x = world(p) (LPS), then
// x + u(x) (u trilinear on the field's grid, zero outside [0, n-1]), then A x, then the input
// sampled trilinearly there (0 outside its [0, n-1]). Prints: the largest difference from
// regpipe's output over the voxels not within 1e-3 voxel of a domain's edge, how many voxels
// that is and how many of them sample the input, the largest expected value, and the largest
// difference had the vectors been read as RAS (x and y negated), which must be large.
constexpr const char* kCheckChain = R"(import sys, nibabel as nib, numpy as np
d = sys.argv[1]
F = np.diag([-1.0, -1.0, 1.0, 1.0])
ref, inp, field = (nib.load(d + '/' + n) for n in ('reference.nii.gz', 'input.nii.gz', '1Warp.nii.gz'))
a = np.load(d + '/affine.npy')
out = np.asarray(nib.load(d + '/' + sys.argv[2]).dataobj, dtype=np.float64)
def to_index(affine_ras, x):
    return (np.linalg.inv(F @ affine_ras) @ np.c_[x, np.ones(len(x))].T).T[:, :3]
def trilinear(vol, q):
    n = np.array(vol.shape[:3])
    inside = np.all((q >= 0) & (q <= n - 1), axis=1)
    q0 = np.clip(np.floor(q).astype(int), 0, n - 1)
    q1 = np.minimum(q0 + 1, n - 1)
    f = q - q0
    total = 0.0
    for c in range(8):
        pick = [(c >> b) & 1 for b in range(3)]
        idx = tuple(np.where(pick[b], q1[:, b], q0[:, b]) for b in range(3))
        w = np.prod([np.where(pick[b], f[:, b], 1 - f[:, b]) for b in range(3)], axis=0)
        v = vol[idx]
        total = total + (w[:, None] * v if v.ndim == 2 else w * v)
    total = np.array(total, dtype=np.float64)
    total[~inside] = 0
    return total, inside
def edge_band(q, n):
    n = np.array(n)
    return np.any((np.abs(q) < 1e-3) | (np.abs(q - (n - 1)) < 1e-3), axis=1)
p = np.stack(np.meshgrid(*[np.arange(m) for m in ref.shape], indexing='ij'), axis=-1).reshape(-1, 3)
x = (F @ ref.affine @ np.c_[p, np.ones(len(p))].T).T[:, :3]
vectors = np.asarray(field.dataobj, dtype=np.float64)[:, :, :, 0, :]
def expected(sign):
    q_field = to_index(field.affine, x)
    u, _ = trilinear(vectors * sign, q_field)
    y = (a @ np.c_[x + u, np.ones(len(x))].T).T[:, :3]
    q = to_index(inp.affine, y)
    value, inside = trilinear(np.asarray(inp.dataobj, dtype=np.float64), q)
    return value, inside, edge_band(q_field, field.shape[:3]) | edge_band(q, inp.shape)
value, inside, band = expected(np.array([1.0, 1.0, 1.0]))
got = out[p[:, 0], p[:, 1], p[:, 2]]
keep = ~band
print(np.abs(got - value)[keep].max(), keep.sum(), (inside & keep).sum(), np.abs(value).max())
ras_value, _, _ = expected(np.array([-1.0, -1.0, 1.0]))
print(np.abs(got - ras_value)[keep].max())
)";

// ants.apply_transforms on the same files, transforms in antsApplyTransforms' order (the
// field first: the reverse of regpipe's chain), written to sys.argv[2].
constexpr const char* kAnts = R"(import sys, ants
d = sys.argv[1]
fixed, moving = ants.image_read(d + '/reference.nii.gz'), ants.image_read(d + '/input.nii.gz')
out = ants.apply_transforms(fixed=fixed, moving=moving, transformlist=[d + '/1Warp.nii.gz', d + '/affine.tfm'],
                            interpolator='linear')
ants.image_write(out, d + '/' + sys.argv[2])
)";

// Largest difference between two images over the voxels where both are non-zero, and how many.
constexpr const char* kCompare = R"(import sys, nibabel as nib, numpy as np
a, b = (np.asarray(nib.load(f).dataobj, dtype=np.float64) for f in sys.argv[1:3])
both = (a != 0) & (b != 0)
print(np.abs(a - b)[both].max(), both.sum())
)";

class ChainInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = python_lacks("nibabel", "nibabel (Debian: python3-nibabel)")) GTEST_SKIP() << *why;
    ASSERT_TRUE(python_numbers(dir_, kMakeChain, quoted(dir_.path())).empty());
    std::string out;
    const std::string command = regpipe::test::regpipe_cli().string() + " apply -q --datatype float32 -i " +
                                quoted(dir_ / "input.nii.gz") + " -r " + quoted(dir_ / "reference.nii.gz") +
                                " -t " + quoted(dir_ / "affine.tfm") + " -t " + quoted(dir_ / "1Warp.nii.gz") +
                                " -o " + quoted(dir_ / "regpipe.nii.gz");
    ASSERT_EQ(run_command(command, &out), 0) << command << "\n" << out;
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(ChainInteropTest, ApplyThroughAnAffineAndAFieldEqualsTheChainComposedInNumpy) {
  const std::vector<double> v = python_numbers(dir_, kCheckChain, quoted(dir_.path()) + " regpipe.nii.gz");
  ASSERT_EQ(v.size(), 5u);
  std::printf("max |regpipe - numpy| %.3g over %.0f voxels (%.0f inside the input), values up to %.1f; "
              "vectors read as RAS would be %.3g off\n",
              v[0], v[1], v[2], v[3], v[4]);
  // float32 sampling of values up to ~170 (the positions are exact to float rounding).
  EXPECT_LT(v[0], 2e-3);
  EXPECT_GT(v[2], 0.5 * v[1]) << "most voxels sample the input";
  EXPECT_GT(v[4], 1.0) << "the field's sign convention is tested";
}

TEST_F(ChainInteropTest, AgreesWithAntsApplyTransforms) {
  if (auto why = python_lacks("ants", "antspyx")) GTEST_SKIP() << *why;
  ASSERT_TRUE(python_numbers(dir_, kAnts, quoted(dir_.path()) + " ants.nii.gz").empty());
  const std::vector<double> v =
      python_numbers(dir_, kCompare, quoted(dir_ / "regpipe.nii.gz") + " " + quoted(dir_ / "ants.nii.gz"));
  ASSERT_EQ(v.size(), 2u);
  std::printf("max |regpipe - ants.apply_transforms| %.3g over %.0f voxels\n", v[0], v[1]);
  EXPECT_GT(v[1], 1000.0);
  // Both trilinear in float; ITK's positions are computed in double as regpipe's.
  EXPECT_LT(v[0], 1e-2);
}
