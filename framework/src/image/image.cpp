#include <regpipe/host/image.hpp>

namespace regpipe {

namespace {
struct NamedType {
  VoxelType type;
  const char* name;
};
constexpr NamedType kVoxelTypes[] = {
    {VoxelType::uint8, "uint8"},   {VoxelType::int8, "int8"},     {VoxelType::uint16, "uint16"},
    {VoxelType::int16, "int16"},   {VoxelType::uint32, "uint32"}, {VoxelType::int32, "int32"},
    {VoxelType::float32, "float32"}, {VoxelType::float64, "float64"}};
}  // namespace

const char* voxel_type_name(VoxelType type) {
  for (const auto& t : kVoxelTypes)
    if (t.type == type) return t.name;
  return "float32";
}

std::optional<VoxelType> voxel_type_from_name(const std::string& name) {
  for (const auto& t : kVoxelTypes)
    if (name == t.name) return t.type;
  return std::nullopt;
}

const std::vector<std::string>& voxel_type_names() {
  static const std::vector<std::string> names(
      [] {
        std::vector<std::string> v;
        for (const auto& t : kVoxelTypes) v.push_back(t.name);
        return v;
      }());
  return names;
}

Eigen::Vector3d Image::spacing() const {
  return voxel_to_world.topLeftCorner<3, 3>().colwise().norm();
}

rp_image Image::view() const {
  rp_image v{};
  v.size = sizeof(rp_image);
  for (int i = 0; i < 3; ++i) v.dims[i] = dims[i];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) v.voxel_to_world[4 * r + c] = voxel_to_world(r, c);
  v.data = data.data();
  return v;
}

}  // namespace regpipe
